"""`torchparity matrix`: merge report bundles of several environments into one matrix."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from ..deliver.matrix import Matrix, build, write_all
from ..errors import InputError
from ..results.store import load_report

FORMATS = ("md", "csv", "html", "vendor")


def matrix(bundles: Sequence[str], out: Optional[str] = None,
           formats: Sequence[str] = FORMATS) -> Tuple[Matrix, List[Path]]:
    """Load the bundles (folders or report.json files), merge them, write ``formats``."""
    if not bundles:
        raise InputError("no bundle given: name report.json files or the folders holding them")
    bad = [f for f in formats if f not in FORMATS]
    if bad:
        raise InputError(f"unknown format(s) {', '.join(bad)}; use: {', '.join(FORMATS)}")
    loaded = [(str(b), load_report(Path(b))) for b in bundles]
    m = build(loaded)
    written: List[Path] = []
    if out is not None:
        folder = Path(out)
        if folder.exists() and not folder.is_dir():
            raise InputError(f"--out {out}: exists and is not a folder")
        written = write_all(m, folder, formats)
    return m, written
