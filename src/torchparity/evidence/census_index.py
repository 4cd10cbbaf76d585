"""A shipped upstream-test census: used by ``check``/``evidence`` when no ``--tests DIR``.

``census_index.json.gz`` holds, per API, the ``TestsEvidence`` the census found in one
fetched test tree — Ascend/pytorch's ``test/``, which carries the upstream PyTorch tests it
ports next to its own ``test/npu/`` — with the tree's repository and commit. It is data
(file, class and test names, counts), not test code. ``--tests DIR`` recomputes the census
on the tree given; an API the index does not hold keeps the "not run" note.

Rebuilt from a checkout by ``python -m torchparity.app.census_index`` (which picks the
APIs: this module knows nothing of scenarios).
"""

from __future__ import annotations

import gzip
import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, Optional, Sequence

from ..results.models import TestsEvidence

INDEX_FILE = Path(__file__).resolve().parent / "census_index.json.gz"
# the note an indexed census carries (reports say it in their language)
INDEX_NOTE = "census index shipped with torchparity; --tests DIR recomputes it"


@lru_cache(maxsize=None)
def load_index(path: Optional[str] = None) -> Dict[str, Any]:
    """{"source", "commit", "tree", "apis": {api: TestsEvidence dump}}; empty when absent."""
    p = Path(path) if path else INDEX_FILE
    if not p.exists():
        return {"apis": {}}
    with gzip.open(p, "rt", encoding="utf-8") as fh:
        return json.load(fh)


def lookup(api: str, qualified: Optional[str] = None) -> Optional[TestsEvidence]:
    """The indexed census of ``api`` (or of its qualified name), labelled with its source."""
    data = load_index()
    entry = data["apis"].get(api) or (data["apis"].get(qualified) if qualified else None)
    if entry is None:
        return None
    ev = TestsEvidence.model_validate(entry)
    ev.tree = f"{data['source']}@{data['commit'][:12]}:test/"
    ev.notes.append(INDEX_NOTE)
    return ev


def build(tests_dir: str, source: str, commit: str, apis: Sequence[str], out: Path = INDEX_FILE) -> int:
    from .census import census

    result = census(tests_dir, list(apis))
    data = {"source": source, "commit": commit,
            "apis": {api: ev.model_dump(mode="json", by_alias=True, exclude={"tree"})
                     for api, ev in result.evidence.items() if ev.direct_sites or ev.indirect_sites}}
    with gzip.open(out, "wt", encoding="utf-8", compresslevel=9) as fh:
        json.dump(data, fh, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return len(data["apis"])
