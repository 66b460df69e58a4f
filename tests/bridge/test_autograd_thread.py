"""Where autograd runs tessera's backward: on the thread that calls
backward() (the bridge turns the engine's device threads off for the
importing thread when no other accelerator is present), unless
TESSERA_AUTOGRAD_DEVICE_THREADS=1 keeps them; results are the same
either way."""

import os
import subprocess
import sys
import threading

import pytest
import torch


def backward_threads(device):
    """The threads that ran a hook in a small model's backward, and the
    input's gradient."""
    seen = set()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.LayerNorm(16),
                                torch.nn.Linear(16, 3)).to(device)
    x = torch.randn(5, 8).to(device).requires_grad_()
    hidden = model[:2](x)
    hidden.register_hook(lambda g: seen.add(threading.get_ident()))
    loss = torch.nn.functional.cross_entropy(model[2:](hidden), torch.tensor([0, 1, 2, 1, 0]).to(device))
    loss.backward()
    return seen, x.grad.cpu(), model[0].weight.grad.cpu()


def test_backward_runs_on_the_calling_thread(tessera):
    assert not torch._C._is_multithreading_enabled()
    seen, grad_x, grad_w = backward_threads(tessera)
    assert seen == {threading.get_ident()}
    _, cpu_x, cpu_w = backward_threads("cpu")
    torch.testing.assert_close(grad_x, cpu_x, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(grad_w, cpu_w, rtol=1e-4, atol=1e-5)


SCRIPT = """
import threading, torch, torch_tessera
x = torch.ones(3, device="tessera").requires_grad_()
y = x * 2
seen = []
y.register_hook(lambda g: seen.append(threading.get_ident()))
y.sum().backward()
print("caller" if seen == [threading.get_ident()] else "device thread", x.grad.tolist())
"""


@pytest.mark.parametrize("setting, where", [("0", "caller"), ("1", "device thread")])
def test_the_environment_chooses(tessera, setting, where):
    env = dict(os.environ, TESSERA_AUTOGRAD_DEVICE_THREADS=setting)
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[-2] == f"{where} [2.0, 2.0, 2.0]", out.stdout
