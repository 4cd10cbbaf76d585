"""Tensor and Storage members that are not ops, as a scenario source: "same answer on
the device".

``torch.Tensor.element_size``, ``.is_contiguous``, ``.storage_offset``,
``.untyped_storage``, ``.data_ptr``, autograd members (``backward``, ``register_hook``,
...), sparse and quantized accessors, ``torch.UntypedStorage.*``,
``torch.TypedStorage.*`` and the legacy typed storage classes (``torch.FloatStorage``);
``torch.nn.Module`` members, the container classes' members, the global module hooks and
``torch.nn.init``. One :class:`~..base.Case` per member (``member.cases``: a real function,
whose source is the snippet); members answered by the same code (a storage member of
both storage classes, the conversions, the legacy classes, the global hooks, the random
initialisers) are one case with aliases, the API a parameter.

An API is matched by what it resolves to (:func:`classify`): another spelling of a member
(``torch.nn.modules.module.Module.apply``) gets the case of its canonical name.
A Tensor member that has an OpInfo entry belongs to the ``opinfo`` source and gets
nothing here.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch

from ....results.models import Text
from ...registry import Scenario
from ..base import BlockSource, Case, Row, probed, resolve_quiet, split_member

NAME = "member"
ORDER = 50

LEGACY_CLASSES = ("DoubleStorage", "FloatStorage", "HalfStorage", "LongStorage", "IntStorage",
                  "ShortStorage", "CharStorage", "ByteStorage", "BoolStorage", "BFloat16Storage",
                  "ComplexDoubleStorage", "ComplexFloatStorage", "QUInt8Storage", "QInt8Storage",
                  "QInt32Storage", "QUInt4x2Storage", "QUInt2x4Storage")


def _cases():
    from . import cases

    return cases


def classify(api: str) -> Tuple[str, str, str]:
    """(kind, owner, member): kind is tensor | storage | legacy | nnmodule | container |
    globalhook | init | none."""
    owner_name, member = split_member(api)
    if not api.startswith("torch.") or ("Tensor" not in api and "Storage" not in api
                                         and not api.startswith("torch.nn.")):
        return "none", "", member  # resolve nothing else (resolving may import modules)
    obj = resolve_quiet(api)
    owner = resolve_quiet(owner_name)
    if api.startswith("torch.nn."):
        return _classify_nn(obj, owner, member)
    if owner is torch.Tensor:
        return "tensor", "Tensor", member
    for name in ("UntypedStorage", "TypedStorage"):
        if owner is getattr(torch, name):
            return "storage", name, member
    for name in LEGACY_CLASSES:
        cls = getattr(torch, name, None)
        if cls is None:
            continue
        if obj is cls:
            return "legacy", name, ""
        if owner is cls and member == "dtype":
            return "legacy", name, member
    return "none", "", member


def _classify_nn(obj: Any, owner: Any, member: str) -> Tuple[str, str, str]:
    import torch.nn.init
    import torch.nn.modules.module as module_mod

    if owner is torch.nn.Module:
        return "nnmodule", "Module", member
    for name in ("Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"):
        if owner is getattr(torch.nn, name):
            return "container", name, member
    if member in _cases().GLOBAL_HOOKS and obj is getattr(module_mod, member, None):
        return "globalhook", "torch.nn.modules.module", member
    if owner is torch.nn.init and f"torch.nn.init.{member}" in SOURCE.members():
        return "init", "torch.nn.init", member
    return "none", "", member


def canonical(kind: str, owner: str, member: str) -> str:
    """The name the table knows a classified member by."""
    if kind == "legacy":
        return f"torch.{owner}" + (f".{member}" if member else "")
    prefix = {"tensor": "torch.Tensor", "storage": f"torch.{owner}", "nnmodule": "torch.nn.Module",
              "container": f"torch.nn.{owner}"}.get(kind, owner)
    return f"{prefix}.{member}"


class MemberSource(BlockSource):
    name, order = NAME, ORDER
    # an API OpInfo covers (by entry or by its footprint) runs there, not here
    yields_to = ("opinfo",)

    def table(self) -> Sequence[Row]:
        return _cases().CASES

    def _found(self, api: str) -> Tuple[str, str, str, Optional[Case]]:
        kind, owner, member = classify(api)
        cases = _cases()
        if kind == "none" or member in cases.EXCLUDED or (kind == "nnmodule" and member in cases.EXCLUDED_NN):
            return kind, owner, member, None
        return kind, owner, member, self._rows()[0].get(canonical(kind, owner, member))

    def case_of(self, api: str) -> Optional[Case]:
        return self._found(api)[3]

    def owns(self, api: str) -> bool:
        return classify(api)[0] != "none"

    def make(self, api: str, case: Case) -> List[Scenario]:
        kind, owner, member, _ = self._found(api)
        name = canonical(kind, owner, member)  # what the body is told it runs under
        words = self.describe(api, case)
        if case.raises is not None:  # a documented refusal, declared: every device must raise it
            fn = case.fn(name)
            return [Scenario(
                id=member or "storage", api=api, fn=fn,
                description=Text(en=words["en"], zh=words["zh"]),
                expected=Text(en=f"{case.raises.type} on every device (its documented refusal)",
                              zh=f"各设备均抛出 {case.raises.type}（文档所述的拒绝）"),
                dtypes=case.dtypes, tags=case.tags, raises=case.raises, module=fn.__module__,
                source=NAME, code=case.snippet(name))]
        return probed(member or "storage", api, NAME, case.fn(name), case.dtypes, code=case.snippet(name),
                      tags=case.tags, **words)

    def describe(self, api: str, case: Case) -> Dict[str, str]:
        _, owner, member = classify(api)
        return dict(en=f"{owner}.{member or 'dtype'}: the same answer on the device as on the CPU",
                    zh=f"{owner}.{member or 'dtype'}：设备上的结果与 CPU 相同",
                    expect_en="the same answer as the CPU", expect_zh="与 CPU 结果一致")

    def why_not(self, api: str, obj: Any) -> str:
        kind, owner, member = classify(api)
        cases = _cases()
        if kind == "none":
            return "not a member of torch.Tensor, a storage class or torch.nn.Module, nor torch.nn.init"
        if member in cases.EXCLUDED:
            return f"{owner}.{member}: {cases.EXCLUDED[member]}"
        if kind == "nnmodule" and member in cases.EXCLUDED_NN:
            return f"Module.{member}: {cases.EXCLUDED_NN[member]}"
        if kind == "tensor" and self.case_of(api) is None:
            return f"Tensor.{member}: an op (OpInfo or footprint sources) or a member this source has no case for"
        return f"{owner}.{member}: no case here, or the CPU itself cannot run it"

    def yielded(self, api: str, by: str) -> str:
        """What it says of an API the opinfo source runs (``yields_to``)."""
        kind, _, member = classify(api)
        if kind == "tensor" and self.case_of(api) is not None:
            return f"{api} has an OpInfo entry: the {by} source runs it"
        return self.why_not(api, None)


SOURCE = MemberSource()


# the source's hooks as module functions (callers and tests use member.scenarios(...))
scenarios, why_not, owns, members = SOURCE.scenarios, SOURCE.why_not, SOURCE.owns, SOURCE.members
yielded = SOURCE.yielded

__all__ = ["NAME", "ORDER", "SOURCE", "scenarios", "why_not", "owns", "members", "yielded", "classify"]
