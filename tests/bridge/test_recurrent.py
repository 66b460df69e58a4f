"""Recurrent layers (nn.LSTM, nn.GRU, nn.RNN and the cells) train on
tessera as on CPU.

On a device other than the CPU, PyTorch's recurrent layers run each step
through aten::_thnn_fused_lstm_cell / _thnn_fused_gru_cell and their
backward ops; the bridge composes them of tessera ops
(bridge/csrc/ops/rnn_cells.cc). Each test copies a CPU model to a tessera
device, runs the same batches through both, and compares outputs, every
gradient, and the parameters after a few optimizer steps; none may need
the CPU fallback for the cells.
"""

import copy

import pytest
import torch
import torch.nn as nn
import torch_tessera

from bridge_testing import every_device

RTOL = 1e-4
ATOL = 1e-5
CELL_OPS = {"aten::_thnn_fused_lstm_cell", "aten::_thnn_fused_lstm_cell_backward_impl",
            "aten::_thnn_fused_gru_cell", "aten::_thnn_fused_gru_cell_backward"}


def assert_close(got, want):
    torch.testing.assert_close(got.detach().cpu(), want.detach().cpu(), rtol=RTOL, atol=ATOL)


def flat(outputs):
    """The tensors of an RNN's output (nested tuples: output, (h, c))."""
    if isinstance(outputs, torch.Tensor):
        return [outputs]
    if isinstance(outputs, nn.utils.rnn.PackedSequence):
        return [outputs.data]
    return [t for o in outputs for t in flat(o)]


def assert_trains_alike(model_cpu, device, make_inputs, steps=3):
    torch_tessera.reset_fallback_stats()
    model_dev = copy.deepcopy(model_cpu).to(device)
    opt_cpu = torch.optim.Adam(model_cpu.parameters(), lr=1e-2)
    opt_dev = torch.optim.Adam(model_dev.parameters(), lr=1e-2)
    for step in range(steps):
        inputs_cpu = make_inputs(step, torch.device("cpu"))
        inputs_dev = make_inputs(step, device)
        results = []
        for model, opt, inputs in ((model_cpu, opt_cpu, inputs_cpu), (model_dev, opt_dev, inputs_dev)):
            opt.zero_grad()
            outs = flat(model(*inputs))
            # Every output feeds the loss, so every backward path is checked.
            loss = sum((o * torch.linspace(0.5, 1.5, o.numel(), device=o.device).view_as(o)).sum()
                       for o in outs)
            loss.backward()
            results.append(outs)
        for got, want in zip(results[1], results[0]):
            assert got.device == device
            assert_close(got, want)
        for (name, p_dev), (_, p_cpu) in zip(model_dev.named_parameters(), model_cpu.named_parameters()):
            assert p_dev.grad is not None, name
            torch.testing.assert_close(p_dev.grad.cpu(), p_cpu.grad, rtol=RTOL, atol=ATOL,
                                       msg=lambda m: f"grad of {name}: {m}")
        opt_cpu.step()
        opt_dev.step()
    for (name, p_dev), (_, p_cpu) in zip(model_dev.named_parameters(), model_cpu.named_parameters()):
        assert_close(p_dev, p_cpu)
    used = set(torch_tessera.fallback_stats()) & CELL_OPS
    assert not used, f"the recurrent cells ran through the CPU fallback: {used}"


def sequence(batch_first, seq=7, batch=3, features=5, seed=0):
    def make(step, device):
        g = torch.Generator().manual_seed(seed + step)
        shape = (batch, seq, features) if batch_first else (seq, batch, features)
        return (torch.randn(shape, generator=g).to(device),)
    return make


RNN_CASES = {
    "lstm": lambda: nn.LSTM(5, 6),
    "lstm 2 layers bidirectional batch_first": lambda: nn.LSTM(5, 6, num_layers=2, bidirectional=True,
                                                              batch_first=True),
    "lstm without bias": lambda: nn.LSTM(5, 6, bias=False, num_layers=2),
    "lstm without bias, projections": lambda: nn.LSTM(5, 6, bias=False, proj_size=4),
    "gru": lambda: nn.GRU(5, 6),
    "gru 2 layers bidirectional batch_first": lambda: nn.GRU(5, 6, num_layers=2, bidirectional=True,
                                                            batch_first=True),
    "gru without bias": lambda: nn.GRU(5, 6, bias=False),
    "rnn tanh 2 layers": lambda: nn.RNN(5, 6, num_layers=2),
    "rnn relu": lambda: nn.RNN(5, 6, nonlinearity="relu"),
}


@every_device
@pytest.mark.parametrize("name", RNN_CASES.keys())
def test_recurrent_layer_trains_like_cpu(device, name):
    torch.manual_seed(0)
    model = RNN_CASES[name]()
    assert_trains_alike(model, device, sequence(model.batch_first))


@every_device
@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_initial_states(device, kind):
    torch.manual_seed(0)
    model = nn.LSTM(5, 6, num_layers=2) if kind == "lstm" else nn.GRU(5, 6, num_layers=2)

    def make(step, dev):
        g = torch.Generator().manual_seed(step)
        x = torch.randn(4, 3, 5, generator=g)
        h0 = torch.randn(2, 3, 6, generator=g)
        if kind == "gru":
            return x.to(dev), h0.to(dev)
        return x.to(dev), (h0.to(dev), torch.randn(2, 3, 6, generator=g).to(dev))

    assert_trains_alike(model, device, make)


@every_device
@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_packed_sequences(device, kind):
    torch.manual_seed(0)
    model = nn.LSTM(5, 6, bidirectional=True) if kind == "lstm" else nn.GRU(5, 6, bidirectional=True)
    lengths = torch.tensor([7, 5, 2])

    def make(step, dev):
        x = torch.randn(7, 3, 5, generator=torch.Generator().manual_seed(step)).to(dev)
        return (nn.utils.rnn.pack_padded_sequence(x, lengths),)

    assert_trains_alike(model, device, make)


class CellLoop(nn.Module):
    """A decoder-style loop over an LSTMCell or GRUCell."""

    def __init__(self, cell):
        super().__init__()
        self.cell = cell

    def forward(self, x):
        state = None
        outs = []
        for t in range(x.size(0)):
            state = self.cell(x[t], state)
            outs.append(state[0] if isinstance(state, tuple) else state)
        return torch.stack(outs)


@every_device
@pytest.mark.parametrize("cell", ["LSTMCell", "GRUCell"])
def test_cells_in_a_loop(device, cell):
    torch.manual_seed(0)
    model = CellLoop(getattr(nn, cell)(5, 6))
    assert_trains_alike(model, device, sequence(batch_first=False, seq=5))


class LstmLanguageModel(nn.Module):
    """Embedding -> 2-layer LSTM -> tied output projection: next-token logits."""

    def __init__(self, vocab=17, width=12):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.lstm = nn.LSTM(width, width, num_layers=2, batch_first=True, dropout=0.0)
        self.head = nn.Linear(width, vocab)
        self.head.weight = self.embed.weight

    def forward(self, tokens):
        hidden, _ = self.lstm(self.embed(tokens))
        return self.head(hidden)


@every_device
def test_lstm_language_model_trains_like_cpu(device):
    torch.manual_seed(0)
    model_cpu = LstmLanguageModel()
    model_dev = copy.deepcopy(model_cpu).to(device)
    opts = [torch.optim.AdamW(m.parameters(), lr=1e-2) for m in (model_cpu, model_dev)]
    g = torch.Generator().manual_seed(3)
    for _ in range(4):
        tokens = torch.randint(0, 17, (4, 9), generator=g)
        losses = []
        for model, opt, dev in ((model_cpu, opts[0], "cpu"), (model_dev, opts[1], device)):
            opt.zero_grad()
            t = tokens.to(dev)
            logits = model(t[:, :-1])
            loss = nn.functional.cross_entropy(logits.reshape(-1, 17), t[:, 1:].reshape(-1))
            loss.backward()
            opt.step()
            losses.append(loss)
        assert_close(losses[1], losses[0])
    for (name, p_dev), (_, p_cpu) in zip(model_dev.named_parameters(), model_cpu.named_parameters()):
        assert_close(p_dev, p_cpu)


@every_device
@pytest.mark.parametrize("steps", [1, 5])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_gradients_of_input_and_initial_states(device, kind, steps, bidirectional):
    # Each direction is one autograd node (lstm_direction.cc,
    # gru_direction.cc) whose backward returns the input's and the initial
    # states' gradients too.
    torch.manual_seed(0)
    cls = nn.LSTM if kind == "lstm" else nn.GRU
    model = cls(5, 6, num_layers=2, bidirectional=bidirectional)
    model_dev = copy.deepcopy(model).to(device)
    g = torch.Generator().manual_seed(1)
    d = 2 if bidirectional else 1
    x, h0, c0 = (torch.randn(shape, generator=g) for shape in
                 ((steps, 3, 5), (2 * d, 3, 6), (2 * d, 3, 6)))
    grads = []
    for m, dev in ((model, "cpu"), (model_dev, device)):
        if kind == "lstm":
            leaves = [t.detach().to(dev).requires_grad_() for t in (x, h0, c0)]
            out, (h, c) = m(leaves[0], (leaves[1], leaves[2]))
            # Only out and c feed the loss: the final h's gradient stays undefined.
            loss = out.sin().sum() + (c * 0.5).sum()
        else:
            leaves = [t.detach().to(dev).requires_grad_() for t in (x, h0)]
            out, h = m(*leaves)
            loss = out.sin().sum()  # the final h's gradient stays undefined
        loss.backward()
        grads.append([t.grad for t in leaves] + [p.grad for p in m.parameters()])
    for got, want in zip(grads[1], grads[0]):
        assert_close(got, want)


@every_device
def test_lstm_runs_under_inference_mode(device):
    torch.manual_seed(0)
    model = nn.LSTM(5, 6, num_layers=2)
    x = torch.randn(4, 3, 5)
    with torch.inference_mode():
        want = model(x)[0]
        got = copy.deepcopy(model).to(device)(x.to(device))[0]
    assert_close(got, want)


@every_device
@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU], ids=lambda c: c.__name__)
def test_backward_takes_each_weight_gradient_in_one_gemm(device, cls):
    rnn = cls(6, 8, num_layers=2).to(device)
    x = torch.randn(7, 3, 6, device=device)
    out, _ = rnn(x)
    with torch.profiler.profile() as prof:
        out.sum().backward()
    calls = {e.key: e.count for e in prof.key_averages()}
    # Per layer: one hidden-state GEMM per step, then w_ih's and w_hh's
    # gradients once each; the top layer adds its input's gradient.
    if cls is nn.LSTM:
        # An addmm that adds the step's output gradient, a plain mm for h0's.
        assert calls.get("aten::addmm") == 2 * 6
        assert calls.get("aten::mm") == 2 * (1 + 2) + 1
    else:
        # An addmm onto the cell's own gradient of h, every step.
        assert calls.get("aten::addmm") == 2 * 7
        assert calls.get("aten::mm") == 2 * 2 + 1


@every_device
@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU], ids=lambda c: c.__name__)
def test_each_layers_inputs_are_projected_once(device, cls):
    # bridge/csrc/ops/recurrent_sequence.cc: one input GEMM per layer and
    # direction for the whole sequence, then one hidden GEMM per step.
    rnn = cls(6, 8, num_layers=2, bidirectional=True).to(device)
    x = torch.randn(7, 3, 6, device=device)
    with torch.profiler.profile() as prof:
        rnn(x)
    calls = {e.key: e.count for e in prof.key_averages()}
    assert calls.get("aten::mm") is None
    if cls is torch.nn.LSTM:
        # bridge/csrc/ops/lstm_direction.cc: the projection with both
        # biases, then the hidden GEMM added into each step's gates.
        assert calls.get("aten::addmm") == 4
        assert calls.get("aten::addmm_") == 2 * 2 * 7
    else:
        # gru_direction.cc: the projection with b_ih, then each step's
        # hidden projection with b_hh (the cell needs it apart).
        assert calls.get("aten::addmm") == 4 + 2 * 2 * 7
