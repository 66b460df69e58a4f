"""The rank processes of test_distributed.py.

    python distributed_jobs.py JOB RANK WORLD_SIZE STORE_DIR DEVICE_INDEX

runs the checks of JOB (a function below) as one rank of a
WORLD_SIZE-process group on tessera:DEVICE_INDEX, meeting the other ranks
through FileStores in STORE_DIR. Each check prints ``CHECK ok: <name>``;
the first that fails prints ``CHECK FAILED: <name>`` and its traceback and
ends the process with status 1 (the other ranks, left waiting in a
collective, are ended by the test).
"""

import contextlib
import datetime
import functools
import itertools
import operator
import os
import sys
import traceback
import warnings

import torch
import torch.distributed as dist
import torch.nn as nn
import torch_tessera  # noqa: F401

TIMEOUT = datetime.timedelta(seconds=30)
_store_count = itertools.count()


class Job:
    def __init__(self, rank, world_size, store_dir, device_index):
        self.rank = rank
        self.world_size = world_size
        self.store_dir = store_dir
        self.device = torch.device("tessera", device_index)

    def check(self, name, fn, *args, **kwargs):
        try:
            fn(self, *args, **kwargs)
        except BaseException:
            print(f"CHECK FAILED: {name}", flush=True)
            traceback.print_exc()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(1)
        print(f"CHECK ok: {name}", flush=True)

    def init(self, backend):
        """A new default group; each gets its own FileStore file, which every
        rank names alike because each inits the same groups in one order."""
        path = os.path.join(self.store_dir, f"store{next(_store_count)}")
        store = dist.FileStore(path, self.world_size)
        dist.init_process_group(backend, store=store, rank=self.rank, world_size=self.world_size,
                                timeout=TIMEOUT)

    def tensor(self, values, dtype=torch.float32):
        return torch.tensor(values, dtype=dtype, device=self.device)


def rank_values(rank, dtype):
    """What each rank contributes to the reductions: distinct, small, with
    negatives where the dtype has them, exact in every dtype used."""
    if dtype.is_floating_point:
        return torch.tensor([rank + 1.0, -2.0 * (rank + 1), 0.5 * rank, 3.0], dtype=dtype)
    return torch.tensor([rank + 1, 6 - rank, 12 + 5 * rank, 3], dtype=dtype)


REDUCE_OPS = {
    dist.ReduceOp.SUM: operator.add,
    dist.ReduceOp.PRODUCT: operator.mul,
    dist.ReduceOp.MIN: torch.minimum,
    dist.ReduceOp.MAX: torch.maximum,
    dist.ReduceOp.BAND: operator.and_,
    dist.ReduceOp.BOR: operator.or_,
    dist.ReduceOp.BXOR: operator.xor,
}
BITWISE = (dist.ReduceOp.BAND, dist.ReduceOp.BOR, dist.ReduceOp.BXOR)


def reduce_ops(dtype):
    """gloo's reductions for `dtype`: bitwise ones for integers, AVG for floats."""
    if dtype.is_floating_point:
        return [op for op in REDUCE_OPS if op not in BITWISE] + [dist.ReduceOp.AVG]
    return list(REDUCE_OPS)


def expected_reduction(op, dtype, world_size):
    values = [rank_values(r, dtype) for r in range(world_size)]
    if op == dist.ReduceOp.AVG:
        return functools.reduce(operator.add, values) / world_size
    return functools.reduce(REDUCE_OPS[op], values)


def assert_equal(actual, expected):
    actual = actual.cpu()
    assert actual.dtype == expected.dtype and torch.equal(actual, expected), f"{actual} != {expected}"


@contextlib.contextmanager
def deprecated_api():
    """torch 2.13 deprecates all_gather_into_tensor and reduce_scatter_tensor
    (for all_gather_single and reduce_scatter_single) and the coalesced
    forms; they still work, and DDP-era code calls them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        yield


@contextlib.contextmanager
def raises(exc_type, *fragments):
    try:
        yield
    except exc_type as e:
        for fragment in fragments:
            assert fragment in str(e), f"{fragment!r} not in the message:\n{e}"
    else:
        raise AssertionError(f"no {exc_type.__name__} raised")


# --- collectives ---------------------------------------------------------


def check_all_reduce(job):
    for dtype in (torch.float32, torch.float16, torch.int32, torch.int64):
        for op in reduce_ops(dtype):
            t = rank_values(job.rank, dtype).to(job.device)
            dist.all_reduce(t, op=op)
            assert t.device == job.device
            try:
                assert_equal(t, expected_reduction(op, dtype, job.world_size))
            except AssertionError as e:
                raise AssertionError(f"all_reduce {op} {dtype}: {e}") from None


def check_all_reduce_async(job):
    t = rank_values(job.rank, torch.float32).to(job.device)
    work = dist.all_reduce(t, async_op=True)
    future = work.get_future()
    work.wait()
    assert work.is_completed()
    expected = expected_reduction(dist.ReduceOp.SUM, torch.float32, job.world_size)
    assert_equal(t, expected)
    (value,) = future.wait()
    assert value.device == job.device
    assert_equal(value, expected)
    # What DDP's Python comm hooks do: chain on the future.
    u = rank_values(job.rank, torch.float32).to(job.device)
    doubled = dist.all_reduce(u, async_op=True).get_future().then(lambda f: f.value()[0] * 2)
    assert_equal(doubled.wait(), expected * 2)


def check_all_reduce_strided(job):
    """A column of a matrix: only its elements change."""
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4) + 100 * job.rank
    m = base.to(job.device)
    column = m[:, 1]
    dist.all_reduce(column)
    expected = base.clone()
    expected[:, 1] = sum((torch.arange(12, dtype=torch.float32).reshape(3, 4) + 100 * r)[:, 1]
                         for r in range(job.world_size))
    assert_equal(m, expected)


def check_broadcast(job):
    src = job.world_size - 1
    t = job.tensor([job.rank, 10 * job.rank, -1])
    dist.broadcast(t, src=src)
    assert_equal(t, torch.tensor([src, 10.0 * src, -1]))
    # Into a Parameter outside no_grad, as gloo writes a CPU one: the copy
    # back is no autograd op and leaves the version counter alone.
    p = nn.Parameter(job.tensor([float(job.rank)] * 3))
    version = p._version
    dist.broadcast(p, src=0)
    assert_equal(p.detach(), torch.zeros(3))
    assert p._version == version


def check_reduce(job):
    dst = 0
    t = rank_values(job.rank, torch.int64).to(job.device)
    dist.reduce(t, dst=dst, op=dist.ReduceOp.MAX)
    if job.rank == dst:
        assert_equal(t, expected_reduction(dist.ReduceOp.MAX, torch.int64, job.world_size))


def check_all_gather(job):
    mine = job.tensor([[job.rank, job.rank + 0.5]])
    outputs = [torch.full((1, 2), -7.0, device=job.device) for _ in range(job.world_size)]
    dist.all_gather(outputs, mine)
    for r, out in enumerate(outputs):
        assert_equal(out, torch.tensor([[r, r + 0.5]]))
    expected = torch.tensor([[r, r + 0.5] for r in range(job.world_size)])
    into = torch.empty(job.world_size, 2, device=job.device)
    with deprecated_api():
        dist.all_gather_into_tensor(into, mine)
    assert_equal(into, expected)
    single = torch.empty(job.world_size, 2, device=job.device)
    dist.all_gather_single(single, mine)
    assert_equal(single, expected)


def check_reduce_scatter(job):
    w = job.world_size
    inputs = [job.tensor([10 * job.rank + i, job.rank]) for i in range(w)]
    out = torch.empty(2, device=job.device)
    dist.reduce_scatter(out, inputs)
    assert_equal(out, torch.tensor([float(sum(10 * r + job.rank for r in range(w))), float(sum(range(w)))]))
    flat = torch.cat(inputs)
    out2 = torch.empty(2, device=job.device)
    with deprecated_api():
        dist.reduce_scatter_tensor(out2, flat, op=dist.ReduceOp.MIN)
    assert_equal(out2, torch.tensor([float(job.rank), 0.0]))
    out3 = torch.empty(2, device=job.device)
    dist.reduce_scatter_single(out3, flat, op=dist.ReduceOp.MAX)
    assert_equal(out3, torch.tensor([10.0 * (job.world_size - 1) + job.rank, job.world_size - 1.0]))


def check_gather_scatter(job):
    dst = job.world_size - 1
    mine = job.tensor([job.rank * 3 + 1], dtype=torch.int64)
    gathered = [torch.zeros(1, dtype=torch.int64, device=job.device) for _ in range(job.world_size)]
    dist.gather(mine, gathered if job.rank == dst else None, dst=dst)
    if job.rank == dst:
        for r, g in enumerate(gathered):
            assert_equal(g, torch.tensor([r * 3 + 1]))
    src = 0
    pieces = [job.tensor([r, -r]) for r in range(job.world_size)] if job.rank == src else None
    out = torch.full((2,), 99.0, device=job.device)
    dist.scatter(out, pieces, src=src)
    assert_equal(out, torch.tensor([float(job.rank), -float(job.rank)]))


def check_all_to_all(job):
    w = job.world_size
    # Rank r sends 100*r + j to rank j.
    send = job.tensor([100 * job.rank + j for j in range(w)])
    recv = torch.empty(w, device=job.device)
    dist.all_to_all_single(recv, send)
    assert_equal(recv, torch.tensor([float(100 * r + job.rank) for r in range(w)]))
    # Uneven splits: rank r sends j+1 copies of r to rank j.
    send = torch.cat([torch.full((j + 1,), float(job.rank)) for j in range(w)]).to(job.device)
    recv = torch.empty(w * (job.rank + 1), device=job.device)
    dist.all_to_all_single(recv, send, output_split_sizes=[job.rank + 1] * w,
                           input_split_sizes=[j + 1 for j in range(w)])
    assert_equal(recv, torch.cat([torch.full((job.rank + 1,), float(r)) for r in range(w)]))
    outs = [torch.empty(2, device=job.device) for _ in range(w)]
    dist.all_to_all(outs, [job.tensor([job.rank, j]) for j in range(w)])
    for r, out in enumerate(outs):
        assert_equal(out, torch.tensor([float(r), float(job.rank)]))


def check_coalesced(job):
    ts = [job.tensor([job.rank + 1.0]), job.tensor([[2.0 * job.rank], [1.0]])]
    with deprecated_api():
        dist.all_reduce_coalesced(ts)
    w = job.world_size
    assert_equal(ts[0], torch.tensor([float(sum(r + 1 for r in range(w)))]))
    assert_equal(ts[1], torch.tensor([[float(sum(2 * r for r in range(w)))], [float(w)]]))


def check_send_recv(job):
    assert job.world_size == 2
    peer = 1 - job.rank
    if job.rank == 0:
        dist.send(job.tensor([1.0, 2.0]), dst=peer)
        got = torch.zeros(3, device=job.device)
        dist.recv(got, src=peer)
        assert_equal(got, torch.tensor([3.0, 4.0, 5.0]))
        # From any source: recv reports who sent.
        any_src = torch.zeros(1, dtype=torch.int64, device=job.device)
        assert dist.recv(any_src) == peer
        assert_equal(any_src, torch.tensor([42]))
    else:
        got = torch.zeros(2, device=job.device)
        dist.recv(got, src=peer)
        assert_equal(got, torch.tensor([1.0, 2.0]))
        dist.send(job.tensor([3.0, 4.0, 5.0]), dst=peer)
        dist.send(job.tensor([42], dtype=torch.int64), dst=peer)
    # isend/irecv both ways at once, then batch_isend_irecv.
    mine = job.tensor([10.0 + job.rank])
    theirs = torch.zeros(1, device=job.device)
    works = [dist.isend(mine, dst=peer), dist.irecv(theirs, src=peer)]
    for w in works:
        w.wait()
    assert_equal(theirs, torch.tensor([10.0 + peer]))
    theirs = torch.zeros(1, device=job.device)
    ops = [dist.P2POp(dist.isend, mine, peer), dist.P2POp(dist.irecv, theirs, peer)]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    assert_equal(theirs, torch.tensor([10.0 + peer]))


def check_barrier(job):
    dist.barrier()
    dist.monitored_barrier(timeout=TIMEOUT)


def check_cpu_tensors_use_gloo(job):
    pg = dist.group.WORLD
    assert pg._get_backend(torch.device("cpu")).name() == "gloo"
    assert pg._get_backend(job.device).name() == "tessera"
    t = rank_values(job.rank, torch.float32)
    dist.all_reduce(t)
    assert_equal(t, expected_reduction(dist.ReduceOp.SUM, torch.float32, job.world_size))
    objects = [{"rank": job.rank}]
    dist.broadcast_object_list(objects, src=1)
    assert objects == [{"rank": 1}]


def check_device_types_across_ranks(job):
    """Rank 0 reduces a tessera tensor, rank 1 a CPU one: both are gloo
    collectives on host memory, in the one gloo group both devices share."""
    t = rank_values(job.rank, torch.float32)
    if job.rank == 0:
        t = t.to(job.device)
    dist.all_reduce(t)
    assert_equal(t, expected_reduction(dist.ReduceOp.SUM, torch.float32, job.world_size))


def check_functional_collective(job):
    import torch.distributed._functional_collectives as funcol

    t = rank_values(job.rank, torch.float32).to(job.device)
    out = funcol.all_reduce(t, "sum", dist.group.WORLD)
    assert_equal(funcol.wait_tensor(out) if hasattr(funcol, "wait_tensor") else out,
                 expected_reduction(dist.ReduceOp.SUM, torch.float32, job.world_size))


def check_errors(job):
    x = job.tensor([1.0, 2.0])
    with raises(RuntimeError, "tessera all_gather_into_tensor", "one tessera device",
                f"input on {job.device}", "output on cpu"):
        with deprecated_api():
            dist.all_gather_into_tensor(torch.empty(2 * job.world_size), x)
    with raises(RuntimeError, "tessera all_gather", "output[1] on cpu"):
        dist.all_gather([torch.empty(2, device=job.device), torch.empty(2)], x)
    if torch.tessera.device_count() > 1:
        other = torch.device("tessera", (job.device.index + 1) % torch.tessera.device_count())
        with raises(RuntimeError, "tessera reduce_scatter_tensor", "one tessera device", str(other)):
            with deprecated_api():
                dist.reduce_scatter_tensor(torch.empty(1, device=other), job.tensor([1.0, 2.0]))
    # What gloo rejects gets gloo's message: a reduction it lacks (found as
    # it runs), sizes (found as the collective starts, so the message also
    # says that tessera ran it on gloo).
    with raises(RuntimeError, "Cannot use ReduceOp.PREMUL_SUM with Gloo"):
        dist.all_reduce(x, op=dist._make_nccl_premul_sum(2.0))
    with raises(RuntimeError, "tessera all_gather_into_tensor runs this gloo collective on host copies"):
        with deprecated_api():
            dist.all_gather_into_tensor(torch.empty(3, device=job.device), x)
    # The group still works after the errors.
    dist.all_reduce(x)
    assert_equal(x, torch.tensor([1.0, 2.0]) * job.world_size)


def collectives(job):
    """Every collective, on tessera tensors of a group made with "gloo"."""
    job.check("init_process_group('gloo')", Job.init, "gloo")
    for check in (check_all_reduce, check_all_reduce_async, check_all_reduce_strided, check_broadcast,
                  check_reduce, check_all_gather, check_reduce_scatter, check_gather_scatter,
                  check_all_to_all, check_coalesced, check_send_recv, check_barrier,
                  check_cpu_tensors_use_gloo, check_device_types_across_ranks,
                  check_functional_collective, check_errors):
        job.check(check.__name__, check)
    dist.destroy_process_group()


# --- backends ------------------------------------------------------------


def check_backend_string(job, backend):
    job.init(backend)
    pg = dist.group.WORLD
    assert pg._get_backend(job.device).name() == "tessera", pg._get_backend(job.device).name()
    assert pg._get_backend(torch.device("cpu")).name() == "gloo"
    expected = expected_reduction(dist.ReduceOp.SUM, torch.float32, job.world_size)
    for device in (job.device, torch.device("cpu")):
        t = rank_values(job.rank, torch.float32).to(device)
        dist.all_reduce(t)
        assert t.device == device
        assert_equal(t, expected)
    check_device_types_across_ranks(job)
    dist.barrier()
    # A subgroup of the same kind.
    sub = dist.new_group([0, 1])
    t = rank_values(job.rank, torch.float32).to(job.device)
    dist.all_reduce(t, group=sub)
    assert_equal(t, expected)
    dist.destroy_process_group()


def backends(job):
    """init_process_group with each way of naming the backend serves both
    tessera and CPU tensors."""
    for backend in (None, "gloo", "tessera", "cpu:gloo,tessera:tessera"):
        job.check(f"init_process_group({backend!r})", check_backend_string, backend)


# --- DistributedDataParallel -----------------------------------------------

STEPS = 3
LR = 0.1
# Two half-batch gradients averaged by gloo against one full-batch gradient:
# float32 sums in another order, a few ulps a step.
RTOL = 1e-5
ATOL = 1e-6


def mlp():
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))


def mlp_loss(model, batch):
    x, y = batch
    return nn.functional.mse_loss(model(x), y)


def mlp_batch(job):
    g = torch.Generator().manual_seed(3)
    return torch.randn(8, 6, generator=g), torch.randn(8, 3, generator=g)


def gpt2():
    """A language model whose input embedding is its output projection."""
    import transformers

    config = transformers.GPT2Config(vocab_size=32, n_positions=8, n_embd=16, n_layer=1, n_head=2,
                                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                                     bos_token_id=0, eos_token_id=0)
    model = transformers.GPT2LMHeadModel(config)
    assert model.lm_head.weight is model.transformer.wte.weight
    return model


def gpt2_loss(model, batch):
    (ids,) = batch
    return model(input_ids=ids, labels=ids).loss


def gpt2_batch(job):
    return (torch.randint(0, 32, (8, 8), generator=torch.Generator().manual_seed(4)),)


def shared_parameters(model):
    """The sets of names that share one Parameter (tied weights)."""
    names = {}
    for name, p in model.named_parameters(remove_duplicate=False):
        names.setdefault(id(p), set()).add(name)
    return sorted(sorted(group) for group in names.values() if len(group) > 1)


def train(model, loss_fn, batch, steps=STEPS):
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    for _ in range(steps):
        opt.zero_grad()
        loss_fn(model, batch).backward()
        opt.step()


def check_ddp_matches_one_process(job, make_model, loss_fn, make_batch, comm_hook=None, **ddp_kwargs):
    """DDP on two halves of a batch ends where one process training on the
    whole batch does."""
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.manual_seed(0)
    start = make_model()
    full = [t.to(job.device) for t in make_batch(job)]
    half = len(full[0]) // job.world_size
    shard = [t[job.rank * half:(job.rank + 1) * half] for t in full]

    reference = make_model()
    reference.load_state_dict(start.state_dict())
    reference.to(job.device)
    train(reference, loss_fn, full)

    model = make_model()
    model.load_state_dict(start.state_dict())
    model.to(job.device)
    if job.rank != 0:
        # DDP's constructor broadcasts rank 0's parameters and buffers.
        with torch.no_grad():
            for p in model.parameters():
                p.add_(1.0)
    ddp = DDP(model, **ddp_kwargs)
    if comm_hook is not None:
        ddp.register_comm_hook(None, comm_hook)
    for name, p in model.named_parameters():
        torch.testing.assert_close(p.detach().cpu(), start.state_dict()[name], rtol=0, atol=0,
                                   msg=lambda m: f"{name} after DDP's broadcast: {m}")
    train(ddp, loss_fn, shard)
    assert shared_parameters(model) == shared_parameters(start)
    # The Reducer timed the iterations with tessera's DDP timer (without
    # one it logs no times).
    logged = ddp._get_ddp_logging_data()
    for key in ("avg_forward_compute_time", "avg_backward_compute_time", "avg_backward_comm_time"):
        assert key in logged, f"DDP logged no {key}: {sorted(logged)}"
    expected = dict(reference.named_parameters())
    for name, p in model.named_parameters():
        assert p.device == job.device
        torch.testing.assert_close(p.detach().cpu(), expected[name].detach().cpu(), rtol=RTOL, atol=ATOL,
                                   msg=lambda m: f"{name}: {m}")
    # Ranks agree exactly.
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    gathered = [torch.empty_like(flat) for _ in range(job.world_size)]
    dist.all_gather(gathered, flat)
    for other in gathered:
        assert torch.equal(other.cpu(), flat.cpu())


def ddp(job):
    """DistributedDataParallel on a group made with no backend named."""
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    job.check("init_process_group()", Job.init, None)
    job.check("ddp mlp", check_ddp_matches_one_process, mlp, mlp_loss, mlp_batch)
    job.check("ddp mlp, gradients as bucket views, a bucket per layer", check_ddp_matches_one_process,
              mlp, mlp_loss, mlp_batch, gradient_as_bucket_view=True, bucket_cap_mb=1e-4)
    job.check("ddp mlp, allreduce_hook", check_ddp_matches_one_process, mlp, mlp_loss, mlp_batch,
              comm_hook=default_hooks.allreduce_hook)
    job.check("ddp gpt2 (tied embedding)", check_ddp_matches_one_process, gpt2, gpt2_loss, gpt2_batch)
    dist.destroy_process_group()


JOBS = {f.__name__: f for f in (collectives, backends, ddp)}


def main():
    job_name, rank, world_size, store_dir, device_index = sys.argv[1:]
    job = Job(int(rank), int(world_size), store_dir, int(device_index))
    JOBS[job_name](job)


if __name__ == "__main__":
    main()
