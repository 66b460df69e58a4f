"""Neural-network ops of the runtime: see tessera.nn.functional."""

from . import functional  # noqa: F401
