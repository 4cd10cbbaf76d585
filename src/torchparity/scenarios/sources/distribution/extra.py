"""Transforms, constraints, ``kl_divergence`` and ``ConstraintRegistry`` for the
``distribution`` source.

A transform's input is made from its own ``domain`` through ``biject_to`` (as the
distribution parameters are); only the constructor arguments of the transforms that take
some are listed (``_transform_args``: what a transform is built from is not described by
any constraint). Constraint factories are checked on values made the same way.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

from ...registry import Scenario
from ..base import probed, reproducer
from . import build as B
from .build import norm

NAME = "distribution"
DTYPES = ("float32", "float64")


def _affine():
    from torch.distributions import transforms as T

    return T.AffineTransform(torch.tensor(0.5, dtype=torch.float64), torch.tensor(2.0, dtype=torch.float64))


# name -> (constructor(device, dtype) -> transform, input shape): the transforms whose
# constructor takes arguments; the others are
# built with no argument
def _transform_args(name: str) -> Optional[Tuple[Callable, Tuple[int, ...]]]:
    from torch.distributions import transforms as T

    def lift(t, device, dtype):  # tensor arguments built on the CPU, then moved
        for k in ("loc", "scale", "exponent"):
            v = getattr(t, k, None)
            if isinstance(v, torch.Tensor):
                setattr(t, k, v.to(device=device, dtype=dtype))
        return t

    table: Dict[str, Tuple[Callable, Tuple[int, ...]]] = {
        "AffineTransform": (lambda dev, dt: lift(_affine(), dev, dt), B.BATCH + (B.K,)),
        "PowerTransform": (lambda dev, dt: lift(T.PowerTransform(torch.tensor(2.0, dtype=torch.float64)), dev, dt),
                           B.BATCH + (B.K,)),
        "ReshapeTransform": (lambda dev, dt: T.ReshapeTransform((6,), (2, 3)), B.BATCH + (6,)),
        "CatTransform": (lambda dev, dt: T.CatTransform([T.ExpTransform(), lift(_affine(), dev, dt)], -1, [2, 2]),
                         B.BATCH + (4,)),
        "StackTransform": (lambda dev, dt: T.StackTransform([T.ExpTransform(), lift(_affine(), dev, dt)], -1),
                           B.BATCH + (2,)),
        "CorrCholeskyTransform": (lambda dev, dt: T.CorrCholeskyTransform(), B.BATCH + (3,)),
        "IndependentTransform": (lambda dev, dt: T.IndependentTransform(T.ExpTransform(), 1), B.BATCH + (B.K,)),
        "ComposeTransform": (lambda dev, dt: T.ComposeTransform([T.ExpTransform(), lift(_affine(), dev, dt)]),
                             B.BATCH + (B.K,)),
    }
    if name in table:
        return table[name]
    cls = getattr(T, name, None)
    if cls is None or not inspect.isclass(cls):
        return None
    try:
        t = cls()
    except Exception:
        return None
    return (lambda dev, dt, _c=cls: _c()), B.BATCH + (B.K,) * t.domain.event_dim


def _input(make, shape, dtype: torch.dtype) -> torch.Tensor:
    t = make("cpu", torch.float64)
    gen = torch.Generator().manual_seed(0)
    return B.constrained(t.domain, shape, gen).to(dtype)


def _transform_member(make, shape, member: str, device: str, dtype: torch.dtype) -> Any:
    x = _input(make, shape, dtype)
    t = make(device, dtype)
    xd = x.to(device)
    if member == "call":
        y = t(xd)
        return {"y": y, "inverse": t.inv(y)}
    if member == "inv":
        return norm(t.inv)
    if member == "sign":
        s = t.sign
        return s
    if member == "log_abs_det_jacobian":
        return t.log_abs_det_jacobian(xd, t(xd))
    if member == "forward_shape":
        return tuple(t.forward_shape(torch.Size(shape)))
    if member == "inverse_shape":
        return tuple(t.inverse_shape(t.forward_shape(torch.Size(shape))))
    raise KeyError(member)


MEMBERS = ("inv", "sign", "log_abs_det_jacobian", "forward_shape", "inverse_shape")
BASE_REPRESENTATIVES = ("ExpTransform", "AffineTransform", "StickBreakingTransform")


def _one_transform(api: str, name: str, members, prefix: str = "") -> List[Scenario]:
    found = _transform_args(name)
    if found is None:
        return []
    make, shape = found
    out: List[Scenario] = []
    for member in members:
        def fn(device, dtype, _m=member):
            return _transform_member(make, shape, _m, device, dtype)
        code = reproducer(NAME, api, prefix + member)
        out.extend(probed(prefix + member, api, NAME, fn, DTYPES,
                          en=f"{name}.{member}: same result as on the CPU",
                          zh=f"{name}.{member}：结果与 CPU 相同",
                          expect_en="the same answer as the CPU", expect_zh="与 CPU 结果一致",
                          code=code))
    return out


def transform_scenarios(api: str, cls: type, member: Optional[str]) -> List[Scenario]:
    from torch.distributions.transforms import Transform

    if member is None:
        return _one_transform(api, cls.__name__, ("call", "log_abs_det_jacobian"))
    if member not in MEMBERS:
        return []
    if cls is Transform:
        out: List[Scenario] = []
        for rep in BASE_REPRESENTATIVES:
            out.extend(_one_transform(api, rep, (member,), prefix=f"{rep}."))
        return out
    return _one_transform(api, cls.__name__, (member,))


# -- constraints --------------------------------------------------------------------------

def _constraint_case(name: str):
    """(make constraint on device, CPU input) for a constraints factory."""
    from torch.distributions import constraints as C

    gen = torch.Generator().manual_seed(0)
    x = torch.randn(B.BATCH + (4,), generator=gen, dtype=torch.float64)
    bound = torch.randn(B.BATCH + (4,), generator=gen, dtype=torch.float64)
    cases = {
        "greater_than": (lambda dev, dt: C.greater_than(bound.to(dev, dt)), x),
        "greater_than_eq": (lambda dev, dt: C.greater_than_eq(bound.to(dev, dt)), x),
        "less_than": (lambda dev, dt: C.less_than(bound.to(dev, dt)), x),
        "interval": (lambda dev, dt: C.interval(bound.to(dev, dt), bound.to(dev, dt) + 1), x),
        "half_open_interval": (lambda dev, dt: C.half_open_interval(bound.to(dev, dt), bound.to(dev, dt) + 1), x),
        "multinomial": (lambda dev, dt: C.multinomial(3), torch.tensor([[1., 2., 0., 0.], [1., 1., 1., 1.]])),
        "cat": (lambda dev, dt: C.cat([C.real, C.positive], -1, [2, 2]), x),
        "stack": (lambda dev, dt: C.stack([C.real, C.positive, C.real, C.positive], -1), x),
        "independent": (lambda dev, dt: C.independent(C.positive, 1), x),
    }
    return cases.get(name)


def constraint_scenarios(api: str, name: str) -> List[Scenario]:
    case = _constraint_case(name)
    if case is None:
        return []
    make, x = case

    def fn(device, dtype):
        return make(device, dtype).check(x.to(device=device, dtype=dtype))
    return probed("check", api, NAME, fn, DTYPES,
                  en=f"constraints.{name}(...).check on the device: same mask as on the CPU",
                  zh=f"constraints.{name}(...).check：掩码与 CPU 相同",
                  expect_en="the same answer as the CPU", expect_zh="与 CPU 结果一致",
                  code=reproducer(NAME, api, "check"))


# -- kl_divergence, ConstraintRegistry ----------------------------------------------------

def kl_scenarios(api: str) -> List[Scenario]:
    from torch.distributions import kl

    pairs = sorted({p for (p, q) in kl._KL_REGISTRY if p is q and not B.is_abstract(p)},
                   key=lambda c: c.__name__)
    out: List[Scenario] = []
    for cls in pairs:
        p, q = B.spec_for(cls, 0), B.spec_for(cls, 1)
        if p is None or q is None:
            continue

        def fn(device, dtype, _p=p, _q=q):
            return kl.kl_divergence(B.build(_p, device, dtype), B.build(_q, device, dtype))
        code = (f"import torch\nfrom torch.distributions import kl\ndevice, dtype = {{device}}, {{dtype}}\n"
                f"p = {B.code(p)}\nq = {B.code(q)}\nprint(kl.kl_divergence(p, q))\n")
        out.extend(probed(cls.__name__, api, NAME, fn, DTYPES,
                          en=f"kl_divergence({cls.__name__}, {cls.__name__}): same as on the CPU",
                          zh=f"kl_divergence({cls.__name__}, {cls.__name__})：结果与 CPU 相同",
                          expect_en="the same answer as the CPU", expect_zh="与 CPU 结果一致",
                          code=code))
    return out


def registry_scenarios(api: str, member: Optional[str]) -> List[Scenario]:
    if member not in (None, "register"):
        return []

    def fn(device, dtype):
        from torch.distributions import constraints as C
        from torch.distributions import transforms as T
        from torch.distributions.constraint_registry import ConstraintRegistry

        reg = ConstraintRegistry()
        reg.register(C.positive, lambda c: T.ExpTransform())
        x = torch.linspace(-2, 2, 5, dtype=dtype).to(device)
        return reg(C.positive)(x)
    return probed("register", api, NAME, fn, DTYPES,
                  en="ConstraintRegistry.register: the registered transform maps device tensors as on the CPU",
                  zh="ConstraintRegistry.register：注册的变换在设备上与 CPU 结果一致",
                  expect_en="the same answer as the CPU", expect_zh="与 CPU 结果一致")
