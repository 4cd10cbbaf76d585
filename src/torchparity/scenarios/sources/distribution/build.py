"""Building ``torch.distributions`` objects from their own constraints (for the
``distribution`` source).

A distribution is described by a *spec*: its class and keyword arguments, where a tensor
argument is a float64 CPU tensor made once (seeded) from the class's ``arg_constraints``
through ``torch.distributions.biject_to`` (``transform_to`` where no bijection is
registered, e.g. ``positive_definite``): an unconstrained ``randn`` of the transform's
``inverse_shape`` mapped into the constraint. Discrete constraints (no transform exists)
get ``lower_bound + 1..4``. A spec is built on any device and dtype (:func:`build`) and
written out as a runnable expression (:func:`code`), so the snippet in a report is the
scenario itself.

Constraint-driven choices, all generic:
- required constructor arguments always; optional ones (``probs`` / ``logits``,
  ``covariance_matrix`` / ``precision_matrix`` / ``scale_tril``) one at a time, in the
  signature's order, until construction succeeds;
- a required tensor argument ``arg_constraints`` does not list (``temperature`` of the
  relaxed distributions) is one positive number;
- an ``arg_constraints`` that is a property (``Uniform``: ``high`` greater than ``low``;
  ``Wishart``: ``df`` greater than the dimension minus one) is evaluated on a stand-in that
  holds the arguments made so far.

Structural exceptions (arguments that are not tensors with a constraint), in
``STRUCTURAL``: ``Independent``, ``MixtureSameFamily`` and ``TransformedDistribution`` need
base distributions (a ``Normal`` / ``Categorical`` made the same way), ``LKJCholesky`` a
dimension.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import torch

from ..base import tensor_literal

BATCH = (2,)
K = 3  # size of every event dimension


@dataclass
class Spec:
    cls: type
    kwargs: Dict[str, Any] = field(default_factory=dict)

    @property
    def path(self) -> str:
        return f"{self.cls.__module__}.{self.cls.__qualname__}"


def build(spec: Any, device: str, dtype: torch.dtype) -> Any:
    if isinstance(spec, Spec):
        return spec.cls(**{k: build(v, device, dtype) for k, v in spec.kwargs.items()})
    if isinstance(spec, torch.Tensor):
        return spec.to(device=device, dtype=dtype)
    if isinstance(spec, list):
        return [build(v, device, dtype) for v in spec]
    return spec


def code(spec: Any) -> str:
    if isinstance(spec, Spec):
        args = ", ".join(f"{k}={code(v)}" for k, v in spec.kwargs.items())
        return f"{spec.path}({args})"
    if isinstance(spec, torch.Tensor):
        return f"{tensor_literal(spec)}.to(device=device, dtype=dtype)"
    if isinstance(spec, list):
        return "[" + ", ".join(code(v) for v in spec) + "]"
    return repr(spec)


def _transform_for(constraint):
    from torch.distributions import biject_to, transform_to

    try:
        return biject_to(constraint)
    except NotImplementedError:
        return transform_to(constraint)


def constrained(constraint, shape: Tuple[int, ...], gen: torch.Generator) -> torch.Tensor:
    """A float64 CPU tensor of ``shape`` inside ``constraint``."""
    if constraint.is_discrete:
        low = getattr(constraint, "lower_bound", 0)
        return (torch.randint(1, 5, shape, generator=gen) + low).to(torch.float64)
    t = _transform_for(constraint)
    u = torch.randn(tuple(t.inverse_shape(torch.Size(shape))), generator=gen, dtype=torch.float64)
    return t(u).detach()


class _Standin:
    """What a property ``arg_constraints`` sees: the arguments made so far."""

    def __init__(self, made: Dict[str, Any]):
        self.__dict__.update(made)
        self.event_shape = torch.Size((K, K))
        self.batch_shape = torch.Size(BATCH)

    def __getattr__(self, name):  # an argument not made yet
        return None


def _constraint(cls, name: str, made: Dict[str, Any]):
    from torch.distributions import constraints

    ac = inspect.getattr_static(cls, "arg_constraints", None)
    try:
        table = ac.fget(_Standin(made)) if isinstance(ac, property) else cls.arg_constraints
        return table.get(name)
    except Exception:  # depends on an argument not made yet: any real number
        return constraints.real


def _make(constraint, shape: Tuple[int, ...], gen: torch.Generator) -> torch.Tensor:
    from torch.distributions import constraints

    try:
        return constrained(constraint, shape, gen)
    except Exception:  # a bound that depends on an argument not made yet
        return constrained(constraints.real, shape, gen)


def _target(constraint, batch: Tuple[int, ...]) -> Tuple[int, ...]:
    return tuple(batch) + (K,) * constraint.event_dim


def _try(spec: Spec) -> bool:
    try:
        build(spec, "cpu", torch.float64)
        return True
    except Exception:
        return False


def _params(cls, gen: torch.Generator, batch: Tuple[int, ...]) -> Optional[Spec]:
    sig = inspect.signature(cls.__init__)
    names = [n for n, p in sig.parameters.items() if n not in ("self", "validate_args")
             and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    required = [n for n in names if sig.parameters[n].default is inspect.Parameter.empty]
    optional = [n for n in names if n not in required]
    made: Dict[str, Any] = {}
    for n in required:
        c = _constraint(cls, n, made)
        if c is None and "Tensor" in str(sig.parameters[n].annotation):
            from torch.distributions import constraints

            # an unlisted tensor argument (temperature): one positive number
            made[n] = _make(constraints.positive, (), gen)
            continue
        if c is None:
            return None
        made[n] = _make(c, _target(c, batch), gen)
    spec = Spec(cls, dict(made))
    if _try(spec):
        return spec
    for n in optional:
        c = _constraint(cls, n, made)
        if c is None:
            continue
        trial = Spec(cls, dict(made, **{n: _make(c, _target(c, batch), gen)}))
        if _try(trial):
            return trial
    return None


def _normal(gen, batch):
    from torch.distributions import Normal

    return _params(Normal, gen, batch)


def _structural(cls, gen: torch.Generator) -> Optional[Spec]:
    from torch.distributions import (
        Categorical,
        ExpTransform,
        Independent,
        LKJCholesky,
        MixtureSameFamily,
        TransformedDistribution,
    )

    if cls is Independent:
        return Spec(cls, {"base_distribution": _normal(gen, BATCH + (K,)),
                          "reinterpreted_batch_ndims": 1})
    if cls is MixtureSameFamily:
        return Spec(cls, {"mixture_distribution": _params(Categorical, gen, BATCH),
                          "component_distribution": _normal(gen, BATCH + (K,))})
    if cls is TransformedDistribution:
        return Spec(cls, {"base_distribution": _normal(gen, BATCH),
                          "transforms": [Spec(ExpTransform)]})
    if cls is LKJCholesky:
        made = {"dim": K}
        c = _constraint(cls, "concentration", made)
        made["concentration"] = constrained(c, _target(c, BATCH), gen)
        return Spec(cls, made)
    return None


STRUCTURAL = ("Independent", "MixtureSameFamily", "TransformedDistribution", "LKJCholesky")


@functools.lru_cache(maxsize=None)
def spec_for(cls: type, seed: int = 0) -> Optional[Spec]:
    """The seeded spec of a concrete distribution class (None: cannot be made)."""
    gen = torch.Generator().manual_seed(seed)
    if cls.__name__ in STRUCTURAL:
        return _structural(cls, gen)
    return _params(cls, gen, BATCH)


@functools.lru_cache(maxsize=None)
def zero_probability_spec(cls: type, seed: int = 0) -> Optional[Spec]:
    """A discrete distribution over categories given by ``logits`` with one category at
    probability zero (its logit ``-inf``: the boundary of the simplex, which the contract
    allows and ``log_prob`` handles apart — ``Multinomial`` writes 0 where a count of 0
    meets a ``-inf`` logit), or None when the class has no such parameter. Values drawn
    from it never hold that category, so ``log_prob`` takes that branch."""
    from torch.distributions import constraints

    table = inspect.getattr_static(cls, "arg_constraints", None)
    if not isinstance(table, dict) or "logits" not in table or "logits" not in inspect.signature(cls.__init__).parameters:
        return None
    support = inspect.getattr_static(cls, "support", None)
    if not isinstance(support, constraints.Constraint) or not support.is_discrete:
        return None
    if getattr(table["logits"], "event_dim", 0) < 1:
        return None
    base = spec_for(cls, seed)
    if base is None:
        return None
    gen = torch.Generator().manual_seed(seed + 1)
    logits = torch.randn(BATCH + (K,), generator=gen, dtype=torch.float64)
    logits[..., -1] = -float("inf")
    kwargs = {k: v for k, v in base.kwargs.items() if k not in ("probs", "logits")}
    spec = Spec(cls, dict(kwargs, logits=logits))
    if not _try(spec):
        return None
    try:
        d = build(spec, "cpu", torch.float64)
        if not bool(torch.isfinite(d.log_prob(d.sample())).all()):
            return None
    except Exception:
        return None
    return spec


def concrete_classes() -> List[type]:
    """Every distribution class ``torch.distributions`` exports, abstract bases excluded."""
    import torch.distributions as D
    from torch.distributions import Distribution
    from torch.distributions.exp_family import ExponentialFamily

    out = []
    for n in sorted(dir(D)):
        c = getattr(D, n)
        if inspect.isclass(c) and issubclass(c, Distribution) and c not in (Distribution, ExponentialFamily):
            out.append(c)
    return out


def is_abstract(cls: type) -> bool:
    from torch.distributions import Distribution
    from torch.distributions.exp_family import ExponentialFamily

    return cls in (Distribution, ExponentialFamily)


def norm(v: Any, depth: int = 0) -> Any:
    """An output made comparable: distributions, constraints and transforms become dicts
    of their type and tensors; sizes become tuples."""
    from torch.distributions import Distribution
    from torch.distributions.constraints import Constraint
    from torch.distributions.transforms import Transform

    if depth > 6:
        return type(v).__name__
    if isinstance(v, torch.Tensor) or v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, torch.Size):
        return tuple(v)
    if isinstance(v, (list, tuple)):
        return [norm(x, depth + 1) for x in v]
    if isinstance(v, dict):
        return {k: norm(x, depth + 1) for k, x in v.items()}
    if isinstance(v, Distribution):
        params = {}
        try:
            names = list(v.arg_constraints)
        except Exception:
            names = []
        for k in names:
            if k in v.__dict__:
                params[k] = v.__dict__[k]
        for k in ("base_dist", "_mixture_distribution", "_component_distribution"):
            if k in v.__dict__:
                params[k.lstrip("_")] = norm(v.__dict__[k], depth + 1)
        return {"type": type(v).__name__, "batch_shape": tuple(v.batch_shape),
                "event_shape": tuple(v.event_shape), "params": params}
    if isinstance(v, (Constraint, Transform)):
        out = {"type": type(v).__name__}
        for k, x in vars(v).items():
            if isinstance(x, (torch.Tensor, bool, int, float, Constraint, Transform, list, tuple)):
                if k.startswith("_cache"):
                    continue
                out[k.lstrip("_")] = norm(x, depth + 1)
        return out
    return type(v).__name__
