"""Special functions over tessera tensors, named and called as in
torch.special (gamma and Bessel functions, error functions, orthogonal
polynomials, zeta, ...)."""

from ._tessera.special import *  # noqa: F401,F403
