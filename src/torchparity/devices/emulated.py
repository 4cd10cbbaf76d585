"""The emulated accelerator as a device adapter: ``emu:<profile>`` or ``emu:<file.yaml>``.

Nothing outside devices/ knows the emulator exists; to the rest of torchparity this is a
device of type ``profile.device_type`` (``npu`` for the Ascend profiles) whose results are
labelled emulated.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Dict, List, Optional, Tuple

from ..errors import InputError
from ..results.models import DeviceInfo
from .base import DeviceAdapter
from .paths import same_paths
from .profiles import Profile, load_profile


class EmulatedAdapter(DeviceAdapter):
    emulated = True

    def __init__(self, spec: str, profile_ref: str, index: Optional[int] = None):
        super().__init__(spec, index)
        self.profile: Profile = load_profile(profile_ref)
        self.type = self.profile.device_type
        from .emulator.faults import problem

        wrong = problem()  # TORCHPARITY_EMU_FAULT / _NUMERICS naming nothing known
        if wrong:
            raise InputError(wrong)

    def unavailable_reason(self) -> Optional[str]:
        """Whether this torch can host the emulator. Work runs in worker processes, so a
        profile this process may already host does not matter here; setup() checks it."""
        from .emulator.registration import torch_npu_loaded

        if self.type == "npu" and torch_npu_loaded():
            return "emu: torch_npu is loaded in this process; the emulated 'npu' cannot coexist with it"
        from .emulator import support_problem

        return support_problem()

    def setup(self) -> None:
        from .emulator import activate

        activate(self.profile)

    @property
    def torch_device(self) -> str:
        return f"{self.type}:{self.index or 0}"

    def collective_backend(self) -> Optional[str]:
        """gloo over the host memory of the emulated tensors (``emulator.collectives``)."""
        from .emulator.collectives import register

        self.setup()
        return register()

    def observe_collectives(self, note):
        """``note(op, tensors)`` for each collective of the emulator's Python process group
        (``emulator.collectives``: ``c10d.allreduce_``, ... with its device tensors)."""
        from .emulator.collectives import observing

        return observing(note)

    def device_name(self) -> Optional[str]:
        """The name reports carry: the chip's name, marked emulated (the emulated device's
        own ``get_device_name()`` answers the chip's name alone, as the chip does)."""
        from .profiles import chip_identity

        name = chip_identity(self.profile).device_name
        return name if name.endswith("(emulated)") else f"{name} (emulated)"

    def info(self) -> DeviceInfo:
        return DeviceInfo(type=self.type, name=self.device_name(), emulated=True,
                          profile=self.profile.name, spec=self.spec)

    def backend_versions(self) -> Dict[str, str]:
        from ..version import __version__

        return {"torchparity-emulator": __version__}

    def environment_extra(self) -> Dict[str, str]:
        extra = {"profile": self.profile.name}
        if self.profile.path:
            extra["profile_path"] = self.profile.path
        if self.profile.chips:
            extra["chips"] = ", ".join(self.profile.chips)
        if self.injected():
            extra["injected"] = ", ".join(self.injected())
        from .profiles import chip_identity

        ident = chip_identity(self.profile)
        if ident.soc_version >= 0:
            extra["chip"] = ident.device_name  # the chip the emulated device answers as
        if ident.cann:
            extra["profile_cann"] = ident.cann  # the CANN release the profile's facts are for
        return extra

    def injected(self) -> List[str]:
        from .emulator.faults import labels

        return labels()

    @contextmanager
    def clean(self):
        """The emulated device without its injected faults and noise (op plans rebuilt on
        entry and exit): yields True when something was injected."""
        from .emulator import faults

        if not (faults.ACTIVE or faults.NOISE):
            yield False
            return
        with faults.injecting(()):
            yield True

    @contextmanager
    def reference(self):
        from .emulator import reference

        with same_paths(self.torch_device), reference():
            yield

    def unverified_ops(self):
        from .emulator import unverified_ops

        return unverified_ops()

    def trace_ops(self):
        from .emulator import trace_ops

        return trace_ops()

    def error_patterns(self) -> List[Tuple[str, str, str]]:
        # Which refusals are the emulator's own (tried before the generic table, where a
        # refusal naming the profile is the chip's rule, feature_limit): what a Python
        # backend cannot supply is an emulator limit (not an answer; needs hardware to
        # decide) — torch's own message where a PrivateUse1 hook is missing, e.g.
        # torch.empty(..., pin_memory=True) asking for a pinned allocator, like the
        # emulator's own "not supported by the emulated device".
        return [(r"PrivateUse1HooksInterface.*implement `(getPinnedMemoryAllocator|"
                 r"getNewGenerator|getDefaultGenerator|resizePrivateUse1Bytes)`",
                 "skip", "emulator_limit"),
                # the emulated device runs every op at once, on the host: it has no streams
                # or events, and torch says so where FSDP / checkpoint writers ask for them
                (r"Custom backend '\w+' not implement 'torch\.\w+\.(current_stream|Stream|Event|stream)'"
                 r"|module 'torch\.\w+' has no attribute '(current_stream|Stream|Event|stream)'",
                 "skip", "emulator_limit"),
                # the emulated device's tensors are made in Python and already own their
                # Python object, so a Tensor subclass cannot wrap a fresh one
                # (``SubTensor([0])`` under ``torch.device('npu')``); a C++ backend's can
                (r"Creating a new Tensor subclass \w+ but the raw Tensor object is already "
                 r"associated to a python object", "skip", "emulator_limit")]
