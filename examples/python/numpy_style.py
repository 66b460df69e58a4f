"""NumPy-style code on any tessera device: a least-squares fit by gradient
descent, written with tessera tensors and checked against NumPy.

    .venv/bin/python examples/python/numpy_style.py [device]   # default: every device

The data starts in NumPy, moves to the device, and the result comes back
through the buffer protocol without a copy on host devices.
"""

import sys

import numpy as np

import tessera


def fit(device: str, steps: int = 300,
        lr: float = 0.1) -> tuple[np.ndarray, float, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((512, 8)).astype(np.float32)
    true_w = np.arange(1, 9, dtype=np.float32) / 4
    y = x @ true_w + 0.01 * rng.standard_normal(512).astype(np.float32)

    # from_numpy shares memory on the host; .to() copies to the device.
    xs = tessera.from_numpy(x).to(device)
    ys = tessera.from_numpy(y).to(device)
    w = tessera.zeros(8, device=device)
    for _ in range(steps):
        residual = xs @ w - ys                  # [512]
        grad = (xs.T @ residual) * (2 / len(ys))
        w -= lr * grad                          # in place, on the device
    loss = ((xs @ w - ys) ** 2).mean().item()
    return w.cpu().numpy(), loss, true_w


def main() -> None:
    devices = sys.argv[1:] or [str(d) for d in tessera.devices() if d.type != "template"]
    for device in devices:
        w, loss, true_w = fit(device)
        error = np.abs(w - true_w).max()
        print(f"{device:>10}: loss {loss:.6f}, max |w - w_true| = {error:.4f}")
        assert error < 0.01, f"{device}: the fit did not converge"


if __name__ == "__main__":
    main()
