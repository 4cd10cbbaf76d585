"""`torchparity profile build`: capability profiles generated from vendor support docs.

For each chip, a profile of per-aten-op dtype support:

1. Every documented API whose footprint (its first OpInfo sample, run on the CPU) is
   exactly one aten compute op — or, for a ``torch.distributed`` collective, the one c10d
   op it dispatches (``COLLECTIVE_OPS``) — lends that op its documented support: ✔/✘ for the chip,
   and its "仅支持 <dtypes>" list. Several APIs reaching the same op are united (an op
   is supported with a dtype when any entry says so). APIs with zero or several compute
   ops tell nothing about a single op and contribute nothing; undocumented ops stay
   allowed (``default: allow``).
2. Hardware observations (``sources/ascend-observations.yaml``) settle what the docs get
   wrong or contradict: a scenario that passed on a chip adds its dtype to every op it
   dispatched there (traced on the emulated device, after decomposition); an op seen
   refusing a dtype loses it. Entries that disagree about
   one op are noted in the profile.
3. Build features from the docs: ``itt`` is off for a chip where emit_itt is ✘.

With kernel facts (``sources/ascend-kernels.yaml``, extracted from Ascend's op-plugin and
CANN operator sources by ``--from-kernels``) an op torch_npu runs through an aclnn API
takes the kernel's dtype list for the chip (step 1 becomes a second opinion, noted where
it disagrees); dtypes only the AiCpu fallback takes are kept and marked slow. The hardware
observations of step 2 still override both, and a conflict with the kernel is noted.
The ``c10d.*`` rules likewise follow the HCCL facts (``sources/ascend-hccl.yaml``, the dtypes
torch_npu's HCCL process group accepts, read from Ascend/pytorch) when kernel facts are used.

The output is deterministic (sorted, no timestamps), so a rebuild can be diffed.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from pydantic import BaseModel, ConfigDict

from ..devices.profiles import Profile
from ..devices.profiles.model import DTYPES, PROFILE_DIR, Features, OpSupport, Refusal
from ..errors import InputError
from ..evidence.hccl import HcclFacts, load_hccl_facts
from ..evidence.kernels import KernelFacts, load_kernel_facts
from ..evidence.vendor_docs import VendorEntry, load_vendor_docs, resolve_chips
from ..yamlmodel import load_yaml_model

OBSERVATIONS = PROFILE_DIR / "sources" / "ascend-observations.yaml"
KERNELS = PROFILE_DIR / "sources" / "ascend-kernels.yaml"  # the newest kernels read
HCCL = PROFILE_DIR / "sources" / "ascend-hccl.yaml"
# per CANN release: the kernel facts read at the operator repositories' release branch
KERNELS_CANN = {"8.5.0": PROFILE_DIR / "sources" / "ascend-kernels-cann8.5.0.yaml"}
# profile -> NPU architecture of its chip (hicann/ops-math docs/zh/install/compile.md: --soc per product)
KERNEL_CHIP = {"ascend-a2": "dav_2201", "ascend-a2-latest": "dav_2201", "ascend-a3": "dav_2201",
               "ascend-950dt": "dav_3510"}
# profile -> the CANN release its facts are for: ascend-a2 is the seeds' environment (910B3,
# CANN 8.5.0: kernel facts of the 8.5.0 branches, the observations made there); the others
# follow the newest kernels read (``KERNELS``), whose release the facts file says
PROFILE_CANN: Dict[str, Optional[str]] = {"ascend-a2": "8.5.0"}

# profile name -> chip as the docs write it (the name the chip answers with, its SoC
# version and CANN release are in devices/profiles/chips/identity.yaml, not in the profile)
ASCEND_CHIPS: Dict[str, str] = {
    "ascend-a2": "Atlas A2 训练系列产品",
    "ascend-a2-latest": "Atlas A2 训练系列产品",
    "ascend-a3": "Atlas A3 训练系列产品",
    "ascend-950dt": "Ascend 950DT",
}
ITT_API = "torch.autograd.profiler.emit_itt"
MAX_SOURCES = 4

ComputeOps = Callable[[str], Optional[List[str]]]


class Observation(BaseModel):
    """Seen on hardware: scenarios that passed, or ops that refused the dtypes."""

    model_config = ConfigDict(extra="forbid")
    passed: List[str] = []
    unsupported: List[str] = []
    dtypes: List[str]
    chips: List[str]
    cann: Optional[str] = None  # the CANN release it was seen on, where the source says
    source: str


class Observations(BaseModel):
    model_config = ConfigDict(extra="forbid")
    observations: List[Observation]


@dataclass
class _OpFacts:
    supported: bool = False
    dtypes: Optional[Set[str]] = field(default_factory=set)  # None: no dtype limit
    sources: List[str] = field(default_factory=list)
    lists: Set[Optional[Tuple[str, ...]]] = field(default_factory=set)  # as each entry says
    kernel: Optional[Set[str]] = None  # the kernel's list, when the rule follows it
    aicpu: List[str] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    refusals: List[Refusal] = field(default_factory=list)  # dtypes refused in the vendor's words


def load_observations(path: Path) -> Observations:
    return load_yaml_model(path, Observations, what="observations")


# torch.distributed entries -> the c10d op each call dispatches (its dtype list is that of
# the tensor the collective carries); composite ones (batch_isend_irecv, P2POp, the object
# collectives) reach several and lend nothing.
COLLECTIVE_OPS: Dict[str, str] = {
    "torch.distributed.all_reduce": "c10d.allreduce_",
    "torch.distributed.broadcast": "c10d.broadcast_",
    "torch.distributed.reduce": "c10d.reduce_",
    "torch.distributed.all_gather": "c10d.allgather_",
    "torch.distributed.reduce_scatter": "c10d.reduce_scatter_",
    "torch.distributed.all_to_all": "c10d.alltoall_",
    "torch.distributed.all_to_all_single": "c10d.alltoall_base_",
    "torch.distributed.gather": "c10d.gather_",
    "torch.distributed.scatter": "c10d.scatter_",
    "torch.distributed.send": "c10d.send",
    "torch.distributed.isend": "c10d.send",
    "torch.distributed.recv": "c10d.recv_",
    "torch.distributed.irecv": "c10d.recv_",
}


def default_compute_ops(api: str) -> Optional[List[str]]:
    if api in COLLECTIVE_OPS:
        return [COLLECTIVE_OPS[api]]
    import warnings

    from ..scenarios.opinfo import api_compute_ops

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecations of the APIs sampled, not ours
        try:
            return api_compute_ops(api)
        except Exception:  # an API whose sample cannot run tells nothing
            return None


def single_op_entries(entries: Iterable[VendorEntry], compute_ops: ComputeOps,
                       progress: Optional[Callable[[int, int], None]] = None) -> List[Tuple[VendorEntry, str]]:
    entries = list(entries)
    out = []
    cache: Dict[str, Optional[List[str]]] = {}
    for i, entry in enumerate(entries):
        if progress:
            progress(i + 1, len(entries))
        if entry.name not in cache:
            cache[entry.name] = compute_ops(entry.name)
        ops = cache[entry.name]
        if ops is not None and len(set(ops)) == 1:
            out.append((entry, ops[0]))
    return out


def observed_device_ops(refs: Sequence[Tuple[str, str]], device: str = "emu:allow-all"
                        ) -> Dict[Tuple[str, str], List[str]]:
    """{(scenario ref, dtype): ops that reached the device in that dtype}.

    Runs the registered scenarios in a worker on an emulated device that allows every op
    and traces the ops *after* decomposition (``allclose`` reaches a device as ``isclose``,
    ``ne``, ...): these are what a real device was asked to run when the scenario passed.
    """
    from ..run.pool import WorkerPool
    from ..scenarios import registry

    registry.load_suites()
    cases = []
    for ref, dtype in refs:
        api, _, sid = ref.partition(":")
        try:
            registry.find(api, sid)
        except KeyError:
            raise InputError(f"observation names an unknown scenario {ref!r}") from None
        cases.append({"kind": "suite", "api": api, "scenario": sid, "dtype": dtype,
                      "device_ops": True})
    found: Dict[Tuple[str, str], List[str]] = {}

    def on_event(event) -> None:
        ref, dtype = refs[event.index]
        ops = (event.payload or {}).get("device_ops")
        if event.kind != "result" or ops is None:
            raise InputError(f"observation scenario {ref} [{dtype}] could not be traced on "
                             f"{device}: {event.detail or event.payload}")
        found[(ref, dtype)] = sorted({op for op, dt in ops if dt == dtype})

    if cases:
        WorkerPool({"device": device, "modules": []}, jobs=1).run(cases, [300.0] * len(cases), on_event)
    return found


def _docs_view(f: _OpFacts) -> str:
    if not f.supported:
        return "✘ (no support)"
    if f.dtypes is None:
        return "no dtype limit"
    return ", ".join(sorted(f.dtypes, key=DTYPES.index))


def apply_kernels(facts: Dict[str, _OpFacts], kernels: KernelFacts, chip_key: str) -> int:
    """Ops torch_npu runs through an aclnn API take its dtype list; the docs become a note.

    Returns how many ops follow a kernel list.
    """
    commits = {repo: commit[:12] for repo, commit in kernels.repos.items()}
    n = 0
    cann = f"CANN {kernels.cann}" if kernels.cann else "no CANN release"
    for op, ok in kernels.ops.items():
        ck = ok.chips.get(chip_key)
        if ck is None:
            continue
        if ck.undecided:
            # the check that runs was not read: silence, not the docs' rule (which the
            # kernel may contradict); predict says unknown, the emulated pass is unverified
            facts.pop(op, None)
            continue
        n += 1
        repo = ck.source.split(" ", 1)[0]
        src = (f"kernel {ok.aclnn}: {ck.source}@{commits.get(repo, '?')} ({cann}"
               + (f"; {ck.branch}" if ck.branch else "") + f"; called from {ok.plugin})")
        docs = facts.get(op)
        if ck.dtypes is None:  # no dtype check runs on this chip's path
            refusals = _refusals(ok, ck, set(DTYPES), commits)
            left = set(DTYPES) - {d for r in refusals for d in r.dtypes}
            f = _OpFacts(supported=True, dtypes=left if refusals else None, sources=[src + f": {ck.unchecked}"],
                         kernel=set(left), refusals=refusals)
            if docs is not None and docs.sources:
                f.notes.append(f"docs say {_docs_view(docs)} ({docs.sources[0]}); no kernel dtype check on "
                               "this path, nothing refuses")
            facts[op] = f
            continue
        if ck.refused:
            facts[op] = _OpFacts(supported=False, dtypes=None, sources=[src + f": {ck.refused}"], kernel=set())
            continue
        kdt = {d for d in ck.dtypes if d in DTYPES}
        refusals = _refusals(ok, ck, kdt, commits)
        for r in refusals:
            kdt.difference_update(r.dtypes)
        f = _OpFacts(supported=True, dtypes=set(kdt), sources=[src], kernel=set(kdt),
                     aicpu=[d for d in (ck.aicpu or []) if d in kdt], refusals=refusals)
        if docs is not None and docs.sources:
            view = _docs_view(docs)
            if not docs.supported or docs.dtypes is None or docs.dtypes != kdt:
                f.notes.append(f"docs say {view} ({docs.sources[0]}"
                               + (f" and {len(docs.sources) - 1} more" if len(docs.sources) > 1 else "")
                               + "); the kernel list is followed")
        facts[op] = f
    return n


def _at(source: str, commits: Dict[str, str]) -> str:
    """'repo path:line ...' -> the same with the repository's commit after the line."""
    repo, _, rest = source.partition(" ")
    head, sep, tail = rest.partition(" ")
    return f"{repo} {head}@{commits.get(repo, '?')}" + (f" {tail}" if sep else "")


def _refusals(ok, ck, kdt: Set[str], commits: Dict[str, str]) -> List[Refusal]:
    """Dtypes of ``kdt`` refused on the way to (or by) the kernel, beyond its input list:

    - op-plugin's own ``TORCH_CHECK`` on the input's dtype, before the aclnn call;
    - the kernel's check on the output tensor, with the dtype op-plugin gives the output
      (``result_type(self, other)``: the input's; ``at::kBool``: bool; ...)."""
    out: List[Refusal] = []
    for c in ok.plugin_checks or []:
        hit = sorted(kdt & set(c.dtypes), key=DTYPES.index)
        if hit and not any(r.message == c.message and set(hit) <= set(r.dtypes) for r in out):
            out.append(Refusal(dtypes=hit, message=c.message,
                               source=f"op-plugin check {_at(c.source, commits)}: {c.condition}"))
    if ck.out is not None and ok.out_dtype is not None:
        rule = ok.out_dtype
        hit = sorted((d for d in kdt if rule.of(d) not in ck.out.dtypes), key=DTYPES.index)
        if hit:
            msg = ck.out.message or f"Tensor {ck.out.tensor}: dtype not in the support list"
            out.append(Refusal(
                dtypes=hit, message=msg.split(" (", 1)[0] if ck.out.message else msg,
                source=(f"kernel {ok.aclnn} checks {ck.out.tensor} against {', '.join(ck.out.dtypes)} at "
                        f"{_at(ck.out.source, commits)}; op-plugin gives it the dtype {rule.expr} "
                        f"({_at(rule.source, commits)})"
                        + (f"; the message: {ck.out.message.split(' (', 1)[1][:-1]}" if ck.out.message
                           and " (" in ck.out.message else ""))))
    return out


def apply_hccl(facts: Dict[str, _OpFacts], hccl: HcclFacts, chip_key: str) -> int:
    """c10d ops take what torch_npu's HCCL process group accepts; the docs become a note.

    Returns how many ops follow the HCCL facts.
    """
    n = 0
    for op, cf in hccl.ops.items():
        ck = (cf.chips or {}).get(chip_key)
        if ck is None and cf.refused is None:
            continue
        n += 1
        if ck is None:
            f = _OpFacts(supported=False, dtypes=None, kernel=set(),
                         sources=[f"hccl {cf.call} refuses: {hccl.source(cf.refused)}"])
        else:
            kdt = {d for d in ck.dtypes if d in DTYPES}
            f = _OpFacts(supported=True, dtypes=set(kdt), kernel=set(kdt),
                         sources=[f"hccl {cf.call}: {hccl.source(ck.source)}"])
        docs = facts.get(op)
        if docs is not None and docs.sources:
            if docs.supported != f.supported or (f.supported and docs.dtypes != f.dtypes):
                f.notes.append(f"docs say {_docs_view(docs)} ({docs.sources[0]}"
                               + (f" and {len(docs.sources) - 1} more" if len(docs.sources) > 1 else "")
                               + "); the HCCL source is followed")
        facts[op] = f
    return n


def build_profiles(docs_root: Path, torch_version: str, *, chips: Sequence[str] = (),
                   observations: Optional[Path] = OBSERVATIONS,
                   kernels: Optional[KernelFacts] = None, kernels_name: str = KERNELS.name,
                   cann_kernels: Optional[Dict[str, KernelFacts]] = None,
                   hccl: Optional[Path] = HCCL,
                   compute_ops: ComputeOps = default_compute_ops,
                   progress: Optional[Callable[[int, int], None]] = None) -> Dict[str, Profile]:
    """Profiles (name -> Profile) for the Ascend chips, from the docs of ``torch_version``,
    the kernel facts when given (with them, the HCCL facts in ``hccl`` for the c10d ops), and
    the hardware observations.

    A profile is built for (chip, CANN release): one in ``PROFILE_CANN`` takes the kernel
    facts of its release (``cann_kernels``, by default the shipped ``KERNELS_CANN`` files)
    and only the observations made on that release (or not saying); the others take
    ``kernels`` and the observations that name no release or the one ``kernels`` is for."""
    index = load_vendor_docs(docs_root, torch_version)
    wanted = {name: chip for name, chip in ASCEND_CHIPS.items()
              if not chips or chip in resolve_chips(chips, index.chips)}
    if not wanted:
        raise InputError(f"no Ascend chip matches {list(chips)}; known: {', '.join(index.chips)}")
    pairs = single_op_entries(index, compute_ops, progress)
    obs = load_observations(observations) if observations else Observations(observations=[])
    refs = [(ref, dtype) for o in obs.observations for ref in o.passed for dtype in o.dtypes]
    traced = observed_device_ops(refs)
    observed: List[Tuple[Observation, str, List[str]]] = [
        (o, dtype, traced[(ref, dtype)]) for o in obs.observations
        for ref in o.passed for dtype in o.dtypes]
    itt_entry = index.lookup(ITT_API)
    hccl_facts = load_hccl_facts(hccl) if kernels and hccl else None

    profiles = {}
    for name, chip in wanted.items():
        facts: Dict[str, _OpFacts] = defaultdict(_OpFacts)
        for entry, op in pairs:
            if chip not in entry.chips:
                continue
            f = facts[op]
            f.sources.append(f"docs {entry.name} ({entry.source}:{entry.line})")
            if not entry.chips[chip]:
                continue
            f.supported = True
            dtypes = entry.dtypes_for(chip)
            f.lists.add(tuple(sorted(dtypes)) if dtypes is not None else None)
            if dtypes is None or f.dtypes is None:
                f.dtypes = None
            else:
                f.dtypes.update(d for d in dtypes if d in DTYPES)
        kf = kernels
        want_cann = PROFILE_CANN.get(name)
        if kernels is not None and kernels.cann and cann_kernels is None:
            cann_kernels = {kernels.cann: kernels}  # facts read at a release branch serve its profile
        if kernels and want_cann:
            kf = (cann_kernels or {}).get(want_cann) or (
                load_kernel_facts(KERNELS_CANN[want_cann]) if want_cann in KERNELS_CANN else None)
            if kf is None:
                raise InputError(f"no kernel facts for CANN {want_cann} (profile {name})")
        release = want_cann or (kf.cann if kf else None)
        n_kernel = apply_kernels(facts, kf, KERNEL_CHIP[name]) if kf else 0
        n_hccl = apply_hccl(facts, hccl_facts, KERNEL_CHIP[name]) if hccl_facts else 0
        for o, dtype, ops in observed:
            if chip not in resolve_chips(o.chips, index.chips) or (o.cann and o.cann != release):
                continue
            for op in ops:
                f = facts.get(op)
                if f is None:
                    continue  # undocumented ops are allowed already
                if f.dtypes is not None and (dtype not in f.dtypes or not f.supported):
                    f.supported = True
                    f.dtypes.add(dtype)
                    f.sources.append(f"observed {dtype} working" + (f" on CANN {o.cann}" if o.cann else "")
                                     + f": {o.source}")
                    if f.kernel is not None:
                        f.notes.append(f"conflict: observed working in {dtype} on hardware, which the "
                                       "kernel list lacks; the observation is kept")
        for o in obs.observations:
            if not o.unsupported or chip not in resolve_chips(o.chips, index.chips) or (
                    o.cann and o.cann != release):
                continue
            for op in o.unsupported:
                known = op in facts
                f = facts[op]
                if not known or f.dtypes is None:  # allowed for every dtype until now
                    f.dtypes = set(DTYPES)
                    f.supported = True
                clash = sorted(set(o.dtypes) & (f.kernel or set()), key=DTYPES.index)
                if clash:
                    f.notes.append(f"conflict: the kernel list includes {', '.join(clash)}, refused on "
                                   "hardware; the observation is kept")
                f.dtypes.difference_update(o.dtypes)
                f.aicpu = [d for d in f.aicpu if d not in o.dtypes]
                f.sources.append(f"observed {', '.join(o.dtypes)} refused"
                                 + (f" on CANN {o.cann}" if o.cann else "") + f": {o.source}")
        ops = {}
        for op in sorted(facts):
            f = facts[op]
            srcs = f.sources[:MAX_SOURCES] + (
                [f"... and {len(f.sources) - MAX_SOURCES} more"] if len(f.sources) > MAX_SOURCES else [])
            notes = list(f.notes)
            if len(f.lists) > 1 and f.kernel is None:
                notes.insert(0, "docs entries disagree on the dtypes; their union is kept")
            ops[op] = OpSupport(supported=f.supported,
                                dtypes=sorted(f.dtypes, key=DTYPES.index) if f.supported and f.dtypes is not None else None,
                                source="; ".join(srcs),
                                note="; ".join(notes) or None,
                                aicpu_dtypes=sorted(f.aicpu, key=DTYPES.index) if f.supported and f.aicpu else None,
                                refusals=[r.model_copy(update={"dtypes": [d for d in r.dtypes if d not in f.dtypes]})
                                          for r in f.refusals if f.dtypes is not None and set(r.dtypes) - f.dtypes]
                                or None)
        itt = bool(itt_entry.chips.get(chip, True)) if itt_entry else True
        command = f"torchparity profile build --from-ascend-docs DIR --torch-version {torch_version}"
        generated = {"command": command + (f" --kernel-facts {kernels_name}" if kernels else ""),
                     "docs": f"Ascend native_api docs pytorch_{torch_version.replace('.', '-')}",
                     "observations": OBSERVATIONS.name if observations else "none",
                     "single_op_entries": str(len(pairs))}
        if kf:
            generated["command"] = command + " --kernel-facts " + (
                KERNELS_CANN[want_cann].name if want_cann in KERNELS_CANN and not cann_kernels else
                kernels_name)
            generated["kernels"] = ", ".join(
                f"{r}@{c[:12]}" + (f" ({kf.refs[r]})" if kf.refs and r in kf.refs else "")
                for r, c in kf.repos.items())
            generated["kernel_ops"] = str(n_kernel)
        generated["cann"] = release or ("none: " + (kf.cann_note or "") if kf else "not recorded")
        if hccl_facts:
            generated["hccl"] = f"{hccl.name}: {hccl_facts.repo}@{hccl_facts.commit[:12]}"
            generated["hccl_ops"] = str(n_hccl)
        what = "Ascend {chip} from the vendor's kernel sources, documented for" if kernels else \
            "Ascend {chip} as documented for"
        profiles[name] = Profile(
            name=name,
            description=(what.format(chip=chip) + f" torch {torch_version}, with hardware "
                         "observations; generated, do not edit by hand"),
            device_type="npu", vendor="Ascend", chips=[chip],
            generated=generated, ops=ops, features=Features(itt=itt))
    return profiles


def default_kernels() -> Optional[KernelFacts]:
    return load_kernel_facts(KERNELS) if KERNELS.is_file() else None
