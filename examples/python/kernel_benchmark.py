"""Times one op on every tessera device, as a kernel author would: device
events around repeated calls, after a warm-up, inputs made once.

    .venv/bin/python examples/python/kernel_benchmark.py [op] [size]

op: one of OPS below (default matmul); size: the problem size (default
1024). Prints milliseconds per call and the throughput per device.
"""

import sys
from collections.abc import Callable

import tessera

Inputs = tuple[tessera.Tensor, ...]
# name -> (make inputs(size, device), run(inputs), work(size) and its unit)
OPS: dict[str, tuple[Callable[[int, tessera.device], Inputs], Callable[[Inputs], tessera.Tensor],
                     Callable[[int], tuple[float, str]]]] = {
    "matmul": (lambda n, d: (tessera.randn(n, n, device=d), tessera.randn(n, n, device=d)),
               lambda a: a[0] @ a[1], lambda n: (2 * n ** 3 / 1e9, "GFLOP/s")),
    "add": (lambda n, d: (tessera.randn(n * n, device=d), tessera.randn(n * n, device=d)),
            lambda a: a[0] + a[1], lambda n: (3 * 4 * n * n / 1e9, "GB/s")),
    "sum": (lambda n, d: (tessera.randn(n, n, device=d),),
            lambda a: a[0].sum(dim=1), lambda n: (4 * n * n / 1e9, "GB/s")),
    "softmax": (lambda n, d: (tessera.randn(n, n, device=d),),
                lambda a: tessera.softmax(a[0], dim=-1), lambda n: (2 * 4 * n * n / 1e9, "GB/s")),
}


def time_op(op: str, size: int, device: tessera.device, calls: int = 10) -> float:
    make, run, _ = OPS[op]
    inputs = make(size, device)
    for _ in range(3):
        run(inputs)
    start, end = tessera.Event(device), tessera.Event(device)
    start.record()
    for _ in range(calls):
        run(inputs)
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / calls


def main() -> None:
    op = sys.argv[1] if len(sys.argv) > 1 else "matmul"
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
    if op not in OPS:
        raise SystemExit(f"unknown op {op!r}; choose one of {', '.join(OPS)}")
    work, unit = OPS[op][2](size)
    print(f"{op}, size {size}")
    for device in tessera.devices():
        if device.type == "template":
            continue  # the vendor template device: naive kernels by design
        ms = time_op(op, size, device)
        name = tessera.get_device_properties(device)["name"]
        print(f"  {str(device):>10} ({name}): {ms:8.3f} ms, {work / (ms / 1e3):8.1f} {unit}")


if __name__ == "__main__":
    main()
