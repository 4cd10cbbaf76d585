"""The device's own argument checks where torch's CPU checks do not run on it.

The emulator runs each op's CPU kernel, so it raises what the CPU kernel checks, in the
CPU's words. Where the vendor registers the op for its device itself (op-plugin), torch's
checks (a structured kernel's meta function) never run there: the kernel's own check
answers, with its own condition and words. ``chips/messages.yaml`` lists such checks per
op (``arg_checks``) with their sources; each names a predicate here, which reads the
op's CPU arguments and returns the fields of the kernel's message when the check fails
(None when it passes). :func:`wrap` puts them before the op's CPU call (once per op plan).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

import torch

from ..profiles import vendor_messages


def _shape(t: torch.Tensor) -> str:
    """op::ToString of a shape: [2,3]."""
    return "[" + ",".join(str(s) for s in t.shape) + "]"


def _arg(args, kwargs, i: int, name: str):
    return args[i] if len(args) > i else kwargs.get(name)


def nll_loss_weight_classes(args, kwargs) -> Optional[Dict[str, Any]]:
    """aclnnNLLLoss: the weight is 1-D with one entry per class (self's last dimension);
    op-plugin gives an absent weight as ones, so only a given one can fail."""
    self, weight = _arg(args, kwargs, 0, "self"), _arg(args, kwargs, 2, "weight")
    if not isinstance(self, torch.Tensor) or not isinstance(weight, torch.Tensor) or self.dim() == 0:
        return None
    n_classes = self.shape[-1]
    if weight.dim() == 1 and weight.shape[0] == n_classes:
        return None
    return {"n_classes": n_classes, "weight_shape": _shape(weight)}


PREDICATES: Dict[str, Callable[[tuple, dict], Optional[Dict[str, Any]]]] = {
    "nll_loss_weight_classes": nll_loss_weight_classes,
}


class Check:
    __slots__ = ("predicate", "template", "sources")

    def __init__(self, predicate, template: str, sources: List[str]):
        self.predicate, self.template, self.sources = predicate, template, sources


def checks_for(profile, op) -> List[Check]:
    """The device's own argument checks of ``op`` under ``profile``'s vendor."""
    words = vendor_messages(getattr(profile, "vendor", None)) if profile is not None else None
    if words is None or not words.arg_checks:
        return []
    namespace, _, base = op._schema.name.partition("::")
    listed = (words.arg_checks.get(f"{namespace}.{base}.{op._overloadname}")
              or words.arg_checks.get(f"{namespace}.{base}") or [])
    out = []
    for c in listed:
        predicate = PREDICATES.get(c.check)
        if predicate is None:
            raise KeyError(f"chips/messages.yaml: no argument check named {c.check!r} "
                           f"(known: {', '.join(PREDICATES)})")
        template = c.text
        if words.aclnn_failure is not None:  # as torch_npu raises the kernel's failure
            template = (words.aclnn_failure.text.replace("{func}", c.func).replace("{aclnn}", c.aclnn)
                        .replace("{check}", template))
        out.append(Check(predicate, template, list(c.sources)))
    return out


def wrap(call: Callable, checks: List[Check]) -> Callable:
    """``call`` after the device's own checks: the first that fails raises its message."""
    def checked(*args, **kwargs):
        for c in checks:
            fields = c.predicate(args, kwargs)
            if fields is not None:
                raise RuntimeError(c.template.format(**fields))
        return call(*args, **kwargs)
    return checked
