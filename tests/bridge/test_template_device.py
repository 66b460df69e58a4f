"""The template device (devices/template) through the bridge.

The package ships libtessera_template.so like every device library, but the
default device list leaves the template device out (tessera:0 stays the CPU
device); TESSERA_VISIBLE_DEVICES=template makes it tessera:0. There, a small
MLP trains with Adam as it does on the CPU: its four kernels (fill, copy,
add, mm) run natively and every other op through the runtime's CPU
fallback, which copies through the device's asynchronous streams because
its memory is not host-accessible.

The device list is fixed when a process first uses a device, so each case
runs in a subprocess with the variable set."""

import json
import os
import subprocess
import sys
import textwrap

import torch
import torch_tessera


def run_with_visible(spec, code):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TESSERA_TEMPLATE_")}
    env["TESSERA_VISIBLE_DEVICES"] = spec
    env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_shipped_but_not_listed_by_default():
    loaded = {os.path.basename(lib["path"]): lib["loaded"]
              for lib in torch_tessera.device_libraries()}
    assert loaded.get("libtessera_template.so") is True
    if "TESSERA_VISIBLE_DEVICES" not in os.environ:
        runtime_devices = [torch.tessera.get_device_properties(i).runtime_device
                           for i in range(torch.tessera.device_count())]
        assert "cpu:0" in runtime_devices
        assert not any(d.startswith("template") for d in runtime_devices)


def test_visible_devices_template_lists_it_with_its_properties():
    out = run_with_visible("template", """
        import json, torch, torch_tessera
        p = torch.tessera.get_device_properties(0)
        print(json.dumps({"count": torch.tessera.device_count(), "name": p.name,
                          "vendor": p.vendor, "runtime_device": p.runtime_device,
                          "host_accessible": p.host_accessible,
                          "total_memory": p.total_memory}))
    """)
    assert out["count"] == 1
    assert out["name"] == "Tessera template device 0"
    assert out["vendor"] == "Tessera template"
    assert out["runtime_device"] == "template:0"
    assert out["host_accessible"] is False
    assert out["total_memory"] == 4096 << 20


TRAIN_MLP = """
    import copy, json, torch, torch_tessera
    import torch.nn as nn, torch.nn.functional as F

    def train(model, device, batches):
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        losses = []
        for x, y in batches:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x.to(device)), y.to(device))
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        return losses

    # One batch, eight steps: the loss must fall.
    gen = torch.Generator().manual_seed(1)
    batches = [(torch.randn(16, 20, generator=gen), torch.randint(0, 5, (16,), generator=gen))] * 8
    torch.manual_seed(0)
    cpu_model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 5))
    tessera_model = copy.deepcopy(cpu_model).to("tessera:0")
    torch_tessera.reset_fallback_stats()
    cpu_losses = train(cpu_model, "cpu", batches)
    tessera_losses = train(tessera_model, "tessera:0", batches)
    torch.tessera.synchronize()
    torch.testing.assert_close(torch.tensor(tessera_losses), torch.tensor(cpu_losses),
                               rtol=1e-4, atol=1e-5)
    for (name, p), q in zip(cpu_model.named_parameters(), tessera_model.parameters()):
        assert q.device == torch.device("tessera:0"), name
        torch.testing.assert_close(q.detach().cpu(), p.detach(), rtol=1e-4, atol=1e-5)
    print(json.dumps({"losses": cpu_losses,
                      "runtime_device": torch.tessera.get_device_properties(0).runtime_device,
                      "fallbacks": torch_tessera.runtime_fallback_stats()}))
"""


def test_mlp_trains_with_adam_as_on_the_cpu():
    out = run_with_visible("template", TRAIN_MLP)
    assert out["runtime_device"] == "template:0"
    assert out["losses"][-1] < out["losses"][0]  # it learned, so matching means something
    fallbacks = out["fallbacks"]
    # The device's own kernels ran (mm, add, fill, copy); the rest went
    # through the counted CPU fallback.
    for native in ("bmm", "fill", "copy"):
        assert native not in fallbacks, fallbacks
    assert sum(fallbacks.values()) > 0


def test_beside_the_cpu_device():
    out = run_with_visible("cpu,template", """
        import json, torch, torch_tessera
        x = torch.arange(12.0).reshape(3, 4)
        on_cpu_device = x.to("tessera:0")
        on_template = on_cpu_device.to("tessera:1").t()
        back = (on_template + on_template).to("tessera:0").cpu()
        print(json.dumps({"devices": [torch.tessera.get_device_properties(i).runtime_device
                                      for i in range(torch.tessera.device_count())],
                          "ok": bool(torch.equal(back, (x + x).t()))}))
    """)
    assert out == {"devices": ["cpu:0", "template:0"], "ok": True}
