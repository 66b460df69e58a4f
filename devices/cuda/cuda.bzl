"""Compiles CUDA sources with nvcc into objects a cc_library links.

cuda_objects(name, srcs, hdrs) runs one nvcc per .cu file (so Bazel keeps
both cores busy and rebuilds only what changed) and declares <name>, a
cc_library of the objects. Every file is compiled as position-independent
C++20 for the GPU architectures of --define=TESSERA_CUDA_ARCHS (a comma
list of sm_XX, each SASS for that architecture, and compute_XX, PTX that the
driver compiles for newer GPUs at first use; nvcc_gencode.sh turns the list
into nvcc's -gencode flags with as few front-end passes as it allows).
.bazelrc sets the default and the cuda_release config; docs/building.md
says why.

Device code is whole-program per file (no relocatable device code): a .cu
file holds its kernels and their launchers, and shares device code with
others only through headers.
"""

load("@cuda//:defs.bzl", "CUBLAS_INCLUDE", "NVCC")

_NVCC_FLAGS = " ".join([
    "-std=c++20",
    # Host code only (launchers); device code is always optimized fully.
    "-O2",
    "-Xcompiler=-fPIC,-fno-omit-frame-pointer",
    # Compressed fatbins: a third of the size (the driver inflates them
    # once, at load).
    "-Xfatbin=-compress-all",
    # Line tables for the profiler and sanitizer; no effect on speed.
    "-lineinfo",
    # constexpr host functions (std::numeric_limits) in device code.
    "--expt-relaxed-constexpr",
    # Lambdas with __device__ in launchers.
    "--extended-lambda",
])

def cuda_objects(name, srcs, hdrs = [], nvcc_flags = []):
    """Declares cc_library <name> holding one nvcc-compiled object per .cu.

    Args:
      name: the cc_library.
      srcs: .cu files.
      hdrs: every header the sources include (.cuh, .h, runtime headers),
        so that a change to one recompiles what uses it.
      nvcc_flags: flags for these sources only, after the common ones.
    """
    # Where #include "runtime/..." starts: the execroot, or external/<name>
    # when another workspace builds this one as @<name> (docs/embedded.md).
    repository = native.repository_name()
    root = "." if repository == "@" else "external/" + repository[1:]
    objects = []
    for src in srcs:
        stem = src[:-len(".cu")]
        out = "_nvcc/%s/%s.pic.o" % (name, stem)
        native.genrule(
            name = "%s_%s_nvcc" % (name, stem.replace("/", "_")),
            srcs = [src] + hdrs,
            tools = ["//devices/cuda:nvcc_gencode.sh"],
            outs = [out],
            cmd = """
set -e
gencode=$$(%s "$(TESSERA_CUDA_ARCHS)")
%s %s %s $$gencode -I%s -I%s -c $(location %s) -o $@
""" % (
                "$(location //devices/cuda:nvcc_gencode.sh)",
                NVCC,
                _NVCC_FLAGS,
                " ".join(nvcc_flags),
                root,
                CUBLAS_INCLUDE,
                src,
            ),
            message = "nvcc %s" % src,
        )
        objects.append(out)
    native.cc_library(
        name = name,
        srcs = objects,
        alwayslink = 1,
        linkstatic = 1,
    )
