"""DLPack for tessera tensors, on every tessera device: torch.from_dlpack,
torch.utils.dlpack.to_dlpack, __dlpack__ and __dlpack_device__ round-trip
a tessera tensor without copying (bridge/torch_tessera/dlpack.py), and
capsules that cannot become a working tessera tensor fail clearly."""

import ctypes
import gc

import numpy as np
import pytest
import torch
from torch.utils.dlpack import DLDeviceType

DEVICES = [torch.device("tessera", i) for i in range(torch.tessera.device_count())]
on_every_device = pytest.mark.parametrize("dev", DEVICES, ids=str)


def strided_view(dev, dtype=torch.float32):
    """A non-contiguous view with a storage offset: rows 1.. and columns
    1, 3, 5 of a 4x6 tensor."""
    base = torch.arange(24, device=dev).to(dtype).reshape(4, 6)
    return base, base[1:, 1::2]


@on_every_device
def test_dlpack_device_is_the_extension_device_type(dev):
    x = torch.ones(3, device=dev)
    assert x.__dlpack_device__() == (DLDeviceType.kDLExtDev, dev.index)
    assert torch.ones(3).__dlpack_device__() == (DLDeviceType.kDLCPU, 0)  # torch's own answer


@on_every_device
@pytest.mark.parametrize("export", ["from_dlpack", "to_dlpack", "__dlpack__", "versioned"])
def test_round_trip_shares_memory_and_layout(dev, export):
    base, x = strided_view(dev)
    if export == "from_dlpack":
        y = torch.from_dlpack(x)
    elif export == "to_dlpack":
        y = torch.from_dlpack(torch.utils.dlpack.to_dlpack(x))
    elif export == "__dlpack__":
        y = torch.from_dlpack(x.__dlpack__())
    else:
        y = torch.from_dlpack(x.__dlpack__(max_version=(1, 0)))
    assert y.device == x.device
    assert y.dtype == x.dtype
    assert y.shape == x.shape and y.stride() == x.stride()
    # torch's exporter puts the address of the first element in the capsule
    # (the storage offset folds into it), for CUDA tensors too.
    assert y.data_ptr() == x.data_ptr()
    torch.testing.assert_close(y.cpu(), x.cpu())
    y.add_(100)  # a tessera kernel writing through the imported tensor
    expected = torch.arange(24.0).reshape(4, 6)
    expected[1:, 1::2] += 100
    torch.testing.assert_close(base.cpu(), expected)
    torch.testing.assert_close((y * 2).cpu(), expected[1:, 1::2] * 2)


@on_every_device
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16,
                                   torch.int64, torch.int32, torch.uint8, torch.bool])
def test_round_trip_keeps_the_dtype(dev, dtype):
    x = torch.tensor([0, 1, 2, 3, 0, 5], device=dev).to(dtype)
    y = torch.from_dlpack(x)
    assert y.dtype == dtype
    torch.testing.assert_close(y.cpu(), x.cpu())


@on_every_device
def test_the_import_keeps_the_memory_alive(dev):
    gc.collect()  # garbage of earlier tests, freed now, not between the counts below
    x = torch.full((1000,), 7.0, device=dev)
    y = torch.from_dlpack(x)
    allocated = torch.tessera.memory_allocated(dev)
    del x
    gc.collect()
    assert torch.tessera.memory_allocated(dev) == allocated  # y's capsule holds it
    torch.testing.assert_close((y + 1).cpu(), torch.full((1000,), 8.0))
    del y
    gc.collect()
    assert torch.tessera.memory_allocated(dev) < allocated


@on_every_device
def test_to_another_device_on_import(dev):
    _, x = strided_view(dev)
    on_cpu = torch.from_dlpack(x, device="cpu")
    assert on_cpu.device.type == "cpu"
    torch.testing.assert_close(on_cpu, x.cpu())
    back = torch.from_dlpack(on_cpu, device=dev)
    assert back.device == dev
    torch.testing.assert_close(back.cpu(), x.cpu())


@on_every_device
def test_numpy_gets_a_copy_on_the_host_not_the_device_memory(dev):
    _, x = strided_view(dev)
    # Not exported as kDLCPU, even where the host can read the memory.
    with pytest.raises((BufferError, RuntimeError, ValueError)):
        np.from_dlpack(x)
    array = np.from_dlpack(x, device="cpu")
    np.testing.assert_array_equal(array, x.cpu().numpy())
    x.add_(1)  # a copy: the array does not change
    assert not np.array_equal(array, x.cpu().numpy())


@on_every_device
def test_a_capsule_is_consumed_once(dev):
    capsule = torch.utils.dlpack.to_dlpack(torch.ones(4, device=dev))
    torch.from_dlpack(capsule)
    with pytest.raises(RuntimeError, match="consumed only once"):
        torch.from_dlpack(capsule)


def test_a_tensor_that_requires_grad_is_not_exported():
    x = torch.ones(3, device=DEVICES[0], requires_grad=True)
    with pytest.raises(BufferError, match="require gradient"):
        x.__dlpack__()


# -- Capsules from other producers, built by hand (the DLPack 0.x C ABI).
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]  # null: nothing to release


def foreign_capsule(array, device_type, device_id):
    """A "dltensor" capsule over a float32 NumPy array's host memory that
    claims to live on (device_type, device_id). Returns the capsule and what
    must outlive it."""
    shape = (ctypes.c_int64 * array.ndim)(*array.shape)
    managed = _DLManagedTensor()
    managed.dl_tensor = _DLTensor(array.ctypes.data, _DLDevice(device_type, device_id),
                                  array.ndim, _DLDataType(2, 32, 1), shape, None, 0)
    new_capsule = ctypes.pythonapi.PyCapsule_New
    new_capsule.restype = ctypes.py_object
    new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    capsule = new_capsule(ctypes.addressof(managed), b"dltensor", None)
    return capsule, (array, shape, managed)


@on_every_device
def test_an_extension_device_capsule_over_foreign_memory_fails_at_the_first_op(dev):
    capsule, keep = foreign_capsule(np.arange(8, dtype=np.float32), 12, dev.index)
    t = torch.from_dlpack(capsule)  # torch trusts the capsule's device
    assert t.device == dev
    with pytest.raises(RuntimeError, match=rf"add: a tensor on {dev} whose memory \(32 bytes at "
                                           rf"0x[0-9a-f]+\) is not a live allocation of {dev}"):
        t + 1
    with pytest.raises(RuntimeError, match="is not a live allocation"):
        t.cpu()
    del t, keep


def test_a_capsule_of_a_device_type_torch_lacks_is_refused():
    capsule, keep = foreign_capsule(np.zeros(4, dtype=np.float32), 7, 0)  # kDLVulkan
    with pytest.raises(BufferError, match="Unsupported device_type: 7"):
        torch.from_dlpack(capsule)
    del keep


def test_an_extension_device_capsule_for_a_missing_device_fails_at_the_first_op():
    missing = torch.tessera.device_count()
    capsule, keep = foreign_capsule(np.zeros(4, dtype=np.float32), 12, missing)
    t = torch.from_dlpack(capsule)
    with pytest.raises(IndexError, match=f"tessera:{missing} does not exist"):
        t + 1
    del t, keep
