"""Which implementation the device under test takes where torch itself picks one per
device, so that the CPU reference can take the same one.

Some composite APIs choose a kernel by device: ``scaled_dot_product_attention`` (and with
it ``MultiheadAttention``, ``Transformer*``) runs a fused kernel on the CPU
(``_scaled_dot_product_flash_attention_for_cpu``) but the math composition (``bmm``,
``softmax``) on a backend that registers no fused choice. The two round differently in
low precision; a reference on the other path makes a correct device look wrong. The
reference is the API as the device would compute it, on CPU tensors.

A probe runs the choice once per device, on inputs made without a random draw (the
seeded runs around it must not move), hidden from any dispatch mode a caller has open
(a footprint being recorded must not see it); its answer is kept for the process
(``forget_probes`` drops it). torch is imported on first use, not with this module.
"""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from typing import Dict, Iterator

_PROBES: Dict[str, bool] = {}


def attention_is_math(device: str) -> bool:
    """Whether ``scaled_dot_product_attention`` composes the math path on ``device``
    (float32, no mask): no fused attention op reaches the dispatcher. A device on which the
    probe itself fails keeps the CPU's own choice (False)."""
    if device not in _PROBES:
        _PROBES[device] = _probe_attention(device)
    return _PROBES[device]


def _probe_attention(device: str) -> bool:
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode, _disable_current_modes

    seen = set()

    class Ops(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.add(func.__name__)
            return func(*args, **(kwargs or {}))

    try:
        with _disable_current_modes():
            q = torch.linspace(-1.0, 1.0, 16).reshape(1, 1, 4, 4).to(device)
            with Ops():
                torch.nn.functional.scaled_dot_product_attention(q, q, q)
    except Exception:
        return False
    return not any("attention" in name for name in seen)


@contextmanager
def same_paths(device: str) -> Iterator[None]:
    """While open, CPU runs take the implementation ``device`` takes where torch picks one
    per device (today: the math attention where the device composes it)."""
    with ExitStack() as stack:
        if device.split(":", 1)[0] != "cpu" and attention_is_math(device):
            from torch.nn.attention import SDPBackend, sdpa_kernel

            stack.enter_context(sdpa_kernel(SDPBackend.MATH))
        yield


def forget_probes() -> None:
    """Drop every kept probe answer (a test that changes a device's paths)."""
    _PROBES.clear()
