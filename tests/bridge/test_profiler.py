"""torch.profiler with tessera, on every tessera device: tessera's Kineto
plugin (bridge/csrc/profiler/kineto_plugin.cc) makes
ProfilerActivity.PrivateUse1 a supported activity, so
torch.profiler.profile(activities=[CPU, PrivateUse1]) lists each op with
its device time; the profiler stubs (profiler_stubs.cc) give the legacy
profiler (torch.autograd.profiler.profile(use_device="tessera",
use_kineto=False)) the same. Device time is measured on the current
tessera device, so each test makes its device current."""

import json

import pytest
import torch
import torch_tessera
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

DEVICES = [torch.device("tessera", i) for i in range(torch.tessera.device_count())]


@pytest.fixture(params=DEVICES, ids=str)
def dev(request):
    with torch.tessera.device(request.param):
        yield request.param


def run_ops(dev):
    a = torch.ones(64, 64, device=dev)
    b = torch.full((64, 64), 0.5, device=dev)
    c = a + b
    d = c @ b  # aten::matmul -> aten::mm
    torch.tessera.synchronize(dev)
    return d


def averages_by_name(prof):
    return {e.key: e for e in prof.key_averages()}


# Device activities come from the Kineto plugin, which the bridge builds
# only against a torch with PrivateUse1ProfilerRegistry (2.13, not 2.11).
needs_kineto_plugin = pytest.mark.skipif(
    not torch_tessera._C.kineto_plugin_built(),
    reason=f"torch {torch.__version__} has no PrivateUse1ProfilerRegistry: no Kineto plugin")


def test_the_kineto_plugin_is_built_where_torch_has_the_registry():
    version = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])
    if version < (2, 13):
        pytest.skip(f"torch {torch.__version__} may lack PrivateUse1ProfilerRegistry")
    assert torch_tessera._C.kineto_plugin_built()


def test_private_use1_is_a_supported_activity():
    assert ProfilerActivity.PrivateUse1 in torch.profiler.supported_activities()


@needs_kineto_plugin
def test_profile_lists_ops_with_their_device_time(dev):
    run_ops(dev)  # warm up (pipelines, caches)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        d = run_ops(dev)
    torch.testing.assert_close(d.cpu(), torch.full((64, 64), 48.0))
    ops = averages_by_name(prof)
    for name in ("aten::add", "aten::mm"):
        assert name in ops, sorted(ops)
        assert ops[name].device_time_total > 0, name
        assert ops[name].self_device_time_total > 0, name
    # matmul's own work is tiny; mm's time is counted once, under mm, and
    # in matmul's total through its child.
    assert ops["aten::matmul"].device_time_total >= ops["aten::mm"].device_time_total
    table = prof.key_averages().table(sort_by="device_time_total", row_limit=20)
    assert "Self TESSERA" in table and "aten::mm" in table


@needs_kineto_plugin
def test_device_activities_are_linked_to_their_ops(dev):
    run_ops(dev)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        run_ops(dev)
    device_events = [e for e in prof.events() if e.device_type == DeviceType.PrivateUse1]
    names = {e.name for e in device_events}
    assert f"aten::add on {dev}" in names and f"aten::mm on {dev}" in names
    assert all(e.device_index == dev.index for e in device_events)
    add = next(e for e in prof.events() if e.name == "aten::add")
    assert [k.name for k in add.kernels] == [f"aten::add on {dev}"]


@needs_kineto_plugin
def test_chrome_trace_holds_the_device_activities(dev, tmp_path):
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        run_ops(dev)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert any(e["name"] == f"aten::mm on {dev}" and e["dur"] > 0 for e in kernels)


def test_a_cpu_only_profile_has_no_device_activity(dev):
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        run_ops(dev)
    assert "aten::add" in averages_by_name(prof)
    assert not [e for e in prof.events() if e.device_type == DeviceType.PrivateUse1]


def test_legacy_profiler_reports_device_time_through_the_stubs(dev):
    run_ops(dev)
    with torch.autograd.profiler.profile(use_device="tessera", use_kineto=False) as prof:
        run_ops(dev)
    ops = averages_by_name(prof)
    for name in ("aten::add", "aten::mm"):
        assert ops[name].device_time_total > 0, name
