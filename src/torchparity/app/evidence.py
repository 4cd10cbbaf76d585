"""Evidence for a list of APIs: upstream test census, official docs, vendor docs.

The CLI stays thin: ``torchparity evidence`` calls :func:`evidence` and prints/dumps the
models; ``torchparity docs`` calls :func:`docs_block` and prints the Markdown.
Bad input raises :class:`torchparity.errors.InputError` (one line), an unknown API name
:class:`torchparity.errors.UnknownApiError` (one line, with close matches).
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Union

from ..api.resolve import resolve
from ..errors import InputError
from ..evidence import census_index
from ..evidence import official_docs as od
from ..evidence.census import census
from ..evidence.rules import decide
from ..evidence.vendor_docs import VendorDocsIndex, load_vendor_docs, resolve_chips
from ..evidence.writer import write_vendor_entry
from ..results.models import DocsEvidence, Evidence, TestsEvidence

PathLike = Union[str, Path]

# section of Evidence -> the CLI option that turns it on (Evidence.not_run)
OPTIONS = {"tests": "--tests DIR", "docs.official": "--docs DIR",
           "docs.vendor": "--vendor-docs DIR"}


def installed_torch_version() -> str:
    import torch

    return torch.__version__.split("+", 1)[0]


def _check_dir(path: Optional[PathLike], what: str) -> Optional[Path]:
    if path is None:
        return None
    p = Path(path)
    if not p.is_dir():
        raise InputError(f"{what} not found: {p}")
    return p


def evidence(apis: Sequence[str], tests_dir: Optional[PathLike] = None,
             docs_dir: Optional[PathLike] = None, vendor_docs_dir: Optional[PathLike] = None,
             torch_version: Optional[str] = None, chips: Optional[Sequence[str]] = None,
             device_involvement: Optional[Mapping[str, Optional[str]]] = None,
             harness: Optional[Mapping[str, bool]] = None, backend: str = "npu", depth: int = 2,
             processes: Optional[int] = None, use_index: bool = True,
             tests_evidence: Optional[Mapping[str, TestsEvidence]] = None) -> Dict[str, Evidence]:
    """Gather the evidence sections for each API; returns ``{api: Evidence}``.

    apis: dotted names as the user wrote them (aliases fine: torch.autograd.gradcheck).
    tests_dir: a test tree (PyTorch's test/ or a backend's port, e.g. Ascend/pytorch
        test/); every *.py under it is scanned once for all APIs. Without it the shipped
        census index (evidence/census_index.py: Ascend/pytorch's test tree at a recorded
        commit, labelled as such) answers for the APIs it holds (``use_index``); for the
        others the tests section is left out and ``not_run["tests"]`` names the option.
    docs_dir: PyTorch docs sources (a pytorch checkout, its docs/ or docs/source). Without
        it the official status is "unknown" with the URL pattern, and a note says so.
    vendor_docs_dir: vendor support docs - a folder of pytorch_X-Y-Z/ folders (Ascend
        docs/zh/api/native_api) or one such folder.
    torch_version: "2.12.0" (or "2.12"); picks the vendor docs folder and the docs URL.
        Default: the installed torch.
    chips: keep only these chips in the vendor section (full names or unique parts:
        "A2", "950DT"); default all the entry lists.
    device_involvement: {api: "none" | "indirect" | "direct"} from the analysis; feeds
        the recommendation (the seeds' "add tests / priority" columns).
    harness: {api: True} for APIs that wrap user code (gradcheck, emit_itt): the
        recommendation then needs no new device tests (category 1.2①).
    backend: the PrivateUse1 device type ("npu"): decides whether device-generic classes
        and tests reach the device.
    depth: levels of torch wrappers followed by the census (0 = direct sites only).
    tests_evidence: the census of ``tests_dir`` already made for these APIs (``check``
        runs it once to replay the upstream tests); the APIs it lacks are scanned here.
    """
    if not apis:
        raise InputError("no API given")
    qualified = {api: resolve(api).qualified_name for api in apis}  # UnknownApiError early
    tests_root = _check_dir(tests_dir, "test folder")
    version = torch_version or installed_torch_version()
    official_index = od.load_official_docs(docs_dir) if docs_dir is not None else None
    vendor_index = (load_vendor_docs(vendor_docs_dir, version)
                    if vendor_docs_dir is not None else None)
    wanted_chips = (resolve_chips(chips, vendor_index.chips)
                    if chips and vendor_index is not None else None)
    tests: Dict[str, TestsEvidence] = dict(tests_evidence or {})
    missing = [a for a in apis if a not in tests]
    if tests_root is not None and missing:
        tests.update(census(tests_root, missing, backend=backend, depth=depth,
                            processes=processes).evidence)
    involvement = dict(device_involvement or {})

    out: Dict[str, Evidence] = {}
    for api in apis:
        ev = Evidence()
        indexed = None
        if tests_root is not None:
            ev.tests = tests[api]
        elif use_index and (indexed := census_index.lookup(api, qualified[api])) is not None:
            ev.tests = indexed
        else:
            ev.not_run["tests"] = OPTIONS["tests"]
        vendor = None
        if vendor_index is not None:
            vendor = vendor_index.docs_evidence(api)
            if wanted_chips is not None and vendor.present:
                vendor.chips = {c: ok for c, ok in vendor.chips.items() if c in wanted_chips}
        else:
            ev.not_run["docs.vendor"] = OPTIONS["docs.vendor"]
        if official_index is not None:
            official = official_index.evidence(api, version)
        else:
            hint = f"the vendor docs link to {vendor.url}" if vendor and vendor.url else None
            official = od.unknown(api, version, hint)
            ev.not_run["docs.official"] = OPTIONS["docs.official"]
        ev.docs = DocsEvidence(official=official, vendor=vendor)
        inv = involvement.get(api)
        wraps = bool((harness or {}).get(api))
        if tests_root is not None or indexed is not None or inv == "none" or wraps:
            ev.recommendation = decide(ev.tests, inv, wraps)
        out[api] = ev
    return out


_TRUE = {"supported", "partial", "pass", "yes", "true", "✔", "1"}
_FALSE = {"unsupported", "broken", "fail", "no", "false", "✘", "0"}


def _as_bool(value: object, api: str, chip: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise InputError(f"verdict for {api} on {chip} is '{value}': expected supported/unsupported")


def docs_block(apis: Sequence[str], chips: Optional[Sequence[str]],
               verdicts: Mapping[str, Mapping[str, object]],
               limits: Optional[Mapping[str, Union[str, Sequence[str], None]]] = None,
               torch_version: Optional[str] = None, docs_dir: Optional[PathLike] = None,
               vendor_docs_dir: Optional[PathLike] = None,
               only_missing: bool = False) -> str:
    """Vendor docs blocks (Markdown) for ``apis``, from verdicts given by the caller.

    chips: the chips to list, in order (full vendor names, or unique parts like "A2"
        when vendor_docs_dir is given); default: the chips of ``verdicts``.
    verdicts: {api: {chip: True/False or "supported"/"unsupported"}}; a listed chip
        without a verdict is an InputError - nothing is guessed.
    limits: {api: text or list of texts} for "限制与说明".
    docs_dir / torch_version: the official link (checked page when docs_dir is given,
        else the URL pattern).
    vendor_docs_dir + only_missing: skip APIs that already have an entry.
    """
    version = torch_version or installed_torch_version()
    vendor_index: Optional[VendorDocsIndex] = (
        load_vendor_docs(vendor_docs_dir, version) if vendor_docs_dir is not None else None)
    if only_missing and vendor_index is None:
        raise InputError("only_missing needs the vendor docs folder")
    official_index = od.load_official_docs(docs_dir) if docs_dir is not None else None
    blocks: List[str] = []
    for api in apis:
        resolve(api)
        if only_missing and vendor_index is not None and vendor_index.lookup(api) is not None:
            continue
        given = verdicts.get(api)
        if not given:
            raise InputError(f"no verdicts for {api}")
        if not chips:
            names = list(given)
        elif vendor_index is not None:
            names = resolve_chips(chips, vendor_index.chips)
        else:
            names = list(chips)  # no vendor docs to expand short names against
        table: Dict[str, bool] = {}
        for chip in names:
            value = given.get(chip)
            if value is None:  # the caller may key verdicts by a short chip name
                short = [k for k in given if k in chip]
                value = given[short[0]] if len(short) == 1 else None
            if value is None:
                raise InputError(f"no verdict for {api} on {chip}")
            table[chip] = _as_bool(value, api, chip)
        if official_index is not None:
            official = official_index.evidence(api, version)
            url = official.url or od.url_pattern(api, version)
        else:
            url = od.url_pattern(api, version)
        blocks.append(write_vendor_entry(api, table, (limits or {}).get(api), url))
    return "\n".join(blocks)


def write_evidence(found: Mapping[str, Evidence], path: Path) -> None:
    """evidence.json: {api: Evidence} in the report's evidence shape."""
    import json

    from ..results.store import write_text_atomic

    data = {api: ev.model_dump(mode="json", by_alias=True) for api, ev in found.items()}
    write_text_atomic(Path(path), json.dumps(data, ensure_ascii=False, indent=2) + "\n")
