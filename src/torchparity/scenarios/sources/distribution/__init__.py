"""``torch.distributions`` as a scenario source: every distribution class and its members.

A distribution is made from its own ``arg_constraints`` (see ``distribution.build``), on the CPU
and on the device from the same float64 parameters cast to the dtype. Its members are
compared as op outputs: properties (``mean``, ``variance``, ``stddev``, ``mode``,
``probs``, ``logits``, ...), ``entropy()``, ``log_prob`` / ``cdf`` at a value the CPU
drew from the distribution, ``icdf`` at CPU-drawn quantiles, ``enumerate_support``,
``expand``, ``support`` (the constraint and its ``check`` of that value),
``arg_constraints``. ``sample`` / ``rsample`` draw from the device's own generator, so
they are compared by distribution, never by value: shape, dtype, device, and whether at
least 95% of 64 seeded draws per batch element lie in the support.

A member that raises ``NotImplementedError`` on the CPU (``Gamma.icdf``) expects the same
on the device (see ``base.probed``). Members of the abstract bases (``Distribution``,
``ExponentialFamily``) run on up to three concrete classes that inherit them.
Also covered: ``torch.distributions.transforms`` classes (forward, inverse,
``log_abs_det_jacobian``) and ``Transform``'s members, the ``constraints`` factories,
``kl_divergence`` (every registered same-class pair) and ``ConstraintRegistry``.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Dict, List, Optional, Tuple

import torch

from ...registry import Draws, Scenario
from ..base import ModuleSource, probed, resolve_quiet, split_member
from . import build as B
from .build import norm

NAME = "distribution"
ORDER = 40
DTYPES = ("float32", "float64")
SAMPLES = 64
IN_SUPPORT = 0.95

# members called with a value the CPU drew from the distribution
AT_VALUE = ("log_prob", "cdf")
# members whose output is random: compared by distribution
RANDOM = ("sample", "rsample", "sample_n")
# what a constructed distribution computes (its "construct" row judges these, not the
# parameters it was given back)
COMPUTES = ("log_prob", "cdf", "mean", "variance", "entropy")


# -- normalising outputs ------------------------------------------------------------------

def sample_summary(d, s: torch.Tensor, device: str) -> Dict[str, Any]:
    frac = d.support.check(s).float().mean().item()
    return {"shape": tuple(s.shape), "dtype": str(s.dtype),
            "on_device": s.device.type == torch.device(device).type,
            "in_support": frac >= IN_SUPPORT, "draws": Draws(s.detach())}


def computed(spec: B.Spec, device: str, dtype: torch.dtype) -> Dict[str, Any]:
    """The constructed distribution and what it computes on device values: ``log_prob``
    and ``cdf`` at a CPU-drawn value, ``mean``, ``variance``, ``entropy()``; a member the
    class does not implement is named (the same on both sides)."""
    out: Dict[str, Any] = {"object": norm(B.build(spec, device, dtype))}
    for m in COMPUTES:
        try:
            out[m] = call_member(spec, m, device, dtype)
        except NotImplementedError:
            out[m] = "NotImplementedError"
    return out


# -- one member on one distribution -------------------------------------------------------

def _cpu_value(spec: B.Spec, dtype: torch.dtype) -> torch.Tensor:
    return B.build(spec, "cpu", dtype).sample()


def call_member(spec: B.Spec, member: str, device: str, dtype: torch.dtype) -> Any:
    from torch.distributions import Distribution

    if member == "set_default_validate_args":
        before = Distribution._validate_args
        try:
            Distribution.set_default_validate_args(True)
            return Distribution._validate_args
        finally:
            Distribution.set_default_validate_args(before)
    if member in AT_VALUE or member == "support":
        value = _cpu_value(spec, dtype)
    d = B.build(spec, device, dtype)
    if member in AT_VALUE:
        return getattr(d, member)(value.to(device))
    if member == "support":
        return {"constraint": norm(d.support), "check": d.support.check(value.to(device))}
    if member == "icdf":
        q = torch.rand(tuple(d.batch_shape) + tuple(d.event_shape), dtype=dtype)
        return d.icdf(q.to(device))
    if member in RANDOM:
        s = d.sample_n(SAMPLES) if member == "sample_n" else getattr(d, member)((SAMPLES,))
        return sample_summary(d, s, device)
    if member == "expand":
        return norm(d.expand(torch.Size((4,) + tuple(d.batch_shape))))
    if member == "enumerate_support":
        return [d.enumerate_support(expand=True), d.enumerate_support(expand=False)]
    value = getattr(d, member)
    if callable(value) and not isinstance(value, torch.Tensor):
        value = value()
    return norm(value)


def _callable_without_args(cls: type, member: str) -> bool:
    attr = inspect.getattr_static(cls, member, None)
    fn = getattr(attr, "__func__", attr)
    if not inspect.isfunction(fn):
        return True  # a property, lazy property or plain attribute
    params = list(inspect.signature(fn).parameters.values())
    if params and not isinstance(attr, staticmethod):
        params = params[1:]
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params)


SPECIAL = set(AT_VALUE) | set(RANDOM) | {"icdf", "expand", "enumerate_support", "support",
                                          "set_default_validate_args"}


def member_supported(cls: type, member: str) -> bool:
    if member.startswith("_"):
        return False
    if not hasattr(cls, member):  # an attribute __init__ sets (Multinomial.total_count)
        spec = None if B.is_abstract(cls) else B.spec_for(cls)
        try:
            return spec is not None and member in vars(B.build(spec, "cpu", torch.float64))
        except Exception:
            return False
    return member in SPECIAL or _callable_without_args(cls, member)


def _code(spec: B.Spec, member: str) -> str:
    head = ("import torch\n\ndevice, dtype = {device}, {dtype}\ntorch.manual_seed(0)\n")
    make = f"d = {B.code(spec)}"
    cpu = "value = " + B.code(spec).replace("device=device", 'device="cpu"') + ".sample()\n"
    if member in AT_VALUE:
        body = f"{cpu}{make}\nprint(d.{member}(value.to(device)))\n"
    elif member == "support":
        body = f"{cpu}{make}\nprint(d.support, d.support.check(value.to(device)))\n"
    elif member == "icdf":
        body = (f"{make}\nq = torch.rand(d.batch_shape + d.event_shape, dtype=dtype)\n"
                "print(d.icdf(q.to(device)))\n")
    elif member in RANDOM:
        draw = f"d.sample_n({SAMPLES})" if member == "sample_n" else f"d.{member}(({SAMPLES},))"
        body = (f"{make}\ns = {draw}\n"
                "print(s.shape, s.dtype, s.device, d.support.check(s).float().mean())\n")
    elif member == "expand":
        body = f"{make}\nprint(d.expand((4,) + d.batch_shape))\n"
    elif member == "enumerate_support":
        body = f"{make}\nprint(d.enumerate_support(expand=True), d.enumerate_support(expand=False))\n"
    elif member == "construct":
        # as ``computed``: a member the class does not implement is named, not raised
        body = (f"{cpu}{make}\n\ndef member(name):\n    try:\n        f = getattr(d, name)\n"
                "        return f(value.to(device)) if name in (\"log_prob\", \"cdf\") else (f() if callable(f) else f)\n"
                "    except NotImplementedError:\n        return \"NotImplementedError\"\n\n"
                "print(d, {m: member(m) for m in " + repr(COMPUTES) + "})\n")
    else:
        body = f"{make}\nvalue = d.{member}\nprint(value() if callable(value) else value)\n"
    return head + body


# further seeds tried for parameters at which a member computes something finite
FINITE_SEEDS = 8


def _any_finite(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return bool(value.is_floating_point() and torch.isfinite(value).any())
    if isinstance(value, dict):
        return any(_any_finite(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_any_finite(v) for v in value)
    return False


def _only_edge(value: Any) -> bool:
    """Every float entry of ``value`` is infinite or NaN (and there is one)."""
    if isinstance(value, torch.Tensor):
        return bool(value.is_floating_point() and value.numel() and not torch.isfinite(value).any())
    leaves = list(value.values()) if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else []
    return bool(leaves) and any(_only_edge(v) for v in leaves) and not any(_any_finite(v) for v in leaves)


def spec_computing(cls: type, member: str) -> Optional[B.Spec]:
    """The seeded spec, or where ``member`` computes nothing but infinities or NaNs there
    (``Pareto.variance`` is infinite for ``alpha <= 2``, which most draws give), the first
    of ``FINITE_SEEDS`` further seeds at which it computes a finite value: a result that is
    only its edge branch compares no arithmetic of the member's (and a device that got it
    wrong in its finite branch would pass)."""
    spec = B.spec_for(cls)
    if spec is None or member in RANDOM or member in ("construct", "expand", "support"):
        return spec
    try:
        if not _only_edge(call_member(spec, member, "cpu", torch.float64)):
            return spec
    except Exception:
        return spec
    for seed in range(1, FINITE_SEEDS + 1):
        other = B.spec_for(cls, seed)
        try:
            if other is not None and _any_finite(call_member(other, member, "cpu", torch.float64)):
                return other
        except Exception:
            continue
    return spec


def _member_scenarios(api: str, cls: type, member: str, prefix: str = "") -> List[Scenario]:
    spec = spec_computing(cls, member)
    if spec is None:
        return []
    out = _spec_scenarios(api, cls, member, spec, prefix)
    edge = B.zero_probability_spec(cls) if member == "log_prob" else None
    if edge is not None:  # the simplex's boundary: a category of probability zero
        out += _spec_scenarios(api, cls, member, edge, prefix, suffix="[zero-probability]",
                               note=" with one category of probability zero (logit -inf)",
                               note_zh="，其中一个类别概率为零（logit 为 -inf）")
    return out


def _spec_scenarios(api: str, cls: type, member: str, spec: B.Spec, prefix: str = "",
                    suffix: str = "", note: str = "", note_zh: str = "") -> List[Scenario]:
    if member == "construct":
        def fn(device, dtype, _spec=spec):
            return computed(_spec, device, dtype)
    else:
        def fn(device, dtype, _spec=spec, _m=member):
            return call_member(_spec, _m, device, dtype)
    what = f"{cls.__name__}.{member}" if member != "construct" else cls.__name__
    random_ = member in RANDOM
    en = (f"{what}: {'draws compared by shape, dtype, device and support' if random_ else 'same result as on the CPU'}"
          f" (parameters from arg_constraints through biject_to{note})")
    zh = (f"{what}：{'按形状、dtype、设备与支撑集比较采样' if random_ else '结果与 CPU 相同'}"
          f"（参数由 arg_constraints 经 biject_to 构造{note_zh}）")
    return probed(prefix + member + suffix, api, NAME, fn, DTYPES, en=en, zh=zh,
                  expect_en="the same answer as the CPU", expect_zh="与 CPU 结果一致",
                  code=_code(spec, member), tags=("random",) if random_ else ())


def _representatives(base: type, member: str, limit: int = 3) -> List[type]:
    subs = [c for c in B.concrete_classes() if issubclass(c, base)]
    own = inspect.getattr_static(base, member, None)
    inherit = [c for c in subs if inspect.getattr_static(c, member, None) is own]
    picked = inherit or subs
    return [c for c in picked if B.spec_for(c) is not None][:limit]


def _distribution_scenarios(api: str, cls: type, member: Optional[str]) -> List[Scenario]:
    if member is None:
        if B.is_abstract(cls):
            return []
        return _member_scenarios(api, cls, "construct") + _member_scenarios(api, cls, "sample")
    if not member_supported(cls, member):
        return []
    if B.is_abstract(cls):
        out: List[Scenario] = []
        for rep in _representatives(cls, member):
            out.extend(_member_scenarios(api, rep, member, prefix=f"{rep.__name__}."))
        return out
    return _member_scenarios(api, cls, member)


# -- API name -> what it is ---------------------------------------------------------------

def _is_sub(obj: Any, base_path: str) -> bool:
    import importlib

    mod, _, name = base_path.rpartition(".")
    base = getattr(importlib.import_module(mod), name)
    return inspect.isclass(obj) and issubclass(obj, base)


def classify(api: str) -> Tuple[str, Any, Optional[str]]:
    """(kind, class or object, member): kind is distribution | transform | constraint |
    kl | registry | none."""
    if not api.startswith("torch.distributions"):
        return "none", None, None
    obj = resolve_quiet(api)
    owner_name, member = split_member(api)
    owner = resolve_quiet(owner_name)
    for kind, base in (("distribution", "torch.distributions.Distribution"),
                       ("transform", "torch.distributions.transforms.Transform"),
                       ("registry", "torch.distributions.constraint_registry.ConstraintRegistry")):
        if _is_sub(obj, base):
            return kind, obj, None
        if _is_sub(owner, base):
            return kind, owner, member
    from torch.distributions import constraints, kl

    if obj is kl.kl_divergence:
        return "kl", obj, None
    if obj is not None and member in constraints.__all__ and getattr(constraints, member) is obj:
        return "constraint", obj, member
    return "none", None, None


@functools.lru_cache(maxsize=None)
def _cached(api: str) -> Tuple[Scenario, ...]:
    from . import extra as X

    kind, target, member = classify(api)
    if kind == "distribution":
        return tuple(_distribution_scenarios(api, target, member))
    if kind == "transform":
        return tuple(X.transform_scenarios(api, target, member))
    if kind == "constraint":
        return tuple(X.constraint_scenarios(api, member))
    if kind == "kl":
        return tuple(X.kl_scenarios(api))
    if kind == "registry":
        return tuple(X.registry_scenarios(api, member))
    return ()


def scenarios(api: str, obj: Any) -> List[Scenario]:
    return list(_cached(api))


def owns(api: str) -> bool:
    return api.startswith("torch.distributions.") and classify(api)[0] != "none"


def why_not(api: str, obj: Any) -> str:
    kind, target, member = classify(api)
    if kind == "none":
        return "not a torch.distributions class, member, transform or constraint"
    if kind == "distribution" and member is None and B.is_abstract(target):
        return f"{target.__name__} is abstract: its members run on concrete subclasses"
    if kind == "distribution" and target is not None and B.spec_for(target) is None:
        return f"{target.__name__}: no parameters can be made from its arg_constraints"
    return f"{api}: a member that needs arguments this source does not make, or no CPU dtype runs it"


SOURCE = ModuleSource(NAME, ORDER, scenarios, why_not=why_not, owns=owns)
