"""Trains a small classifier on `tessera` and on the CPU from the same
weights and data, and prints the two loss curves side by side.

torch_tessera is loaded by `import torch` itself (the torch.backends entry
point); nothing here imports it.
"""

import copy
import time

import torch
from torch import nn


def make_data(n=512, features=32, classes=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, features, generator=g)
    w = torch.randn(features, classes, generator=g)
    y = (x @ w).argmax(dim=1)
    return x, y


def train(model, x, y, device, steps):
    model = model.to(device)
    x, y = x.to(device), y.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    start = 0.0
    for step in range(steps):
        if step == 1:  # the first step pays one-time costs
            start = time.perf_counter()
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, time.perf_counter() - start


def main():
    torch.manual_seed(0)
    x, y = make_data()
    model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.LayerNorm(64), nn.Linear(64, 4))
    steps = 20

    print(f"tessera devices: {torch.tessera.device_count()}")
    for i in range(torch.tessera.device_count()):
        props = torch.tessera.get_device_properties(i)
        print(f"  tessera:{i} = runtime {props.runtime_device}: {props.name}")

    ref_losses, ref_s = train(copy.deepcopy(model), x, y, "cpu", steps)
    ts_losses, ts_s = train(copy.deepcopy(model), x, y, "tessera", steps)

    print(f"\n{'step':>4}  {'loss (cpu)':>12}  {'loss (tessera)':>14}")
    for i in range(0, steps, 2):
        print(f"{i:>4}  {ref_losses[i]:>12.6f}  {ts_losses[i]:>14.6f}")
    worst = max(abs(a - b) for a, b in zip(ref_losses, ts_losses))
    print(f"\nlargest loss difference: {worst:.2e}; {steps} steps: cpu {ref_s * 1e3:.0f} ms, "
          f"tessera {ts_s * 1e3:.0f} ms")
    print(f"tessera memory: allocated {torch.tessera.memory_allocated()} B, "
          f"reserved {torch.tessera.memory_reserved()} B")
    import torch_tessera

    fallback = torch_tessera.fallback_stats()
    print(f"ops that ran through the CPU fallback: {sum(fallback.values())} calls"
          + (f" ({', '.join(sorted(fallback))})" if fallback else ""))
    if worst > 1e-3:
        raise SystemExit("tessera's losses differ from the CPU's")


if __name__ == "__main__":
    main()
