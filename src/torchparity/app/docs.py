"""`torchparity docs`: vendor support-docs entries for APIs, written from our verdicts.

The verdicts come from report bundles (``check --out``), one per environment: each
bundle's chip (from its device or profile) gets ✔/✘ from the API's verdict there, and
"限制与说明" from its refused cases (see ``deliver.matrix.vendor_docs``). Hardware results
win over emulated ones for the same chip; an entry resting on emulation says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional, Sequence

from ..api.resolve import resolve
from ..deliver.matrix import build, vendor_docs
from ..errors import InputError
from ..evidence.vendor_docs import load_vendor_docs
from ..results.store import load_report


def docs(apis: Sequence[str], bundles: Sequence[str], *, chips: Sequence[str] = (),
         vendor_docs_dir: Optional[str] = None, only_missing: bool = False) -> Dict[str, str]:
    """{pytorch_X-Y-Z: Markdown} with one entry per API, in the vendor's exact format.

    chips: keep only bundles measured on these chips (short names like A2 work).
    vendor_docs_dir + only_missing: leave out APIs the vendor docs already list.
    """
    if not apis:
        raise InputError("no API given")
    if not bundles:
        raise InputError("no bundle given: run `torchparity check API --out DIR` per chip and "
                         "pass the folders with --from")
    if only_missing and not vendor_docs_dir:
        raise InputError("--only-missing needs --vendor-docs")
    wanted = {id(resolve(a).obj): a for a in apis}
    m = build([(str(b), load_report(Path(b))) for b in bundles])
    if chips:
        keys = [c.lower() for c in chips]
        m.columns = [c for c in m.columns
                     if any(k in ch.id.lower() or k in ch.term.lower() for k in keys for ch in c.chips)]
        if not m.columns:
            raise InputError(f"no bundle was measured on {', '.join(chips)}")
    kept: List[str] = []
    for name in m.apis:
        if id(resolve(name).obj) in wanted:
            kept.append(name)
    missing = set(wanted.values()) - {wanted[id(resolve(n).obj)] for n in kept}
    if missing:
        raise InputError(f"no bundle has results for {', '.join(sorted(missing))}; run "
                         "`torchparity check` on them first")
    if only_missing:
        versions = {c.torch for c in m.columns}
        indexes = [load_vendor_docs(vendor_docs_dir, v) for v in versions]
        kept = [n for n in kept if not any(ix.lookup(n) is not None for ix in indexes)]
    m.apis = kept
    return vendor_docs(m)
