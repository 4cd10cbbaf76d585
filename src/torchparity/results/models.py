"""The result model: the one thing every folder shares.

The JSON written by ``torchparity check --out DIR`` (report.json) is ``Report.model_dump``.
Contract: fields are only ever added, never renamed or removed.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Dict, List, Optional

from pydantic import BaseModel, ConfigDict, Field


class Status(str, Enum):
    """Outcome of one scenario (one API x one dtype x one case)."""

    PASS = "pass"
    FAIL = "fail"  # ran on the device, wrong result
    UNSUPPORTED = "unsupported"  # the device refused: dtype limit, no kernel, build config
    ERROR = "error"  # unexpected exception (device or harness)
    CRASH = "crash"  # the worker process died (segfault, abort)
    TIMEOUT = "timeout"
    SKIP = "skip"  # not run or not comparable; detail says why
    PARTIAL = "partial"  # matrix only: some samples of an API x dtype pass, some do not


class Cause(str, Enum):
    """Why a scenario did not pass. ``None`` on a pass."""

    DTYPE_LIMIT = "dtype_limit"  # a kernel exists but refuses this dtype on the device
    NO_KERNEL = "no_kernel"  # no kernel for the op on the device at all
    BUILD_CONFIG = "build_config"  # a feature not compiled into this build (e.g. ITT)
    FEATURE_LIMIT = "feature_limit"  # a device capability missing (generator, pin_memory, ...)
    MISMATCH = "mismatch"  # values differ beyond the standard's threshold
    DEVICE_PATH = "device_path"  # differs because the API dispatches other ops on the device
    METADATA = "metadata"  # wrong dtype, device, shape or type of an output
    EXCEPTION_MISMATCH = "exception_mismatch"  # CPU and device disagree on raising
    DEVICE_ERROR = "device_error"  # the device raised where CPU did not, unclassified
    CRASH = "crash"
    TIMEOUT = "timeout"
    HARNESS_ERROR = "harness_error"  # the scenario or the tool itself failed
    NOT_COMPARABLE = "not_comparable"  # random or uninitialised output: not compared
    UPSTREAM_SKIP = "upstream_skip"  # OpInfo's own skip/xfail for this case
    OP_LIMIT = "op_limit"  # the op itself refuses this dtype: the CPU raises the same
    # added: something the emulator cannot do (a gap of the emulator, not a rule of the
    # chip's profile): not an answer about the chip; needs hardware to decide
    EMULATOR_LIMIT = "emulator_limit"
    # added: a counter or runtime state (memory counters, streams, flags) differs
    STATE = "state"


class RowEvidence(str, Enum):
    """What a result row compared, derived from its footprint (``judge.evidence``)."""

    DEVICE_COMPUTE = "device-compute"  # device ops attributed to the API ran, outputs compared
    DEVICE_STATE = "device-state"  # device metadata / runtime state the API owns was compared
    HOST_ONLY = "host-only"  # no device op or runtime call attributed to the API ran
    NONE = "none"  # not an answer: nothing was compared (timeout, harness error, emulator gap)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", use_enum_values=True)


class Text(Strict):
    """A short text in both report languages."""

    en: str
    zh: str


class FootprintEntry(Strict):
    op: str  # e.g. "aten.dot.default"
    dtypes: List[str]  # e.g. ["float64"]
    count: int
    # who issued it: "api" (the API itself), "callable" (user code passed to the API),
    # "scenario" (code around the API call: setup, context-manager bodies, other APIs)
    source: str = "api"


class OwnFootprint(Strict):
    """How a case's footprint was attributed and whether the case observes its API
    (``run.takeaway``: the case run once more with the API taken away)."""

    # "takeaway": the entries are the recorded run's, attributed by what disappeared
    # without the API; "frames": the frames' attribution was kept (``reason`` says why)
    method: str
    how: Optional[str] = None  # code | torch-function | attribute | subtype | value | None (the API could not be taken away)
    stub: Optional[str] = None  # perturbed | replayed: what the stand-ins returned
    calls: Optional[int] = None  # top-level calls of the API in the recorded run
    # the judged outcome changed without the API (None: not decided)
    observes: Optional[bool] = None
    reason: str = ""
    # where taking the API away disagrees with the frames: "op: frames -> takeaway (n)"
    moved: List[str] = Field(default_factory=list)
    # the API steers the scenario's device work (a level, a flag, a mode) without ops of
    # its own: the run without it dispatched device ops the recorded run did not, or could
    # not run at all; False: it does not (taken away, or a world's body); None: unknown
    steers: Optional[bool] = None
    # the API's code in torch does nothing (an empty body, its torch implementations' too):
    # no case can observe it, and it computes nothing on any device (``run.takeaway``)
    empty: bool = False


class Analysis(Strict):
    qualified_name: str
    kind: str  # function | class | method | module | builtin | op
    implementation: str  # python_function | python_class | cpp_builtin | aten_operator | module
    device_involvement: Optional[str] = None  # none | indirect | direct (after scenarios ran)
    signature: Optional[str] = None
    summary: Optional[str] = None  # first docstring paragraph
    source_file: Optional[str] = None
    source_line: Optional[int] = None
    aliases: List[str] = Field(default_factory=list)
    bindings: List[str] = Field(default_factory=list)  # C++ entry points its own body calls
    footprint: List[FootprintEntry] = Field(default_factory=list)
    # added fields
    harness: Optional[bool] = None  # wraps user code: takes a callable or is a context manager


class Metric(Strict):
    """The number that decided a status, and the threshold it was held to."""

    name: str
    value: Optional[float] = None
    threshold: Optional[float] = None
    standard: Optional[str] = None


class ScenarioResult(Strict):
    id: str
    dtype: Optional[str] = None
    status: Status
    cause: Optional[Cause] = None
    detail: str = ""
    duration_s: float = 0.0
    description: Optional[Text] = None
    expected: Optional[Text] = None
    tags: List[str] = Field(default_factory=list)
    metric: Optional[Metric] = None
    snippet: Optional[str] = None
    emulated: bool = False
    # ops this case dispatched on the device (api and callable ones, compute ops only)
    footprint: List[FootprintEntry] = Field(default_factory=list)
    # added: the scenario source it came from (hand | opinfo | module | optim | ...)
    source: Optional[str] = None
    # bugs or noise injected into the device's results for this run (``fault:<name>``,
    # ``numerics:device``: the emulated device under TORCHPARITY_EMU_FAULT / _NUMERICS);
    # empty on a plain run
    injected: List[str] = Field(default_factory=list)
    # added: device-compute | device-state | host-only | none, from the footprint
    evidence: Optional[str] = None
    # emulated only: "op[dtype]" calls that ran without a capability fact in the profile
    # (silence is not support): a pass with these is unverified, counted apart
    unverified: Optional[List[str]] = None
    # what was compared in the CPU's answer (judge.compare.output_kinds): its tensors'
    # dtypes, "strided" for a non-contiguous one, "opaque" for an object compared by ==;
    # None where the row's runner does not record it
    outputs: Optional[List[str]] = None
    # added: how the footprint was attributed, and whether the case observes its API
    own: Optional[OwnFootprint] = None


class Verdict(Strict):
    # supported | partial | unsupported | broken | unknown | device-independent
    status: str
    category: Optional[str] = None  # e.g. "1.1①"
    category_rule: Optional[str] = None  # name of the rule that decided the category
    category_reason: Optional[Text] = None  # what the category means, from the rule
    causes: List[str] = Field(default_factory=list)
    summary: Text
    adaptation: Optional[Text] = None  # "API adaptation" verdict of the seeds
    # added: the API's evidence, from its rows' (device-compute > device-state > host-only;
    # none where no row is an answer)
    evidence: Optional[str] = None


class TestSite(Strict):
    file: str
    cls: Optional[str] = Field(default=None, alias="class")
    test: str
    direct: int = 0
    indirect: int = 0
    device_generic: bool = False
    skip_reason: Optional[str] = None
    # added fields (evidence census)
    kind: str = "test"  # test | helper (a non-test function or method) | module (top level)
    lines: List[int] = Field(default_factory=list)  # lines of the sites, first few
    via: List[str] = Field(default_factory=list)  # wrappers behind its indirect sites
    # does it run on the backend's device: True (device-generic class that includes the
    # backend, or nothing restricts it), False (instantiated without the backend, or a
    # decorator that always skips there), None (a runtime condition decides)
    runs_on_backend: Optional[bool] = None
    skip: Optional[str] = None  # skipped | conditional | None (no skip for the backend)
    uses_backend: bool = False  # its body names the backend: "npu" strings, .npu(), torch.npu

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class TestClassInfo(Strict):
    """One test class of the census: where the API's sites sit, and whether it is device-generic."""

    file: str
    cls: str = Field(alias="class")
    direct: int = 0
    indirect: int = 0
    tests: int = 0  # tests (test_* methods) with at least one site
    device_generic: bool = False  # instantiate_device_type_tests(cls, ...) somewhere
    only_for: Optional[List[str]] = None  # as written; a non-literal value is kept as source
    except_for: Optional[List[str]] = None
    backend_included: Optional[bool] = None  # would PrivateUse1 / the backend get a copy
    instantiated_in: Optional[str] = None  # the file calling instantiate_device_type_tests
    skip_reason: Optional[str] = None  # class-level skip decorators

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class TestsEvidence(Strict):
    tree: Optional[str] = None
    direct_sites: int = 0
    indirect_sites: int = 0
    via: List[str] = Field(default_factory=list)  # wrappers through which it is reached
    tests: List[TestSite] = Field(default_factory=list)
    # added fields (evidence census)
    files: int = 0  # files with at least one site
    classes: List[TestClassInfo] = Field(default_factory=list)  # most sites first
    device_generic_sites: int = 0  # sites (direct + indirect) in device-generic classes
    backend_runnable_sites: int = 0  # of those, in classes that include the backend
    notes: List[str] = Field(default_factory=list)  # what the census could not see


class OfficialDocs(Strict):
    status: str  # own_page | anchor | absent | unknown
    url: Optional[str] = None
    source: Optional[str] = None  # the docs file it was found in
    note: Optional[str] = None
    # added fields
    name: Optional[str] = None  # the name the docs use (may be an alias)
    line: Optional[int] = None


class VendorDocs(Strict):
    present: bool
    name: Optional[str] = None  # the name the entry uses (may be an alias)
    chips: Dict[str, bool] = Field(default_factory=dict)
    limits: Optional[str] = None
    dtypes: Optional[List[str]] = None  # parsed from "仅支持 ..."
    source: Optional[str] = None
    # added fields
    line: Optional[int] = None
    url: Optional[str] = None  # the entry's official-docs link
    matched_by: Optional[str] = None  # exact | qualified | alias


class DocsEvidence(Strict):
    official: Optional[OfficialDocs] = None
    vendor: Optional[VendorDocs] = None


class Recommendation(Strict):
    """The seeds' per-API columns, decided by a rule of evidence.rules.RULES."""

    has_upstream_tests: bool
    device_involvement: Optional[str] = None  # none | indirect | direct (None: not known)
    runs_on_backend: bool = False  # most test sites already run on the backend's device
    device_share: float = 0.0  # share of the test sites that run there (direct ones if any)
    add_tests: Optional[bool] = None  # should the backend add tests (None: unknown)
    priority: Optional[str] = None  # high | medium | low
    scenario: Optional[str] = None  # adapt_upstream | upstream_runs | write_new | none_needed
    rule: str  # the id of the rule that decided
    reason: Text
    # upstream tests replayed on the device (check --tests): "file::Class::test" ids, with
    # " [dtype]" when the scenario ran one dtype
    replay_pass: List[str] = Field(default_factory=list)  # same outcome as on the CPU
    replay_fail: List[str] = Field(default_factory=list)  # pass on the CPU, not on the device
    replay_not_comparable: List[str] = Field(default_factory=list)  # fail/skip on the CPU too


class Evidence(Strict):
    tests: Optional[TestsEvidence] = None
    docs: Optional[DocsEvidence] = None
    not_run: Dict[str, str] = Field(default_factory=dict)  # section -> option that enables it
    # added fields
    recommendation: Optional[Recommendation] = None


class ApiReport(Strict):
    name: str
    qualified_name: str
    analysis: Analysis
    scenarios: List[ScenarioResult] = Field(default_factory=list)
    verdict: Verdict
    evidence: Optional[Evidence] = None
    # added: every scenario source asked, in order -> "N scenario(s)" or why it did not apply
    sources_tried: Dict[str, str] = Field(default_factory=dict)


class DeviceInfo(Strict):
    type: str  # torch device type: cpu, cuda, npu, xpu, mps, or the emulated name
    name: Optional[str] = None  # marketing name of the device / chip
    emulated: bool = False
    profile: Optional[str] = None  # capability profile of an emulated device
    spec: Optional[str] = None  # what the user asked for, e.g. "emu:ascend-a2"


class Environment(Strict):
    os: str
    arch: str
    python: str
    torch: str
    backend: Dict[str, str] = Field(default_factory=dict)  # e.g. {"torch_npu": "2.7.1"}
    device_name: Optional[str] = None
    cann: Optional[str] = None
    hostname: Optional[str] = None
    extra: Dict[str, Any] = Field(default_factory=dict)


class RunApi(Strict):
    """One API's outcome on another device of the same check run (no scenarios kept)."""
    name: str
    status: str  # the verdict status
    category: Optional[str] = None
    passed: int = 0
    total: int = 0  # scenarios counted (skips left out)


class DeviceRun(Strict):
    """Another device checked in the same run (``--device a,b``): its own worker pool."""
    device: DeviceInfo
    environment: Environment
    apis: List[RunApi] = Field(default_factory=list)
    interrupted: bool = False


class Report(Strict):
    tool_version: str
    created: str
    environment: Environment
    device: DeviceInfo
    apis: List[ApiReport] = Field(default_factory=list)
    banner: Optional[str] = None  # "emulated: a prediction, not a hardware result"
    options: Dict[str, Any] = Field(default_factory=dict)
    # the other devices of a several-device run; ``device`` and ``apis`` are the first one's
    runs: List[DeviceRun] = Field(default_factory=list)


EMULATED_BANNER = "emulated: a prediction, not a hardware result"
