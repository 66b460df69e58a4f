"""Zero-copy exchange: NumPy (buffer protocol, from_numpy, numpy()) and
DLPack both ways, with the memory shared and the lifetimes right."""

import ctypes
import gc

import numpy as np
import pytest

import tessera

NUMPY_DTYPES = [np.float32, np.float64, np.float16, np.int64, np.int32, np.int16, np.int8,
                np.uint8, np.bool_]


@pytest.mark.parametrize("np_dtype", NUMPY_DTYPES, ids=lambda d: np.dtype(d).name)
def test_from_numpy_shares_memory_both_ways(np_dtype):
    a = (np.arange(12) % 3).astype(np_dtype).reshape(3, 4)
    t = tessera.from_numpy(a)
    assert t.shape == (3, 4) and t.device == tessera.device("cpu")
    assert str(t.dtype) == "tessera." + ("bool" if np_dtype is np.bool_ else np.dtype(np_dtype).name)
    t.fill_(1)  # write through the tensor, read through the array
    assert (a == 1).all()
    a[0, 0] = 0  # and the other way round
    assert t.cpu().tolist()[0][0] == 0
    back = t.numpy()
    assert np.shares_memory(back, a)


def test_strided_arrays_keep_their_layout():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    for view in (a.T, a[:, ::2], a[1:3, 2:5], a[None, :, 3]):
        t = tessera.from_numpy(view)
        assert t.shape == view.shape
        np.testing.assert_array_equal(np.array(t.tolist()), view)
        assert np.shares_memory(t.numpy(), a)
    with pytest.raises(ValueError, match="negative"):
        tessera.from_numpy(a[::-1])


def test_the_array_outlives_its_producer():
    t = tessera.from_numpy(np.full((1000,), 3.0, dtype=np.float32))
    gc.collect()  # only the tensor holds the array now
    assert t.tolist()[:2] == [3.0, 3.0]
    a = tessera.arange(10).numpy()  # only the array holds the tensor now
    gc.collect()
    assert a.tolist() == list(range(10))
    d = np.from_dlpack(tessera.arange(5))
    gc.collect()
    assert d.tolist() == [0, 1, 2, 3, 4]


def test_tensor_numpy_and_buffer_protocol():
    t = tessera.arange(6, dtype=tessera.float32).view(2, 3).T
    a = np.asarray(t)
    assert a.strides == (4, 12) and a.tolist() == [[0, 3], [1, 4], [2, 5]]
    assert memoryview(t.contiguous()).format == "f"
    assert tessera.tensor(np.array([1.5, 2.5])).dtype == tessera.float64
    shared = tessera.as_tensor(a)
    assert shared.data_ptr() == t.data_ptr()  # as_tensor shares, tensor() copies
    assert tessera.tensor(a).data_ptr() != t.data_ptr()
    with pytest.raises(TypeError, match="bfloat16"):
        np.asarray(tessera.ones(2, dtype=tessera.bfloat16))
    with pytest.raises(TypeError, match="NumPy array"):
        tessera.from_numpy([1, 2])


def test_device_tensors_refuse_host_views(device):
    t = tessera.ones(3, device=device)
    if tessera.get_device_properties(device)["host_accessible"]:
        assert np.asarray(t).tolist() == [1, 1, 1]
        return
    with pytest.raises(TypeError, match=r"\.cpu\(\)"):
        np.asarray(t)
    with pytest.raises(TypeError, match=r"\.cpu\(\)"):
        t.numpy()
    assert t.numpy(force=True).tolist() == [1, 1, 1]
    if device.type == "cuda":  # CUDA memory is described to DLPack consumers
        assert t.__dlpack_device__() == (2, tessera.get_device_properties(device)["native_index"])
        return
    with pytest.raises(TypeError, match="DLPack"):
        t.__dlpack__()


def test_dlpack_with_numpy_round_trips():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)[:, 1:]
    t = tessera.from_dlpack(a)
    assert t.shape == (3, 3) and t.strides == (4, 1) and t.dtype == tessera.int32
    t.fill_(9)
    assert (a == 9).all()
    assert t.__dlpack_device__() == (1, 0)
    back = np.from_dlpack(t)
    assert np.shares_memory(back, a)
    capsule = tessera.arange(3).__dlpack__()
    u = tessera.from_dlpack(capsule)
    assert u.tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="unconsumed"):
        tessera.from_dlpack(capsule)  # a capsule is consumed once
    versioned = tessera.from_dlpack(tessera.ones(2).__dlpack__(max_version=(1, 0)))
    assert versioned.tolist() == [1.0, 1.0]
    copied = np.from_dlpack(tessera.arange(3), copy=True)
    assert copied.tolist() == [0, 1, 2]


class _DLTensor(ctypes.Structure):
    """dlpack.h's DLTensor, to read what a capsule holds."""
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32),
                ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("byte_offset", ctypes.c_uint64)]


class _ManagedTensorVersioned(ctypes.Structure):
    """dlpack.h's DLManagedTensorVersioned (DLPack 1.0)."""
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


def _capsule_pointer(capsule, name):
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return get(capsule, name)


def test_dlpack_exports_a_view_at_its_first_element():
    # PyTorch's from_dlpack up to 2.11 reads `data` and ignores byte_offset
    # (as many consumers do): a view is exported at its own first element.
    t = tessera.arange(10, dtype=tessera.float32)[3:]
    capsule = t.__dlpack__()
    dl = _DLTensor.from_address(_capsule_pointer(capsule, b"dltensor"))  # dl_tensor comes first
    assert dl.data == t.data_ptr() and dl.byte_offset == 0
    assert np.from_dlpack(t).tolist() == [3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]


def test_dlpack_copies_say_so_and_streams_are_checked():
    t = tessera.arange(3)
    capsule = t.__dlpack__(max_version=(1, 0), copy=True)
    m = _ManagedTensorVersioned.from_address(
        _capsule_pointer(capsule, b"dltensor_versioned"))
    assert m.major == 1 and m.flags & 2  # DLPACK_FLAG_BITMASK_IS_COPIED
    assert m.dl_tensor.data != t.data_ptr()
    shared = t.__dlpack__(max_version=(1, 0))
    m = _ManagedTensorVersioned.from_address(_capsule_pointer(shared, b"dltensor_versioned"))
    assert m.flags == 0 and m.dl_tensor.data == t.data_ptr()
    with pytest.raises(TypeError, match="stream must be an int or None"):
        t.__dlpack__(stream="default")
    assert tessera.from_dlpack(t.__dlpack__(stream=None)).tolist() == [0, 1, 2]


def test_dlpack_with_pytorch_cpu():
    torch = pytest.importorskip("torch")
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    t = tessera.from_dlpack(x)
    t.fill_(4)
    assert x.tolist() == [[4.0] * 3] * 2
    y = torch.from_dlpack(tessera.arange(4, dtype=tessera.int64))
    assert y.tolist() == [0, 1, 2, 3]
    b = torch.ones(2, dtype=torch.bfloat16)
    assert tessera.from_dlpack(b).dtype == tessera.bfloat16
    del x
    gc.collect()
    assert t.tolist() == [[4.0] * 3] * 2
