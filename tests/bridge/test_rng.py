"""Random numbers on tessera: one Philox generator per device in the
runtime, seeded by torch.manual_seed, with states that round-trip, and
torch.Generator(device="tessera")."""

import warnings

import pytest
import torch

import torch_tessera

RANDOM_KERNELS = ("aten::uniform_", "aten::normal_", "aten::random_", "aten::bernoulli_")


def draw(fn):
    """fn() on tessera, or an xfail when a random kernel ran through the CPU
    fallback: there it draws from the CPU generator (or rejects a tessera
    one), so the tessera generator's seed and state cannot matter."""
    torch_tessera.reset_fallback_stats()
    try:
        result = fn()
        error = None
    except RuntimeError as e:
        result, error = None, e
    fell_back = [op for op in torch_tessera.fallback_stats() if op.startswith(RANDOM_KERNELS)]
    if fell_back:
        pytest.xfail(f"{', '.join(fell_back)} ran through the CPU fallback: no native tessera "
                     "random kernel yet, so the tessera generator is not used")
    if error is not None:
        raise error
    return result


def test_manual_seed_seeds_every_tessera_device_without_warning(tessera):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Set seed for `tessera` device does not take effect"
        torch.manual_seed(1234)
    for i in range(torch.tessera.device_count()):
        assert torch.tessera.default_generator(i).initial_seed() == 1234
    assert torch.tessera.initial_seed() == 1234


def test_torch_seed_reseeds_tessera_with_the_same_seed(tessera):
    s = torch.seed()
    for g in torch.tessera.default_generators:
        assert g.initial_seed() == s


def test_seed_all_gives_every_device_one_seed(tessera):
    torch.tessera.seed_all()
    seeds = {g.initial_seed() for g in torch.tessera.default_generators}
    assert len(seeds) == 1
    torch.tessera.seed()
    assert torch.tessera.initial_seed() != 0


def test_default_generators(tessera):
    gens = torch.tessera.default_generators
    assert len(gens) == torch.tessera.device_count()
    for i, g in enumerate(gens):
        assert g.device == torch.device("tessera", i)
    torch.tessera.manual_seed(99)
    assert gens[torch.tessera.current_device()].initial_seed() == 99


def test_rng_state_is_seed_and_offset(tessera):
    torch.tessera.manual_seed(42)
    state = torch.tessera.get_rng_state()
    assert state.dtype == torch.uint8 and state.device.type == "cpu"
    assert state.numel() == 16
    seed, offset = state.view(torch.int64).tolist()
    assert (seed, offset) == (42, 0)
    g = torch.tessera.default_generator()
    g.set_offset(8)
    assert g.get_offset() == 8
    assert torch.tessera.get_rng_state().view(torch.int64).tolist() == [42, 8]


def test_rng_state_round_trip(tessera):
    torch.tessera.manual_seed(5)
    torch.tessera.default_generator().set_offset(24)
    saved = torch.tessera.get_rng_state("tessera:0")
    torch.tessera.manual_seed(6)
    assert not torch.equal(torch.tessera.get_rng_state(), saved)
    torch.tessera.set_rng_state(saved, "tessera:0")
    assert torch.equal(torch.tessera.get_rng_state(), saved)
    states = torch.tessera.get_rng_state_all()
    torch.tessera.manual_seed_all(0)
    torch.tessera.set_rng_state_all(states)
    assert all(torch.equal(a, b) for a, b in zip(torch.tessera.get_rng_state_all(), states))


def test_bad_rng_states_are_rejected(tessera):
    with pytest.raises(ValueError, match="must have 16 bytes"):
        torch.tessera.set_rng_state(torch.zeros(3, dtype=torch.uint8))
    with pytest.raises(TypeError, match="ByteTensor"):
        torch.tessera.set_rng_state(torch.zeros(16))


def test_fork_rng_restores_the_tessera_state(tessera):
    torch.tessera.manual_seed(11)
    before = torch.tessera.get_rng_state()
    with torch.random.fork_rng(device_type="tessera"):
        torch.tessera.manual_seed(12)
        assert not torch.equal(torch.tessera.get_rng_state(), before)
    assert torch.equal(torch.tessera.get_rng_state(), before)


def test_same_seed_same_values(tessera):
    torch.manual_seed(2024)
    a = torch.rand(1000, device=tessera)
    n = torch.randn(1000, device=tessera)
    torch.manual_seed(2024)
    b = torch.rand(1000, device=tessera)
    m = torch.randn(1000, device=tessera)
    torch.testing.assert_close(a.cpu(), b.cpu(), rtol=0, atol=0)
    torch.testing.assert_close(n.cpu(), m.cpu(), rtol=0, atol=0)
    assert 0.0 <= a.min().item() and a.max().item() < 1.0
    assert abs(n.mean().item()) < 0.2 and 0.8 < n.std().item() < 1.2
    torch.manual_seed(2025)
    assert not torch.equal(torch.rand(1000, device=tessera).cpu(), a.cpu())


def test_rand_draws_from_the_tessera_generator(tessera):
    torch.tessera.manual_seed(3)
    before = torch.tessera.get_rng_state()
    draw(lambda: torch.rand(100, device=tessera))
    assert not torch.equal(torch.tessera.get_rng_state(), before), "the offset did not advance"


def test_seeding_only_tessera_changes_tessera_values(tessera):
    torch.manual_seed(1)
    a = draw(lambda: torch.rand(50, device=tessera))
    torch.manual_seed(1)
    torch.tessera.manual_seed(2)  # CPU generator unchanged, tessera reseeded
    b = draw(lambda: torch.rand(50, device=tessera))
    assert not torch.equal(a.cpu(), b.cpu())


def test_rng_state_round_trip_reproduces_values(tessera):
    torch.manual_seed(77)
    state = torch.tessera.get_rng_state()
    a = draw(lambda: torch.rand(64, device=tessera))
    n = draw(lambda: torch.randn(64, device=tessera))
    torch.tessera.set_rng_state(state)
    b = draw(lambda: torch.rand(64, device=tessera))
    m = draw(lambda: torch.randn(64, device=tessera))
    torch.testing.assert_close(a.cpu(), b.cpu(), rtol=0, atol=0)
    torch.testing.assert_close(n.cpu(), m.cpu(), rtol=0, atol=0)


def test_explicit_tessera_generator(tessera):
    g = torch.Generator(device="tessera")
    assert g.device == torch.device("tessera:0")
    g.manual_seed(5)
    assert g.initial_seed() == 5
    saved = g.get_state()
    g.manual_seed(6)
    g.set_state(saved)
    assert g.initial_seed() == 5
    a = draw(lambda: torch.rand(32, device=tessera, generator=g))
    g.manual_seed(5)
    b = draw(lambda: torch.rand(32, device=tessera, generator=g))
    torch.testing.assert_close(a.cpu(), b.cpu(), rtol=0, atol=0)
    # The explicit generator leaves the default one alone.
    torch.tessera.manual_seed(5)
    default_state = torch.tessera.get_rng_state()
    draw(lambda: torch.rand(32, device=tessera, generator=g))
    assert torch.equal(torch.tessera.get_rng_state(), default_state)


def test_generator_on_a_missing_device_is_an_index_error(tessera):
    n = torch.tessera.device_count()
    with pytest.raises(IndexError, match=f"tessera:{n} does not exist"):
        torch.Generator(device=f"tessera:{n}")


def test_same_seed_same_values_on_every_device(tessera):
    if torch.tessera.device_count() < 2:
        pytest.skip("needs two tessera devices")
    values = []
    for i in range(torch.tessera.device_count()):
        torch.manual_seed(31)
        values.append(draw(lambda: torch.rand(257, device=f"tessera:{i}")).cpu())
        torch.manual_seed(31)
        values.append(draw(lambda: torch.randn(257, device=f"tessera:{i}")).cpu())
    # Uniform draws are bit-identical on every device. Normal draws use one
    # Philox stream everywhere, but a device without float64 in shaders
    # (Vulkan) transforms it in float32: a few ulps from the CPU's double.
    for i in range(2, len(values)):
        exact = i % 2 == 0
        torch.testing.assert_close(values[i], values[i % 2], rtol=0 if exact else 1e-5,
                                   atol=0 if exact else 1e-6)
