"""nn.EmbeddingBag and F.embedding_bag on every tessera device against
torch's CPU: sum, mean and max; padding_idx, per_sample_weights,
include_last_offset, 2-D input, int32/int64/mixed index dtypes, every
floating dtype; empty and all-padding bags, NaN and ties in max; the weight
and per_sample_weights gradients; a text classifier trained a few steps;
errors; and no CPU fallback (the runtime's embedding_bag)."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_tessera

from bridge_testing import assert_no_fallback, every_device

MODES = ["sum", "mean", "max"]
FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
# Bags of 4, 0 (empty), 5, 1, and 2 indices into 10 rows; repeats inside bags.
INDICES = [1, 2, 4, 5, 4, 3, 2, 9, 0, 0, 7, 4, 4]
OFFSETS = [0, 4, 4, 9, 10]


def table(dtype, rows=10, dim=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(rows, dim, generator=g).to(dtype)


def bag_grad(out, seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(out.shape, generator=g).to(out.dtype)


def run(device, weight, indices, offsets, per_sample_weights=None, **kwargs):
    """(output, weight.grad, per_sample_weights.grad) of F.embedding_bag on
    device, backward from a fixed gradient."""
    w = weight.detach().to(device).requires_grad_()
    psw = None
    if per_sample_weights is not None:
        psw = per_sample_weights.detach().to(device).requires_grad_()
    off = None if offsets is None else offsets.to(device)
    out = F.embedding_bag(indices.to(device), w, off, per_sample_weights=psw, **kwargs)
    out.backward(bag_grad(out).to(device))
    return out.detach().cpu(), w.grad.cpu(), None if psw is None else psw.grad.cpu()


def tolerances(dtype):
    return {torch.float16: dict(rtol=2e-3, atol=2e-3), torch.bfloat16: dict(rtol=1.6e-2, atol=1.6e-2),
            torch.float32: dict(rtol=1e-6, atol=1e-6)}.get(dtype, dict(rtol=1e-12, atol=1e-12))


def check_matches_cpu(device, weight, indices, offsets, per_sample_weights=None, exact_output=True,
                      **kwargs):
    want = run("cpu", weight, indices, offsets, per_sample_weights, **kwargs)
    torch_tessera.reset_fallback_stats()
    got = run(device, weight, indices, offsets, per_sample_weights, **kwargs)
    assert_no_fallback()
    if exact_output:
        torch.testing.assert_close(got[0], want[0], rtol=0, atol=0, equal_nan=True)
    else:
        torch.testing.assert_close(got[0], want[0], equal_nan=True, **tolerances(weight.dtype))
    for g, w in zip(got[1:], want[1:]):
        if w is not None:
            torch.testing.assert_close(g, w, **tolerances(weight.dtype))


@every_device
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("padding_idx", [None, 4], ids=["no_padding", "padding_4"])
def test_modes_match_cpu(device, dtype, mode, padding_idx):
    # Sums fold each bag in index order (float16/bfloat16 in float), as the
    # CPU kernels do, so outputs are equal bit for bit; except that torch's
    # bfloat16 fast path (no padding_idx; FBGEMM) rounds float ties away
    # from zero where its other paths, and tessera, round them to even.
    fbgemm_bf16 = dtype == torch.bfloat16 and padding_idx is None and mode != "max"
    check_matches_cpu(device, table(dtype), torch.tensor(INDICES), torch.tensor(OFFSETS),
                      exact_output=not fbgemm_bf16, mode=mode, padding_idx=padding_idx)


@every_device
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("padding_idx", [None, 0], ids=["no_padding", "padding_0"])
def test_per_sample_weights(device, dtype, padding_idx):
    psw = torch.rand(len(INDICES), generator=torch.Generator().manual_seed(3)).to(dtype)
    check_matches_cpu(device, table(dtype), torch.tensor(INDICES), torch.tensor(OFFSETS), psw,
                      exact_output=False, mode="sum", padding_idx=padding_idx)


@every_device
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("index_dtypes", [(torch.int64, torch.int64), (torch.int32, torch.int32),
                                          (torch.int32, torch.int64)], ids=str)
def test_include_last_offset_and_index_dtypes(device, mode, index_dtypes):
    indices = torch.tensor(INDICES, dtype=index_dtypes[0])
    offsets = torch.tensor(OFFSETS + [len(INDICES)], dtype=index_dtypes[1])
    check_matches_cpu(device, table(torch.float32), indices, offsets, mode=mode,
                      include_last_offset=True)


@every_device
@pytest.mark.parametrize("mode", MODES)
def test_2d_input_and_nn_module(device, mode):
    # A [B, L] input is B bags of L (F.embedding_bag builds the offsets).
    indices = torch.randint(0, 10, (5, 3), generator=torch.Generator().manual_seed(4))
    check_matches_cpu(device, table(torch.float32), indices, None, mode=mode)
    torch.manual_seed(0)
    module = nn.EmbeddingBag(10, 6, mode=mode, padding_idx=2)
    on_device = nn.EmbeddingBag(10, 6, mode=mode, padding_idx=2).to(device)
    on_device.load_state_dict(module.state_dict())
    torch_tessera.reset_fallback_stats()
    got = on_device(indices.to(device))
    assert_no_fallback()
    torch.testing.assert_close(got.cpu(), module(indices), rtol=0, atol=0)


@every_device
@pytest.mark.parametrize("mode", MODES)
def test_empty_bags_all_padding_and_no_indices(device, mode):
    weight = table(torch.float32)
    # Bags: [], [3, 3] (all padding), [], [5].
    check_matches_cpu(device, weight, torch.tensor([3, 3, 5]), torch.tensor([0, 0, 2, 2]),
                      mode=mode, padding_idx=3)
    check_matches_cpu(device, weight, torch.tensor([], dtype=torch.int64), torch.tensor([0, 0]),
                      mode=mode)


@every_device
def test_max_nan_and_ties_as_cpu(device):
    # torch's max keeps a NaN only when it opens the bag and gives ties to
    # the first row; max_indices says which row won.
    nan, inf = float("nan"), float("inf")
    weight = torch.tensor([[1.0, nan, -inf], [nan, 5.0, -inf], [2.0, 2.0, nan], [2.0, -0.0, 0.0],
                           [-inf, -inf, -inf]])
    indices = torch.tensor([0, 1, 2, 3, 2, 3, 4, 1])
    offsets = torch.tensor([0, 3, 5, 7])
    want = torch.embedding_bag(weight, indices, offsets, False, 2, False, None, False)
    torch_tessera.reset_fallback_stats()
    got = torch.embedding_bag(weight.to(device), indices.to(device), offsets.to(device), False, 2,
                              False, None, False)
    assert_no_fallback()
    torch.testing.assert_close(got[0].cpu(), want[0], rtol=0, atol=0, equal_nan=True)
    assert torch.equal(got[0].cpu().signbit(), want[0].signbit())
    for g, w in zip(got[1:], want[1:]):
        if w.numel() > 0:  # torch leaves offset2bag empty where it needs none
            assert torch.equal(g.cpu(), w)


@every_device
@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_scale_grad_by_freq_divides_by_each_index_count(device, mode):
    # Each row's gradient is divided by how often its index occurs in the
    # batch, as nn.Embedding's scale_grad_by_freq does. (torch's CPU
    # embedding_bag divides by the count of another index: it gives row 3
    # of this batch 1.5x its gradient; its CUDA kernel divides as here.)
    weight = table(torch.float64)
    indices, offsets = torch.tensor([3, 1, 3, 3, 5, 1, 0]), torch.tensor([0, 3])
    w = weight.clone().requires_grad_()
    per_index = F.embedding(indices, w, scale_grad_by_freq=True)
    bags = [per_index[0:3], per_index[3:]]
    reduced = [b.sum(0) if mode == "sum" else b.mean(0) for b in bags]
    out = torch.stack(reduced)
    out.backward(bag_grad(out))
    torch_tessera.reset_fallback_stats()
    wt = weight.to(device).requires_grad_()
    got = F.embedding_bag(indices.to(device), wt, offsets.to(device), mode=mode,
                          scale_grad_by_freq=True)
    got.backward(bag_grad(got).to(device))
    assert_no_fallback()
    torch.testing.assert_close(got.detach().cpu(), out.detach())
    torch.testing.assert_close(wt.grad.cpu(), w.grad)


class BagOfWordsClassifier(nn.Module):
    """fastText-style: mean of word embeddings (padding 0), weighted sum of
    bigram embeddings, a linear head."""

    def __init__(self):
        super().__init__()
        self.words = nn.EmbeddingBag(50, 16, mode="mean", padding_idx=0)
        self.bigrams = nn.EmbeddingBag(80, 16, mode="sum")
        self.peaks = nn.EmbeddingBag(50, 16, mode="max")
        self.head = nn.Linear(48, 3)

    def forward(self, words, offsets, bigrams, bigram_offsets, bigram_weights):
        features = torch.cat([self.words(words, offsets),
                              self.bigrams(bigrams, bigram_offsets, per_sample_weights=bigram_weights),
                              self.peaks(words, offsets)], dim=1)
        return self.head(features)


def text_batch(seed):
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, 9, (8,), generator=g)
    words = torch.randint(0, 50, (int(lengths.sum()),), generator=g)
    offsets = torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)[:-1]])
    bigrams = torch.randint(0, 80, (int(lengths.sum()),), generator=g)
    weights = torch.rand(bigrams.shape, generator=g)
    labels = torch.randint(0, 3, (8,), generator=g)
    return words, offsets, bigrams, offsets.clone(), weights, labels


@every_device
def test_text_classifier_trains_like_cpu(device):
    torch.manual_seed(0)
    cpu_model = BagOfWordsClassifier()
    model = BagOfWordsClassifier().to(device)
    model.load_state_dict(cpu_model.state_dict())
    # SGD: Adam's first steps divide each gradient by its own size, so the
    # last-bit differences of the head's matmul gradient (oneDNN's blocking
    # against torch's) would show as 1e-4 in the near-zero entries.
    cpu_opt = torch.optim.SGD(cpu_model.parameters(), lr=0.1, momentum=0.9)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    torch_tessera.reset_fallback_stats()
    for step in range(4):
        *inputs, labels = text_batch(step)
        for m, o, dev in [(cpu_model, cpu_opt, "cpu"), (model, opt, device)]:
            o.zero_grad()
            loss = F.cross_entropy(m(*[x.to(dev) for x in inputs]), labels.to(dev))
            loss.backward()
            o.step()
    assert_no_fallback()
    for (name, p), q in zip(cpu_model.named_parameters(), model.parameters()):
        torch.testing.assert_close(q.detach().cpu(), p.detach(), rtol=1e-5, atol=1e-5, msg=name)


@every_device
def test_errors(device):
    w = table(torch.float32).to(device)
    idx = torch.tensor([1, 2, 3], device=device)
    with pytest.raises((ValueError, RuntimeError), match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(idx, w, torch.tensor([1, 2], device=device))
    with pytest.raises((ValueError, RuntimeError), match="can not be greater than the number of indices"):
        F.embedding_bag(idx, w, torch.tensor([0, 4], device=device), include_last_offset=True)
    with pytest.raises(IndexError, match="embedding_bag: index 10 is out of bounds"):
        F.embedding_bag(torch.tensor([1, 10], device=device), w, torch.tensor([0], device=device))
    with pytest.raises((ValueError, RuntimeError), match="per_sample_weights"):
        F.embedding_bag(idx, w, torch.tensor([0], device=device), mode="mean",
                        per_sample_weights=torch.ones(3, device=device))
    with pytest.raises((ValueError, RuntimeError), match="per_sample_weights"):
        torch.embedding_bag(w, idx, torch.tensor([0], device=device), False, 0, False,
                            torch.ones(2, device=device), False)
    with pytest.raises((TypeError, RuntimeError), match="float"):
        torch.embedding_bag(w.to(torch.int32), idx, torch.tensor([0], device=device), False, 0,
                            False, None, False)
    sparse = w.clone().requires_grad_()
    out = F.embedding_bag(idx, sparse, torch.tensor([0], device=device), sparse=True)
    with pytest.raises(NotImplementedError, match="sparse"):
        out.sum().backward()
