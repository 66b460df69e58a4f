"""torch.distributed for tessera tensors: collectives through gloo on host copies.

A collective on tessera tensors runs as gloo's collective on CPU copies of
them: the backend (C++, ``bridge/csrc/host_copy_backend.h``, a c10d
Backend) copies what the collective reads to the host, runs gloo on the
copies and copies what gloo wrote back into the tessera tensors; the Work
it returns completes after that copy back. CPU tensors of the same group
go to gloo directly.

Which process groups serve tessera tensors:

- ``init_process_group()`` with no backend: torch picks the backend of its
  accelerator, tessera, from ``Backend.default_device_backend_map``; the
  ``"tessera"`` backend registered below serves it. ``"tessera"`` and
  ``"cpu:gloo,tessera:tessera"`` name it directly.
- ``init_process_group("gloo")``: torch gives every device type in
  ``Backend.backend_capability["gloo"]`` one and the same ProcessGroupGloo,
  which rejects tessera tensors, so listing tessera there cannot work.
  Instead ``_add_missing_device`` runs after torch creates each group
  (wrapping ``distributed_c10d._new_process_group_helper``, the one place
  every group is made) and gives a group whose devices are all served by
  gloo a tessera backend over that same gloo.

The same hook makes every such group run its CPU and its tessera
collectives in one gloo group: a group made for tessera alone (no backend,
or ``"tessera"``) serves CPU tensors with its host gloo group, as plain
gloo, so CPU tensors, ``barrier`` and the object collectives work there
too; with ``"cpu:gloo,tessera:tessera"`` the tessera backend takes the
group's CPU gloo as its host (the gloo group it made stays, idle). So a
collective whose tensors are tessera tensors on one rank and CPU tensors on
another pairs up whatever the backend string (both run gloo on host
memory), instead of waiting in two groups until the timeout.

Importing this costs nothing measurable: ``import torch`` has already
imported torch.distributed before it loads torch_tessera.
"""

import functools
import warnings

import torch
import torch.distributed as dist

from . import _C

__all__ = ["BACKEND_NAME", "is_available"]

BACKEND_NAME = "tessera"


def is_available() -> bool:
    """Whether tessera collectives can run: torch built with gloo."""
    return dist.is_available() and dist.is_gloo_available()


def _create_backend(common_opts, backend_opts):
    """Backend.register_backend's creator (extended API): a gloo group on the
    same store, ranks and timeout, wrapped in the host-copy backend."""
    from torch.distributed.distributed_c10d import ProcessGroupGloo

    if backend_opts is not None:
        raise ValueError(
            f"the {BACKEND_NAME!r} backend takes no pg_options (its gloo group uses gloo's "
            f"defaults), got {type(backend_opts).__name__}")
    gloo = ProcessGroupGloo(
        common_opts.store, common_opts.group_rank, common_opts.group_size, timeout=common_opts.timeout)
    # What torch sets on the gloo groups it makes itself.
    gloo.options.global_ranks_in_group = common_opts.global_ranks_in_group
    gloo.options.group_name = common_opts.group_id
    gloo._set_sequence_number_for_group()
    return _C._host_copy_backend(gloo)


def _unwrap(backend):
    """The backend inside TORCH_DISTRIBUTED_DEBUG=DETAIL's checking wrapper."""
    return getattr(backend, "wrapped_pg", backend)


def _register_backend(pg, device, backend_type, backend):
    # A group keeps its name and description in its backends (setting them
    # sets them on each, reading them reads the first's), so one added after
    # torch named the group must get them too: functional collectives find
    # groups by name.
    name, desc = pg.group_name, pg.group_desc
    pg._register_backend(device, backend_type, backend)
    pg._set_group_name(name)
    pg._set_group_desc(desc)


def _add_missing_device(pg):
    """Serves tessera tensors in a gloo-only group, and CPU tensors in a
    tessera-only group, with one gloo group for both; see the module doc."""
    tessera, cpu = torch.device(BACKEND_NAME), torch.device("cpu")
    backends = {device: pg._get_backend(device) for device in pg._device_types}
    cpu_is_gloo = cpu in backends and _unwrap(backends[cpu]).name() == "gloo"
    if tessera not in backends:
        # All gloo: the CUSTOM slot tessera takes is free (a CUSTOM backend
        # already there would be reused for tessera).
        if cpu_is_gloo and all(_unwrap(b).name() == "gloo" for b in backends.values()):
            _register_backend(pg, tessera, dist.ProcessGroup.BackendType.CUSTOM,
                              _C._host_copy_backend(backends[cpu]))
        return
    host_copy = _unwrap(backends[tessera])
    host = _C._host_copy_backend_host(host_copy)
    if host is None:
        return  # another tessera backend than this one
    if cpu not in backends:
        _register_backend(pg, cpu, dist.ProcessGroup.BackendType.GLOO, host)
    elif cpu_is_gloo:
        _C._host_copy_backend_share_host(host_copy, backends[cpu])
    if pg.name() == dist.Backend.UNDEFINED:
        # torch means a "device:backend" string naming a plugin to make the
        # plugin the default backend, but compares the plugin's upper-case
        # key with the lower-case name and sets none, so the group has no
        # default backend (warnings, failing hooks). Set the one it means.
        pg._set_default_backend(dist.ProcessGroup.BackendType.CUSTOM)


def _install_group_hook():
    c10d = dist.distributed_c10d
    create_group = getattr(c10d, "_new_process_group_helper", None)
    if create_group is None:
        warnings.warn(
            "torch_tessera: torch.distributed has no _new_process_group_helper, so process groups "
            "made with backend 'gloo' will not take tessera tensors; use backend "
            "'cpu:gloo,tessera:tessera' or 'tessera'", stacklevel=2)
        return
    if getattr(create_group, "_tessera_adds_devices", False):
        return

    @functools.wraps(create_group)
    def _new_process_group_helper(*args, **kwargs):
        pg, store = create_group(*args, **kwargs)
        # Non-members get GroupMember.NON_GROUP_MEMBER; a backend that is a
        # whole Python ProcessGroup is left alone.
        if type(pg) is dist.ProcessGroup:
            _add_missing_device(pg)
        return pg, store

    _new_process_group_helper._tessera_adds_devices = True
    c10d._new_process_group_helper = _new_process_group_helper


def _register():
    if not is_available():
        return
    if BACKEND_NAME.upper() not in dist.Backend._plugins:
        dist.Backend.register_backend(
            BACKEND_NAME, _create_backend, extended_api=True, devices=[BACKEND_NAME])
    _install_group_hook()
