"""rewrite_parallel_regions (torch_tessera/_inductor_kernels.py) on kernel
sources written the way Inductor writes them: which OpenMP regions move to
oneTBB, which run on the calling thread, and that the result compiles and
computes what the OpenMP kernel does (built with g++ against a stand-in
for the thread pool that really runs pieces on two threads)."""

import ctypes
import os
import shutil
import subprocess
import textwrap

import pytest

from torch_tessera._inductor_kernels import PARALLEL_FOR, PARALLEL_TEAM, rewrite_parallel_regions

PREFIX = "#include <torch/csrc/inductor/cpp_prefix.h>\n"


def kernel(body):
    return PREFIX + 'extern "C" void kernel(float* out_ptr0, const float* in_ptr0)\n{\n' + \
        textwrap.dedent(body).strip("\n") + "\n}\n"


ELEMENTWISE = kernel("""
    #pragma omp parallel
    {
        int tid = omp_get_thread_num();
        {
            #pragma omp for
            for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(1000L); x0+=static_cast<int64_t>(16L))
            {
                for(int64_t x1=x0; x1<std::min(x0 + 16, static_cast<int64_t>(1000L)); x1++) out_ptr0[x1] = in_ptr0[x1] * 2;
            }
        }
        #pragma omp single
        {
            out_ptr0[0] = 1;
        }
    }
""")

# Inductor's parallel reduction: per-thread partial sums indexed by tid,
# region-private locals, one loop, no barrier; combined after the region.
PER_THREAD_SUMS = kernel("""
    float tmp_acc0_arr[2];
    for (int i = 0; i < 2; i++)
    {
        tmp_acc0_arr[i] = 0;
    }
    #pragma omp parallel
    {
        int tid = omp_get_thread_num();
        float tmp_acc0_local = 0;
        #pragma omp for
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(1000L); x0+=static_cast<int64_t>(1L))
        {
            tmp_acc0_local = tmp_acc0_local + in_ptr0[x0];
        }
        tmp_acc0_arr[tid] = tmp_acc0_local;
    }
    for (int tid = 0; tid < 2; tid++)
    {
        out_ptr0[0] = out_ptr0[0] + tmp_acc0_arr[tid];
    }
""")

# Per-thread state and a barrier (omp single between two loops): no team
# of independent members can run it.
TEAM_WITH_BARRIER = kernel("""
    float tmp_acc0_arr[2];
    #pragma omp parallel num_threads(2)
    {
        int tid = omp_get_thread_num();
        #pragma omp for
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(1000L); x0+=static_cast<int64_t>(1L))
        {
            tmp_acc0_arr[tid] = tmp_acc0_arr[tid] + in_ptr0[x0];
        }
        #pragma omp single
        {
            out_ptr0[0] = tmp_acc0_arr[0] + tmp_acc0_arr[1];
        }
    }
""")

REGION_LOCAL = kernel("""
    #pragma omp parallel
    {
        int tid = omp_get_thread_num();
        float scratch[16];
        #pragma omp for
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(64L); x0+=static_cast<int64_t>(1L))
        {
            scratch[x0 % 16] = in_ptr0[x0];
            out_ptr0[x0] = scratch[x0 % 16];
        }
    }
""")

COLLAPSED = kernel("""
    #pragma omp parallel
    {
        int tid = omp_get_thread_num();
        #pragma omp for collapse(2)
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(3L); x0+=static_cast<int64_t>(1L))
        {
            for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(5L); x1+=static_cast<int64_t>(1L))
            {
                out_ptr0[x1 + 5L*x0] = in_ptr0[x1 + 5L*x0] + 1;
            }
        }
    }
""")

# Three collapsed loops whose outer one has a single iteration (so
# splitting it alone would leave one thread all the work), an inner step
# of 2, and a body that skips some iterations with "continue".
COLLAPSED_THREE = kernel("""
    #pragma omp parallel
    {
        int tid = omp_get_thread_num();
        #pragma omp for collapse(3)
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(1L); x0+=static_cast<int64_t>(1L))
        {
            for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(7L); x1+=static_cast<int64_t>(1L))
            {
                for(int64_t x2=static_cast<int64_t>(0L); x2<static_cast<int64_t>(9L); x2+=static_cast<int64_t>(2L))
                {
                    if (x1 == 3) continue;
                    out_ptr0[x2 + 10L*x1 + 70L*x0] = in_ptr0[x2 + 10L*x1] + x1;
                }
            }
        }
    }
""")

# Collapsed loops whose inner bound names the outer index (not rectangular):
# no flattened split computes its trip counts, so it runs as it is.
TRIANGULAR = kernel("""
    #pragma omp parallel
    {
        int tid = omp_get_thread_num();
        #pragma omp for collapse(2)
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(4L); x0+=static_cast<int64_t>(1L))
        {
            for(int64_t x1=static_cast<int64_t>(0L); x1<x0; x1+=static_cast<int64_t>(1L))
            {
                out_ptr0[x1 + 4L*x0] = in_ptr0[x1 + 4L*x0];
            }
        }
    }
""")


def _collapsed_three_expected(x):
    out = [0.0] * len(x)
    for x1 in range(7):
        for x2 in range(0, 9, 2):
            if x1 != 3:
                out[x2 + 10 * x1] = x[x2 + 10 * x1] + x1
    return out


def test_a_region_of_loops_and_single_blocks_moves_to_the_thread_pool():
    out = rewrite_parallel_regions(ELEMENTWISE)
    assert "#pragma omp" not in out and "omp_get_thread_num" not in out
    assert out.count(f"{PARALLEL_FOR}(static_cast<int64_t>(0L), static_cast<int64_t>(1000L), "
                     "static_cast<int64_t>(16L), [&](int64_t tessera_first, int64_t tessera_last)") == 1
    assert "for(int64_t x0=tessera_first; x0<tessera_last; x0+=static_cast<int64_t>(16L))" in out
    assert "out_ptr0[0] = 1;" in out  # the single block, now run once by the caller
    assert out.index("static void tessera_parallel_for(") < out.index('extern "C"')


def test_a_region_of_per_thread_partial_sums_becomes_a_team():
    """The team's size comes from the per-thread arrays; each member gets
    its static share of the loop and its own copy of the region's locals."""
    out = rewrite_parallel_regions(PER_THREAD_SUMS)
    assert "#pragma omp" not in out and "omp_get_thread_num" not in out
    assert f"{PARALLEL_TEAM}(2, [&](int64_t tid)" in out
    assert ("for(int64_t x0=tessera_team_first(static_cast<int64_t>(0L), static_cast<int64_t>(1000L), "
            "static_cast<int64_t>(1L), tid, 2); x0<tessera_share_end;") in out
    member = out[out.index(PARALLEL_TEAM + "(2"):]
    assert member.index("float tmp_acc0_local = 0;") < member.index("});")


@pytest.mark.parametrize("source", [TEAM_WITH_BARRIER, REGION_LOCAL], ids=["barrier", "region_local"])
def test_a_region_that_needs_a_team_runs_on_the_calling_thread(source):
    """Per-thread state with a barrier, and variables private to each thread
    of a team of unknown size: the region loses its "omp parallel" line
    only, which makes it a team of one, and no thread pool is called."""
    out = rewrite_parallel_regions(source)
    assert "#pragma omp parallel" not in out
    assert PARALLEL_FOR not in out
    assert out == "\n".join(line for line in source.split("\n")
                            if "#pragma omp parallel" not in line)


def test_a_collapsed_loop_nest_splits_its_flattened_iterations():
    """As "omp for collapse(2)" does: the pool gets the 3 x 5 iterations of
    both loops, not the outer loop's 3 (2 threads would split those 2:1)."""
    out = rewrite_parallel_regions(COLLAPSED)
    assert "#pragma omp" not in out
    assert ("const int64_t tessera_count0 = tessera_trip_count(static_cast<int64_t>(0L), "
            "static_cast<int64_t>(3L), static_cast<int64_t>(1L));") in out
    assert (f"{PARALLEL_FOR}(0, tessera_count0 * tessera_count1, 1, "
            "[&](int64_t tessera_first, int64_t tessera_last)") in out
    assert "const int64_t x1 = static_cast<int64_t>(0L) + tessera_index1 * " \
           "static_cast<int64_t>(1L);" in out
    assert "for(int64_t x1=" not in out


def test_a_collapsed_nest_that_is_not_rectangular_runs_on_the_calling_thread():
    out = rewrite_parallel_regions(TRIANGULAR)
    assert PARALLEL_FOR not in out
    assert out == "\n".join(line for line in TRIANGULAR.split("\n")
                            if "#pragma omp parallel" not in line)


def test_a_source_without_parallel_regions_is_unchanged():
    serial = kernel("""
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(4L); x0+=static_cast<int64_t>(1L))
        {
            out_ptr0[x0] = in_ptr0[x0];
        }
    """)
    assert rewrite_parallel_regions(serial) == serial


# A stand-in for libtorch_tessera_host_parallel.so's function with the same
# soname: runs the first half of the iterations on a second thread.
POOL = r"""
#include <cstdint>
#include <thread>
extern "C" __attribute__((visibility("default"))) void tessera_host_parallel_for(
    int64_t count, void (*body)(void*, int64_t, int64_t), void* context) {
  const int64_t half = count / 2;
  std::thread other([&] { body(context, 0, half); });
  body(context, half, count);
  other.join();
}
"""

# The rewritten kernels without torch's headers: what they use of the prefix.
STAND_IN_PREFIX = "#include <cstdint>\n#include <algorithm>\n"


@pytest.mark.skipif(shutil.which("g++") is None, reason="no g++")
@pytest.mark.parametrize("source, expected", [
    (ELEMENTWISE, lambda x: [1.0] + [v * 2 for v in x[1:]]),
    (COLLAPSED, lambda x: [v + 1 for v in x[:15]] + [0.0] * (len(x) - 15)),
    (COLLAPSED_THREE, _collapsed_three_expected),
    (PER_THREAD_SUMS, lambda x: [sum(x)] + [0.0] * (len(x) - 1)),
], ids=["elementwise", "collapsed", "collapsed_three", "team"])
def test_rewritten_kernels_compute_what_the_openmp_ones_do(tmp_path, source, expected):
    pool = tmp_path / "libtorch_tessera_host_parallel.so"
    (tmp_path / "pool.cc").write_text(POOL)
    subprocess.run(["g++", "-std=c++20", "-shared", "-fPIC", "-pthread",
                    "-Wl,-soname,libtorch_tessera_host_parallel.so", "-o", str(pool),
                    str(tmp_path / "pool.cc")], check=True)
    rewritten = rewrite_parallel_regions(source).replace(PREFIX, STAND_IN_PREFIX)
    (tmp_path / "kernel.cc").write_text(rewritten)
    library = tmp_path / "kernel.so"
    subprocess.run(["g++", "-std=c++20", "-O1", "-Wall", "-Werror", "-Wno-unused-variable",
                    "-shared", "-fPIC", "-o", str(library), str(tmp_path / "kernel.cc")],
                   check=True)
    ctypes.CDLL(str(pool))  # loaded first, as the package loads the real one
    run = ctypes.CDLL(str(library)).kernel
    n = 1000
    x = (ctypes.c_float * n)(*[float(i % 7) for i in range(n)])
    out = (ctypes.c_float * n)()
    run(out, x)
    assert list(out) == expected(list(x))
    assert os.path.exists(pool)


# Every lane width the bool mask helpers take, for each vector ISA Inductor
# compiles kernels for: the AVX-512 forms compile here even where the CPU
# cannot run them (the kernels test_compile.py runs take this machine's).
MASK_HELPER_USES = r"""
using namespace at::vec;
template <typename T, int N> void round_trip(bool* b) {
  constexpr int size = VecMask<T, N>::size();
  tessera_store_bool_mask(tessera_load_bool_mask<VecMask<T, N>>(b, size), b, size);
  tessera_store_bool_mask(tessera_load_bool_mask<VecMask<T, N>>(b, 3), b, 3);
}
template void round_trip<float, 1>(bool*);
template void round_trip<float, 2>(bool*);
template void round_trip<int, 1>(bool*);
template void round_trip<c10::BFloat16, 1>(bool*);
template void round_trip<int8_t, 1>(bool*);
template void round_trip<double, 2>(bool*);
template void round_trip<int64_t, 2>(bool*);
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="no g++")
@pytest.mark.parametrize("isa_flags", [
    ["-DCPU_CAPABILITY_AVX512", "-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq", "-mfma"],
    ["-DCPU_CAPABILITY_AVX2", "-mavx2", "-mfma", "-mf16c"],
    [],
], ids=["avx512", "avx2", "default"])
def test_bool_mask_helpers_compile_for_every_vector_isa(tmp_path, isa_flags):
    import torch

    from torch_tessera._inductor_kernels import _BOOL_MASK_DEFINITIONS

    source = tmp_path / "masks.cc"
    source.write_text("#include <ATen/cpu/vec/vec.h>\n#include <cstdint>\n#include <type_traits>\n"
                      + _BOOL_MASK_DEFINITIONS + MASK_HELPER_USES)
    include = os.path.join(os.path.dirname(torch.__file__), "include")
    subprocess.run(["g++", "-std=c++20", "-O2", "-c", "-Wall", "-Werror", "-Wno-unknown-pragmas",
                    *isa_flags, "-I", include, "-o", str(tmp_path / "masks.o"), str(source)],
                   check=True)
