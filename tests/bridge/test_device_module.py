"""torch.tessera as a device module: devices, the current device, properties,
the generated tensor methods, torch.accelerator on tessera, and the device
list chosen by TESSERA_VISIBLE_DEVICES."""

import os
import subprocess
import sys
import textwrap

import pytest
import torch

import torch_tessera


def two_devices():
    if torch.tessera.device_count() < 2:
        pytest.skip("needs two tessera devices")


def test_registered_as_the_privateuse1_device():
    assert torch._C._get_privateuse1_backend_name() == "tessera"
    assert torch.get_device_module("tessera") is torch.tessera
    assert torch.device("tessera:0").type == "tessera"


def test_is_pytorchs_current_accelerator(tessera):
    assert torch.accelerator.current_accelerator() == torch.device("tessera")
    assert torch.accelerator.is_available()
    assert torch.accelerator.device_count() == torch.tessera.device_count()


def test_device_count_and_availability(tessera):
    n = torch.tessera.device_count()
    assert n >= 1
    assert torch.tessera.is_available()
    assert torch.tessera.is_initialized()
    # The runtime's CPU device is always visible unless the environment
    # hides it: after hardware accelerators, before emulated devices.
    if "TESSERA_VISIBLE_DEVICES" not in os.environ:
        props = [torch.tessera.get_device_properties(i) for i in range(n)]
        kinds = ["cpu" if p.runtime_device.startswith("cpu")
                 else "software" if p.software else "hardware" for p in props]
        assert kinds.count("cpu") == 1
        assert kinds == sorted(kinds, key=["hardware", "cpu", "software"].index)


def test_current_device_and_set_device(tessera):
    assert torch.tessera.current_device() == 0
    torch.tessera.set_device(0)
    torch.tessera.set_device("tessera:0")
    torch.tessera.set_device(torch.device("tessera", 0))
    assert torch.tessera.current_device() == 0
    assert torch.accelerator.current_device_index() == 0


def test_set_device_to_a_missing_index_is_an_index_error(tessera):
    n = torch.tessera.device_count()
    with pytest.raises(IndexError, match=f"tessera:{n} does not exist"):
        torch.tessera.set_device(n)
    assert torch.tessera.current_device() == 0


def test_set_device_rejects_other_device_types(tessera):
    with pytest.raises(ValueError, match="expected a tessera device, got cpu"):
        torch.tessera.set_device("cpu")
    with pytest.raises(TypeError, match="expected a torch.device, str or int"):
        torch.tessera.set_device(1.5)


def test_device_context_manager_restores_the_device(tessera):
    with torch.tessera.device(0):
        assert torch.tessera.current_device() == 0
        x = torch.ones(2, device="tessera")
    assert x.device == torch.device("tessera:0")
    assert torch.tessera.current_device() == 0


def test_device_context_manager_switches_devices():
    two_devices()
    with torch.tessera.device(1):
        assert torch.tessera.current_device() == 1
        x = torch.ones(2, device="tessera")
        with torch.tessera.device_of(torch.ones(1, device="tessera:0")):
            assert torch.tessera.current_device() == 0
        assert torch.tessera.current_device() == 1
    assert torch.tessera.current_device() == 0
    assert x.device == torch.device("tessera:1")


def test_set_device_places_new_tensors():
    two_devices()
    try:
        torch.tessera.set_device(1)
        assert torch.zeros(3, device="tessera").device == torch.device("tessera:1")
        assert torch.accelerator.current_device_index() == 1
    finally:
        torch.tessera.set_device(0)


def test_accelerator_device_index_context(tessera):
    with torch.accelerator.device_index(0):
        assert torch.tessera.current_device() == 0
    assert torch.tessera.current_device() == 0


def test_device_name_and_properties(tessera):
    props = torch.tessera.get_device_properties(0)
    assert isinstance(props.name, str) and props.name
    assert torch.tessera.get_device_name() == props.name
    assert torch.tessera.get_device_name("tessera:0") == props.name
    assert torch.tessera.get_device_name(torch.device("tessera:0")) == props.name
    assert props.total_memory > 0
    assert props.compute_units >= 1
    assert ":" in props.runtime_device
    assert torch_tessera._C.runtime_device(0) == props.runtime_device


def test_device_name_of_a_missing_device_is_an_index_error(tessera):
    with pytest.raises(IndexError, match="tessera:9 does not exist"):
        torch.tessera.get_device_name(9)


def test_device_capability_lists_the_runtime_dtypes(tessera):
    dtypes = torch.tessera.get_device_capability(0)["supported_dtypes"]
    assert {torch.float32, torch.int64, torch.bool, torch.uint8} <= dtypes
    assert torch.complex64 not in dtypes
    assert torch.uint16 not in dtypes
    props = torch.tessera.get_device_properties(0)
    assert (torch.float16 in dtypes) == props.supports_f16
    assert (torch.float64 in dtypes) == props.supports_f64
    assert torch.accelerator.get_device_capability("tessera:0")["supported_dtypes"] == dtypes


def test_native_index_is_the_drivers_number(tessera):
    # The host device has none; a Vulkan (or CUDA) device's is the index the
    # driver lists it at, whatever order tessera gives the devices.
    for i in range(torch.tessera.device_count()):
        props = torch.tessera.get_device_properties(i)
        if props.runtime_device.startswith("cpu:"):
            assert props.native_index == -1
        else:
            assert props.native_index >= 0


def test_synchronize(tessera):
    x = torch.arange(6.0, device=tessera) * 2
    torch.tessera.synchronize()
    torch.tessera.synchronize(0)
    torch.accelerator.synchronize()
    torch.testing.assert_close(x.cpu(), torch.arange(6.0) * 2)


def test_generated_tensor_and_module_methods(tessera):
    x = torch.arange(4.0)
    y = x.tessera()
    assert y.is_tessera and not x.is_tessera
    assert y.device == torch.device("tessera:0")
    torch.testing.assert_close(y.cpu(), x)
    assert x.tessera(0).device == torch.device("tessera:0")
    m = torch.nn.Linear(3, 2).tessera()
    assert all(p.device == torch.device("tessera:0") for p in m.parameters())
    s = torch.UntypedStorage(8).tessera()
    assert s.is_tessera and s.device == torch.device("tessera:0")


def _run_with_visible(spec, code):
    env = dict(os.environ)
    env["TESSERA_VISIBLE_DEVICES"] = spec
    env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=120)


COUNT_AND_USE = """
    import torch, torch_tessera
    print("imported")
    print("count", torch.tessera.device_count(), torch.tessera.is_available())
    print(torch.ones(2, device="tessera").sum().item())
"""


@pytest.mark.parametrize("spec", ["cpu", "cpu:0", " cpu:0 ,", "cpu,"])
def test_visible_devices_selects_the_cpu_device(spec):
    result = _run_with_visible(spec, COUNT_AND_USE)
    assert result.returncode == 0, result.stderr
    assert "count 1 True" in result.stdout
    assert "2.0" in result.stdout


def test_visible_devices_empty_hides_every_device():
    result = _run_with_visible("", """
        import torch, torch_tessera
        print("count", torch.tessera.device_count(), torch.tessera.is_available())
        try:
            torch.ones(2, device="tessera")
        except IndexError as e:
            print("IndexError:", e)
    """)
    assert result.returncode == 0, result.stderr
    assert "count 0 False" in result.stdout
    assert "there are no tessera devices with TESSERA_VISIBLE_DEVICES=''" in result.stdout


@pytest.mark.parametrize("spec, message", [
    ("bogus", "TESSERA_VISIBLE_DEVICES='bogus': unknown device type 'bogus' (this build has: "),
    ("cpu:3", "TESSERA_VISIBLE_DEVICES='cpu:3': cpu:3 does not exist on this machine"),
    ("cpu:x", "TESSERA_VISIBLE_DEVICES='cpu:x': 'cpu:x' is not a device"),
    ("cpu:0,cpu", "names runtime device cpu:0 a second time"),
])
def test_visible_devices_errors_are_clear_value_errors(spec, message):
    # Importing succeeds; the first use of a device raises, every time.
    result = _run_with_visible(spec, """
        import torch, torch_tessera
        print("imported")
        for use in (torch.tessera.device_count, lambda: torch.ones(2, device="tessera")):
            try:
                use()
            except ValueError as e:
                print("ValueError:", e)
    """)
    assert result.returncode == 0, result.stderr
    assert "imported" in result.stdout
    assert result.stdout.count("ValueError: ") == 2
    assert message in result.stdout


def test_device_libraries_beside_the_extension_are_loaded():
    """The package loads every libtessera_<device>.so beside _C.so at import;
    each one loaded, and the CPU device's is always among them."""
    libs = torch_tessera.device_libraries()
    names = sorted(os.path.basename(lib["path"]) for lib in libs)
    assert "libtessera_cpu.so" in names
    assert "libtessera.so" not in names  # the runtime is linked, not a device
    package_dir = os.path.dirname(torch_tessera.__file__)
    on_disk = sorted(f for f in os.listdir(package_dir)
                     if f.startswith("libtessera_") and f.endswith(".so"))
    assert names == on_disk
    for lib in libs:
        assert lib["loaded"], lib
        assert lib["error"] == "", lib


def test_a_device_library_that_fails_to_load_is_reported(tmp_path):
    """A broken device library in the package folder: the import still works
    with the other devices, and device_libraries() says what failed."""
    package_dir = os.path.dirname(torch_tessera.__file__)
    broken = os.path.join(package_dir, "libtessera_zz_broken_test.so")
    with open(broken, "w") as f:
        f.write("not an ELF file")
    try:
        probe = textwrap.dedent("""
            import torch, torch_tessera
            bad = [l for l in torch_tessera.device_libraries() if not l["loaded"]]
            print(len(bad), "zz_broken" in bad[0]["path"], bool(bad[0]["error"]))
            print(torch.ones(2, device="tessera").sum().item())
        """)
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split() == ["1", "True", "True", "2.0"]
        assert "cannot load device library" in out.stderr
    finally:
        os.remove(broken)
