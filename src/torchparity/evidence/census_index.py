"""A shipped upstream-test census: used by ``check``/``evidence`` when no ``--tests DIR``.

``census_index.json.gz`` holds, per API, the ``TestsEvidence`` the census found in one
fetched test tree — Ascend/pytorch's ``test/``, which carries the upstream PyTorch tests it
ports next to its own ``test/npu/`` — with the tree's repository and commit. It is data
(file, class and test names, counts), not test code. ``--tests DIR`` recomputes the census
on the tree given; an API the index does not hold keeps the "not run" note.

Rebuild it from a checkout (the commit is recorded as given)::

    python -m torchparity.evidence.census_index --tests ASCEND_PYTORCH/test \\
        --source Ascend/pytorch --commit <sha> [API ...]

Without APIs it indexes every API with registered scenarios and the public functions
and classes of ``torch.autograd`` and its submodules.
"""

from __future__ import annotations

import argparse
import gzip
import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

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


def default_apis() -> List[str]:
    import inspect
    import pkgutil

    import torch.autograd

    from ..scenarios.registry import load_suites, registered_apis

    load_suites()
    names = list(registered_apis())
    mods = [torch.autograd] + [__import__(f"torch.autograd.{m.name}", fromlist=["_"])
                               for m in pkgutil.iter_modules(torch.autograd.__path__)
                               if not m.name.startswith("_")]
    for mod in mods:
        for name, obj in vars(mod).items():
            if name.startswith("_") or not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            if getattr(obj, "__module__", "") == mod.__name__:
                names.append(f"{mod.__name__}.{name}")
    return list(dict.fromkeys(names))


def build(tests_dir: str, source: str, commit: str, apis: Sequence[str], out: Path = INDEX_FILE) -> int:
    from .census import census

    result = census(tests_dir, list(apis))
    data = {"source": source, "commit": commit,
            "apis": {api: ev.model_dump(mode="json", by_alias=True, exclude={"tree"})
                     for api, ev in result.evidence.items() if ev.direct_sites or ev.indirect_sites}}
    with gzip.open(out, "wt", encoding="utf-8", compresslevel=9) as fh:
        json.dump(data, fh, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return len(data["apis"])


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description="Rebuild the shipped census index.")
    parser.add_argument("--tests", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--commit", required=True)
    parser.add_argument("--out", default=str(INDEX_FILE))
    parser.add_argument("apis", nargs="*")
    args = parser.parse_args(argv)
    apis = args.apis or default_apis()
    n = build(args.tests, args.source, args.commit, apis, Path(args.out))
    print(f"indexed {n} of {len(apis)} APIs -> {args.out}")


if __name__ == "__main__":
    main()
