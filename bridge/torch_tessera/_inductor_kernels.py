"""What Inductor's C++ kernels look like on tessera devices.

Inductor's C++ scheduling (``CppScheduling``, the one ``cpu`` uses) with
three changes, all measured on 2-core AMD EPYC machines:

- Threads: the runtime's CPU kernels (GEMM, attention, layer norm) run on
  oneTBB, and OpenMP's threads spin for milliseconds after each parallel
  region, so beside OpenMP kernels a compiled transformer block ran its mm
  calls 20-40% slower. A tessera kernel's parallel loops therefore run on
  oneTBB too: ``rewrite_parallel_regions`` turns each OpenMP region whose
  only work is ``omp for`` loops (and ``omp single`` blocks) into calls of
  ``tessera_host_parallel_for`` (``csrc/host_parallel/``); a parallel
  reduction's region (per-thread partial sums by ``tid``, one loop)
  becomes a team on the same pool; any other region runs on the calling
  thread alone. A ``collapse(n)`` nest is split over its flattened
  iterations, as OpenMP splits it (split by its outer loop alone, the
  [3, 2048, 256] q/k/v bias add of an attention layer gave one of 2
  threads two thirds of the work, and a nest whose outer loop has one
  iteration ran on one thread).
- How much work goes parallel: a loop does when each thread gets
  ``SERIAL_BELOW_ITERATIONS_PER_THREAD`` iterations (see there).
- Bool masks: a vector kernel keeps a bool value as a
  ``VecMask<T, N>``, and ``VecMask::store(bool*, n)`` converts it through
  ``Vectorized<bool>`` with a scalar loop that Inductor's flags
  (``-fno-tree-loop-vectorize``) leave unvectorized: 6-7 ns an element, so
  the relu that saves its mask for backward ([2048, 1024] in a
  transformer block's feed-forward) took 20 ms on one thread. Tessera's
  kernels store the mask's lanes and pack them to bytes with SSE2
  (compare with zero, two packs). For 2M elements on one thread the
  stock store took 13.4 ms and a scalar loop over the lanes' first bytes
  0.95 ms; in a compiled transformer layer's training step (its
  [16, 128, 1024] relu, 2 threads, AVX2) the packs took that kernel
  from 1.06-1.15 to 0.47-0.65 ms.
  Loads of masks (``VecMask::from(bool*, n)``) branch on each bool, which
  mispredicts on a relu's mask (7.6 -> 0.15 ms for 2M random bools
  without branches); 4-byte lanes now widen 8 (AVX2) or 16 (AVX-512)
  bools in one instruction, written with one store that the vector load
  reads whole: a load spanning two smaller stores stalls, which made the
  2-store SSE2 form slower than the scalar loop.
"""

import re

import torch
from torch._inductor import config
from torch._inductor.codegen.cpp import (
    CppKernelProxy,
    CppScheduling,
    CppTile2DKernel,
    CppVecKernel,
    KernelGroup,
)
from torch._inductor.codegen.cpp_utils import cexpr_index
from torch._inductor.utils import IndentedBuffer

# Work per thread (elements, Inductor's cpp.min_chunk_size) below which a
# tessera kernel runs on the calling thread: waking oneTBB's workers costs
# a few microseconds, about 16K float elements of an elementwise loop (the
# runtime's CPU kernels split at 32K elements for 2 threads likewise).
SERIAL_BELOW_ITERATIONS_PER_THREAD = 1 << 14

# Defined once in each kernel source that stores or loads a bool mask. A
# VecMask's lanes are all ones or all zeros; a stored lane is true when
# nonzero, a loaded bool becomes its lane's bits without a branch (the
# branches of VecMask::from mispredict on a relu's mask).
STORE_BOOL_MASK = "tessera_store_bool_mask"
LOAD_BOOL_MASK = "tessera_load_bool_mask"
_BOOL_MASK_DEFINITIONS = f"""\
// Stores on x86-64 (SSE2, which every x86-64 has): 32 bytes of lanes at a
// time, each lane tested whole, packed to bytes in place of a loop over
// lanes.
#if defined(__SSE2__)
template <typename T, int size>
inline constexpr bool tessera_mask_lanes_packable =
    (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4) && (size * sizeof(T)) % 32 == 0;
#endif
template <typename T, int N>
static inline void {STORE_BOOL_MASK}(const at::vec::VecMask<T, N>& mask, bool* dst,
                                     int64_t count) {{
  constexpr int size = at::vec::VecMask<T, N>::size();
  __at_align__ T lanes[size];
  at::vec::VectorizedN<T, N>(mask).store(lanes);
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(lanes);
#if defined(__SSE2__)
  if constexpr (tessera_mask_lanes_packable<T, size>) {{
    if (count == size) {{
      const __m128i zero = _mm_setzero_si128(), one = _mm_set1_epi8(1);
      constexpr int step = 32 / sizeof(T);
      for (int i = 0; i < size; i += step) {{
        const __m128i* from = reinterpret_cast<const __m128i*>(bytes + i * sizeof(T));
        const __m128i low = _mm_load_si128(from), high = _mm_load_si128(from + 1);
        __m128i* to = reinterpret_cast<__m128i*>(dst + i);
        if constexpr (sizeof(T) == 4) {{
          __m128i is_zero = _mm_packs_epi32(_mm_cmpeq_epi32(low, zero), _mm_cmpeq_epi32(high, zero));
          is_zero = _mm_packs_epi16(is_zero, is_zero);
          _mm_storel_epi64(to, _mm_andnot_si128(is_zero, one));
        }} else if constexpr (sizeof(T) == 2) {{
          const __m128i is_zero =
              _mm_packs_epi16(_mm_cmpeq_epi16(low, zero), _mm_cmpeq_epi16(high, zero));
          _mm_storeu_si128(to, _mm_andnot_si128(is_zero, one));
        }} else {{
          _mm_storeu_si128(to, _mm_andnot_si128(_mm_cmpeq_epi8(low, zero), one));
          _mm_storeu_si128(to + 1, _mm_andnot_si128(_mm_cmpeq_epi8(high, zero), one));
        }}
      }}
      return;
    }}
  }}
#endif
  for (int64_t i = 0; i < count; ++i) dst[i] = bytes[i * sizeof(T)] != 0;
}}
template <typename Mask> struct tessera_mask_lanes;
template <typename T, int N> struct tessera_mask_lanes<at::vec::VecMask<T, N>> {{
  using lane = T;
  static constexpr int vectors = N;
}};
template <typename Mask>
static inline Mask {LOAD_BOOL_MASK}(const bool* src, int64_t count) {{
  using T = typename tessera_mask_lanes<Mask>::lane;
  if constexpr (std::is_same_v<T, bool>) {{
    return Mask::from(src, count);
  }} else {{
    using Bits = at::vec::int_same_size_t<T>;
    using Lanes = at::vec::VectorizedN<T, tessera_mask_lanes<Mask>::vectors>;
    constexpr int size = Mask::size();
    __at_align__ Bits bits[size];
    const unsigned char* bytes = reinterpret_cast<const unsigned char*>(src);
    // A lane's bits come from one 32- or 64-byte store that the vector
    // load below reads whole (a load that spans two stores stalls).
#if defined(__AVX2__)
    if constexpr (sizeof(T) == 4 && at::vec::Vectorized<T>::size() == 8) {{
      if (count >= size) {{
        const __m256i zero = _mm256_setzero_si256(), ones = _mm256_set1_epi32(-1);
        for (int i = 0; i < size; i += 8) {{
          const __m256i wide =
              _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(bytes + i)));
          _mm256_store_si256(reinterpret_cast<__m256i*>(bits + i),
                             _mm256_xor_si256(_mm256_cmpeq_epi32(wide, zero), ones));
        }}
        return Mask(Lanes::loadu(bits));
      }}
    }}
#endif
#if defined(__AVX512F__)
    if constexpr (sizeof(T) == 4 && at::vec::Vectorized<T>::size() == 16) {{
      if (count >= size) {{
        for (int i = 0; i < size; i += 16) {{
          // (maskz: g++ 12 warns of an uninitialized value in the plain form)
          const __m512i wide = _mm512_maskz_cvtepu8_epi32(
              0xFFFF, _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + i)));
          _mm512_store_si512(bits + i, _mm512_maskz_set1_epi32(_mm512_test_epi32_mask(wide, wide), -1));
        }}
        return Mask(Lanes::loadu(bits));
      }}
    }}
#endif
    if (count >= size) {{
      for (int i = 0; i < size; ++i) bits[i] = -static_cast<Bits>(bytes[i] != 0);
    }} else {{
      for (int i = 0; i < size; ++i) bits[i] = i < count ? -static_cast<Bits>(bytes[i] != 0) : 0;
    }}
    return Mask(Lanes::loadu(bits));
  }}
}}
"""
_PREFIX_INCLUDE = "#include <torch/csrc/inductor/cpp_prefix.h>\n"


def _define_after_prefix(source: str, definitions: str) -> str:
    """source with definitions right after Inductor's prefix header (which
    they use), or as it is when it has none."""
    return source.replace(_PREFIX_INCLUDE, _PREFIX_INCLUDE + definitions, 1)


# The thread pool of the rewritten loops: the package loads
# libtorch_tessera_host_parallel.so (host_kernels.py), and a kernel finds it
# by its soname. Without it (a kernel run in a process that never imported
# torch_tessera) the loops run on the calling thread.
PARALLEL_FOR = "tessera_parallel_for"
PARALLEL_TEAM = "tessera_parallel_team"
_PARALLEL_FOR_DEFINITION = f"""\
#include <dlfcn.h>
using tessera_parallel_body = void (*)(void*, int64_t, int64_t);
using tessera_parallel_runner = void (*)(int64_t, tessera_parallel_body, void*);
static tessera_parallel_runner tessera_parallel_runner_found() {{
  static const tessera_parallel_runner runner = [] {{
    void* library = dlopen("libtorch_tessera_host_parallel.so", RTLD_NOLOAD | RTLD_LAZY);
    return library == nullptr ? nullptr : reinterpret_cast<tessera_parallel_runner>(
        dlsym(library, "tessera_host_parallel_for"));
  }}();
  return runner;
}}
// Iterations of "for (x = begin; x < end; x += step)", step > 0.
static inline int64_t tessera_trip_count(int64_t begin, int64_t end, int64_t step) {{
  return end > begin ? (end - begin + step - 1) / step : 0;
}}
// Runs loop(first, last) over [begin, end) in pieces that start on begin plus
// a multiple of step, as the OpenMP loop "for (x = begin; x < end; x += step)"
// it replaces would split among threads.
template <typename Loop>
static void {PARALLEL_FOR}(int64_t begin, int64_t end, int64_t step, const Loop& loop) {{
  const int64_t count = tessera_trip_count(begin, end, step);
  if (count == 0) return;
  auto piece = [&](int64_t first, int64_t last) {{
    loop(begin + first * step, last == count ? end : begin + last * step);
  }};
  const tessera_parallel_runner runner = tessera_parallel_runner_found();
  if (runner == nullptr || count == 1) {{
    piece(0, count);
    return;
  }}
  runner(count, [](void* context, int64_t first, int64_t last) {{
    (*static_cast<decltype(piece)*>(context))(first, last);
  }}, &piece);
}}
// Runs member(tid) for each tid of a team of size members, members at once
// where there are threads: the OpenMP region it replaces has no barrier,
// so the members need not run together.
template <typename Member>
static void {PARALLEL_TEAM}(int64_t size, const Member& member) {{
  {PARALLEL_FOR}(0, size, 1, [&](int64_t first, int64_t last) {{
    for (int64_t tid = first; tid < last; ++tid) member(tid);
  }});
}}
// Member tid's share of "for (x = begin; x < end; x += step)" split among
// size members as OpenMP's static schedule does: [first, last).
static inline int64_t tessera_team_first(int64_t begin, int64_t end, int64_t step, int64_t tid,
                                         int64_t size) {{
  return begin + tessera_trip_count(begin, end, step) * tid / size * step;
}}
static inline int64_t tessera_team_last(int64_t begin, int64_t end, int64_t step, int64_t tid,
                                        int64_t size) {{
  return tid + 1 == size ? end : tessera_team_first(begin, end, step, tid + 1, size);
}}
"""

_OMP_PARALLEL = re.compile(r"^\s*#\s*pragma\s+omp\s+parallel\b")
_OMP_FOR = re.compile(r"^\s*#\s*pragma\s+omp\s+for\b(.*)$")
_OMP_SINGLE = re.compile(r"^\s*#\s*pragma\s+omp\s+single\s*$")
_THREAD_ID = re.compile(r"^\s*int\s+tid\s*=\s*omp_get_thread_num\(\);\s*$")
_FOR_HEADER = re.compile(r"^(\s*)for\((int64_t) (\w+)=(.*?); \3<(.*?); \3\+=(.*)\)\s*$")
# An OpenMP construct or runtime call other than "omp simd": what code run
# outside an OpenMP team must not use.
_OPENMP_USE = r"#\s*pragma\s+omp\s+(?!simd\b)|\bomp_"
# What a loop body must not use once its iterations leave OpenMP's team.
_TEAM_DEPENDENT = re.compile(r"\btid\b|" + _OPENMP_USE)
# Clauses of "omp for" that make the loop more than a split of iterations.
_UNSPLITTABLE_CLAUSES = re.compile(r"\b(reduction|lastprivate|linear|ordered|private)\b")
_COLLAPSE = re.compile(r"\bcollapse\((\d+)\)")


def _block_end(lines, open_index):
    """Index of the line closing the brace block that opens at open_index."""
    depth = 0
    for i in range(open_index, len(lines)):
        depth += lines[i].count("{") - lines[i].count("}")
        if depth == 0:
            return i
    raise ValueError("unbalanced braces in a generated kernel")


def _loop_nest(lines, at, hi, depth):
    """The `depth` perfectly nested loops starting at lines[at], each header
    followed by a "{" line, each inner loop the whole of its outer loop's
    block (what "omp for collapse(depth)" requires): (their header
    matches, the innermost block's lines, the index of the line closing
    the outermost), or None."""
    headers, line = [], at
    for _ in range(depth):
        header = _FOR_HEADER.match(lines[line]) if line < hi else None
        if header is None or line + 1 >= hi or lines[line + 1].strip() != "{":
            return None
        # A rectangular nest: no bound may name an outer loop's index.
        outer = "|".join(h.group(3) for h in headers)
        if outer and re.search(rf"\b({outer})\b", " ".join(header.group(4, 5, 6))):
            return None
        headers.append(header)
        line += 2
    innermost_end = _block_end(lines, line - 1)
    for level in range(depth - 1):
        if _block_end(lines, at + 1 + 2 * level) != innermost_end + depth - 1 - level:
            return None
    return headers, lines[line - 1:innermost_end + 1], innermost_end + depth - 1


def _split_loop_nest(headers, body):
    """A PARALLEL_FOR over the iterations of the nest `headers` (outermost
    first), flattened, each piece walking its share in the nest's order."""
    indent, index_type, var, begin, stop, step = headers[0].groups()
    if len(headers) == 1:
        return [f"{indent}{PARALLEL_FOR}({begin}, {stop}, {step}, "
                f"[&](int64_t tessera_first, int64_t tessera_last)",
                f"{indent}{{",
                f"{indent}for({index_type} {var}=tessera_first; {var}<tessera_last; {var}+={step})",
                *body,
                f"{indent}}});"]
    depth = len(headers)
    out = [f"{indent}{{"]
    for level, header in enumerate(headers):
        _, _, _, begin, stop, step = header.groups()
        out.append(f"{indent}const int64_t tessera_count{level} = "
                   f"tessera_trip_count({begin}, {stop}, {step});")
    total = " * ".join(f"tessera_count{level}" for level in range(depth))
    out += [f"{indent}{PARALLEL_FOR}(0, {total}, 1, "
            f"[&](int64_t tessera_first, int64_t tessera_last)",
            f"{indent}{{",
            f"{indent}int64_t tessera_rest = tessera_first;"]
    for level in range(depth - 1, 0, -1):
        out.append(f"{indent}int64_t tessera_index{level} = tessera_rest % tessera_count{level};")
        out.append(f"{indent}tessera_rest /= tessera_count{level};")
    out += [f"{indent}int64_t tessera_index0 = tessera_rest;",
            f"{indent}for(int64_t tessera_flat=tessera_first; tessera_flat<tessera_last; "
            f"++tessera_flat)",
            f"{indent}{{"]
    for level, header in enumerate(headers):
        _, index_type, var, begin, _, step = header.groups()
        out.append(f"{indent}const {index_type} {var} = {begin} + tessera_index{level} * {step};")
    # The next iteration's indices, before the body (which may "continue").
    advance = "++tessera_index0;"
    for level in range(1, depth):
        advance = (f"if (++tessera_index{level} == tessera_count{level}) "
                   f"{{ tessera_index{level} = 0; {advance} }}")
    out.append(f"{indent}{advance}")
    out += body
    out += [f"{indent}}}", f"{indent}}});", f"{indent}}}"]
    return out


def _region_items(lines, lo, hi):
    """lines[lo:hi] (the inside of an OpenMP parallel region) with each
    "omp for" loop as a PARALLEL_FOR call and "omp single" blocks as plain
    blocks, or None where the region holds anything else."""
    out, i = [], lo
    while i < hi:
        line, text = lines[i], lines[i].strip()
        if not text:
            out.append(line)
            i += 1
        elif _THREAD_ID.match(line):
            i += 1
        elif text == "{":
            end = _block_end(lines, i)
            inner = _region_items(lines, i + 1, end)
            if inner is None:
                return None
            out += [line, *inner, lines[end]]
            i = end + 1
        elif _OMP_SINGLE.match(line):
            if i + 1 >= hi or lines[i + 1].strip() != "{":
                return None
            end = _block_end(lines, i + 1)
            block = lines[i + 1:end + 1]
            if _TEAM_DEPENDENT.search("\n".join(block)):
                return None
            out += block
            i = end + 1
        elif (match := _OMP_FOR.match(line)) is not None:
            clauses = match.group(1)
            collapse = _COLLAPSE.search(clauses)
            nest = _loop_nest(lines, i + 1, hi, int(collapse.group(1)) if collapse else 1)
            if nest is None or _UNSPLITTABLE_CLAUSES.search(clauses):
                return None
            headers, body, end = nest
            if _TEAM_DEPENDENT.search("\n".join(body)):
                return None
            out += _split_loop_nest(headers, body)
            i = end + 1
        else:
            return None
    return out


_NUM_THREADS = re.compile(r"\bnum_threads\((\d+)\)")
_PER_THREAD_ARRAY = re.compile(r"\b\w+_arr\[(\d+)\];")
_TEAM_UNSAFE = re.compile(_OPENMP_USE)


def _team_size(pragma, before):
    """The team an OpenMP region was written for: its num_threads clause,
    else the size of the per-thread arrays declared before it (Inductor
    sizes them by the thread count it generated for), else None."""
    match = _NUM_THREADS.search(pragma)
    if match:
        return int(match.group(1))
    sizes = {int(n) for n in _PER_THREAD_ARRAY.findall("\n".join(before))}
    return sizes.pop() if len(sizes) == 1 else None


def _team_region(lines, lo, hi, size):
    """The inside of a parallel region that indexes per-thread state by tid
    (Inductor's parallel reductions) as PARALLEL_TEAM's member, or None. It
    qualifies with exactly one "omp for" loop and no other OpenMP construct:
    without a barrier, each member can run its share alone. The region's
    own declarations stay inside the member, private to it as to each
    OpenMP thread."""
    body = lines[lo:hi]
    loops = [i for i, line in enumerate(body) if _OMP_FOR.match(line)]
    if len(loops) != 1:
        return None
    at = loops[0]
    rest = [line for i, line in enumerate(body) if i != at and not _THREAD_ID.match(line)]
    if _TEAM_UNSAFE.search("\n".join(rest)):
        return None
    clauses = _OMP_FOR.match(body[at]).group(1)
    header = _FOR_HEADER.match(body[at + 1]) if at + 1 < len(body) else None
    if header is None or _UNSPLITTABLE_CLAUSES.search(clauses):
        return None
    indent, index_type, var, begin, stop, step = header.groups()
    share = f"{begin}, {stop}, {step}, tid, {size}"
    out = [f"{indent}{PARALLEL_TEAM}({size}, [&](int64_t tid)", f"{indent}{{"]
    for i, line in enumerate(body):
        if _THREAD_ID.match(line) or i == at:
            continue
        if i == at + 1:
            out.append(f"{indent}const int64_t tessera_share_end = tessera_team_last({share});")
            line = (f"{indent}for({index_type} {var}=tessera_team_first({share}); "
                    f"{var}<tessera_share_end; {var}+={step})")
        out.append(line)
    out.append(f"{indent}}});")
    return out


def rewrite_parallel_regions(source: str) -> str:
    """A generated kernel's OpenMP parallel regions moved to oneTBB: a region
    made only of "omp for" loops and "omp single" blocks becomes PARALLEL_FOR
    calls (one per loop, each a split of the loop's iterations, done when it
    returns, as the loop's implicit barrier); a region with per-thread state
    and one loop becomes a PARALLEL_TEAM of the size it was written for
    (_team_region); any other region loses its "omp parallel" line and
    runs on the calling thread, as a team of one (what OpenMP code must
    compute alike). Adds the helpers' definitions where they are called."""
    lines = source.split("\n")
    out, i, rewritten = [], 0, False
    while i < len(lines):
        if not _OMP_PARALLEL.match(lines[i]):
            out.append(lines[i])
            i += 1
            continue
        if i + 1 < len(lines) and lines[i + 1].strip() == "{":
            end = _block_end(lines, i + 1)
            inner = _region_items(lines, i + 2, end)
            size = _team_size(lines[i], out) if inner is None else None
            if inner is None and size is not None and size > 1:
                inner = _team_region(lines, i + 2, end, size)
            if inner is not None:
                out += [lines[i + 1], *inner, lines[end]]
                rewritten = True
                i = end + 1
                continue
        i += 1  # the team of one: the region's code as it is, on this thread
    source = "\n".join(out)
    return _define_after_prefix(source, _PARALLEL_FOR_DEFINITION) if rewritten else source


class TesseraVecKernel(CppVecKernel):
    """Inductor's vector kernel with bool loads through LOAD_BOOL_MASK and
    contiguous bool stores through STORE_BOOL_MASK."""

    def _get_vec_load_line(self, var, index, dtype, load_mask=None):
        if dtype != torch.bool:
            return super()._get_vec_load_line(var, index, dtype, load_mask)
        address = f"{var} + {cexpr_index(index)}" if index != 0 else var
        return (f"{LOAD_BOOL_MASK}<{self._get_mask_type()}>({address}, "
                f"{cexpr_index(self.num_elems)})")

    def _get_store_line(self, value, var, index, dtype, accu_store=False):
        if dtype == torch.bool and not accu_store:
            tiling_var = self.itervars[self.tiling_idx]
            if self._try_get_const_stride(index, tiling_var) == 1:
                code = IndentedBuffer()
                code.writeline(f"{STORE_BOOL_MASK}({value}, {var} + {cexpr_index(index)}, "
                               f"{cexpr_index(self.num_elems)});")
                return code
        return super()._get_store_line(value, var, index, dtype, accu_store)


class TesseraTile2DKernel(CppTile2DKernel, TesseraVecKernel):
    """The 2-D tiled kernel (transposed loads and stores) on TesseraVecKernel.
    It must be a TesseraVecKernel: Inductor asserts that a tiled loop's
    main kernel is an instance of the proxy's vec_kernel_cls when it
    gathers reduction buffers (a layer norm's or softmax's sums over a
    transposed input, as in ViT, Swin, ConvNeXt and Whisper)."""


class TesseraKernelProxy(CppKernelProxy):
    vec_kernel_cls = TesseraVecKernel
    tile2d_kernel_cls = TesseraTile2DKernel


class TesseraKernelGroup(KernelGroup):
    """A kernel's source with its parallel loops on oneTBB
    (rewrite_parallel_regions) and the bool mask helpers defined where
    called."""

    def codegen_group(self, name=None) -> str:
        source = rewrite_parallel_regions(super().codegen_group(name))
        if STORE_BOOL_MASK in source or LOAD_BOOL_MASK in source:
            source = _define_after_prefix(source, _BOOL_MASK_DEFINITIONS)
        return source


class TesseraScheduling(CppScheduling):
    """Inductor's C++ scheduling with tessera's kernels (see the module
    docstring): parallel loops on oneTBB where each thread gets
    SERIAL_BELOW_ITERATIONS_PER_THREAD elements, bool masks loaded and
    stored through LOAD_BOOL_MASK and STORE_BOOL_MASK."""

    kernel_proxy_cls = TesseraKernelProxy

    def reset_kernel_group(self):
        self.kernel_group = TesseraKernelGroup()

    def _few_threads(self):
        return config.patch({"cpp.min_chunk_size": SERIAL_BELOW_ITERATIONS_PER_THREAD})

    def codegen_node(self, node):
        with self._few_threads():
            return super().codegen_node(node)

    def codegen_outer_loop_node(self, node):
        with self._few_threads():
            return super().codegen_outer_loop_node(node)

    def codegen_template(self, *args, **kwargs):
        with self._few_threads():
            return super().codegen_template(*args, **kwargs)
