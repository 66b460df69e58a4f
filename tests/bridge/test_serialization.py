"""torch.save / torch.load of tessera tensors and models: storages are
tagged "tessera:N", restored there by default, and map_location moves them
(to the CPU, to tessera, through a dict or a function)."""

import copy
import io

import pytest
import torch

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64,
          torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool]


def round_trip(obj, **load_kwargs):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return torch.load(buffer, **load_kwargs)


def sample(dtype, shape=(3, 4)):
    values = torch.arange(-5, -5 + torch.Size(shape).numel()).reshape(shape)
    return (values % 2 == 0) if dtype == torch.bool else values.to(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_tensor_round_trip_keeps_device_dtype_and_values(tessera, dtype):
    expected = sample(dtype)
    loaded = round_trip(expected.to(tessera))
    assert loaded.device == torch.device("tessera:0")
    assert loaded.dtype == dtype
    torch.testing.assert_close(loaded.cpu(), expected, rtol=0, atol=0)


def test_map_location_cpu(tessera):
    expected = torch.randn(5, 6)
    loaded = round_trip(expected.to(tessera), map_location="cpu")
    assert loaded.device == torch.device("cpu")
    torch.testing.assert_close(loaded, expected, rtol=0, atol=0)


@pytest.mark.parametrize("location", ["tessera", "tessera:0", torch.device("tessera:0")], ids=str)
def test_map_location_tessera_from_a_cpu_checkpoint(tessera, location):
    expected = torch.randn(4, 3)
    loaded = round_trip(expected, map_location=location)
    assert loaded.device == torch.device("tessera:0")
    torch.testing.assert_close(loaded.cpu(), expected, rtol=0, atol=0)


def test_map_location_dict_and_callable(tessera):
    expected = torch.randn(7)
    loaded = round_trip(expected.to(tessera), map_location={"tessera:0": "cpu"})
    assert loaded.device == torch.device("cpu")
    torch.testing.assert_close(loaded, expected, rtol=0, atol=0)
    seen = []

    def to_tessera(storage, location):
        seen.append(location)
        return storage.tessera() if hasattr(storage, "tessera") else None

    loaded = round_trip(expected, map_location=to_tessera)
    assert seen == ["cpu"]
    assert loaded.device == torch.device("tessera:0")
    torch.testing.assert_close(loaded.cpu(), expected, rtol=0, atol=0)


def test_map_location_to_a_missing_device_is_a_clear_error(tessera):
    n = torch.tessera.device_count()
    with pytest.raises(RuntimeError, match=f"device {n} but torch.tessera.device_count\\(\\) is {n}"):
        round_trip(torch.ones(2, device=tessera), map_location=f"tessera:{n}")


def test_views_keep_sharing_their_storage(tessera):
    base = torch.arange(12.0, device=tessera)
    view = base[2:8].view(2, 3)
    loaded_base, loaded_view = round_trip((base, view))
    assert loaded_view.device == torch.device("tessera:0")
    assert loaded_view.untyped_storage().data_ptr() == loaded_base.untyped_storage().data_ptr()
    assert loaded_view.storage_offset() == 2
    loaded_base[3] = 100.0
    assert loaded_view[0, 1].item() == 100.0


def test_non_contiguous_tensor(tessera):
    expected = torch.randn(4, 5).t()
    loaded = round_trip(expected.to(tessera))
    assert loaded.stride() == expected.stride()
    torch.testing.assert_close(loaded.cpu(), expected, rtol=0, atol=0)


def test_requires_grad_and_parameters(tessera):
    p = torch.nn.Parameter(torch.randn(3, device=tessera))
    t = torch.randn(3, device=tessera).requires_grad_()
    loaded_p, loaded_t = round_trip((p, t))
    assert isinstance(loaded_p, torch.nn.Parameter) and loaded_p.requires_grad
    assert loaded_t.requires_grad
    assert loaded_p.device == torch.device("tessera:0")


def make_model():
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))


def test_state_dict_round_trip(tessera):
    torch.manual_seed(0)
    model = make_model().to(tessera)
    state = round_trip(model.state_dict())
    assert all(v.device == torch.device("tessera:0") for v in state.values())
    fresh = make_model().to(tessera)
    fresh.load_state_dict(state)
    x = torch.randn(5, 4)
    torch.testing.assert_close(fresh(x.to(tessera)).cpu(), model(x.to(tessera)).cpu())
    reference = make_model()
    reference.load_state_dict(round_trip(model.state_dict(), map_location="cpu"))
    torch.testing.assert_close(fresh(x.to(tessera)).cpu(), reference(x))


def test_cpu_state_dict_loads_into_a_tessera_model(tessera):
    torch.manual_seed(1)
    reference = make_model()
    model = make_model().to(tessera)
    model.load_state_dict(round_trip(reference.state_dict(), map_location="tessera"))
    x = torch.randn(2, 4)
    torch.testing.assert_close(model(x.to(tessera)).cpu(), reference(x))


def test_optimizer_state_round_trip(tessera):
    model = make_model().to(tessera)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(torch.randn(3, 4, device=tessera)).sum().backward()
    opt.step()
    state = round_trip(opt.state_dict())
    buffers = [s["momentum_buffer"] for s in state["state"].values()]
    assert buffers and all(b.device == torch.device("tessera:0") for b in buffers)
    fresh = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    fresh.load_state_dict(state)


def test_deepcopy(tessera):
    x = torch.randn(3, 3, device=tessera)
    y = copy.deepcopy(x)
    assert y.device == x.device
    assert y.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
    torch.testing.assert_close(y.cpu(), x.cpu(), rtol=0, atol=0)


def test_load_onto_a_second_device():
    if torch.tessera.device_count() < 2:
        pytest.skip("needs two tessera devices")
    expected = torch.randn(6)
    loaded = round_trip(expected.to("tessera:0"), map_location={"tessera:0": "tessera:1"})
    assert loaded.device == torch.device("tessera:1")
    torch.testing.assert_close(loaded.cpu(), expected, rtol=0, atol=0)
    assert round_trip(expected.to("tessera:1")).device == torch.device("tessera:1")
