"""Zero-copy exchange: NumPy (buffer protocol, from_numpy, numpy()) and
DLPack both ways, with the memory shared and the lifetimes right."""

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
