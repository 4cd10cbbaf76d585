"""Registering the emulated device with torch: once per process, one profile."""

from __future__ import annotations

import sys
from typing import Optional

import torch

from . import autocast, composites, dispatch, features, fused, kernels
from .module import make_module

_ACTIVE = None  # the Profile in force
_LIBRARIES = []  # torch.library.Library objects; deregistered if garbage collected


def support_problem(profile=None) -> Optional[str]:
    """None when this process can host the emulator (with ``profile``, if given), else one
    line naming what is missing: a torch feature, or PrivateUse1 already taken."""
    try:
        import torch.utils.backend_registration as br
    except ImportError:
        return (f"emu: this torch ({torch.__version__}) lacks torch.utils.backend_registration, "
                "which the emulated accelerator needs (a newer torch has it)")
    needs = [
        (torch._C, "_acc"),
        (torch._C, "_construct_storage_from_data_pointer"),
        (torch._C, "_set_conj"),
        (torch._C, "_dispatch_get_all_op_names"),
        (torch.library.Library, "fallback"),
    ]
    for owner, attr in needs:
        if not hasattr(owner, attr):
            where = getattr(owner, "__name__", type(owner).__name__)
            return (f"emu: this torch ({torch.__version__}) lacks {where}.{attr}, which the "
                    "emulated accelerator needs (a newer torch has it)")
    for attr in ("_setup_privateuseone_for_python_backend",
                 "_generate_storage_methods_for_privateuse1_backend"):
        if not hasattr(br, attr):
            return (f"emu: this torch ({torch.__version__}) lacks "
                    f"torch.utils.backend_registration.{attr}, which the emulated accelerator "
                    "needs (a newer torch has it)")
    for attr in ("create_empty_tensor", "register_python_privateuseone_hook"):
        if not hasattr(torch._C._acc, attr):
            return (f"emu: this torch ({torch.__version__}) lacks torch._C._acc.{attr}, which "
                    "the emulated accelerator needs (a newer torch has it)")
    if _ACTIVE is not None:
        if profile is not None and not _same(_ACTIVE, profile):
            return (f"emu: this process already hosts the emulated device with profile "
                    f"'{_ACTIVE.name}'; a process can host one profile")
        return None
    taken = torch._C._get_privateuse1_backend_name()
    if taken != "privateuseone":
        return (f"emu: the PrivateUse1 backend of this process is already registered as "
                f"'{taken}' (another out-of-tree backend is loaded)")
    return None


def torch_npu_loaded() -> bool:
    """Whether a real torch_npu is loaded (torchparity's own stand-in, npu_testing, says it
    is not torch_npu: it registers the emulated 'npu' under that name)."""
    mod = sys.modules.get("torch_npu")
    return mod is not None and not getattr(mod, "__torchparity_adapter__", False)


def is_active() -> bool:
    return _ACTIVE is not None


def active_profile():
    return _ACTIVE


def activate(profile) -> None:
    """Register the emulated device described by ``profile`` (idempotent).

    A second call with the same profile does nothing; with a different one it raises,
    because a process has one PrivateUse1 backend and it cannot be unregistered.
    """
    global _ACTIVE
    if _ACTIVE is not None:
        if _same(_ACTIVE, profile):
            return
        raise RuntimeError(
            f"emu: the emulated device is already active with profile '{_ACTIVE.name}' "
            f"(device '{_ACTIVE.device_type}'); a process can host one profile, so run "
            f"'{profile.name}' in another process")
    device_type = profile.device_type
    if device_type == "npu" and torch_npu_loaded():
        raise RuntimeError("emu: torch_npu is loaded in this process; the emulated 'npu' "
                           "cannot coexist with it")
    problem = support_problem(profile)
    if problem:
        raise RuntimeError(problem)
    if hasattr(torch, device_type):
        raise RuntimeError(f"emu: torch.{device_type} already exists in this process; the "
                           f"emulated '{device_type}' cannot replace it")

    import torch.utils.backend_registration as br

    generator = torch.Generator()
    generator.manual_seed(torch.initial_seed())
    dispatch.STATE.device_type = device_type
    dispatch.STATE.profile = profile
    dispatch.STATE.generator = generator
    module = make_module(device_type, profile, generator)
    br._setup_privateuseone_for_python_backend(device_type, backend_module=module)
    br._generate_storage_methods_for_privateuse1_backend(device_type)
    dispatch.STATE.device = torch.device(device_type, 0)  # the name exists from here on

    fallbacks = torch.library.Library("_", "IMPL")
    fallbacks.fallback(dispatch.fallback, "PrivateUse1")
    features.install_layout_fallbacks(fallbacks)
    impls = torch.library.Library("aten", "IMPL")
    kernels.register(impls)
    fused.register(impls)
    composites.register(impls, profile, device_type)
    features.install_compressed_refusals(impls)
    # conj/neg bits: resolving them would clone -> copy_ -> _copy_from -> resolve again,
    # forever; _copy_from handles the bits itself (the CPU views carry them).
    for name in ("_copy_from", "_copy_from_and_resize"):
        for key in ("Conjugate", "Negative"):
            impls.impl(name, torch.library.fallthrough_kernel, key)
    features.install_pin_memory(impls)
    features.install_nested(impls)
    autocast.register(fallbacks, impls)
    _LIBRARIES.extend([fallbacks, impls])

    features.install_itt(profile)
    features.install_generator()
    features.install_storage()
    features.install_accelerator()
    features.hide_kernels_from_dynamo()
    if not _torch_initializing():
        _probe_autograd_engine(device_type)
    _ACTIVE = profile


def _torch_initializing() -> bool:
    """Whether ``import torch`` is still running (the device registered by torch's backend
    autoload, as torch_npu is): no backward can have run yet, and a probe backward now would
    deadlock — the engine's device thread imports while this thread holds torch's import lock."""
    spec = getattr(sys.modules.get("torch"), "__spec__", None)
    return bool(getattr(spec, "_initializing", False))


def _same(a, b) -> bool:
    return a.model_dump() == b.model_dump()


ENGINE_STARTED = ("emu: an autograd backward ran in this process before the emulated device "
                  "was registered, so torch's autograd engine has no queue for it; register it "
                  "first (torchparity.devices.get_adapter('emu:<profile>').setup() at start-up)")


def _probe_autograd_engine(device_type: str) -> None:
    """Fail now, in one line, if torch's autograd engine cannot serve the new device.

    The engine sizes its per-device queues at the first backward of the process; a device
    registered later trips an internal assert at its first backward. The probe runs under
    the profile (op plans are cached per profile): a profile refusing its float32 ops
    makes the probe inconclusive, not an error.
    """
    try:
        x = torch.ones(1, device=device_type, requires_grad=True)
        (x * 2).sum().backward()
    except RuntimeError as exc:
        if "device_ready_queues_" in str(exc):
            raise RuntimeError(ENGINE_STARTED) from None
