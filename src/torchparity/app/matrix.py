"""`torchparity matrix`: merge report bundles of several environments into one matrix."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from ..deliver.matrix import Matrix, build, write_all
from ..errors import InputError
from ..results.store import load_report
from ..results.sweep_store import FILENAME, is_url

FORMATS = ("md", "csv", "html", "vendor")


def matrix(bundles: Sequence[str], out: Optional[str] = None,
           formats: Sequence[str] = FORMATS) -> Tuple[Matrix, List[Path]]:
    """Load the bundles (folders or report.json files), merge them, write ``formats``."""
    if not bundles:
        raise InputError("no bundle given: name report.json files or the folders holding them")
    bad = [f for f in formats if f not in FORMATS]
    if bad:
        raise InputError(f"unknown format(s) {', '.join(bad)}; use: {', '.join(FORMATS)}")
    for b in bundles:
        _not_a_sweep_store(str(b))
    loaded = [(str(b), load_report(Path(b))) for b in bundles]
    m = build(loaded)
    written: List[Path] = []
    if out is not None:
        folder = Path(out)
        if folder.exists() and not folder.is_dir():
            raise InputError(f"--out {out}: exists and is not a folder")
        written = write_all(m, folder, formats)
    return m, written


def _not_a_sweep_store(bundle: str) -> None:
    """A sweep's store (a URL, results.sqlite, or a folder holding only that) is read by
    ``sweep-matrix``; say so in one line instead of "cannot read report"."""
    path = Path(bundle)
    if is_url(bundle) or path.name == FILENAME or (
            path.is_dir() and (path / FILENAME).is_file() and not (path / "report.json").exists()):
        shown = bundle
        if is_url(bundle):
            from sqlalchemy.engine import make_url

            try:
                shown = make_url(bundle).render_as_string(hide_password=True)
            except Exception:
                shown = bundle.split("://", 1)[0] + "://..."
        raise InputError(f"{shown}: a sweep store, not a report bundle; its matrix is "
                         f"`torchparity sweep-matrix {shown} --out DIR`")
