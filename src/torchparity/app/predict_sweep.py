"""`torchparity predict --against DIR`: predictions confirmed or refuted by a sweep.

Each prediction (``app.predict.Prediction``) is held against the sweep row of the same
(api, variant, dtype): all / some / none samples supported on both sides.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Protocol, Sequence


class Prediction(Protocol):
    """What a check against the sweep reads of a prediction (``app.predict.Prediction``
    has these); a protocol here, so this module needs nothing from ``app.predict``."""

    api: str
    variant: str
    dtype: str
    status: str
    reason: str

SUPPORT_CLASS = {"pass": "all", "fail": "all", "partial": "some", "unsupported": "none"}
PREDICTED_CLASS = {"pass": "all", "partial": "some", "unsupported": "none"}


@dataclass
class Confirmation:
    compared: int
    agree: int
    disagreements: List[Dict[str, Any]]
    not_compared: int

    @property
    def rate(self) -> Optional[float]:
        return self.agree / self.compared if self.compared else None


def against_rows(predictions: Sequence[Prediction], rows: Iterable[Mapping[str, Any]]) -> Confirmation:
    """Each prediction against the sweep row of the same (api, variant, dtype)."""
    by_key = {(r["api"], r["variant"], r["dtype"]): r for r in rows}
    compared = agree = not_compared = 0
    dis: List[Dict[str, Any]] = []
    for p in predictions:
        r = by_key.get((p.api, p.variant, p.dtype))
        want = PREDICTED_CLASS.get(p.status)
        got = SUPPORT_CLASS.get(r["status"]) if r else None
        if want is None or got is None:
            not_compared += 1
            continue
        compared += 1
        if want == got:
            agree += 1
        else:
            dis.append({"api": p.api, "variant": p.variant, "dtype": p.dtype,
                        "predicted": p.status, "predicted_reason": p.reason,
                        "observed": r["status"], "observed_cause": r.get("cause"),
                        "observed_detail": r.get("detail", "")})
    return Confirmation(compared, agree, dis, not_compared)


def against_sweep(predictions: Sequence[Prediction], out_dir: str) -> Confirmation:
    from ..results.sweep_store import open_store

    store = open_store(out_dir, must_exist=True)
    try:
        return against_rows(predictions, store.rows())
    finally:
        store.close()
