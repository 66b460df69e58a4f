"""The external repositories Tessera's targets use, declared in one place.

This workspace's WORKSPACE calls tessera_dependencies(), and so does the
WORKSPACE of any other Bazel workspace that depends on this one as
@tessera (local_repository; docs/embedded.md): Tessera's BUILD files name
@eigen, @tbb, @vulkan, ... and in Bazel 4 those names resolve in the main
workspace, so the consumer must declare them too. The BUILD files are
named with Label(), which resolves here, in the repository that holds this
file, whichever workspace loads it.

Every repository is fetched only when a target that is built needs it: a
program using //runtime and //devices/cpu runs none of the configure rules
(PyTorch, Python, CUDA).
"""

load("//third_party/cuda:cuda_configure.bzl", "cuda_configure")
load("//third_party/python:python_configure.bzl", "python_configure")
load("//third_party/torch:torch_configure.bzl", "torch_configure")

def _system_library(name, path, build_file):
    if not native.existing_rule(name):
        native.new_local_repository(
            name = name,
            build_file = str(Label("//third_party:" + build_file)),
            path = path,
        )

def tessera_dependencies():
    """Declares each repository Tessera needs that the workspace lacks."""

    # System libraries from Debian packages (installed by ./dev setup).
    _system_library("eigen", "/usr/include/eigen3", "eigen.BUILD")
    _system_library("tbb", "/usr/include/oneapi", "tbb.BUILD")
    _system_library("catch2", "/usr/include/catch2", "catch2.BUILD")

    # oneDNN (Debian's libdnnl-dev 2.6.3): the CPU device's f32 GEMM and
    # convolution (see devices/cpu/kernels/gemm_dnnl.cc for why).
    _system_library("dnnl", "/usr/include/oneapi/dnnl", "dnnl.BUILD")

    # nlohmann/json (Debian's nlohmann-json3-dev): JSON headers of
    # safetensors files (runtime/io) and tokenizer.json (models/text).
    _system_library("nlohmann_json", "/usr/include", "nlohmann_json.BUILD")

    # ICU (Debian's libicu-dev): Unicode normalization and character classes
    # for the BERT text normalizer (models/text).
    _system_library("icu", "/usr/include", "icu.BUILD")

    # Vulkan headers and loader (Debian's libvulkan-dev), for devices/vulkan.
    # Shaders are compiled by the system's glslc (see
    # devices/vulkan/shaders.bzl).
    _system_library("vulkan", "/usr/include", "vulkan.BUILD")

    # The installed PyTorch and its Python, for the bridge (bridge/).
    if not native.existing_rule("torch"):
        torch_configure(name = "torch")

    # The Python that builds the tessera module (bindings/): its headers only.
    if not native.existing_rule("python"):
        python_configure(name = "python")

    # The CUDA toolkit (nvcc, the static CUDA runtime, cuBLAS headers), for
    # devices/cuda: /usr/local/cuda or what ./dev setup unpacked. Building
    # needs no GPU; see third_party/cuda/cuda_configure.bzl.
    if not native.existing_rule("cuda"):
        cuda_configure(name = "cuda")
