"""PyTorch's own OpInfo samples, run on tessera and compared with CPU.

For every op of SUPPORTED_OPS (the ops of op_db that the tessera runtime
implements: pointwise, reductions, linalg, nn.functional), every OpInfo
reference input (at most MAX_SAMPLES of them) runs on CPU and on tessera, and
the outputs are compared with torch.testing.assert_close. The test classes
come from PyTorch's instantiate_device_type_tests, which names each case
after the op, the device type and the dtype, so pytest counts pass, skip
and fail per op and dtype; tests/bridge/conftest.py prints the totals.

Dtypes: float32 for every op, plus int64 where the op supports it, else
float64. A sample whose CPU reference raises is not a tessera failure: it is
left out, and an op with no sample left is skipped with the CPU error.
"""

import itertools
import os

import pytest
import torch
import torch_tessera  # noqa: F401  (must register tessera before common_device_type is imported)

# Our failure message lists every failing sample; PyTorch's own note names
# only the last sample drawn, which need not be one that failed.
os.environ.setdefault("PYTORCH_PRINT_REPRO_ON_FAILURE", "0")
pytest.importorskip("expecttest", reason="torch.testing._internal needs the expecttest package")

from torch.testing._internal.common_device_type import (  # noqa: E402
    instantiate_device_type_tests,
    ops,
)
from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402
from torch.testing._internal.common_utils import TestCase  # noqa: E402
from torch.utils._pytree import tree_flatten, tree_map  # noqa: E402

# Samples per op and dtype, taken from OpInfo's reference inputs (its
# sample inputs first, then shapes and values the op's tests add: 0-d,
# empty, broadcast, non-contiguous, extremal values...), bounded to keep
# the file within a few minutes on two cores.
MAX_SAMPLES = 24

# (op_db name, variant_test_name). Random ops (dropout) are left out: they
# cannot match CPU sample by sample.
SUPPORTED_OPS = [
    # pointwise: arithmetic
    ("add", ""), ("sub", ""), ("mul", ""),
    ("div", "no_rounding_mode"), ("div", "trunc_rounding"), ("div", "floor_rounding"),
    ("neg", ""), ("abs", ""), ("sign", ""), ("reciprocal", ""),
    ("floor_divide", ""), ("remainder", ""), ("pow", ""), ("maximum", ""), ("minimum", ""),
    ("max", "binary"), ("min", "binary"), ("atan2", ""), ("clamp", ""),
    ("lerp", ""), ("addcmul", ""), ("addcdiv", ""), ("where", ""),
    # pointwise: transcendental and rounding
    ("exp", ""), ("expm1", ""), ("log", ""), ("log1p", ""), ("log2", ""),
    ("sqrt", ""), ("rsqrt", ""), ("sin", ""), ("cos", ""), ("tan", ""), ("tanh", ""),
    ("sigmoid", ""), ("erf", ""), ("floor", ""), ("ceil", ""), ("round", ""), ("trunc", ""),
    ("nn.functional.relu", ""), ("nn.functional.silu", ""), ("nn.functional.gelu", ""),
    # pointwise: predicates, comparisons, logic, bits
    ("isnan", ""), ("isinf", ""), ("isfinite", ""),
    ("eq", ""), ("ne", ""), ("lt", ""), ("le", ""), ("gt", ""), ("ge", ""),
    ("logical_not", ""), ("logical_and", ""), ("logical_or", ""), ("logical_xor", ""),
    ("bitwise_not", ""), ("bitwise_and", ""), ("bitwise_or", ""), ("bitwise_xor", ""),
    ("bitwise_left_shift", ""), ("bitwise_right_shift", ""),
    # reductions and scans
    ("sum", ""), ("mean", ""), ("prod", ""),
    ("max", "reduction_with_dim"), ("max", "reduction_no_dim"),
    ("min", "reduction_with_dim"), ("min", "reduction_no_dim"),
    ("amax", ""), ("amin", ""), ("argmax", ""), ("argmin", ""),
    ("var", ""), ("std", ""), ("norm", ""), ("linalg.vector_norm", ""),
    ("all", ""), ("any", ""), ("logsumexp", ""), ("cumsum", ""), ("cumprod", ""),
    ("softmax", ""), ("log_softmax", ""),
    # linalg
    ("mm", ""), ("bmm", ""), ("matmul", ""), ("addmm", ""), ("baddbmm", ""),
    ("dot", ""), ("mv", ""), ("outer", ""),
    # nn.functional
    ("nn.functional.linear", ""), ("nn.functional.conv2d", ""),
    ("nn.functional.max_pool2d", ""), ("nn.functional.avg_pool2d", ""),
    ("nn.functional.embedding", ""), ("nn.functional.embedding_bag", ""),
    ("nn.functional.nll_loss", ""),
    ("nn.functional.cross_entropy", ""), ("nn.functional.layer_norm", ""),
    ("nn.functional.rms_norm", ""), ("nn.functional.batch_norm", ""),
    ("nn.functional.scaled_dot_product_attention", ""), ("nn.functional.one_hot", ""),
    ("nn.functional.pad", "constant"),
    # shape, join and indexing
    ("tril", ""), ("triu", ""), ("cat", ""), ("stack", ""), ("split", ""), ("chunk", ""),
    ("flip", ""), ("roll", ""), ("repeat", ""), ("index_select", ""), ("gather", ""),
    ("scatter", ""), ("scatter_add", ""), ("index_put", ""), ("masked_fill", ""),
    ("scatter_reduce", "sum"), ("scatter_reduce", "prod"), ("scatter_reduce", "mean"),
    ("scatter_reduce", "amax"), ("scatter_reduce", "amin"),
    ("index_reduce", "prod"), ("index_reduce", "mean"), ("index_reduce", "amax"),
    ("index_reduce", "amin"),
    ("take", ""), ("put", ""),
    ("masked_select", ""), ("nonzero", ""), ("argsort", ""), ("sort", ""), ("topk", ""),
]


def _select_ops():
    by_key = {(op.name, op.variant_test_name): op for op in op_db}
    missing = [key for key in SUPPORTED_OPS if key not in by_key]
    if missing:
        raise LookupError(f"SUPPORTED_OPS names ops that op_db lacks: {missing}")
    return [by_key[key] for key in SUPPORTED_OPS]


SELECTED = _select_ops()
WITH_INT64 = [op for op in SELECTED if torch.int64 in op.supported_dtypes("cpu")]
WITH_FLOAT64_ONLY = [op for op in SELECTED
                     if torch.int64 not in op.supported_dtypes("cpu")
                     and torch.float64 in op.supported_dtypes("cpu")]

def _has_tessera_kernel(op_name):
    return torch._C._dispatch_has_kernel_for_dispatch_key(op_name, "PrivateUse1")


# Failures expected while a kernel is missing, op_db name -> (still
# missing?, reason). Each one turns into a plain failure again as soon as
# the kernel is registered.
KNOWN_GAPS = {
    "nn.functional.conv2d": (
        lambda: not _has_tessera_kernel("aten::convolution_overrideable"),
        "tessera registers no aten::convolution_overrideable kernel yet (PyTorch's default "
        "for PrivateUse1 raises, so the CPU fallback cannot serve it)"),
}

def _random_sample(op, sample):
    """Samples whose result is random (dropout inside SDPA): tessera draws
    from its own Philox generator, so its values cannot equal the CPU's."""
    return sample.kwargs.get("dropout_p", 0) > 0


def _divergence(op, dtype, sample):
    """Samples where tessera deliberately differs from PyTorch's CPU, and the
    error tessera raises instead: (exception type, message pattern) or None."""
    if op.name in ("baddbmm", "addmm", "addbmm", "addmv") and not dtype.is_floating_point:
        if any(isinstance(sample.kwargs.get(k), float) for k in ("alpha", "beta")):
            # CPU truncates a float alpha/beta to an integer (0.6 -> 0) and
            # returns zeros; tessera refuses, as PyTorch's addmm does.
            return RuntimeError, "beta and alpha must not be floating point"
    return None


def _ties_resolved(op, sample, output):
    """topk's index among equal values is not specified (CPU's differs from
    a stable order): compare the values the indices pick instead."""
    if op.name != "topk":
        return output
    values, indices = output
    dim = sample.args[1] if len(sample.args) > 1 else sample.kwargs.get("dim", -1)
    source = sample.input.to(values.device)
    picked = source.gather(dim, indices) if source.dim() > 0 else source
    return values, picked


# float32 kernels may sum in another order (blocked GEMM, vectorized
# reductions) than torch's: a few ulps per term, not more.
TOLERANCES = {torch.float32: dict(rtol=1e-4, atol=1e-5)}


# The dtypes of the tessera runtime (runtime/core/dtype.h).
TESSERA_DTYPES = {torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8,
                  torch.uint8, torch.int16, torch.int32, torch.int64, torch.bool}


def _needs_unsupported_dtype(sample, expected):
    """Whether the sample or its CPU result involves a dtype (or a complex
    Python scalar) that tessera does not have."""
    leaves, _ = tree_flatten((sample.input, sample.args, sample.kwargs, expected))
    return any((isinstance(v, torch.Tensor) and v.dtype not in TESSERA_DTYPES)
               or isinstance(v, complex) for v in leaves)


def _to_device(value, device):
    return value.to(device) if isinstance(value, torch.Tensor) else value


def _describe(sample):
    def describe(value):
        if isinstance(value, torch.Tensor):
            layout = "" if value.is_contiguous() else " non-contiguous"
            return f"Tensor{list(value.shape)} {value.dtype}{layout}"
        return repr(value)

    args = ", ".join(describe(a) for a in sample.args)
    kwargs = ", ".join(f"{k}={describe(v)}" for k, v in sample.kwargs.items())
    return f"input={tree_map(describe, sample.input)} args=({args}) kwargs={{{kwargs}}}"


class TestTesseraOpInfo(TestCase):
    """Each OpInfo sample on tessera against the same sample on CPU."""

    def _compare_samples(self, device, dtype, op):
        compared = 0
        cpu_errors = []
        failures = []
        samples = op.reference_inputs("cpu", dtype, requires_grad=False)
        for index, sample in enumerate(itertools.islice(samples, MAX_SAMPLES)):
            if _random_sample(op, sample):
                continue
            try:
                expected = op(sample.input, *sample.args, **sample.kwargs)
            except Exception as e:  # the reference itself rejects the sample
                cpu_errors.append(f"{type(e).__name__}: {e}")
                continue
            divergence = _divergence(op, dtype, sample)
            if divergence is not None:
                moved = tree_map(lambda v: _to_device(v, device),
                                 (sample.input, sample.args, sample.kwargs))
                try:
                    with self.assertRaisesRegex(*divergence):
                        op(moved[0], *moved[1], **moved[2])
                except AssertionError as e:
                    failures.append(f"sample {index}: {_describe(sample)}\n  {e}")
                compared += 1
                continue
            try:
                moved = tree_map(lambda v: _to_device(v, device),
                                 (sample.input, sample.args, sample.kwargs))
                actual = op(moved[0], *moved[1], **moved[2])
                self._check_outputs(_ties_resolved(op, sample, actual),
                                    _ties_resolved(op, sample, expected), device, dtype)
            except TypeError as e:
                # A complex input, or a complex scalar that promotes the
                # result, is a dtype tessera lacks: a TypeError naming that
                # dtype is the right answer.
                if not (_needs_unsupported_dtype(sample, expected)
                        and "does not support dtype" in str(e)):
                    failures.append(f"sample {index}: {_describe(sample)}\n  TypeError: {e}")
                continue
            except Exception as e:
                failures.append(f"sample {index}: {_describe(sample)}\n  {type(e).__name__}: {e}")
                continue
            compared += 1
            if op.inplace_variant is not None and not sample.broadcasts_input:
                failure = self._check_inplace(op, sample, moved, device, dtype)
                if failure is not None:
                    failures.append(f"sample {index} (in-place {op.name}_): {_describe(sample)}\n"
                                    f"  {failure}")
        if failures:
            known_gap = KNOWN_GAPS.get(op.name)
            if known_gap is not None and known_gap[0]():
                pytest.xfail(known_gap[1])
            self.fail(f"{op.name} {op.variant_test_name} {dtype}: {len(failures)} of "
                      f"{compared + len(failures)} samples differ from CPU:\n" + "\n".join(failures))
        if compared == 0:
            reason = cpu_errors[0] if cpu_errors else "OpInfo has no sample for this dtype"
            self.skipTest(f"no sample runs on CPU: {reason}")

    def _check_outputs(self, actual, expected, device, dtype):
        actual_leaves, _ = tree_flatten(actual)
        for leaf in actual_leaves:
            if isinstance(leaf, torch.Tensor) and leaf.device.type != device.type:
                raise AssertionError(f"output on {leaf.device}, expected on {device}")
        actual_cpu = tree_map(lambda v: _to_device(v, "cpu"), actual)
        torch.testing.assert_close(actual_cpu, expected, equal_nan=True,
                                   **TOLERANCES.get(dtype, {}))

    def _check_inplace(self, op, sample, moved, device, dtype):
        """The in-place variant (add_, clamp_...) on a fresh copy of the input;
        None when it matches CPU, else what went wrong."""
        cpu_input = sample.input.clone()
        try:
            op.inplace_variant(cpu_input, *sample.args, **sample.kwargs)
        except Exception:  # e.g. a float result into an int64 input: CPU refuses too
            return None
        tessera_input = moved[0].clone()
        try:
            result = op.inplace_variant(tessera_input, *moved[1], **moved[2])
            if result is not None and result.data_ptr() != tessera_input.data_ptr():
                return "in-place variant returned a tensor other than its input"
            self._check_outputs(tessera_input, cpu_input, device, dtype)
        except Exception as e:
            return f"{type(e).__name__}: {e}"
        return None

    @ops(SELECTED, allowed_dtypes=(torch.float32,))
    def test_matches_cpu(self, device, dtype, op):
        self._compare_samples(torch.device(device), dtype, op)

    @ops(WITH_INT64, allowed_dtypes=(torch.int64,))
    def test_matches_cpu_int(self, device, dtype, op):
        self._compare_samples(torch.device(device), dtype, op)

    @ops(WITH_FLOAT64_ONLY, allowed_dtypes=(torch.float64,))
    def test_matches_cpu_double(self, device, dtype, op):
        self._compare_samples(torch.device(device), dtype, op)


instantiate_device_type_tests(TestTesseraOpInfo, globals(), only_for=("privateuse1",))
