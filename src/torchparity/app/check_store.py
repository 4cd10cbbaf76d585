"""What ``check --out`` has run, kept case by case in ``OUT/results.sqlite``.

The same store as ``sweep`` and the vendor-list run (``results.sweep_store``), keyed
(api, variant = scenario id, sample_set = source, dtype); each row also carries the case's
whole result and footprint (``payload``), so that a check killed with ``kill -9`` loses at
most the cases in flight, and the same command run again resumes: the recorded cases are
read back as they were judged, only the others run, and the bundle is written from both.

A store's ``meta`` says which check wrote it. A check that ended (its bundle written) is
marked complete: the next check on that folder starts afresh. An unfinished one resumes
only for the same APIs, devices and options; another check there is refused (one line)
unless ``--force`` starts it over.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..errors import InputError
from ..results.models import FootprintEntry, ScenarioResult
from ..results.sweep_store import SweepStore, open_store
from ..version import __version__

COMMAND = "check"
Key = Tuple[str, str, str, str]


def case_key(api: str, scenario_id: str, source: str, dtype: str, device_index: int,
             spec: str) -> Key:
    """A case's key; the second and later devices of a several-device check keep their
    rows apart by the device spec after the source."""
    return (api, scenario_id, source if device_index == 0 else f"{source}@{spec}", dtype)


class CheckRecord:
    """The store of one ``check --out`` run: ``recorded(key)`` for a case run before,
    ``add`` after each case, ``finish`` once the bundle is written."""

    def __init__(self, store: SweepStore, resumed: Dict[Key, Dict[str, Any]]):
        self.store = store
        self._resumed = resumed

    @classmethod
    def open(cls, out: Path, identity: Dict[str, Any], force: bool = False) -> "CheckRecord":
        store = open_store(out)
        try:
            resumed = _start(store, out, identity, force)
        except BaseException:
            store.close()
            raise
        return cls(store, resumed)

    @property
    def resumed_count(self) -> int:
        return len(self._resumed)

    def recorded(self, key: Key) -> Optional[Tuple[ScenarioResult, List[FootprintEntry]]]:
        payload = (self._resumed.get(key) or {}).get("payload")
        if not payload:
            return None
        try:
            result = ScenarioResult.model_validate(payload["result"])
            entries = [FootprintEntry.model_validate(e) for e in payload.get("entries", [])]
        except (KeyError, TypeError, ValueError):  # a row this version cannot read: run it again
            return None
        return result, entries

    def add(self, key: Key, row: Dict[str, Any], result: ScenarioResult,
            entries: Sequence[FootprintEntry]) -> None:
        payload = {"result": result.model_dump(mode="json"),
                   "entries": [e.model_dump(mode="json") for e in entries]}
        self.store.add(dict(row, api=key[0], variant=key[1], sample_set=key[2], dtype=key[3],
                            payload=payload))

    def finish(self) -> None:
        self.store.set_meta({"complete": True})

    def close(self) -> None:
        self.store.close()


def _start(store: SweepStore, out: Path, identity: Dict[str, Any],
           force: bool) -> Dict[Key, Dict[str, Any]]:
    meta = store.meta()
    wanted = dict(identity, tool_version=__version__)
    if meta and meta.get("command") != COMMAND:
        raise InputError(f"--out {out}: holds the results of a sweep or vendor-list run "
                         "(results.sqlite); use another --out for check")
    if meta and not meta.get("complete"):
        same = all(meta.get(k) == v for k, v in wanted.items())
        if same:
            return {tuple(r[k] for k in ("api", "variant", "sample_set", "dtype")): r
                    for r in store.rows()}
        if not force:
            apis = ", ".join(meta.get("apis") or [])[:200]
            raise InputError(f"--out {out}: holds an unfinished check ({apis} on "
                             f"{', '.join(meta.get('devices') or [])}); run that command again to "
                             "resume it, or add --force to start over")
    if meta:
        store.clear()
    store.set_meta(dict(wanted, command=COMMAND, complete=False))
    return {}
