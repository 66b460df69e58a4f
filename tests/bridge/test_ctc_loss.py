"""nn.CTCLoss / F.ctc_loss native on every tessera device.

aten::_ctc_loss and aten::_ctc_loss_backward (and their .Tensor forms) are
composed of tessera ops in bridge/csrc/ops/ctc_loss.cc. Every case runs on
the CPU and on the device and compares the loss and the gradient of
log_probs, with no CPU fallback: PyTorch's OpInfo samples, padded and
concatenated targets, length tensors, every reduction, impossible
alignments with and without zero_infinity, another blank, repeated labels,
empty targets and inputs, unbatched input, float64; the private ops with
their log_alpha; a small recurrent model trained with CTC; and the errors.
"""

import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_tessera

from bridge_testing import assert_no_fallback, every_device

pytest.importorskip("expecttest", reason="torch.testing._internal needs the expecttest package")
from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402

from opinfo_testing import compare_backward, compare_forward  # noqa: E402

CTC_OPINFO = next(op for op in op_db if op.name == "nn.functional.ctc_loss")
# Enough for every sample OpInfo generates for ctc_loss (12).
ALL_SAMPLES = 100
# A float32 gradient takes exp of alpha + beta + nll - log_probs, sums of
# 50 steps' terms that cancel: the CPU's and tessera's are both about 8e-5
# from the float64 result on OpInfo's samples, 2e-5 from each other.
FLOAT32_GRADIENT_TOLERANCE = dict(rtol=1e-4, atol=1e-4)


def assert_close(got, want, what=""):
    torch.testing.assert_close(got.detach().cpu(), want.detach(), equal_nan=True,
                               msg=lambda m: f"{what}: {m}")


def log_probs(time, batch, classes, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    shape = (time, classes) if batch is None else (time, batch, classes)
    return (torch.randn(shape, generator=g, dtype=dtype) * 3).log_softmax(-1)


def assert_ctc_like_cpu(device, lp, targets, input_lengths, target_lengths, **kwargs):
    """F.ctc_loss on the CPU and on device: the same loss and gradient of
    log_probs (the output's sum, weighted so every sample differs), no
    CPU fallback. Returns the CPU's loss and gradient."""
    def run(dev):
        moved = [v.to(dev) if isinstance(v, torch.Tensor) else v
                 for v in (targets, input_lengths, target_lengths)]
        x = lp.detach().to(dev).requires_grad_()
        loss = F.ctc_loss(x, *moved, **kwargs)
        weights = torch.linspace(0.5, 1.5, loss.numel(), dtype=loss.dtype).view(loss.shape)
        (loss * weights.to(dev)).sum().backward()
        return loss, x.grad

    want_loss, want_grad = run("cpu")
    torch_tessera.reset_fallback_stats()
    got_loss, got_grad = run(device)
    assert_no_fallback()
    assert got_loss.device == device and got_grad.device == device
    assert_close(got_loss, want_loss, "loss")
    assert_close(got_grad, want_grad, "gradient of log_probs")
    return want_loss, want_grad


# -- PyTorch's OpInfo samples (padded targets, list and tensor lengths,
# every reduction, zero_infinity both ways; random targets, so seeded).

@every_device
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_opinfo_forward_matches_cpu(device, dtype):
    torch.manual_seed(0)
    samples = list(CTC_OPINFO.sample_inputs("cpu", dtype))
    assert compare_forward(CTC_OPINFO, device, dtype, ALL_SAMPLES, samples=samples) == 12


@every_device
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_opinfo_backward_matches_cpu(device, dtype):
    torch.manual_seed(0)
    tolerance = FLOAT32_GRADIENT_TOLERANCE if dtype == torch.float32 else {}
    assert compare_backward(CTC_OPINFO, device, ALL_SAMPLES, dtype=dtype, **tolerance) == 12


# -- Target layouts, lengths and reductions.

def padded_batch(seed=1):
    """4 samples of varying input and target lengths, padded targets [4, 6]
    (padding -1: never read), one empty target."""
    g = torch.Generator().manual_seed(seed)
    target_lengths = [4, 6, 0, 2]
    targets = torch.full((4, 6), -1, dtype=torch.long)
    for n, length in enumerate(target_lengths):
        targets[n, :length] = torch.randint(1, 5, (length,), generator=g)
    return targets, [15, 12, 9, 15], target_lengths


def concatenated(targets, target_lengths):
    return torch.cat([targets[n, :length] for n, length in enumerate(target_lengths)])


@every_device
@pytest.mark.parametrize("layout", ["padded", "concatenated"])
@pytest.mark.parametrize("lengths", ["lists", "tensors"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_targets_lengths_reductions(device, layout, lengths, reduction):
    targets, input_lengths, target_lengths = padded_batch()
    if layout == "concatenated":
        targets = concatenated(targets, target_lengths)
    if lengths == "tensors":
        input_lengths, target_lengths = torch.tensor(input_lengths), torch.tensor(target_lengths)
    assert_ctc_like_cpu(device, log_probs(15, 4, 5), targets, input_lengths, target_lengths,
                        reduction=reduction)


@every_device
def test_int32_targets_and_lengths(device):
    targets, input_lengths, target_lengths = padded_batch()
    assert_ctc_like_cpu(device, log_probs(15, 4, 5), targets.int(),
                        torch.tensor(input_lengths, dtype=torch.int32),
                        torch.tensor(target_lengths, dtype=torch.int32), reduction="none")


@every_device
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_impossible_alignment(device, zero_infinity):
    # Sample 0 repeats a label three times: 5 steps at least (a blank
    # between the repeats), 4 given. Sample 1 has more labels than steps.
    # Sample 2 fits exactly (3 labels, no repeats, 3 steps).
    targets = torch.tensor([[2, 2, 2, 0, 0], [1, 2, 3, 1, 2], [3, 1, 2, 0, 0]])
    loss, grad = assert_ctc_like_cpu(device, log_probs(6, 3, 4), targets, [4, 4, 3], [3, 5, 3],
                                     reduction="none", zero_infinity=zero_infinity)
    if zero_infinity:
        assert loss[:2].eq(0).all() and grad[:, :2].eq(0).all()
    else:
        assert loss[:2].isinf().all() and grad[:4, :2].isnan().all()
    assert loss[2].isfinite() and grad[:, 2].isfinite().all()


@every_device
@pytest.mark.parametrize("blank", [0, 2, 5])
def test_blank_anywhere(device, blank):
    g = torch.Generator().manual_seed(blank)
    classes = [c for c in range(6) if c != blank]
    targets = torch.tensor(classes)[torch.randint(0, 5, (3, 5), generator=g)]
    assert_ctc_like_cpu(device, log_probs(12, 3, 6), targets, [12, 10, 11], [5, 3, 4],
                        blank=blank, reduction="sum")


@every_device
def test_repeated_labels(device):
    # Runs of one label need a blank between their members; the exact-fit
    # sample 2 has only one alignment.
    targets = torch.tensor([[1, 1, 2, 2, 2], [3, 3, 3, 3, 1], [1, 1, 1, 0, 0]])
    assert_ctc_like_cpu(device, log_probs(10, 3, 4), targets, [10, 9, 5], [5, 5, 3],
                        reduction="none")


@every_device
def test_empty_inputs_and_targets(device):
    # No steps and no labels: loss 0; no steps, some labels: infinite.
    targets = torch.tensor([[1, 2], [0, 0], [2, 0], [0, 0]])
    assert_ctc_like_cpu(device, log_probs(5, 4, 3), targets, [5, 0, 0, 3], [2, 0, 1, 0],
                        reduction="none")
    # Every target empty: one state, the blank.
    assert_ctc_like_cpu(device, log_probs(5, 3, 4), torch.zeros(3, 0, dtype=torch.long),
                        [5, 3, 0], [0, 0, 0], reduction="none")


@every_device
def test_transposed_log_probs(device):
    # A batch-first model's output transposed to [T, N, C]: not contiguous.
    lp = log_probs(3, 7, 4, seed=6).transpose(0, 1)
    assert not lp.is_contiguous()
    assert_ctc_like_cpu(device, lp, torch.tensor([[1, 2], [3, 3], [1, 0]]), [7, 6, 5], [2, 2, 1],
                        reduction="mean")


@every_device
@pytest.mark.parametrize("lengths", ["lists", "tensors"])
def test_unbatched(device, lengths):
    input_lengths, target_lengths = ([9], [4]) if lengths == "lists" else (
        torch.tensor(9), torch.tensor(4))
    loss, _ = assert_ctc_like_cpu(device, log_probs(11, None, 5), torch.tensor([1, 3, 3, 4]),
                                  input_lengths, target_lengths, reduction="none")
    assert loss.dim() == 0


@every_device
def test_float64(device):
    targets, input_lengths, target_lengths = padded_batch(seed=3)
    assert_ctc_like_cpu(device, log_probs(15, 4, 5, torch.float64), targets, input_lengths,
                        target_lengths, reduction="mean")


@every_device
def test_ctc_loss_module_and_unnormalized_log_probs(device):
    # nn.CTCLoss as a user writes it; the kernels take any log_probs, not
    # only normalized ones, as the CPU's do.
    targets, input_lengths, target_lengths = padded_batch(seed=4)
    lp = torch.randn(15, 4, 5, generator=torch.Generator().manual_seed(4))
    criterion = nn.CTCLoss(blank=0, zero_infinity=True)
    cpu = criterion(lp, targets, input_lengths, target_lengths)
    torch_tessera.reset_fallback_stats()
    got = criterion(lp.to(device), targets.to(device), input_lengths, target_lengths)
    assert_no_fallback()
    assert_close(got, cpu)


# -- The private ops: log_alpha within each sample's lattice (the CPU
# leaves the rest uninitialized; tessera writes -inf there), and the
# backward from saved results.

@every_device
@pytest.mark.parametrize("overload", ["default", "Tensor"])
def test_private_ops_match_cpu(device, overload):
    targets, input_lengths, target_lengths = padded_batch(seed=5)
    lp = log_probs(15, 4, 5)
    grad = torch.tensor([0.5, -1.0, 2.0, 0.25])
    if overload == "Tensor":
        input_lengths, target_lengths = torch.tensor(input_lengths), torch.tensor(target_lengths)
    forward = getattr(torch.ops.aten._ctc_loss, overload)
    backward = getattr(torch.ops.aten._ctc_loss_backward, overload)

    nll, log_alpha = forward(lp, targets, input_lengths, target_lengths, 0, False)
    want = backward(grad, lp, targets, input_lengths, target_lengths, nll, log_alpha, 0, False)
    moved = [v.to(device) if isinstance(v, torch.Tensor) else v
             for v in (lp, targets, input_lengths, target_lengths)]
    torch_tessera.reset_fallback_stats()
    got_nll, got_alpha = forward(*moved, 0, False)
    got = backward(grad.to(device), *moved, got_nll, got_alpha, 0, False)
    assert_no_fallback()
    assert_close(got_nll, nll, "neg_log_likelihood")
    assert got_alpha.shape == log_alpha.shape == (4, 15, 13)
    for n, (steps, labels) in enumerate(zip([15, 12, 9, 15], [4, 6, 0, 2])):
        assert_close(got_alpha[n, :steps, :2 * labels + 1], log_alpha[n, :steps, :2 * labels + 1],
                     f"log_alpha of sample {n}")
        assert got_alpha[n, steps:].eq(-torch.inf).all() and \
            got_alpha[n, :, 2 * labels + 1:].eq(-torch.inf).all()
    assert got.shape == want.shape and got.is_contiguous()
    assert_close(got, want, "gradient")
    # The CPU's log_alpha (garbage outside the lattice) serves tessera's
    # backward as well.
    assert_close(backward(grad.to(device), *moved, nll.to(device), log_alpha.to(device), 0, False),
                 want, "gradient from the CPU's log_alpha")


# -- A small model trained with CTC: conv + GRU + linear over sequences,
# the same SGD steps as on the CPU.

class SpeechModel(nn.Module):
    def __init__(self, features=6, hidden=8, classes=5):
        super().__init__()
        self.conv = nn.Conv1d(features, hidden, kernel_size=3, padding=1)
        self.gru = nn.GRU(hidden, hidden)
        self.out = nn.Linear(hidden, classes)

    def forward(self, x):  # x: [T, N, features] -> log_probs [T, N, classes]
        h = torch.relu(self.conv(x.permute(1, 2, 0))).permute(2, 0, 1)
        h, _ = self.gru(h)
        return self.out(h).log_softmax(-1)


@every_device
def test_ctc_trained_model_like_cpu(device):
    torch.manual_seed(0)
    model_cpu = SpeechModel()
    model_dev = copy.deepcopy(model_cpu).to(device)
    opt_cpu = torch.optim.SGD(model_cpu.parameters(), lr=0.1, momentum=0.9)
    opt_dev = torch.optim.SGD(model_dev.parameters(), lr=0.1, momentum=0.9)
    criterion = nn.CTCLoss()
    g = torch.Generator().manual_seed(1)
    torch_tessera.reset_fallback_stats()
    losses = []
    for _ in range(4):
        x = torch.randn(14, 3, 6, generator=g)
        target_lengths = torch.tensor([5, 3, 4])
        targets = torch.randint(1, 5, (int(target_lengths.sum()),), generator=g)
        input_lengths = torch.tensor([14, 12, 10])
        step = []
        for model, opt, dev in ((model_cpu, opt_cpu, "cpu"), (model_dev, opt_dev, device)):
            opt.zero_grad()
            loss = criterion(model(x.to(dev)), targets.to(dev), input_lengths.to(dev),
                             target_lengths.to(dev))
            loss.backward()
            opt.step()
            step.append(loss)
        torch.testing.assert_close(step[1].detach().cpu(), step[0].detach(), rtol=1e-4, atol=1e-5)
        losses.append(step[0].item())
    assert_no_fallback()
    assert losses[-1] < losses[0]
    for (name, p_dev), (_, p_cpu) in zip(model_dev.named_parameters(), model_cpu.named_parameters()):
        torch.testing.assert_close(p_dev.detach().cpu(), p_cpu.detach(), rtol=1e-4, atol=1e-5,
                                   msg=lambda m: f"{name}: {m}")


# -- Errors name the op and the shapes.

def ctc_call(**changes):
    args = dict(lp=log_probs(6, 2, 4), targets=torch.tensor([[1, 2], [3, 1]]),
                input_lengths=[6, 5], target_lengths=[2, 2], blank=0)
    args.update(changes)
    return args


ERRORS = {
    "blank out of range": (ctc_call(blank=4), r"_ctc_loss: blank must be in label range \[0, 4\)"),
    "negative blank": (ctc_call(blank=-1), r"blank must be in label range .* got -1"),
    "input_lengths count": (ctc_call(input_lengths=[6]),
                            r"input_lengths must be of size batch_size 2 .*got 1 lengths"),
    "target_lengths count": (ctc_call(target_lengths=[2, 2, 2]),
                             r"target_lengths must be of size batch_size 2"),
    "input longer than log_probs": (ctc_call(input_lengths=[7, 5]),
                                    r"input_lengths\[0\] = 7 must be in \[0, 6\]"),
    "negative target length": (ctc_call(target_lengths=[2, -1]),
                               r"target_lengths\[1\] = -1 must be at least 0"),
    "target out of range": (ctc_call(targets=torch.tensor([[1, 2], [4, 1]])),
                            r"target 0 of sample 1 is 4, not a class of log_probs \[6, 2, 4\]"),
    "negative target": (ctc_call(targets=torch.tensor([[1, -2], [3, 1]])),
                        r"target 1 of sample 0 is -2"),
    "padded targets too short": (ctc_call(target_lengths=[3, 2]),
                                 r"padded targets must be \[batch_size 2, at least max\(target_lengths\) 3\]"),
    "concatenated targets wrong length": (ctc_call(targets=torch.tensor([1, 2, 3])),
                                          r"concatenated targets \[3\] must hold sum\(target_lengths\) = 4"),
    "float16 log_probs": (ctc_call(lp=log_probs(6, 2, 4).half()),
                          r"_ctc_loss: log_probs must be float32 or float64"),
    "empty log_probs": (ctc_call(lp=log_probs(6, 2, 4)[:, :0], input_lengths=[], target_lengths=[],
                                 targets=torch.zeros(0, 2, dtype=torch.long)),
                        r"_ctc_loss: log_probs tensor must not be empty, got \[6, 0, 4\]"),
    "float targets": (ctc_call(targets=torch.tensor([[1.0, 2.0], [3.0, 1.0]])),
                      r"targets must be int64 or int32, got Float"),
}


@every_device
@pytest.mark.parametrize("case", ERRORS.keys())
def test_errors(device, case):
    args, message = ERRORS[case]
    with pytest.raises(RuntimeError, match=message):
        torch.ops.aten._ctc_loss(args["lp"].to(device), args["targets"].to(device),
                                 args["input_lengths"], args["target_lengths"], args["blank"],
                                 False)


@every_device
def test_errors_of_the_tensor_forms_and_backward(device):
    lp = log_probs(6, 2, 4).to(device)
    targets = torch.tensor([[1, 2], [3, 1]], device=device)
    with pytest.raises(RuntimeError, match=r"_ctc_loss: input_lengths must be integral, got Float"):
        torch.ops.aten._ctc_loss.Tensor(lp, targets, torch.tensor([6.0, 5.0]),
                                        torch.tensor([2, 2]), 0, False)
    with pytest.raises(RuntimeError, match=r"_ctc_loss: log_probs must be \[time, batch, classes\]"):
        torch.ops.aten._ctc_loss(lp[:, 0], targets[0], [6], [2], 0, False)
    nll, log_alpha = torch.ops.aten._ctc_loss(lp, targets, [6, 5], [2, 2], 0, False)
    with pytest.raises(RuntimeError, match=r"_ctc_loss_backward: log_alpha must be .*\[2, 6, 5\]"):
        torch.ops.aten._ctc_loss_backward(torch.ones(2, device=device), lp, targets, [6, 5],
                                          [2, 2], nll, log_alpha[:, :, :3], 0, False)
    with pytest.raises(RuntimeError, match=r"_ctc_loss_backward: grad must be \[batch_size 2\]"):
        torch.ops.aten._ctc_loss_backward(torch.ones(3, device=device), lp, targets, [6, 5],
                                          [2, 2], nll, log_alpha, 0, False)
