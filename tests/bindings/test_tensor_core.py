"""The Tensor class, dtypes, devices and creation functions of the tessera
module, against NumPy."""

import pickle

import numpy as np
import pytest

import tessera

DTYPES = [
    (tessera.float32, np.float32), (tessera.float64, np.float64), (tessera.float16, np.float16),
    (tessera.int64, np.int64), (tessera.int32, np.int32), (tessera.int16, np.int16),
    (tessera.int8, np.int8), (tessera.uint8, np.uint8), (tessera.bool, np.bool_),
]


def supports(device, dtype):
    props = tessera.get_device_properties(device)
    return not ((dtype == tessera.float64 and not props["supports_float64"])
                or (dtype == tessera.float16 and not props["supports_float16"])
                or (dtype == tessera.int64 and not props["supports_int64"]))


def test_dtypes_print_compare_and_pickle():
    assert repr(tessera.float32) == "tessera.float32" and str(tessera.int64) == "tessera.int64"
    assert tessera.float is tessera.float32 and tessera.long is tessera.int64
    assert tessera.float16.itemsize == 2 and tessera.float64.is_floating_point
    assert not tessera.int32.is_floating_point and tessera.int8.is_signed
    assert not tessera.uint8.is_signed
    assert pickle.loads(pickle.dumps(tessera.bfloat16)) is tessera.bfloat16
    assert tessera.promote_types(tessera.int32, tessera.float16) == tessera.float16


def test_devices_and_properties():
    devices = tessera.devices()
    assert tessera.device("cpu") in devices
    cpu = tessera.device("cpu:0")
    assert (cpu.type, cpu.index, str(cpu)) == ("cpu", 0, "cpu:0")
    assert repr(cpu) == "device(type='cpu', index=0)"
    assert tessera.device("cpu", 0) == cpu and cpu == "cpu:0"
    assert hash(tessera.device("cpu")) == hash(cpu)
    assert pickle.loads(pickle.dumps(cpu)) == cpu
    props = tessera.get_device_properties("cpu")
    assert props["host_accessible"] and props["total_memory"] > 0 and props["name"]
    assert tessera.device_count("cpu") >= 1 and tessera.device_count("no-such-type") == 0
    with pytest.raises(ValueError, match="no-such-type"):
        tessera.device("no-such-type:0")
    assert all(lib["loaded"] for lib in tessera.device_libraries()), tessera.device_libraries()


@pytest.mark.parametrize("dtype,np_dtype", DTYPES, ids=[str(d[0]) for d in DTYPES])
def test_tensor_from_data_round_trips(device, dtype, np_dtype):
    if not supports(device, dtype):
        pytest.skip(f"{device} has no {dtype}")
    data = np.arange(-6, 6).reshape(3, 4).astype(np_dtype)
    t = tessera.tensor(data.tolist(), dtype=dtype, device=device)
    assert t.shape == (3, 4) and t.dtype == dtype and t.device == device
    assert t.strides == (4, 1) and t.is_contiguous() and t.numel() == 12 and t.ndim == 2
    np.testing.assert_array_equal(np.array(t.cpu().tolist(), dtype=np_dtype), data)
    from_array = tessera.tensor(data, device=device)
    assert from_array.dtype == dtype
    np.testing.assert_array_equal(np.asarray(from_array.cpu()), data)


def test_tensor_infers_dtype_like_pytorch():
    assert tessera.tensor([1, 2]).dtype == tessera.int64
    assert tessera.tensor([1, 2.5]).dtype == tessera.float32
    assert tessera.tensor([True, False]).dtype == tessera.bool
    assert tessera.tensor([True, 2]).dtype == tessera.int64
    assert tessera.tensor(3.0).shape == () and tessera.tensor(3.0).item() == 3.0
    assert tessera.tensor([]).shape == (0,)
    assert tessera.tensor([[], []]).shape == (2, 0)


@pytest.mark.parametrize("bad,kind,match", [
    ([[1, 2], [3]], ValueError, "length 2"),
    ([[1, 2], 3], ValueError, "depth"),
    (["a"], TypeError, "numbers"),
    ([2 ** 70], ValueError, "int64"),
])
def test_tensor_rejects_ragged_or_non_numeric_data(bad, kind, match):
    with pytest.raises(kind, match=match):
        tessera.tensor(bad)


def test_creation_functions(device):
    assert tessera.zeros(2, 3, device=device).cpu().tolist() == [[0.0] * 3] * 2
    assert tessera.ones((2,), dtype=tessera.int32, device=device).cpu().tolist() == [1, 1]
    assert tessera.full((2, 2), 7, device=device).dtype == tessera.int64
    assert tessera.full((1,), 1.5, device=device).cpu().tolist() == [1.5]
    assert tessera.empty(4, 5, device=device).shape == (4, 5)
    assert tessera.arange(5, device=device).cpu().tolist() == [0, 1, 2, 3, 4]
    assert tessera.arange(1, 2, 0.25, device=device).cpu().tolist() == [1.0, 1.25, 1.5, 1.75]
    np.testing.assert_allclose(tessera.linspace(0, 1, 5, device=device).cpu().tolist(),
                               np.linspace(0, 1, 5), rtol=1e-6)
    np.testing.assert_array_equal(tessera.eye(2, 3, device=device).cpu().tolist(), np.eye(2, 3))
    x = tessera.ones(2, 3, dtype=tessera.int32, device=device)
    z = tessera.zeros_like(x)
    assert (z.dtype, z.device, z.shape) == (tessera.int32, x.device, (2, 3))
    assert tessera.full_like(x, 4, dtype=tessera.float32).cpu().tolist() == [[4.0] * 3] * 2
    e = tessera.empty_strided((2, 3), (1, 2), device=device)
    assert e.strides == (1, 2)
    with pytest.raises(TypeError, match="zeros"):
        tessera.zeros("a")


def test_random_is_seeded_and_device_independent(device):
    g = tessera.Generator(42)
    a = tessera.rand(1000, generator=g, device=device)
    b = tessera.rand(1000, generator=tessera.Generator(42), device="cpu")
    np.testing.assert_allclose(a.cpu().tolist(), b.tolist(), rtol=1e-6)
    values = np.array(a.cpu().tolist())
    assert values.min() >= 0 and values.max() < 1 and 0.4 < values.mean() < 0.6
    n = np.array(tessera.randn(4000, generator=g, device=device).cpu().tolist())
    assert abs(n.mean()) < 0.1 and 0.9 < n.std() < 1.1
    r = tessera.randint(3, 7, (500,), generator=g, device=device)
    assert r.dtype == tessera.int64
    assert set(r.cpu().tolist()) == {3, 4, 5, 6}
    tessera.manual_seed(5)
    first = tessera.randn(8, device=device).cpu().tolist()
    tessera.manual_seed(5)
    assert tessera.randn(8, device=device).cpu().tolist() == first
    u = tessera.empty(100, device=device).uniform_(2, 3, generator=g)
    assert 2 <= min(u.cpu().tolist()) and max(u.cpu().tolist()) < 3


def test_views_share_memory_and_follow_numpy(device):
    base = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = tessera.tensor(base, device=device)
    cases = {
        "view": (t.view(6, 4), base.reshape(6, 4)),
        "view_seq": (t.view((4, -1)), base.reshape(4, -1)),
        "reshape_T": (t.T.reshape(-1), base.T.reshape(-1)),
        "permute": (t.permute(2, 0, 1), base.transpose(2, 0, 1)),
        "transpose": (t.transpose(0, 2), base.swapaxes(0, 2)),
        "T": (t.T, base.T),
        "mT": (t.mT, np.swapaxes(base, -1, -2)),
        "expand": (t[:, :1, :1].expand(2, 3, 4) if hasattr(t, "__getitem__") and False else
                   t.narrow(1, 0, 1).narrow(2, 0, 1).expand(2, 3, 4),
                   np.broadcast_to(base[:, :1, :1], (2, 3, 4))),
        "squeeze": (t.narrow(1, 0, 1).squeeze(1), base[:, 0]),
        "unsqueeze": (t.unsqueeze(-1), base[..., None]),
        "flatten": (t.flatten(1), base.reshape(2, 12)),
        "narrow": (t.narrow(2, 1, 2), base[:, :, 1:3]),
        "select": (t.select(1, -1), base[:, -1]),
        "as_strided": (t.as_strided((2, 2), (1, 4), 1), np.lib.stride_tricks.as_strided(
            base.reshape(-1)[1:], (2, 2), (4, 16))),
    }
    for name, (view, expected) in cases.items():
        assert view.shape == expected.shape, name
        np.testing.assert_array_equal(np.array(view.cpu().tolist()), expected, err_msg=name)
    v = t.permute(2, 0, 1)
    assert not v.is_contiguous() and v.contiguous().is_contiguous()
    t.select(0, 1).fill_(-1)  # writes through the view
    assert t.cpu().tolist()[1][0] == [-1.0] * 4
    with pytest.raises(ValueError, match="view"):
        t.permute(2, 0, 1).view(-1)
    with pytest.raises(IndexError):
        t.transpose(0, 3)


def test_conversions(device):
    t = tessera.tensor([[1.5, -2.0], [3.25, 0.0]], device=device)
    assert t.to(tessera.int32).cpu().tolist() == [[1, -2], [3, 0]]
    assert t.to("cpu").device == tessera.device("cpu")
    assert t.to(device) is t and t.to(device, copy=True) is not t
    assert t.to(tessera.zeros(1, dtype=tessera.float16)).dtype == tessera.float16
    assert t.to(device="cpu", dtype=tessera.float16).dtype == tessera.float16
    assert t.cpu().tolist() == [[1.5, -2.0], [3.25, 0.0]]
    assert t.bool().cpu().tolist() == [[True, True], [True, False]]
    assert t.long().dtype == tessera.int64 and t.half().dtype == tessera.float16
    c = t.clone()
    c.zero_()
    assert t.cpu().tolist()[0][0] == 1.5
    c.copy_(tessera.tensor([5.0, 6.0]))  # broadcast across devices
    assert c.cpu().tolist() == [[5.0, 6.0], [5.0, 6.0]]
    assert c.fill_(2) is c
    one = tessera.tensor([2.5], device=device)
    assert one.item() == 2.5 and float(one) == 2.5 and int(one) == 2 and bool(one)
    assert tessera.tensor(7).tolist() == 7
    with pytest.raises(ValueError, match="one-element"):
        t.item()
    with pytest.raises(TypeError, match="index"):
        [0, 1][one]
    assert [0, 1, 2][tessera.tensor(2, device=device)] == 2
    assert len(t) == 2
    with pytest.raises(TypeError):
        len(tessera.tensor(1.0))


def test_repr_matches_the_runtime_format():
    assert repr(tessera.tensor([1.0, 2.5])) == "tensor([1.0000, 2.5000])"
    assert repr(tessera.tensor([1, 2], dtype=tessera.int32)) == "tensor([1, 2], dtype=int32)"
