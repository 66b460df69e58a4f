"""tessera.special (torch.special's names) and the elementwise math beside it
(tessera.erfinv, tessera.hypot, tessera.fmax, ... with their Tensor methods
and in-place forms) on every device. The reference values come from
torch.special on the CPU: NumPy has no special functions and SciPy lacks
some of these (and is not a dependency)."""

import math

import numpy as np
import pytest

import tessera
import tessera.special

NUMPY_DTYPE = {
    tessera.float16: np.float16, tessera.float32: np.float32, tessera.float64: np.float64,
    tessera.int32: np.int32, tessera.int64: np.int64, tessera.bool: np.bool_,
}
TESSERA_DTYPE = {np.dtype(v): k for k, v in NUMPY_DTYPE.items()}
FLOATS = (tessera.float16, tessera.float32, tessera.float64)
# (rtol, atol) against torch computing in the same dtype: the two libraries'
# series and rational approximations agree to a few ulps, not bit for bit.
TOLERANCE = {tessera.float16: (1e-2, 1e-3), tessera.float32: (2e-5, 1e-6),
             tessera.float64: (1e-10, 1e-12)}

# Points inside and outside the domains (NaN where a function is undefined),
# near zero and at moderate magnitudes, avoiding poles.
POINTS = [-2.5, -0.7, -0.2, 0.1, 0.3, 0.6, 0.95, 1.5, 3.2, 7.5]

# tessera.special's unary functions: each is torch.special's function of the name.
SPECIAL_UNARY = [
    "erfc", "erfinv", "exp2", "sinc", "digamma", "psi", "gammaln", "i0", "i0e", "i1", "i1e",
    "ndtri", "log_ndtr", "erfcx", "entr", "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0",
    "bessel_y1", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
    "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "spherical_bessel_j0", "erf", "expit", "expm1", "log1p", "round",
]
TORCH_IMPRECISE_FLOAT64 = {"airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"}
# tessera.<name> / Tensor.<name>: torch.<name>; in place as Tensor.<name>_.
TOP_LEVEL_UNARY = ["erfc", "erfinv", "exp2", "frac", "sinc", "digamma", "lgamma", "i0"]
# tessera.special's binary functions, with the second operand's keyword.
SPECIAL_BINARY = {"zeta": "other", "gammainc": "other", "gammaincc": "other",
                  "xlog1py": "other"}
POLYNOMIALS = [
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
    "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
]
TOP_LEVEL_BINARY = ["igamma", "igammac", "hypot", "copysign", "nextafter", "fmax", "fmin",
                    "heaviside"]
IN_PLACE_BINARY = ["igamma", "igammac", "hypot", "copysign", "nextafter", "heaviside"]


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def supports(device, dtype):
    props = tessera.get_device_properties(device)
    return not ((dtype == tessera.float64 and not props["supports_float64"])
                or (dtype == tessera.float16 and not props["supports_float16"]))


def skip_unsupported(device, dtype):
    if not supports(device, dtype):
        pytest.skip(f"{device} has no {dtype}")


def to_tessera(a, device):
    a = np.asarray(a)
    flat = tessera.tensor(a.ravel().tolist(), dtype=TESSERA_DTYPE[a.dtype], device=device)
    return flat.reshape(a.shape)


def to_numpy(t):
    return np.array(t.cpu().tolist(), dtype=NUMPY_DTYPE[t.dtype]).reshape(t.shape)


def check(t, expected, dtype, what="", tolerance_of=None):
    """t has the values of expected (a torch tensor or array) and the dtype,
    within the tolerance of dtype (or of tolerance_of)."""
    expected = np.asarray(expected.numpy() if hasattr(expected, "numpy") else expected)
    assert t.dtype == dtype, what
    assert tuple(t.shape) == expected.shape, what
    got = to_numpy(t)
    if dtype in FLOATS:
        rtol, atol = TOLERANCE[tolerance_of or dtype]
        np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64),
                                   rtol=rtol, atol=atol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=what)


@pytest.mark.parametrize("dtype", [tessera.float32, tessera.float64], ids=str)
def test_special_unary_functions(device, dtype, torch):
    skip_unsupported(device, dtype)
    a = np.array(POINTS, dtype=NUMPY_DTYPE[dtype]).reshape(2, 5)
    x, ref = to_tessera(a, device), torch.from_numpy(a)
    for name in SPECIAL_UNARY:
        # torch's float64 Airy and Bessel J/Y functions are off by up to 2e-6
        # (relative): they get the float32 tolerance here, and SciPy's values
        # the float64 one in test_airy_bessel_float64.
        tolerance = tessera.float32 if name in TORCH_IMPRECISE_FLOAT64 else dtype
        check(getattr(tessera.special, name)(x), getattr(torch.special, name)(ref), dtype, name,
              tolerance_of=tolerance)
    for name in TOP_LEVEL_UNARY:
        expected = getattr(torch, name)(ref)
        check(getattr(tessera, name)(x), expected, dtype, name)
        check(getattr(tessera, name)(input=x), expected, dtype, name)
        check(getattr(x, name)(), expected, dtype, name)
        y = to_tessera(a, device)
        assert getattr(y, name + "_")() is y, name
        check(y, expected, dtype, name)
    check(tessera.signbit(x), torch.signbit(ref), tessera.bool)
    check(x.signbit(), torch.signbit(ref), tessera.bool)


def test_airy_bessel_float64(device):
    skip_unsupported(device, tessera.float64)
    special = pytest.importorskip("scipy.special")
    a = np.array(POINTS, dtype=np.float64)
    x = to_tessera(a, device)
    references = {"airy_ai": special.airy(a)[0], "bessel_j0": special.j0(a),
                  "bessel_j1": special.j1(a), "bessel_y0": special.y0(a),
                  "bessel_y1": special.y1(a)}
    assert set(references) == TORCH_IMPRECISE_FLOAT64
    for name, expected in references.items():
        check(getattr(tessera.special, name)(x), expected, tessera.float64, name)


def test_special_unary_dtypes(device, torch):
    ints = np.array([[0, 1, 2], [3, -1, 5]], dtype=np.int64)
    xi, ref = to_tessera(ints, device), torch.from_numpy(ints)
    # Integers and bool compute in float32.
    for name in ("gammaln", "i0e", "bessel_j0", "erfc", "entr"):
        check(getattr(tessera.special, name)(xi), getattr(torch.special, name)(ref),
              tessera.float32, name)
    check(tessera.lgamma(xi), torch.lgamma(ref), tessera.float32)
    check(tessera.special.exp2(to_tessera(np.array([True, False]), device)), [2.0, 1.0],
          tessera.float32)
    # signbit takes any dtype; frac needs a floating one.
    check(tessera.signbit(xi), ints < 0, tessera.bool)
    check(tessera.signbit(to_tessera(np.array([-0.0, 0.0], dtype=np.float32), device)),
          [True, False], tessera.bool)
    with pytest.raises(TypeError, match="frac"):
        tessera.frac(xi)
    # In place: a float result does not fit an integer self.
    with pytest.raises(TypeError):
        to_tessera(ints, device).erfinv_()


def test_special_float16(device, torch):
    skip_unsupported(device, tessera.float16)
    a = np.array([0.1, 0.3, 0.6, 0.95, 1.5, 3.2], dtype=np.float16)
    x, ref = to_tessera(a, device), torch.from_numpy(a.astype(np.float32))
    for name in ("erfinv", "gammaln", "digamma", "i0", "sinc", "bessel_j0", "erfc"):
        r = getattr(tessera.special, name)(x)
        check(r, getattr(torch.special, name)(ref), tessera.float16, name)


@pytest.mark.parametrize("dtype", [tessera.float32, tessera.float64], ids=str)
def test_special_binary_functions(device, dtype, torch):
    skip_unsupported(device, dtype)
    np_dtype = NUMPY_DTYPE[dtype]
    a = np.array([[0.5, 1.5, 2.5, 4.0]], dtype=np_dtype)      # [1, 4]
    b = np.array([[1.2], [0.3], [3.0]], dtype=np_dtype)       # [3, 1]: broadcasts to [3, 4]
    x, y = to_tessera(a, device), to_tessera(b, device)
    ra, rb = torch.from_numpy(a), torch.from_numpy(b)
    for name, second in SPECIAL_BINARY.items():
        fn = getattr(tessera.special, name)
        check(fn(y + 1, x), getattr(torch.special, name)(rb + 1, ra), dtype, name)
        check(fn(input=x, **{second: y}), getattr(torch.special, name)(ra, rb), dtype, name)
    for name in TOP_LEVEL_BINARY:
        expected = getattr(torch, name)(ra - 1, rb)
        check(getattr(tessera, name)(x - 1, y), expected, dtype, name)
        check(getattr(x - 1, name)(y), expected, dtype, name)
    check(tessera.special.gammainc(y, x), torch.igamma(rb, ra), dtype)
    check(tessera.igammac(y, x), torch.special.gammaincc(rb, ra), dtype)
    # The next float after each value, towards +-inf: exact.
    inf = to_tessera(np.array([np.inf, -np.inf], dtype=np_dtype), device)
    one = to_tessera(np.array([1.0, 1.0], dtype=np_dtype), device)
    check(tessera.nextafter(one, inf), [np.nextafter(np_dtype(1), np_dtype(2)),
                                         np.nextafter(np_dtype(1), np_dtype(0))], dtype)


@pytest.mark.parametrize("dtype", [tessera.float32, tessera.float64], ids=str)
def test_orthogonal_polynomials(device, dtype, torch):
    skip_unsupported(device, dtype)
    xs = np.array([[-0.9], [-0.3], [0.2], [0.75], [1.0]], dtype=NUMPY_DTYPE[dtype])  # [5, 1]
    ns = np.array([0, 1, 2, 3, 5], dtype=NUMPY_DTYPE[dtype])                        # [5]
    x, n = to_tessera(xs, device), to_tessera(ns, device)
    rx, rn = torch.from_numpy(xs), torch.from_numpy(ns)
    for name in POLYNOMIALS:
        fn, ref = getattr(tessera.special, name), getattr(torch.special, name)
        check(fn(x, n), ref(rx, rn), dtype, name)
        check(fn(input=x, n=3), ref(rx, 3), dtype, name)      # a number for n
        check(fn(0.5, n), ref(torch.tensor(0.5, dtype=rx.dtype), rn), dtype, name)


def test_numbers_as_operands(device, torch):
    a = np.array([0.5, 1.5, 2.5], dtype=np.float32)
    x, ref = to_tessera(a, device), torch.from_numpy(a)
    check(tessera.special.zeta(x + 1, 2.0), torch.special.zeta(ref + 1, 2.0), tessera.float32)
    check(tessera.special.zeta(3.0, x), torch.special.zeta(3.0, ref), tessera.float32)
    check(tessera.special.xlog1py(2, x), torch.special.xlog1py(2, ref), tessera.float32)
    check(tessera.copysign(x, -1), -a, tessera.float32)
    check(x.copysign(-2.0), -a, tessera.float32)
    # A number never outranks a tensor of its category; it does a lower one.
    ints = to_tessera(np.array([1, -2, 3], dtype=np.int32), device)
    check(tessera.copysign(ints, -1.5), [-1.0, -2.0, -3.0], tessera.float32)
    if supports(device, tessera.float64):
        doubles = to_tessera(a.astype(np.float64), device)
        check(tessera.copysign(doubles, -1.0), -a, tessera.float64)
    # PyTorch takes no number for these.
    with pytest.raises(TypeError):
        tessera.hypot(x, 2.0)
    with pytest.raises(TypeError):
        tessera.fmax(x, 1)


def test_fmax_fmin_heaviside(device):
    a = np.array([1.0, np.nan, np.nan, -2.0, 0.0], dtype=np.float32)
    b = np.array([np.nan, 3.0, np.nan, -1.0, -0.5], dtype=np.float32)
    x, y = to_tessera(a, device), to_tessera(b, device)
    check(tessera.fmax(x, y), np.fmax(a, b), tessera.float32)
    check(x.fmin(other=y), np.fmin(a, b), tessera.float32)
    # PyTorch's heaviside: values where input == 0, else input > 0 (so 0 for
    # a NaN input, where NumPy gives NaN).
    check(tessera.heaviside(x, y), np.where(a == 0, b, (a > 0).astype(np.float32)),
          tessera.float32)
    # Integer inputs keep their dtype.
    i = np.array([3, -4, 0, 7], dtype=np.int32)
    j = np.array([2, 5, 9, 7], dtype=np.int32)
    xi, yi = to_tessera(i, device), to_tessera(j, device)
    check(tessera.fmax(xi, yi), np.fmax(i, j), tessera.int32)
    check(tessera.fmin(xi, yi), np.fmin(i, j), tessera.int32)
    check(tessera.heaviside(xi, values=yi), np.heaviside(i, j).astype(np.int32), tessera.int32)
    with pytest.raises(TypeError, match="bool"):
        tessera.fmax(to_tessera(np.array([True]), device), to_tessera(np.array([False]), device))
    with pytest.raises(TypeError, match="hypot"):
        tessera.hypot(xi, yi)
    with pytest.raises(TypeError, match="nextafter"):
        tessera.nextafter(xi, yi)


def test_in_place_binary(device, torch):
    a = np.array([[0.5, 1.5, 2.5], [3.0, 0.2, 1.0]], dtype=np.float32)
    b = np.array([2.0, 0.5, 1.0], dtype=np.float32)
    ra, rb = torch.from_numpy(a), torch.from_numpy(b)
    other = to_tessera(b, device)
    for name in IN_PLACE_BINARY:
        x = to_tessera(a, device)
        assert getattr(x, name + "_")(other) is x, name  # other broadcasts to self
        check(x, getattr(torch, name)(ra, rb), tessera.float32, name)
    x = to_tessera(a, device)
    assert x.copysign_(-1) is x
    check(x, -a, tessera.float32)
    # The result must have self's shape: no broadcasting self.
    with pytest.raises(ValueError, match="broadcast"):
        to_tessera(b, device).hypot_(to_tessera(a, device))
    with pytest.raises(TypeError):
        to_tessera(np.array([1, 2], dtype=np.int32), device).igamma_(
            to_tessera(np.array([1.0, 2.0], dtype=np.float32), device))


def test_polygamma(device, torch):
    a = np.array([0.3, 1.0, 2.5, 6.0], dtype=np.float32)
    ref = torch.from_numpy(a)
    for n in range(4):
        expected = torch.polygamma(n, ref)
        check(tessera.polygamma(n, to_tessera(a, device)), expected, tessera.float32, str(n))
        check(tessera.special.polygamma(n=n, input=to_tessera(a, device)), expected,
              tessera.float32)
        x = to_tessera(a, device)
        check(x.polygamma(n), expected, tessera.float32)
        assert x.polygamma_(n) is x
        check(x, expected, tessera.float32)
    ints = np.array([1, 2, 3], dtype=np.int64)
    check(tessera.polygamma(1, to_tessera(ints, device)),
          torch.polygamma(1, torch.from_numpy(ints)), tessera.float32)
    with pytest.raises(ValueError, match="n must be >= 0"):
        tessera.polygamma(-1, to_tessera(a, device))


def test_out_forms_return_out(device, torch):
    a = np.array([0.2, 0.5, 0.9], dtype=np.float32)
    x, ref = to_tessera(a, device), torch.from_numpy(a)
    out = tessera.empty(3, device=device)
    assert tessera.special.erfinv(x, out=out) is out
    check(out, torch.special.erfinv(ref), tessera.float32)
    assert tessera.lgamma(x, out=out) is out
    check(out, torch.lgamma(ref), tessera.float32)
    assert tessera.hypot(x, x, out=out) is out
    check(out, torch.hypot(ref, ref), tessera.float32)
    assert tessera.special.zeta(x + 1, 1.0, out=out) is out
    check(out, torch.special.zeta(ref + 1, 1.0), tessera.float32)
    assert tessera.polygamma(1, x, out=out) is out
    check(out, torch.polygamma(1, ref), tessera.float32)
    assert tessera.special.expit(x, out=out) is out
    check(out, torch.special.expit(ref), tessera.float32)
    assert tessera.special.logsumexp(x, 0, out=tessera.empty(0, device=device)).shape == ()
    flags = tessera.empty(3, dtype=tessera.bool, device=device)
    assert tessera.signbit(x - 0.5, out=flags) is flags
    check(flags, a < 0.5, tessera.bool)
    with pytest.raises(TypeError):  # a float result does not fit an integer out
        tessera.erfinv(x, out=tessera.empty(3, dtype=tessera.int64, device=device))
    with pytest.raises(ValueError):
        tessera.erfinv(x, out=tessera.empty(4, device=device))


def test_special_reductions_and_aliases(device, torch):
    a = np.array([[0.2, -1.5, 3.0], [0.7, 0.1, -0.4]], dtype=np.float32)
    x, ref = to_tessera(a, device), torch.from_numpy(a)
    check(tessera.special.softmax(x, 1), torch.special.softmax(ref, 1), tessera.float32)
    check(tessera.special.log_softmax(x, dim=0), torch.special.log_softmax(ref, dim=0),
          tessera.float32)
    check(tessera.special.logsumexp(x, (0, 1)), torch.special.logsumexp(ref, (0, 1)),
          tessera.float32)
    check(tessera.special.logsumexp(x, 1, keepdim=True),
          torch.special.logsumexp(ref, 1, keepdim=True), tessera.float32)
    with pytest.raises(TypeError):
        tessera.special.softmax(x, 1, tessera.float64)  # dtype is keyword-only there


def test_non_contiguous_inputs(device, torch):
    a = np.array([[0.3, 1.2, 2.5], [0.8, 4.0, 0.05]], dtype=np.float32)
    x = to_tessera(a, device).transpose(0, 1)
    stepped = to_tessera(a, device).as_strided((2, 2), (3, 2), 0)  # a[:, ::2]
    assert not x.is_contiguous() and not stepped.is_contiguous()
    ref = torch.from_numpy(a).t()
    check(tessera.special.gammaln(x), torch.special.gammaln(ref), tessera.float32)
    check(tessera.special.zeta(x + 1, x), torch.special.zeta(ref + 1, ref), tessera.float32)
    check(x.hypot(x), torch.hypot(ref, ref), tessera.float32)
    check(tessera.special.i1e(stepped), torch.special.i1e(torch.from_numpy(a[:, ::2].copy())),
          tessera.float32)


def test_bad_arguments(device):
    x = to_tessera(np.array([1.0, 2.0], dtype=np.float32), device)
    with pytest.raises(ValueError, match="broadcast|shape"):
        tessera.hypot(x, to_tessera(np.ones(3, dtype=np.float32), device))
    with pytest.raises(TypeError):
        tessera.special.erfinv([0.5])
    with pytest.raises(TypeError):
        tessera.special.gammainc(x)
    assert math.isnan(tessera.special.erfinv(x).cpu().tolist()[1])  # outside [-1, 1]
