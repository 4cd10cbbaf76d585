"""Tensor and Storage members that are not ops, as a scenario source: "same answer on
the device".

``torch.Tensor.element_size``, ``.is_contiguous``, ``.storage_offset``,
``.untyped_storage``, ``.data_ptr``, autograd members (``backward``, ``register_hook``,
...), sparse and quantized accessors, ``torch.UntypedStorage.*``,
``torch.TypedStorage.*`` and the legacy typed storage classes (``torch.FloatStorage``);
``torch.nn.Module`` members, the container classes' members, the global module hooks and
``torch.nn.init`` (``member.nn_table``). One code block per member is both the scenario
and its snippet.
A Tensor member that has an OpInfo entry belongs to the ``opinfo`` source and gets
nothing here.
"""

from __future__ import annotations

import functools
from typing import Any, List, Optional, Tuple

import torch

from ...registry import Scenario
from ..base import ModuleSource, block_fn, block_snippet, probed, resolve_quiet, split_member
from . import nn_table as N
from . import table as T

NAME = "member"
ORDER = 50

LEGACY_CLASSES = ("DoubleStorage", "FloatStorage", "HalfStorage", "LongStorage", "IntStorage",
                  "ShortStorage", "CharStorage", "ByteStorage", "BoolStorage", "BFloat16Storage",
                  "ComplexDoubleStorage", "ComplexFloatStorage", "QUInt8Storage", "QInt8Storage",
                  "QInt32Storage", "QUInt4x2Storage", "QUInt2x4Storage")


def _compile(block: str, prelude: str = ""):
    # compiled under this file's name: the footprint recorder tells scenario code apart
    # from the API by file, as it does for hand suites
    return compile(T.PRELUDE + prelude + block, __file__, "exec")


def _make_fn(code, extra: Optional[dict] = None):
    return block_fn(code, extra)


def _snippet(prelude: str, block: str) -> str:
    return block_snippet(T.PRELUDE + prelude, block)


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
    if member in N.GLOBAL_HOOKS and obj is getattr(module_mod, member, None):
        return "globalhook", "torch.nn.modules.module", member
    if owner is torch.nn.init and member in N.INIT:
        return "init", "torch.nn.init", member
    return "none", "", member


@functools.lru_cache(maxsize=None)
def _cached(api: str) -> Tuple[Scenario, ...]:
    kind, owner, member = classify(api)
    if kind == "none" or member in T.EXCLUDED:
        return ()
    desc = dict(en=f"{owner}.{member or 'dtype'}: the same answer on the device as on the CPU",
                zh=f"{owner}.{member or 'dtype'}：设备上的结果与 CPU 相同",
                expect_en="the same answer as the CPU", expect_zh="与 CPU 结果一致")
    if kind == "tensor":
        if member not in T.TENSOR:
            return ()
        block, dtypes = T.TENSOR[member]
        fn = _make_fn(_compile(block))
        random_ = member in ("bernoulli_", "random_")
        return tuple(probed(member, api, NAME, fn, dtypes, code=_snippet("", block),
                            tags=("random",) if random_ else (), **desc))
    if kind == "storage":
        if member not in T.STORAGE:
            return ()
        maker, block = T.STORAGE_MAKERS[owner], T.STORAGE[member]
        fn = _make_fn(_compile(block, maker))
        return tuple(probed(member, api, NAME, fn, T.ALL, code=_snippet(maker, block), **desc))
    if kind in ("nnmodule", "container", "globalhook", "init"):
        return tuple(_nn_scenarios(api, kind, owner, member, desc))
    cls = getattr(torch, owner)
    quantized = cls.dtype in (torch.qint8, torch.quint8, torch.qint32, torch.quint4x2, torch.quint2x4)
    block = T.LEGACY_QUANTIZED if quantized else T.LEGACY
    fn = _make_fn(_compile(block), {"cls": cls})
    return tuple(probed(member or "storage", api, NAME, fn, ("float32",),
                        code=_snippet(f"cls = torch.{owner}\n", block), **desc))


def _nn_scenarios(api: str, kind: str, owner: str, member: str, desc: dict) -> List[Scenario]:
    if kind == "nnmodule":
        if member in N.EXCLUDED_NN or member not in N.MODULE:
            return []
        block, dtypes = N.MODULE[member], N.MODULE_DTYPES.get(member, N.F32)
    elif kind == "container":
        block, dtypes = N.CONTAINERS.get(f"{owner}.{member}", ""), N.F32
    elif kind == "globalhook":
        block, dtypes = N.GLOBAL_HOOKS[member], N.F32
    else:
        block, dtypes = N.INIT[member], N.FB
    if not block:
        return []
    fn = _make_fn(compile(N.NN_PRELUDE + block, __file__, "exec"))
    code = ("import torch\n\ndevice, dtype = {device}, {dtype}\n" + N.NN_PRELUDE + block + "\nprint(out)\n")
    random_ = kind == "init" and member in N.INIT_RANDOM
    return probed(member, api, NAME, fn, dtypes, code=code, tags=("random",) if random_ else (), **desc)


def scenarios(api: str, obj: Any) -> List[Scenario]:
    return list(_cached(api))


def owns(api: str) -> bool:
    return classify(api)[0] != "none"


def why_not(api: str, obj: Any) -> str:
    kind, owner, member = classify(api)
    if kind == "none":
        return "not a member of torch.Tensor, a storage class or torch.nn.Module, nor torch.nn.init"
    if member in T.EXCLUDED:
        return f"{owner}.{member}: {T.EXCLUDED[member]}"
    if kind == "nnmodule" and member in N.EXCLUDED_NN:
        return f"Module.{member}: {N.EXCLUDED_NN[member]}"
    if kind == "tensor" and member not in T.TENSOR:
        return f"Tensor.{member}: an op (OpInfo or footprint sources) or a member this source has no case for"
    return f"{owner}.{member}: no case here, or the CPU itself cannot run it"


def yielded(api: str, by: str) -> str:
    """What it says of an API the opinfo source runs (``yields_to``)."""
    kind, _, member = classify(api)
    if kind == "tensor" and member in T.TENSOR and member not in T.EXCLUDED:
        return f"{api} has an OpInfo entry: the {by} source runs it"
    return why_not(api, None)


def members() -> List[str]:
    """Every API name this source has a case for (for coverage counts and tests)."""
    out = [f"torch.Tensor.{m}" for m in T.TENSOR]
    out += [f"torch.{o}.{m}" for o in T.STORAGE_MAKERS for m in T.STORAGE]
    out += [f"torch.{c}" for c in LEGACY_CLASSES] + [f"torch.{c}.dtype" for c in LEGACY_CLASSES]
    out += [f"torch.nn.Module.{m}" for m in N.MODULE] + [f"torch.nn.{k}" for k in N.CONTAINERS]
    out += [f"torch.nn.modules.module.{m}" for m in N.GLOBAL_HOOKS] + [f"torch.nn.init.{m}" for m in N.INIT]
    return out


# an API OpInfo covers (by entry or by its footprint) runs there, not here
SOURCE = ModuleSource(NAME, ORDER, scenarios, why_not=why_not, owns=owns, members=members,
                      yields_to=("opinfo",), yielded=yielded)


__all__ = ["NAME", "ORDER", "scenarios", "why_not", "owns", "members", "classify"]
