"""What the blocks of the ``devmod`` source call: the device module of the device under
test and its members, found by name.

``torch.cuda.X`` asks: does ``torch.<device type>.X`` (``torch.get_device_module``; on an
NPU with torch_npu, ``torch.npu.X``) exist and behave as promised? A block runs twice: on
the CPU (the reference) and on the device under test.

- On the CPU the module is ``torch.cpu``; where it lacks the member the block answers with
  the property the API promises (each block's ``ref`` text says which), and for the random
  number members the CPU generator's own functions (``torch.random``) stand in.
- On a device whose module lacks the member, :class:`DeviceModuleMissing` is raised: its
  message ("the device module torch.npu has no member ...") is judged *unsupported*
  (feature limit), the honest answer for an API the device does not offer.
"""

from __future__ import annotations

from typing import Any, Optional

import torch

# the CPU generator's functions standing in for a device module's RNG members on the CPU
CPU_RNG = {
    "get_rng_state": lambda device=None: torch.random.get_rng_state(),
    "set_rng_state": lambda state, device=None: torch.random.set_rng_state(state),
    "get_rng_state_all": lambda: [torch.random.get_rng_state()],
    "set_rng_state_all": lambda states: torch.random.set_rng_state(states[0]),
    "manual_seed": torch.random.manual_seed, "manual_seed_all": torch.random.manual_seed,
    "seed": torch.random.seed, "seed_all": torch.random.seed,
    "initial_seed": torch.random.initial_seed,
    "default_generators": (torch.default_generator,),
}

NBYTES = 1 << 20  # the device allocation the memory blocks make (1 MiB)


class DeviceModuleMissing(RuntimeError):
    """The device module of the device under test lacks the API's counterpart."""


class Ctx:
    """The device under test and its device module, as a block sees them."""

    def __init__(self, device: Any):
        self.device = torch.device(device)
        self.type = self.device.type
        self.is_cpu = self.type == "cpu"
        self.mod = torch.cpu if self.is_cpu else torch.get_device_module(self.type)
        self.index = self.device.index or 0

    def name(self, path: str) -> str:
        """``CUDAGraph`` -> ``NPUGraph`` on an NPU (torch_npu's names)."""
        return path.replace("CUDA", self.type.upper())

    def m(self, path: str) -> Optional[Any]:
        """Member ``path`` (dotted) of the device module; None on the CPU where torch.cpu
        lacks it (the block then answers with its reference property)."""
        obj: Any = self.mod
        for part in self.name(path).split("."):
            nxt = getattr(obj, part, None)
            if nxt is None and self.is_cpu and obj is self.mod and part in CPU_RNG:
                nxt = CPU_RNG[part]
            if nxt is None:
                if self.is_cpu:
                    return None
                raise DeviceModuleMissing(
                    f"the device module {self.mod.__name__} has no member {self.name(path)} "
                    f"(counterpart of torch.cuda.{path}): not supported by this device's module")
            obj = nxt
        return obj

    def only(self, owner: str, path: str, device_type: str = "cuda") -> Optional[Any]:
        """An API that exists for ``device_type`` alone (``torch.backends.cuda.X``): the
        object on that device, None on the CPU (reference property), else missing."""
        if self.type == device_type:
            obj: Any = __import__(owner, fromlist=["_"])
            for part in path.split("."):
                obj = getattr(obj, part)
            return obj
        if self.is_cpu:
            return None
        raise DeviceModuleMissing(
            f"the device module {self.mod.__name__} has no member {path} (counterpart of "
            f"{owner}.{path}, which serves {device_type} devices only): not supported by this "
            "device's module")

    def call(self, obj: Any, method: str, *args, ref: Any = None, **kwargs) -> Any:
        """``obj.method(*args)``; on the CPU, where torch.cpu's object lacks it, ``ref``."""
        fn = getattr(obj, method, None)
        if fn is None:
            if self.is_cpu:
                return ref
            raise DeviceModuleMissing(
                f"the device module {self.mod.__name__} has no member "
                f"{type(obj).__name__}.{method}: not supported by this device's module")
        return fn(*args, **kwargs)

    def tensor(self, n: int = 12, dtype=torch.float32) -> torch.Tensor:
        # made on the CPU, then moved: the shared prelude does no device work of its own
        # (a block's device ops are its API's, or evidence of nothing)
        return (torch.arange(n, dtype=dtype).reshape(-1, 4) / 4).to(self.device)

    def big(self) -> torch.Tensor:
        return torch.empty(NBYTES // 4, dtype=torch.float32, device=self.device)


def capture(c: Ctx, how: str = "graph") -> Any:
    """Capture ``b = a * 2 + 1`` into a device graph, change ``a``, replay: the replayed
    ``b`` (the reference: the same formula on the new ``a``). ``how`` picks the members
    used: ``graph`` (context manager), ``begin_end`` (capture_begin/end), ``pool``
    (graph_pool_handle), ``reset`` (reset then re-capture)."""
    G = c.m("CUDAGraph")
    a = torch.ones(8, device=c.device)
    new = torch.arange(8.0)
    if G is None:
        return (new * 2 + 1)
    side = c.m("Stream")()
    side.wait_stream(c.m("current_stream")())
    with c.m("stream")(side):
        b = a * 2 + 1  # warm-up outside capture, as the API asks
    c.m("current_stream")().wait_stream(side)
    g = G()
    if how == "begin_end":
        with c.m("stream")(side):
            g.capture_begin()
            b = a * 2 + 1
            g.capture_end()
    elif how == "pool":
        with c.m("graph")(g, pool=c.m("graph_pool_handle")()):
            b = a * 2 + 1
    else:
        with c.m("graph")(g):
            b = a * 2 + 1
        if how == "reset":
            g.reset()
            g = G()
            with c.m("graph")(g):
                b = a * 2 + 1
    a.copy_(new.to(c.device))
    g.replay()
    c.m("synchronize")()
    return b
