"""Typed uses of the tessera module, for mypy (test_typing.py) and for
Python: test_typing.py also runs them, so they are calls the module accepts.

assert_type makes mypy fail where the stubs lose a type (Any included) or
give the wrong one. Results the stubs call Any are those of functions whose
extension returns a plain Python object (`out=` forms, `.cpu()`, ...).
"""

from typing import Any, assert_type

import numpy as np
import numpy.typing as npt

import tessera
import tessera.nn.functional as F


def creation(device: str) -> tessera.Tensor:
    x = tessera.ones(2, 3, dtype=tessera.float32, device=device)
    assert_type(x, tessera.Tensor)
    assert_type(tessera.zeros((2, 3), device=tessera.device(device)), tessera.Tensor)
    assert_type(tessera.full([2, 3], 1.5, dtype=tessera.float64, device=device), tessera.Tensor)
    assert_type(tessera.arange(0, 6, 2, dtype=tessera.int64, device=device), tessera.Tensor)
    assert_type(tessera.tensor([[1, 2], [3, 4]], dtype=tessera.int32, device=device), tessera.Tensor)
    assert_type(tessera.empty_like(x, dtype=tessera.bool), tessera.Tensor)
    tessera.manual_seed(0)
    assert_type(tessera.randn(4, device=device), tessera.Tensor)
    return x


def attributes(x: tessera.Tensor) -> None:
    assert_type(x.shape, tuple[int, ...])
    assert_type(x.size(), tuple[int, ...])
    assert_type(x.size(0), int)
    assert_type(x.stride(), tuple[int, ...])
    assert_type(x.ndim, int)
    assert_type(x.dim(), int)
    assert_type(x.numel(), int)
    dtype: tessera.dtype = x.dtype  # Any in the stubs: the extension returns the dtype object
    assert_type(dtype.is_floating_point, bool)
    assert_type(tessera.float32.itemsize, int)
    assert_type(x.device, tessera.device)
    assert_type(x.device.type, str)
    assert_type(x.device.index, int)
    assert_type(x.is_contiguous(), bool)
    assert_type(x.T, tessera.Tensor)
    assert_type(x.sum().item(), bool | int | float)
    assert_type(len(x), int)
    rows: int = x.shape[0]
    assert rows == 2


def operators(x: tessera.Tensor) -> tessera.Tensor:
    y = x * 2 + 1
    assert_type(y, tessera.Tensor)
    assert_type(2 * x - y / 3, tessera.Tensor)
    assert_type(-x ** 2, tessera.Tensor)
    assert_type(2 ** x, tessera.Tensor)
    assert_type(x @ y.T, tessera.Tensor)
    assert_type(x < y, tessera.Tensor)
    assert_type(x == 1, tessera.Tensor)
    assert_type(x[0], tessera.Tensor)
    assert_type(x[:, 1:], tessera.Tensor)
    y += x
    y[0, 0] = 5.0
    assert_type(y.add_(x), tessera.Tensor)
    assert_type(y.sum(dim=1, keepdim=True), tessera.Tensor)
    assert_type(y.mean(dim=(0, 1)), tessera.Tensor)
    assert_type(y.amax(dim=-1), tessera.Tensor)
    assert_type(y.prod(0, keepdim=False, dtype=tessera.float64), tessera.Tensor)
    assert_type(y.permute(1, 0), tessera.Tensor)
    assert_type(y.transpose(0, 1).reshape(-1), tessera.Tensor)
    assert_type(tessera.softmax(y, dim=-1), tessera.Tensor)
    assert_type(tessera.reshape(y, 6), tessera.Tensor)
    return y


def neural_network(device: str) -> None:
    x = tessera.randn(1, 2, 5, 5, device=device)
    w = tessera.randn(3, 2, 3, 3, device=device)
    assert_type(F.conv2d(x, w, padding=1), tessera.Tensor)
    assert_type(F.conv2d(x, w, padding="same"), tessera.Tensor)
    assert_type(F.conv2d(x, w, stride=(2, 1), dilation=[1, 1]), tessera.Tensor)
    assert_type(F.linear(x.reshape(2, 25), tessera.randn(4, 25, device=device)), tessera.Tensor)
    assert_type(F.gelu(x, approximate="tanh"), tessera.Tensor)
    assert_type(F.softmax(x, dim=1), tessera.Tensor)
    assert_type(F.layer_norm(x, [5, 5]), tessera.Tensor)
    F.relu(x, inplace=True)
    tessera.special.erf(x)
    tessera.linalg.vector_norm(x, dim=(2, 3))


def interop() -> None:
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = tessera.from_numpy(array)
    assert_type(t, tessera.Tensor)
    back = t.numpy()
    assert_type(back, npt.NDArray[Any])
    assert np.asarray(t).shape == (2, 3)
    assert_type(tessera.from_dlpack(t), tessera.Tensor)


def streams(device: str) -> None:
    stream = tessera.Stream(device)
    assert_type(stream, tessera.Stream)
    with tessera.stream(stream) as current:
        assert current is not None
        start = tessera.Event(device)
        start.record()
        tessera.ones(4, device=device).sum()
        end = current.record_event()
        assert_type(end, tessera.Event)
    end.synchronize()
    assert_type(start.elapsed_time(end), float)
    assert_type(tessera.devices(), list[tessera.device])


def run_all(device: str = "cpu:0") -> None:
    x = creation(device)
    attributes(x)
    operators(x)
    neural_network(device)
    interop()
    streams(device)


if __name__ == "__main__":
    run_all()
