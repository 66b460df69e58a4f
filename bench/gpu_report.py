#!/usr/bin/env python3
"""The Vulkan device's table and the plot of a tools/gpu_check results folder.

gpu_check leaves in one folder the CUDA device against torch.cuda
(gpu_ops.json, from bench/compare_torch_gpu.py) and the Vulkan device's own
figures on the same GPU (vulkan_ops.json, ops_bench's JSON). This script
judges the Vulkan figures against torch's from the same run by the GPU
issue's Vulkan goals, and plots both devices' ratios:

    DIR/vulkan_ops.md   Vulkan against torch, with its goals (also printed)
    DIR/ratios.png      tessera / torch per benchmark, CUDA and Vulkan, with
                        each row's goal (needs matplotlib; skipped without)

--torch-from OTHER_DIR takes torch's figures from another run's
gpu_ops.json (a run that timed Vulkan alone); the table says so.

Usage: bench/gpu_report.py DIR [--torch-from OTHER_DIR]
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare_torch_gpu  # noqa: E402  (the table's rows and Markdown)

# The GPU issue's Vulkan column: minimum ratios to torch (None: shown, not
# judged), the elementwise rows against the run's best copy, and the
# launch overhead of a 1-element add.
VULKAN_TORCH_GOALS = {
    "add_f32_16M": None,
    "mul_f32_16M": None,
    "add_f32_256M": None,
    "mul_f32_256M": None,
    "sum_f32_8192x8192": 0.7,
    "sum_dim1_f32_8192x8192": 0.7,
    "softmax_f32_8192x8192": 0.7,
    "layer_norm_f32_8192x8192": 0.7,
    "softmax_f32_32768x1024": None,
    "layer_norm_f32_32768x1024": None,
    "matmul_f32_4096": 0.5,
    "matmul_tf32_4096": None,
    "matmul_f16_4096": 0.7,
    "matmul_bf16_4096": 0.7,
    "conv2d_f32_resnet_b32": 0.4,
    "copy_h2d_pinned_64M": None,
    "copy_d2h_pinned_64M": None,
    "add_latency_1": None,
}
VULKAN_MEMCPY_GOALS = {"add_f32_16M": 0.8, "mul_f32_16M": 0.8,
                       "add_f32_256M": 0.8, "mul_f32_256M": 0.8}
VULKAN_LATENCY_GOAL_US = 10.0


def read_vulkan(path):
    """The last ops_bench JSON line of vulkan_ops.json (one per run)."""
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    if not lines:
        raise ValueError(f"{path} is empty")
    return json.loads(lines[-1])


def plot(rows_by_device, path):
    """Bars of tessera / torch per benchmark and device, goals as ticks."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("gpu_report: no matplotlib, no plot", file=sys.stderr)
        return False
    names = []
    for rows in rows_by_device.values():
        for r in rows:
            if r["ratio"] is not None and r["benchmark"] not in names:
                names.append(r["benchmark"])
    width = 0.8 / max(len(rows_by_device), 1)
    fig, ax = plt.subplots(figsize=(12, 0.32 * len(names) + 1.5))
    for i, (device, rows) in enumerate(rows_by_device.items()):
        by_name = {r["benchmark"]: r for r in rows}
        ys = [j + i * width for j, n in enumerate(names)]
        ratios = [by_name[n]["ratio"] if n in by_name and by_name[n]["ratio"] else 0 for n in names]
        ax.barh(ys, ratios, height=width, label=device)
        for y, n in zip(ys, names):
            goal = by_name.get(n, {}).get("goal")
            if isinstance(goal, (int, float)):
                ax.plot([goal, goal], [y - width / 2, y + width / 2], color="black", lw=2)
    ax.set_yticks([j + width * (len(rows_by_device) - 1) / 2 for j in range(len(names))])
    ax.set_yticklabels(names, fontsize=8)
    ax.invert_yaxis()
    ax.axvline(1.0, color="grey", lw=0.8, ls="--")
    ax.set_xscale("log")
    ax.set_xlabel("tessera / torch throughput (log scale; black ticks: goals)")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir", type=Path, help="a gpu_check results folder")
    p.add_argument("--torch-from", type=Path, help="the folder whose gpu_ops.json gives torch's figures")
    args = p.parse_args()
    torch_dir = args.torch_from or args.dir
    try:
        gpu = json.loads((torch_dir / "gpu_ops.json").read_text())
        vulkan_path = args.dir / "vulkan_ops.json"
        vulkan = read_vulkan(vulkan_path) if vulkan_path.exists() else None
    except (OSError, ValueError) as e:
        print(f"gpu_report: {e}", file=sys.stderr)
        return 1
    rows_by_device = {}
    if not args.torch_from:
        rows_by_device["cuda"] = gpu["rows"]
    if vulkan is not None and vulkan.get("status") == "ok":
        rows = compare_torch_gpu.compare(vulkan, gpu["torch"], VULKAN_TORCH_GOALS,
                                         VULKAN_MEMCPY_GOALS, VULKAN_LATENCY_GOAL_US)
        source = (f"torch's figures from {torch_dir.name} ({gpu['date']})" if args.torch_from
                  else "torch's figures from the same run")
        header = (f"Tessera {vulkan['device_id']} ({vulkan['device']}, Vulkan) vs torch "
                  f"{gpu['torch_version']} on {gpu['gpu']}; {source}. ratio = tessera / torch "
                  "throughput (vs copy rows: / the run's best device-to-device copy); the GPU "
                  "issue's Vulkan goals.")
        table = compare_torch_gpu.markdown(rows, header)
        (args.dir / "vulkan_ops.md").write_text(table)
        print(table, end="")
        rows_by_device["vulkan"] = rows
    elif vulkan is not None:
        print(f"gpu_report: {vulkan_path}: the Vulkan device was {vulkan.get('status')}")
    if rows_by_device and plot(rows_by_device, args.dir / "ratios.png"):
        print(f"gpu_report: wrote {args.dir / 'ratios.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
