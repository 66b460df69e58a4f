"""torch.distributed with tessera tensors: gloo collectives on host copies.

Each test runs one job of distributed_jobs.py as two rank processes on
loopback (FileStores in a temporary folder, no ports), on every tessera
device: every collective with exact values, each way of naming the
backend, and DistributedDataParallel against one process training on the
whole batch. A job is a batch of named checks; a failure names the check,
the rank and its output.
"""

import os
import subprocess
import sys
import time

import pytest
import torch
import torch.distributed as dist
import torch_tessera  # noqa: F401

WORLD_SIZE = 2
# A whole job, both ranks: generous for a loaded 2-core machine; a hung
# collective ends here instead of at gloo's timeout.
JOB_TIMEOUT_S = 120
JOBS_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "distributed_jobs.py")

every_device = pytest.mark.parametrize(
    "device_index",
    list(range(torch.tessera.device_count()))
    or [pytest.param(None, marks=pytest.mark.skip("no tessera device"))],
    ids=lambda i: f"tessera:{i}")

pytestmark = pytest.mark.skipif(not (dist.is_available() and dist.is_gloo_available()),
                                reason="torch built without gloo")


def run_job(job, device_index, tmp_path):
    """Runs `job` on every rank; fails naming the first failed check."""
    # Two ranks share two cores; gloo's sockets stay on the loopback
    # interface whatever the host name resolves to.
    env = dict(os.environ, OMP_NUM_THREADS="1", GLOO_SOCKET_IFNAME="lo")
    logs = [tmp_path / f"rank{rank}.log" for rank in range(WORLD_SIZE)]
    ranks = []
    for rank, log in enumerate(logs):
        with open(log, "w") as out:
            command = [sys.executable, JOBS_SCRIPT, job, str(rank), str(WORLD_SIZE), str(tmp_path),
                       str(device_index)]
            ranks.append(subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env))
    deadline = time.monotonic() + JOB_TIMEOUT_S
    timed_out = False
    try:
        while any(p.poll() is None for p in ranks):
            # A rank that failed leaves the others waiting in a collective.
            if any(p.returncode not in (None, 0) for p in ranks) or time.monotonic() > deadline:
                timed_out = not any(p.returncode not in (None, 0) for p in ranks)
                break
            time.sleep(0.05)
    finally:
        for p in ranks:
            if p.poll() is None:
                p.kill()
                p.wait()
    outputs = [log.read_text() for log in logs]
    if timed_out:
        pytest.fail(f"{job} on tessera:{device_index}: no result within {JOB_TIMEOUT_S} s; "
                    f"each rank's last passed check:\n" + "\n".join(
                        f"rank {r}: {last_passed(out)}" for r, out in enumerate(outputs)) + report(outputs))
    for rank, (p, out) in enumerate(zip(ranks, outputs)):
        failed = [line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("CHECK FAILED: ")]
        if failed:
            pytest.fail(f"{job} on tessera:{device_index}: rank {rank} failed check {failed[0]!r}"
                        + report(outputs))
    for rank, p in enumerate(ranks):
        if p.returncode != 0:
            pytest.fail(f"{job} on tessera:{device_index}: rank {rank} exited with {p.returncode} "
                        f"after {last_passed(outputs[rank])}" + report(outputs))
    return outputs


def last_passed(output):
    passed = [line for line in output.splitlines() if line.startswith("CHECK ok: ")]
    return passed[-1] if passed else "no check"


def report(outputs):
    return "".join(f"\n--- rank {r} ---\n{out}" for r, out in enumerate(outputs))


def test_backend_registered():
    assert dist.Backend.default_device_backend_map["tessera"] == "tessera"
    assert dist.Backend.backend_capability["tessera"] == ["tessera"]
    # Plain "gloo" keeps meaning gloo for the devices torch lists.
    assert "tessera" not in dist.Backend.backend_capability["gloo"]


@every_device
def test_collectives(device_index, tmp_path):
    run_job("collectives", device_index, tmp_path)


@every_device
def test_backend_strings(device_index, tmp_path):
    run_job("backends", device_index, tmp_path)


@every_device
def test_ddp(device_index, tmp_path):
    run_job("ddp", device_index, tmp_path)
