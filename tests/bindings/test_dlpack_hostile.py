"""tessera.from_dlpack on capsules built by hand, as a buggy or hostile
producer would make them: each defect must raise the documented Python
exception (never crash or read out of bounds), the capsule must stay
unconsumed when refused, and well-formed ones must share the memory."""
import ctypes

import numpy as np
import pytest

import tessera


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", DELETER), ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype = ctypes.c_char_p
_capsule_name.argtypes = [ctypes.py_object]

F32 = (2, 32, 1)


class Capsule:
    """A DLPack 1.0 capsule over `buffer` (a NumPy array kept alive here),
    with every field settable; the deleter counts its calls."""

    def __init__(self, buffer, shape, strides=None, dtype=F32, ndim=None, byte_offset=0,
                 version=(1, 0), data=None, null_shape=False):
        self.buffer = buffer
        self.deleted = 0
        self._shape = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        self._strides = None if strides is None else (ctypes.c_int64 * max(len(strides), 1))(*strides)
        self._deleter = DELETER(self._on_delete)
        m = DLManagedTensorVersioned()
        m.version = DLVersion(*version)
        m.deleter = self._deleter
        t = m.dl_tensor
        t.data = buffer.ctypes.data if data is None else data
        t.device = DLDevice(1, 0)
        t.ndim = len(shape) if ndim is None else ndim
        t.dtype = DLDataType(*dtype)
        t.shape = None if null_shape else ctypes.cast(self._shape, ctypes.POINTER(ctypes.c_int64))
        if self._strides is not None:
            t.strides = ctypes.cast(self._strides, ctypes.POINTER(ctypes.c_int64))
        t.byte_offset = byte_offset
        self.managed = m
        self.capsule = _new_capsule(ctypes.addressof(m), b"dltensor_versioned", None)

    def _on_delete(self, _):
        self.deleted += 1

    def name(self):
        return _capsule_name(self.capsule)


def buffer(n=24):
    return np.arange(n, dtype=np.float32)


def test_a_well_formed_capsule_shares_memory():
    c = Capsule(buffer(), shape=[2, 3], strides=[3, 1], byte_offset=4)
    t = tessera.from_dlpack(c.capsule)
    assert c.name() == b"used_dltensor_versioned"
    assert t.shape == (2, 3)
    assert t.tolist() == [[1, 2, 3], [4, 5, 6]]
    c.buffer[1] = 100.0
    assert t[0, 0].item() == 100.0
    del t
    assert c.deleted == 1


@pytest.mark.parametrize("case, error, words", [
    (dict(shape=[2], ndim=-1), ValueError, "ndim -1"),
    (dict(shape=[2], ndim=1000), ValueError, "ndim 1000"),
    (dict(shape=[2, 3], null_shape=True), ValueError, "no shape array"),
    (dict(shape=[2, -3]), ValueError, "negative size"),
    (dict(shape=[2, 3], strides=[-1, 1]), ValueError, "negative strides"),
    (dict(shape=[1 << 62, 4]), ValueError, "overflow"),
    (dict(shape=[3, 3], strides=[1 << 62, 1 << 62]), ValueError, "overflow"),
    (dict(shape=[4], byte_offset=2), ValueError, "not aligned"),
    (dict(shape=[4], byte_offset=(1 << 64) - 4), ValueError, "address space"),
    (dict(shape=[4], data=0), ValueError, "null data pointer"),
    (dict(shape=[4], dtype=(2, 32, 4)), TypeError, "4 lanes"),
    (dict(shape=[4], dtype=(5, 64, 1)), TypeError, "no tessera dtype"),
    (dict(shape=[4], version=(2, 0)), BufferError, "DLPack 2.0"),
])
def test_a_defective_capsule_is_refused_and_left_unconsumed(case, error, words):
    c = Capsule(buffer(), **case)
    with pytest.raises(error, match=words):
        tessera.from_dlpack(c.capsule)
    # Refused before consuming: the producer still owns it.
    assert c.name() == b"dltensor_versioned"
    assert c.deleted == 0


def test_an_empty_tensor_needs_no_data():
    c = Capsule(buffer(), shape=[0, 5], data=0)
    t = tessera.from_dlpack(c.capsule)
    assert t.shape == (0, 5)
