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


def test_a_collapsed_loop_nest_splits_its_outer_loop():
    out = rewrite_parallel_regions(COLLAPSED)
    assert "#pragma omp" not in out
    assert "for(int64_t x0=tessera_first; x0<tessera_last; x0+=static_cast<int64_t>(1L))" in out
    assert "for(int64_t x1=static_cast<int64_t>(0L);" in out


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
    (PER_THREAD_SUMS, lambda x: [sum(x)] + [0.0] * (len(x) - 1)),
], ids=["elementwise", "collapsed", "team"])
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
