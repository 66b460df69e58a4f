"""One optimizer of PyTorch's optim_db on a tessera device against the CPU.

Shared by tests/bridge/test_optim_db.py (which fails on a mismatch) and
tools/optim_db_status.py (which reports, per implementation, the matches
and the aten ops that ran through the CPU fallback).

A case is one OptimizerInfo, one of its optimizer inputs and one
implementation (the for-loop one, foreach, fused, differentiable), run on
the device and, with the same arguments, on the CPU. Both sides start from
the same parameters (odd shapes, a 0-d one and a non-contiguous view) and
take STEPS steps with the same gradients (drawn on the CPU and copied);
then every parameter and every state_dict entry (state tensors and
param_groups) must agree, and for differentiable=True so must the
gradient of the final parameters with respect to the first ones. Next the
device optimizer's state_dict goes through torch.save / torch.load into a
fresh optimizer over copies of the parameters, which takes
STEPS_AFTER_RELOAD more steps beside the CPU one.

The reference is the same implementation on the CPU, with two exceptions.
capturable=True runs torch.optim's capturable code path on the CPU too
(capturable_path_on_cpu). PyTorch's CPU fused kernels mishandle
non-contiguous parameters, so fused cases use contiguous ones, and one more
fused case per optimizer, with the non-contiguous view, is held to the CPU
for-loop implementation.

Optimizers that need a closure (LBFGS) minimize a fixed loss instead, for
CLOSURE_STEPS steps. Their inner loop (up to 20 iterations a step,
stopping on tolerance tests that float32 rounding decides) makes two
correct float32 runs drift apart, the CPU's own float32 run from its
float64 one as much as from tessera's, so their parameters are held to a
float64 CPU run: the device may be at most DRIFT_FACTOR times as far from
it as the CPU's float32 run is (or ATOL).
"""

import contextlib
import copy
import dataclasses
import io
import sys
from unittest import mock

import torch
import torch_tessera
from torch.optim.lr_scheduler import ReduceLROnPlateau

STEPS = 5
STEPS_AFTER_RELOAD = 3
# A closure optimizer's step is itself up to 20 iterations (LBFGS's
# max_iter), each a few dozen small ops: fewer steps cover as much.
CLOSURE_STEPS = 2
CLOSURE_STEPS_AFTER_RELOAD = 1
# Long enough for the db's schedulers to change the learning rate
# (StepLR's step_size of 10, ReduceLROnPlateau's patience of 10).
SCHEDULED_STEPS = 12
RTOL = 1e-4
ATOL = 1e-5
# Closure optimizers: how many times the CPU float32 run's distance from
# the float64 run the device's distance may be.
DRIFT_FACTOR = 4

_IMPL_FLAGS = ("foreach", "fused", "differentiable")

SPARSE_REASON = "sparse gradients are out of scope: tessera has no sparse layout"


@dataclasses.dataclass
class CaseResult:
    optimizer: str
    implementation: str
    desc: str
    outcome: str  # "match", "rejected like CPU" or "mismatch"
    detail: str = ""
    fallback_calls: dict = dataclasses.field(default_factory=dict)

    @property
    def ok(self):
        return self.outcome != "mismatch"


def implementations(optim_info):
    """The for-loop implementation and each of foreach, fused and
    differentiable that optim_info.supported_impls lists. fused runs although
    supports_fused_on names no PrivateUse1 device: torch.optim accepts
    fused=True there (_get_fused_kernels_supported_devices) and dispatches
    aten::_fused_* ops, which tessera has to answer."""
    return ("forloop",) + tuple(i for i in _IMPL_FLAGS if i in optim_info.supported_impls)


def optimizer_inputs(optim_info, device):
    """optim_info's inputs for `device`, plus its capturable ones: the db
    lists those for CUDA-like devices only, but torch.optim accepts
    capturable=True on the PrivateUse1 backend
    (_get_capturable_supported_devices), so tessera runs them too."""
    inputs = optim_info.optim_inputs_func(device=device)
    inputs += [i for i in optim_info.optim_inputs_func(device="cuda") if i.kwargs.get("capturable")]
    return inputs


@contextlib.contextmanager
def capturable_path_on_cpu():
    """The CPU reference of a capturable case runs torch.optim's capturable
    code path, which refuses the CPU only through the device list of
    _get_capturable_supported_devices (the path itself is device-generic
    tensor code). While this is active, every torch.optim module's copy of
    that function also lists "cpu"."""
    def with_cpu(original):
        return lambda *args, **kwargs: original(*args, **kwargs) + ["cpu"]

    with contextlib.ExitStack() as stack:
        for name, module in list(sys.modules.items()):
            original = getattr(module, "_get_capturable_supported_devices", None)
            if name.startswith("torch.optim") and original is not None:
                stack.enter_context(mock.patch.object(module, "_get_capturable_supported_devices",
                                                      with_cpu(original)))
        yield


def _parameter_shapes(optim_info):
    if optim_info.name == "Muon":  # Muon takes 2-D parameters only
        return [(3, 5), (4, 4)]
    return [(3, 5), (7,), ()]


def _make_leaves(optim_info, device, dtype=torch.float32, non_contiguous=True):
    """The starting parameters, the same values on every device: odd
    shapes, and last a view of every second column of a 4x6 tensor (a
    contiguous copy of it where non_contiguous is false)."""
    gen = torch.Generator().manual_seed(0)
    values = [torch.randn(shape, generator=gen) for shape in _parameter_shapes(optim_info)]
    leaves = [v.to(device, dtype).requires_grad_() for v in values]
    view = torch.randn(4, 6, generator=gen).to(device, dtype)[:, ::2]
    leaves.append((view if non_contiguous else view.contiguous()).detach().requires_grad_())
    return leaves


def _gradients(params, step):
    """The gradients of `step`, the same values on every device."""
    gen = torch.Generator().manual_seed(1000 + step)
    return [torch.randn(p.shape, generator=gen).to(p.device, p.dtype) for p in params]


def _loss(params):
    """A smooth loss with a minimum, for optimizers that need a closure."""
    total = 0
    for k, p in enumerate(params):
        weights = torch.linspace(0.5, 1.5 + k, p.numel(), device=p.device, dtype=p.dtype).view(p.shape)
        total = total + (weights * (p - 0.25 * k) ** 2).sum() + 0.1 * (p ** 4).sum()
    return total


class OptimizerRun:
    """Parameters on one device and an optimizer over them."""

    def __init__(self, optim_info, kwargs, device, *, dtype=torch.float32,
                 non_contiguous=True, scheduler_constructors=()):
        self.optim_info = optim_info
        self.kwargs = kwargs
        self.leaves = _make_leaves(optim_info, device, dtype, non_contiguous)
        # differentiable=True updates through autograd: its parameters are
        # non-leaf tensors, so the final ones can be differentiated with
        # respect to the leaves they started from.
        differentiable = kwargs.get("differentiable", False)
        self.params = [p.clone() for p in self.leaves] if differentiable else self.leaves
        self.optimizer = optim_info.optim_cls(self.params, **copy.deepcopy(kwargs))
        self.schedulers = [make(self.optimizer) for make in scheduler_constructors]
        self.steps_taken = 0
        # differentiable=True: (gradients, error) of the parameters after
        # the first step with respect to the leaves.
        self.first_step_gradients = None

    def step(self, step):
        if self.optim_info.step_requires_closure:
            def closure():
                self.optimizer.zero_grad()
                loss = _loss(self.params)
                loss.backward()
                return loss
            self.optimizer.step(closure)
        else:
            for p, g in zip(self.params, _gradients(self.params, step)):
                p.grad = g
            self.optimizer.step()
        for scheduler in self.schedulers:
            if isinstance(scheduler, ReduceLROnPlateau):
                scheduler.step(1.0)  # a metric that never improves
            else:
                scheduler.step()
        self.steps_taken += 1
        if self.steps_taken == 1 and self.kwargs.get("differentiable"):
            self.first_step_gradients = _outcome_of(
                lambda: self.final_parameter_gradients(retain_graph=True))

    def reload_via_state_dict(self):
        """A fresh optimizer over copies of the parameters, given this one's
        state_dict after a torch.save / torch.load round trip."""
        buffer = io.BytesIO()
        torch.save(self.optimizer.state_dict(), buffer)
        buffer.seek(0)
        state_dict = torch.load(buffer)
        self.params = [p.detach().clone().requires_grad_() for p in self.params]
        self.optimizer = self.optim_info.optim_cls(self.params, **copy.deepcopy(self.kwargs))
        self.optimizer.load_state_dict(state_dict)

    def final_parameter_gradients(self, retain_graph=False):
        """The gradient of a weighted sum of the current parameters with
        respect to the first ones (differentiable=True)."""
        weights = [torch.linspace(-1, 1, p.numel(), device=p.device).view(p.shape) for p in self.params]
        loss = sum((w * p).sum() for w, p in zip(weights, self.params))
        return torch.autograd.grad(loss, self.leaves, allow_unused=True, retain_graph=retain_graph)


def _assert_close(what, got, want):
    if isinstance(want, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            raise AssertionError(f"{what}: a {type(got).__name__} where the CPU has a tensor")
        torch.testing.assert_close(got.detach().cpu(), want.detach(), rtol=RTOL, atol=ATOL,
                                   equal_nan=True, msg=lambda m: f"{what}: {m}")
    elif isinstance(want, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            raise AssertionError(f"{what}: {got!r} on tessera, {want!r} on the CPU")
        for k, (g, w) in enumerate(zip(got, want)):
            _assert_close(f"{what}[{k}]", g, w)
    elif isinstance(want, float):
        torch.testing.assert_close(float(got), want, rtol=RTOL, atol=ATOL,
                                   msg=lambda m: f"{what}: {m}")
    elif got != want:
        raise AssertionError(f"{what}: {got!r} on tessera, {want!r} on the CPU")


def _tensors(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v)]
    return []


def _check_state_devices(run, when):
    """State tensors live beside their parameters, except 0-d bookkeeping
    (step, NAdam's mu_product), which torch.optim keeps on the CPU unless
    capturable or fused asks for it on the device."""
    state_dict = run.optimizer.state_dict()["state"]
    all_on_device = run.kwargs.get("capturable") or run.kwargs.get("fused")
    per_element = {name for state in state_dict.values() for name, value in state.items()
                   if any(t.dim() > 0 for t in _tensors(value))}
    for index, state in state_dict.items():
        device = run.params[index].device
        for name, value in state.items():
            if not all_on_device and name not in per_element:
                continue
            for t in _tensors(value):
                if t.device != device:
                    raise AssertionError(f"{when}: state {name!r} of parameter {index} is on "
                                         f"{t.device}, its parameter on {device}")


def _compare(run_dev, run_cpu, when, differing_flags=frozenset()):
    for k, (got, want) in enumerate(zip(run_dev.params, run_cpu.params)):
        _assert_close(f"{when}: parameter {k}", got, want)
    _check_state_devices(run_dev, when)
    got_sd, want_sd = run_dev.optimizer.state_dict(), run_cpu.optimizer.state_dict()
    _assert_close(f"{when}: state_dict keys", sorted(got_sd["state"]), sorted(want_sd["state"]))
    for index, want_state in want_sd["state"].items():
        got_state = got_sd["state"][index]
        _assert_close(f"{when}: state names of parameter {index}", sorted(got_state), sorted(want_state))
        for name, want in want_state.items():
            _assert_close(f"{when}: state {name!r} of parameter {index}", got_state[name], want)
    for k, (got_group, want_group) in enumerate(zip(got_sd["param_groups"], want_sd["param_groups"])):
        _assert_close(f"{when}: param_groups[{k}] keys", sorted(got_group), sorted(want_group))
        for key, want in want_group.items():
            if key not in differing_flags:
                _assert_close(f"{when}: param_groups[{k}][{key!r}]", got_group[key], want)


def _compare_with_exact(run_dev, run_cpu, run_exact, when):
    """Closure optimizers: the device's parameters are at most DRIFT_FACTOR
    times as far from the float64 run as the CPU's float32 ones (or ATOL);
    the state has the CPU's entries, on the device."""
    for k, (got, cpu, exact) in enumerate(zip(run_dev.params, run_cpu.params, run_exact.params)):
        exact = exact.detach()
        dev_drift = (got.detach().cpu().double() - exact).abs().max().item()
        cpu_drift = (cpu.detach().double() - exact).abs().max().item()
        allowed = max(ATOL + RTOL * exact.abs().max().item(), DRIFT_FACTOR * cpu_drift)
        if not dev_drift <= allowed:
            raise AssertionError(f"{when}: parameter {k} is {dev_drift:.3g} from the float64 CPU "
                                 f"run, the float32 CPU run {cpu_drift:.3g}")
    _check_state_devices(run_dev, when)
    got_sd, want_sd = run_dev.optimizer.state_dict(), run_cpu.optimizer.state_dict()
    for index, want_state in want_sd["state"].items():
        _assert_close(f"{when}: state names of parameter {index}", sorted(got_sd["state"][index]),
                      sorted(want_state))


def _compare_gradients(what, dev_outcome, cpu_outcome):
    """Gradients of the parameters with respect to the first ones, or the
    same error on both sides: torch.optim's differentiable steps modify in
    place what an earlier step's backward needs (Adam, centered RMSprop,
    capturable ASGD), so over several steps the CPU raises too. Returns a
    note for that case."""
    (got, dev_error), (want, cpu_error) = dev_outcome, cpu_outcome
    if dev_error is None and cpu_error is None:
        _assert_close(f"gradient {what} with respect to the first parameters", got, want)
        return ""
    if type(dev_error) is not type(cpu_error):
        raise AssertionError(f"gradient {what}: {_error_text(dev_error) if dev_error else 'computed'} "
                             f"on tessera, {_error_text(cpu_error) if cpu_error else 'computed'} on the CPU")
    return f"backward {what} raises like CPU: {_error_text(dev_error)[:80]}"


def _outcome_of(action):
    """(value, None) or (None, the exception)."""
    try:
        return action(), None
    except Exception as e:
        return None, e


def _error_text(error):
    """The error's first line, with assert_close's greatest differences."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    kept = lines[:1] + [line for line in lines[1:] if line.startswith("Greatest")]
    return f"{type(error).__name__}: {' '.join(kept)[:400]}"


def _run_steps(run, first_step, steps):
    for step in range(first_step, first_step + steps):
        run.step(step)
    return run


def run_case(optim_info, optim_input, implementation, device, *,
             scheduler_constructors=(), non_contiguous=True, reference_kwargs=None):
    """One case on `device` and on the CPU; returns a mismatch, never raises
    it. With scheduler_constructors: SCHEDULED_STEPS steps under those LR
    schedulers and no state_dict round trip. reference_kwargs: the CPU
    run's arguments where they differ from the device's."""
    flags = {flag: implementation == flag for flag in _IMPL_FLAGS if flag in optim_info.supported_impls}
    kwargs = dict(optim_input.kwargs, **flags)
    exact_reference = optim_info.step_requires_closure
    steps = (SCHEDULED_STEPS if scheduler_constructors
             else CLOSURE_STEPS if exact_reference else STEPS)
    steps_after_reload = CLOSURE_STEPS_AFTER_RELOAD if exact_reference else STEPS_AFTER_RELOAD
    result = CaseResult(optim_info.name, implementation, optim_input.desc or "default", "match")

    def start(side_kwargs, side_device, dtype=torch.float32):
        return OptimizerRun(optim_info, side_kwargs, side_device, dtype=dtype,
                            non_contiguous=non_contiguous, scheduler_constructors=scheduler_constructors)

    cpu_kwargs = reference_kwargs if reference_kwargs is not None else kwargs
    differing_flags = {k for k in set(kwargs) | set(cpu_kwargs) if kwargs.get(k) != cpu_kwargs.get(k)}
    with capturable_path_on_cpu():
        run_cpu, cpu_error = _outcome_of(lambda: _run_steps(start(cpu_kwargs, "cpu"), 0, steps))
        if exact_reference and cpu_error is None:
            run_exact = _run_steps(start(cpu_kwargs, "cpu", torch.float64), 0, steps)

    torch_tessera.reset_fallback_stats()
    try:
        run_dev, dev_error = _outcome_of(lambda: _run_steps(start(kwargs, device), 0, steps))
        if dev_error is not None or cpu_error is not None:
            if dev_error is not None and cpu_error is not None and type(dev_error) is type(cpu_error):
                result.outcome, result.detail = "rejected like CPU", _error_text(dev_error)
            else:
                result.outcome = "mismatch"
                result.detail = (f"tessera: {_error_text(dev_error) if dev_error else 'runs'}; "
                                 f"the CPU: {_error_text(cpu_error) if cpu_error else 'runs'}")
            return result
        when = f"after {steps} steps"
        if exact_reference:
            _compare_with_exact(run_dev, run_cpu, run_exact, when)
        else:
            _compare(run_dev, run_cpu, when, differing_flags)
        if kwargs.get("differentiable"):
            notes = [_compare_gradients("through the first step", run_dev.first_step_gradients,
                                        run_cpu.first_step_gradients),
                     _compare_gradients(f"through {steps} steps",
                                        _outcome_of(run_dev.final_parameter_gradients),
                                        _outcome_of(run_cpu.final_parameter_gradients))]
            result.detail = "; ".join(n for n in notes if n)
        elif not scheduler_constructors:
            # The CPU and float64 runs go on; the device's from a reload.
            run_dev.reload_via_state_dict()
            _run_steps(run_dev, steps, steps_after_reload)
            with capturable_path_on_cpu():
                _run_steps(run_cpu, steps, steps_after_reload)
                if exact_reference:
                    _run_steps(run_exact, steps, steps_after_reload)
            when = f"{steps_after_reload} steps after a state_dict reload"
            if exact_reference:
                _compare_with_exact(run_dev, run_cpu, run_exact, when)
            else:
                _compare(run_dev, run_cpu, when, differing_flags)
    except Exception as e:
        result.outcome, result.detail = "mismatch", _error_text(e)
    finally:
        result.fallback_calls = torch_tessera.fallback_stats()
    return result


def run_optimizer(optim_info, device):
    """Every case of optim_info's inputs and implementations. fused ones run
    with contiguous parameters, and once more with a non-contiguous one
    against the for-loop implementation (run_fused_non_contiguous)."""
    results = [run_case(optim_info, optim_input, implementation, device,
                        non_contiguous=implementation != "fused")
               for implementation in implementations(optim_info)
               for optim_input in optimizer_inputs(optim_info, device)]
    if "fused" in optim_info.supported_impls:
        results.append(run_fused_non_contiguous(optim_info, device))
    return results


def _scheduler_names(constructors):
    probe = torch.optim.SGD([torch.zeros(1, requires_grad=True)])
    return "+".join(type(make(probe)).__name__ for make in constructors)


def run_schedulers(optim_info, device):
    """optim_info's default input under each of its LR scheduler sets, in
    every implementation."""
    default_input = optim_info.optim_inputs_func(device=device)[0]
    results = []
    for implementation in implementations(optim_info):
        for constructors in optim_info.scheduler_inputs:
            result = run_case(optim_info, default_input, implementation, device,
                              scheduler_constructors=constructors,
                              non_contiguous=implementation != "fused")
            result.desc = f"{result.desc} with {_scheduler_names(constructors)}"
            results.append(result)
    return results


def run_fused_non_contiguous(optim_info, device):
    """fused=True with a non-contiguous parameter, against the CPU's for-loop
    implementation: PyTorch's CPU fused kernels index parameters as if
    contiguous (torch 2.13: SGD(fused=True) on a [:, ::2] view updates the
    first rows of its base instead), so they cannot be the reference."""
    default_input = optim_info.optim_inputs_func(device=device)[0]
    forloop = dict(default_input.kwargs, fused=False)
    if "foreach" in optim_info.supported_impls:
        forloop["foreach"] = False
    result = run_case(optim_info, default_input, "fused", device, reference_kwargs=forloop)
    result.desc = f"{result.desc}, non-contiguous parameter, against the for-loop"
    return result
