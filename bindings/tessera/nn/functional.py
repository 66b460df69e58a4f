"""Neural-network functions over tessera tensors, named and called as in
torch.nn.functional (convolutions, pooling, normalizations, activations,
losses, attention)."""

from .._tessera import _nn
from .._tessera._nn import *  # noqa: F401,F403
