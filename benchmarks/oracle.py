"""The oracle, measured: device faults the judge must catch, device noise it must forgive.

On a stratified sample of the vendor-documented API list (every scenario source
represented, ``--sample`` APIs, default 400, fixed ``--seed``; the APIs are listed in the
output), each API is checked on the emulated device

1. clean: its verdict, its rows and the aten ops each row dispatched (the footprint
   ``check`` records in report.json: the API's and its callables' ops);
2. under every fault of ``TORCHPARITY_EMU_FAULT`` that can touch that footprint
   (``faults.touches``; a fault that cannot touch any op the API (or a callable it ran)
   dispatched itself — the scenario's scaffolding, a loss or an input transform, left out — is not
   applicable and not tried; ``strides`` applies only to the APIs whose contract fixes
   layout, ``LAYOUT_API``; ``collective-noop`` also applies to the 2-rank world sources,
   whose rank processes the footprint does not see, and ``memstat-zero`` to the memory
   APIs by name, since counters are no aten op); ``strides`` also applies, without a
   footprint op, to the APIs that make a new output whose layout the contract fixes
   (``NEW_LAYOUT_API``: ``*_like``, ``empty_strided``, ``clone``) — never to a view or an
   in-place result, which the fault cannot change; ``nan-drop`` only to rows whose
   scenario feeds a NaN (tag ``nan-input``: OpInfo's NaN-propagating reductions get a
   NaN sample); ``numeric-eps`` only to rows whose judge's bar is tighter than eps
   (:func:`forgiven`: float16/bfloat16 outputs and float32 ones the chip computes in
   HF32 are forgiven 8 x 2^-10, so numeric-1e-3/1e-4 there are what a correct chip may do);
3. under ``TORCHPARITY_EMU_NUMERICS=device`` (a correct device's noise).

Beside a sample, the fixed fault-targeted set ``FIXED_SET`` runs too (``--no-fixed``
leaves it out): layout, seeded random, memory-counter, NaN-propagating and in-place APIs
that a random sample rarely reaches; its accounting and the sample's are also printed
apart.

Every run is ``torchparity check`` itself (``app.check.check``) in a child process whose
environment carries the fault, so the worker pool and the rank processes inherit it.

A pair (API, fault) is **killed** when the API's verdict changes or a row that passed
clean is not ``pass`` under the fault; **survived** otherwise (listed with the rows the
fault touched and the metric that let each pass). A kill whose only red rows are
timeouts, crashes or harness errors is counted apart (``killed_by_harness``): the harness,
not the judge, saw it. Under the noise, a row that passed clean and is not ``pass`` is a
**false fail** of the judge (listed with its scenario and detail).

Prints per source (the first source that offers the API scenarios) and per fault: pairs
tried, killed, survived, kill rate, false fails under noise, and the wall time; writes
``OUT/oracle.json``. A rerun with the same ``--out`` reuses finished runs.

    python benchmarks/oracle.py [--sample 400] [--seed 0] [--out DIR] [--jobs 2]
                                [--max-samples 2] [--dtypes a,b] [--faults a,b] [--plan-limit N]
                                [--all] [--no-fixed]

``--all``: the whole list (the slow suite). ``--plan-limit N``: stratify only the first N
APIs of the seeded shuffle (the full list is planned otherwise: every API is asked of
the sources once).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "tests" / "data" / "ascend-native-api-docs"
FAULT_ENV = "TORCHPARITY_EMU_FAULT"
MODULE_ENV = "TORCHPARITY_EMU_FAULT_MODULE"
LOG_ENV = "TORCHPARITY_EMU_FAULT_LOG"
NUMERICS_ENV = "TORCHPARITY_EMU_NUMERICS"
NOISE = "noise"
HARNESS = ("timeout", "crash")
# the APIs that read the memory counters (no aten op: matched by name)
MEMORY_API = re.compile(r"(^|\.)(memory_(allocated|reserved|stats|stats_as_nested_dict|summary|cached|"
                        r"snapshot)|max_memory_(allocated|reserved|cached)|mem_get_info|"
                        r"reset_(peak|max)_memory\w*|reset_accumulated_memory_stats)$")
MIN_PER_SOURCE = 8
# the APIs whose contract fixes their outputs' layout (issue 20, item 4: views, ``*_like``
# with preserve_format, ``empty_strided``, ``contiguous``, ``transpose``/``permute``,
# in-place variants, stride queries): only there is an output made contiguous a bug. An
# elementwise op may return a contiguous result for a strided input on any backend that
# does not follow TensorIterator's layout choice; those pairs are counted apart
# (``not_applicable``), never as kills or survivors.
LAYOUT_API = re.compile(r"(^|\.)((?!is_)\w+_like|empty_strided|new_empty_strided|contiguous|clone|transpose\w*|permute|t|"
                        r"mT|mH|T|H|view\w*|as_strided\w*|expand\w*|narrow|select|unfold|squeeze|unsqueeze|"
                        r"movedim|moveaxis|swapaxes|swapdims|stride|is_contiguous|is_non_overlapping_and_dense|"
                        r"storage_offset|diagonal|chunk|split\w*|tensor_split|unbind|flatten|unflatten|"
                        r"reshape|detach|alias|real|imag|[a-z]\w*[a-z0-9]_)$")

# the APIs whose contract fixes a *new* output's layout (a view aliases its input and an
# in-place result is its input: the ``strides`` fault, which makes new outputs contiguous,
# cannot reach either); ``contiguous`` is left out: its contract is the fault's own output
NEW_LAYOUT_API = re.compile(r"(^|\.)((?!is_)\w+_like|empty_strided|new_empty_strided|clone)$")
# the APIs that call backward kernels themselves, outside the autograd engine
DIRECT_BACKWARD_API = re.compile(r"^torch\.(nn\.grad\.|ops\.)|_backward$")
# a fixed, fault-targeted set run beside the stratified sample (``--no-fixed`` leaves it
# out), so that the faults a random sample rarely reaches are tried on the APIs made for
# them: layout (``strides``), seeded draws (``rng-unseeded``), memory counters
# (``memstat-zero``), NaN through max / min / sum (``nan-drop``), in-place writes
# (``inplace-copy``) and float16 results kept float16 (``dtype-widen``)
FIXED_SET = (
    # strides: new outputs whose layout the contract fixes; a view and contiguous, whose
    # outputs the fault cannot change (counted as not applicable)
    "torch.empty_like", "torch.zeros_like", "torch.empty_strided", "torch.Tensor.clone",
    "torch.Tensor.contiguous", "torch.Tensor.transpose",
    # rng-unseeded
    "torch.randn", "torch.bernoulli", "torch.nn.init.normal_", "torch.distributions.normal.Normal.sample",
    # memstat-zero
    "torch.cuda.memory_allocated", "torch.cuda.max_memory_allocated", "torch.cuda.memory_stats",
    # nan-drop (NaN-bearing samples), dtype-widen
    "torch.sum", "torch.amax", "torch.max", "torch.minimum",
    # inplace-copy
    "torch.Tensor.add_",
)
# numeric-eps is tried only on rows whose judge's bar is tighter than eps: a golden row
# forgives up to min(mean, RMSE ratio fail) x floor relative error (judge.standards); a
# float16 / bfloat16 output, or a float32 one the chip computes in HF32 (its profile's
# ``round-inputs`` rules, devices.emulator.noise), is forgiven 8 x 2^-10 (7.8e-3) or more:
# a correct chip in that precision may be off by 1e-3, so numeric-1e-3/1e-4 there are no
# device bug the judge may flag.
NUMERIC_EPS = {"numeric-1e-2": 1e-2, "numeric-1e-3": 1e-3, "numeric-1e-4": 1e-4}


# -- sampling ---------------------------------------------------------------------------
def strata(names: Sequence[str], seed: int, plan_limit: Optional[int] = None) -> Dict[str, str]:
    """api -> the first source offering it scenarios (APIs no source covers left out),
    over the seeded shuffle of ``names`` (its first ``plan_limit`` only, if given)."""
    import warnings

    from torchparity.api.resolve import maybe_resolve
    from torchparity.scenarios import sources

    order = list(names)
    random.Random(seed).shuffle(order)
    if plan_limit is not None:
        order = order[:plan_limit]
    out: Dict[str, str] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for api in order:
            resolved = maybe_resolve(api)
            if resolved is None:
                continue
            try:
                offer = sources.offer(api, resolved.obj)
            except Exception:  # a source that cannot be asked: not sampled
                continue
            if offer.scenarios:
                out[api] = offer.scenarios[0].source or "?"
    return out


def stratified(by_source: Dict[str, str], n: int, seed: int) -> List[str]:
    """About ``n`` APIs (all when the list has fewer), every source represented: each source
    gets its share of the sample and at least ``MIN_PER_SOURCE`` (fewer when ``n`` is too
    small for that, at least 1; or all it has), so the total may exceed ``n``; fixed ``seed``."""
    groups: Dict[str, List[str]] = defaultdict(list)
    for api, src in sorted(by_source.items()):
        groups[src].append(api)
    total = sum(len(v) for v in groups.values())
    if n >= total:
        return sorted(by_source)
    rng = random.Random(seed)
    picked: List[str] = []
    floor = max(1, min(MIN_PER_SOURCE, n // max(1, len(groups))))
    for _src, apis in sorted(groups.items()):
        share = max(floor, math.floor(n * len(apis) / total))
        rng.shuffle(apis)
        picked.extend(apis[:share])
    return sorted(picked)


# -- running ----------------------------------------------------------------------------
def run_config(config: str, apis: Sequence[str], out: Path, args,
               env: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """The report of ``check`` over ``apis`` under ``config`` (clean, a fault, or noise),
    run in a child process with that environment; reused when already on disk."""
    path = out / f"{config}.json"
    if path.exists():
        done = json.loads(path.read_text())
        if set(done.get("asked", [])) >= set(apis):
            return done
    if env is None:
        env = dict(os.environ)
        env.pop(FAULT_ENV, None)
        env.pop(NUMERICS_ENV, None)
        env.pop(MODULE_ENV, None)
        if getattr(args, "modules", None):
            env[MODULE_ENV] = ",".join(args.modules)
        if config == NOISE:
            env[NUMERICS_ENV] = "device"
        elif config != "clean":
            env[FAULT_ENV] = config
    spec = {"apis": list(apis), "device": args.device, "jobs": args.jobs,
            "max_samples": args.max_samples, "dtypes": args.dtypes, "timeout": args.timeout, "out": str(path)}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(spec, fh)
    started = time.monotonic()
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", fh.name], env=env,
                          capture_output=True, text=True)
    os.unlink(fh.name)
    if proc.returncode != 0 or not path.exists():
        raise SystemExit(f"oracle: the {config} run failed: {proc.stderr.strip()[-800:]}")
    done = json.loads(path.read_text())
    done["seconds"] = round(time.monotonic() - started, 1)
    path.write_text(json.dumps(done))
    return done


def rounds(plan: Dict[str, List[str]], clean: Dict[str, Any]) -> List[Dict[str, str]]:
    """The probed pairs (config -> APIs) packed into rounds of one check run each: in a
    round every API carries one config and every config one API, and no config's op is in
    the recorded footprint of another API of the round (so a red row, or a fire, is that
    API's own pair). A round is ``{api: config}``."""
    from torchparity.devices.emulator import faults as F

    pairs = [(config, api) for config, apis in plan.items() for api in apis]
    reach = {api: {op for r in clean["apis"][api]["rows"] for op in r["footprint"]}
             for _, api in pairs}
    out: List[Dict[str, str]] = []
    while pairs:
        taken: Dict[str, str] = {}
        rest = []
        for config, api in pairs:
            # an op the footprint hides (a copy, a view) may be reached by any API: alone
            hidden = any(F.touches(config, op) for op in HIDDEN_OPS) or any(
                F.touches(c, op) for c in taken.values() for op in HIDDEN_OPS)
            free = (api not in taken and config not in taken.values() and not (hidden and taken)
                    and not any(F.touches(config, op) for other in taken for op in reach[other])
                    and not any(F.touches(c, op) for c in taken.values() for op in reach[api]))
            if free:
                taken[api] = config
            else:
                rest.append((config, api))
        out.append(taken)
        pairs = rest
    return out


def run_probed(plan: Dict[str, List[str]], clean: Dict[str, Any], out: Path, args) -> Dict[str, Dict[str, Any]]:
    """The probed configs (generic mutants, plugged modules' faults): config -> its run over
    its APIs. Run in rounds (:func:`rounds`), one child check per round with every config
    of the round active (``TORCHPARITY_EMU_FAULT=c1,c2,...``, each targeted at its op) and
    a fire log (``TORCHPARITY_EMU_FAULT_LOG``), so a pair is tried only where its fault
    changed a result; rounds on disk are reused. Each fire names the API whose case ran
    (``TORCHPARITY_EMU_FAULT_API``): a pair is tried when its config fired in its own API;
    an API in whose run another config of the round fired too (an op the emulator runs
    below the recorded footprint, e.g. ``dist``'s backward through ``sub``) is run again
    alone with its own config, so that no other fault's red row is counted as its kill."""
    runs: Dict[str, Dict[str, Any]] = {c: {"asked": list(a), "apis": {}, "seconds": 0.0} for c, a in plan.items()}
    todo = [(f"probe-{n}", taken) for n, taken in enumerate(rounds(plan, clean))]
    solo = 0
    while todo:
        name, taken = todo.pop(0)
        done = _probe_round(name, taken, out, args)
        fired = done["fired"]
        labelled = {tuple(f.split("\t", 1)) for f in fired if "\t" in f}
        bare = {f for f in fired if "\t" not in f}
        for api, config in taken.items():
            got = done["apis"].get(api)
            if got is None:
                continue
            if len(taken) > 1 and any((c, api) in labelled for c in taken.values() if c != config):
                todo.append((f"probe-solo-{solo}", {api: config}))
                solo += 1
                continue
            hit = (config, api) in labelled or config in bare
            runs[config]["apis"][api] = dict(got, fired=hit if reports_fire(config) else None)
        per = (done.get("seconds") or 0.0) / max(1, len(taken))
        for config in set(taken.values()):
            runs[config]["seconds"] = round(runs[config]["seconds"] + per, 1)
        print(f"[oracle] {name}: {len(taken)} pairs, {done.get('seconds')} s", file=sys.stderr, flush=True)
    return runs


def _probe_round(name: str, taken: Dict[str, str], out: Path, args) -> Dict[str, Any]:
    """One round's check run (``{api: config}``), its fire log read as ``config\tapi``
    lines (a bare ``config`` from a process that ran no labelled case); reused from disk."""
    path = out / f"{name}.json"
    done = json.loads(path.read_text()) if path.exists() else None
    if done is not None and done.get("round") == taken:
        return done
    path.unlink(missing_ok=True)
    env = dict(os.environ)
    for k in (NUMERICS_ENV, MODULE_ENV):
        env.pop(k, None)
    if getattr(args, "modules", None):
        env[MODULE_ENV] = ",".join(args.modules)
    env[FAULT_ENV] = ",".join(sorted(set(taken.values())))
    log = out / f"{name}.fire"
    log.write_text("")
    env[LOG_ENV] = str(log)
    done = run_config(name, sorted(taken), out, args, env=env)
    done["round"] = taken
    done["fired"] = sorted({line.strip() for line in log.read_text().splitlines() if line.strip()})
    path.write_text(json.dumps(done))
    return done


def child(spec_file: str) -> None:
    """In the child: ``app.check.check`` over the APIs; writes the rows the oracle needs."""
    from torchparity.app.check import check

    spec = json.loads(Path(spec_file).read_text())
    out: Dict[str, Any] = {"asked": spec["apis"], "apis": {}}
    _collect(out, check(spec["apis"], spec["device"], jobs=spec["jobs"], dtypes=spec["dtypes"],
                        max_samples=spec["max_samples"], timeout=spec["timeout"]))
    Path(spec["out"]).write_text(json.dumps(out))


def _collect(out: Dict[str, Any], report) -> None:
    out["environment"] = report.environment.model_dump(mode="json")
    for a in report.apis:
        out["apis"][a.name] = {
            "verdict": a.verdict.status,
            "rows": [{"id": s.id, "dtype": s.dtype, "source": s.source, "status": _value(s.status),
                      "cause": _value(s.cause) if s.cause else None, "detail": s.detail[:300],
                      "metric": s.metric.model_dump(mode="json") if s.metric else None,
                      "injected": list(s.injected), "tags": list(s.tags), "outputs": s.outputs,
                      "footprint": sorted({e.op for e in s.footprint}),
                      # the ops of the API itself and of the callables it ran (not the
                      # scenario's scaffolding: a loss, an input transform)
                      "own": sorted({e.op for e in s.footprint if e.source in ("api", "callable")})}
                     for s in a.scenarios],
        }


def _value(x):
    return getattr(x, "value", x)


# -- generic mutants and plugged modules -------------------------------------------------
def fault_class(config: str) -> str:
    """``mutant-swap`` for ``mutant-swap@aten.sort.stable``: what the accounting counts by."""
    return config.split("@", 1)[0]


def probed(config: str) -> bool:
    """Whether a config's applicability is probed (its run says whether the fault changed
    a result): the generic mutants and the faults of plugged modules, whose wrappers take
    ``fire``; the built-in catalogue is judged by the footprint (``applicable``)."""
    from torchparity.devices.emulator import catalogue

    return fault_class(config) not in catalogue.FAULTS


# ops the recorded footprint leaves out (``api.footprint.METADATA_OPS``: copies, conversions,
# pure views) that an API made of them reaches: the mutants that fit them are tried on the
# layout and conversion APIs whose own footprint holds no compute op (``Tensor.to``,
# ``transpose``, ``clone``)
CONVERSION_API = re.compile(r"(^|\.)(to|type|type_as|double|float|half|bfloat16|int|long|short|bool|byte|char|"
                            r"cpu|cuda|npu|copy_|clone|contiguous)$")
HIDDEN_OPS = ("aten._to_copy", "aten.clone", "aten.as_strided", "aten.view", "aten._reshape_alias")


def reports_fire(config: str) -> bool:
    """Whether the config's fault reports when it changed a result: its module's ``wrap``
    takes ``fire``, or it acts through a collective or device-module hook (the loader
    compares what the hook returned)."""
    import inspect

    from torchparity.devices.emulator import faults as F

    module = F.module_of(config)
    try:
        takes = "fire" in inspect.signature(module.wrap).parameters
    except (TypeError, ValueError):
        takes = False
    return takes or hasattr(module, "collective") or hasattr(module, "device")


def mutant_configs(clean: Dict[str, Any], apis: Sequence[str], classes: Sequence[str], per_api: int,
                   seed: int) -> Dict[str, List[str]]:
    """``class@op`` -> the APIs to try it on: for every API, up to ``per_api`` aten ops of its
    own footprint (rows that passed clean; a seeded choice when it has more), every mutant
    class whose schema fits the op (``mutants.touches``). Whether it then changes anything
    is the run's probe."""
    from torchparity.devices.emulator import faults as F

    out: Dict[str, List[str]] = defaultdict(list)
    rng = random.Random(seed)
    for api in apis:
        base = clean["apis"].get(api)
        if base is None:
            continue
        passed = [r for r in base["rows"] if r["status"] == "pass"]
        ops = sorted({op for r in passed for op in r.get("own", r["footprint"]) if op.startswith("aten.")})
        if passed and not ops and (LAYOUT_API.search(api) or CONVERSION_API.search(api)):
            ops = list(HIDDEN_OPS)
        if len(ops) > per_api:
            ops = sorted(rng.sample(ops, per_api))
        for op in ops:
            for cls in classes:
                if F.touches(cls, op):
                    out[f"{cls}@{op}"].append(api)
    return dict(sorted(out.items()))


# -- accounting -------------------------------------------------------------------------
def _key(row: Dict[str, Any]) -> Tuple:
    return (row["source"], row["id"], row["dtype"])


# the c10d ops a collective fault's ``touches`` may name (a fault of a module with a
# ``collective`` hook applies to the 2-rank worlds only when it names one: an op fault of
# such a module that fires in a world's scaffolding is no pair of the world's API)
COLLECTIVE_OPS = ("allreduce_", "broadcast_", "allgather_", "_allgather_base_", "allgather_into_tensor_coalesced_",
                  "reduce_scatter_", "_reduce_scatter_base_", "reduce_", "gather_", "scatter_", "alltoall_",
                  "alltoall_base_", "recv_", "send", "barrier")
# what a device-module hook is asked (docs/faults.md): a synthetic allocator state, and the
# statistic each memory API answers from
_STATS = {"allocated_bytes.all.current": 4096, "allocated_bytes.all.peak": 8192,
          "reserved_bytes.all.current": 2097152, "reserved_bytes.all.peak": 2097152,
          "active_bytes.all.current": 4096, "num_alloc_retries": 0}
_STAT_OF = {"memory_allocated": "allocated_bytes.all.current", "max_memory_allocated": "allocated_bytes.all.peak",
            "memory_reserved": "reserved_bytes.all.current", "max_memory_reserved": "reserved_bytes.all.peak",
            "memory_cached": "reserved_bytes.all.current", "max_memory_cached": "reserved_bytes.all.peak"}


def _device_hook_changes(module, fault: str, api: str) -> bool:
    """Whether ``fault``'s device hook changes what memory API ``api`` answers: its own
    query (``memory_allocated``, ``max_memory_allocated``) or the statistic of
    ``memory_stats`` it answers from; the whole dict for ``memory_stats`` and the APIs
    built on it. A hook that changes another query (``memory_allocated`` + 512 on
    ``memory_reserved``, whose case reads ``memory_allocated`` only as a bound) fires in
    the scenario's scaffolding, not in the API; a hook that raises on the synthetic state
    is kept (applicable: its probe decides)."""
    name = api.rsplit(".", 1)[-1]
    try:
        stats = module.device(fault, "memory_stats", dict(_STATS))
        if name in _STAT_OF:
            key = _STAT_OF[name]
            own = module.device(fault, name, _STATS[key]) if name in ("memory_allocated", "max_memory_allocated") \
                else _STATS[key]
            return own != _STATS[key] or (stats or {}).get(key) != _STATS[key]
        # memory_stats and the APIs built on it (a summary, a snapshot, a reset of the peaks)
        return stats != _STATS or any(module.device(fault, q, _STATS[_STAT_OF[q]]) != _STATS[_STAT_OF[q]]
                                      for q in ("memory_allocated", "max_memory_allocated"))
    except Exception:  # noqa: BLE001 - a user's hook: its probe decides
        return True


def applicable(fault: str, api: str, clean: Dict[str, Any], profile: Optional[str] = None) -> bool:
    """Whether ``fault`` can touch what ``api`` measured in its clean run: a row that passed
    in a dtype the fault acts on (``_relevant``) dispatched an op the fault touches.
    ``profile``: the device's profile (``ascend-a2``), for the precision it computes in."""
    from torchparity.devices.emulator.faults import touches

    rows = [r for r in clean["rows"] if r["status"] == "pass"]
    if probed(fault):  # the footprint says where it may act; the run's probe says whether it did
        from torchparity.devices.emulator.faults import module_of

        module = module_of(fault)
        if hasattr(module, "device") and MEMORY_API.search(api) and rows and _device_hook_changes(module, fault, api):
            return True  # a device-module hook: the memory APIs whose answer it changes, by name
        if (hasattr(module, "collective") and any(r["source"] == "distpar" for r in rows)
                and any(touches(fault, f"c10d.{c}") for c in COLLECTIVE_OPS)):
            return True  # a collective fault: the 2-rank worlds, whose ranks the footprint does not see
        own = {op for r in rows for op in r.get("own", r["footprint"])}
        if rows and not own and (LAYOUT_API.search(api) or CONVERSION_API.search(api)):
            own = set(HIDDEN_OPS)  # copies and views the footprint does not record
        return any(touches(fault, op) for op in own)
    if fault == "memstat-zero":
        return bool(MEMORY_API.search(api)) and bool(rows)
    if fault == "strides":
        if not LAYOUT_API.search(api):
            return False
        if NEW_LAYOUT_API.search(api) and rows:
            # allocations and copies are no compute op: the footprint leaves them out
            return True
    if fault == "collective-noop" and any(r["source"] == "distpar" and r["id"].startswith("world")
                                          and not any(op.startswith("c10d.") for op in r["footprint"])
                                          for r in rows):
        # a distpar world whose ranks recorded no collective op at all: DDP's and FSDP's
        # reducers call the process group from C++, past the dispatcher, so its collectives
        # are unseen; every other row is judged by the c10d ops it recorded (below): a
        # group query issues none, object collectives in an emulated world run on CPU
        # tensors (its backend serves the CPU too), and ``local`` rows run in one process
        return True
    if fault == "nan-drop":
        # NaN must reach the max / min / sum: only rows whose scenario feeds one
        rows = [r for r in rows if "nan-input" in (r.get("tags") or ())]
    if fault in NUMERIC_EPS:
        rows = [r for r in rows if NUMERIC_EPS[fault] > forgiven(r, profile)]
    if fault == "dtype-widen":
        # the fault's only mark is a float16/bfloat16 result come back as float32; where
        # the CPU's compared answer holds no float16/bfloat16 tensor (an observer's
        # float32 buffers, a pass/raise), a widened intermediate ends where a correct chip
        # computing through float32 ends: an equivalent mutant, not a weak scenario
        rows = [r for r in rows if _shows(r, ("float16", "bfloat16"))]
        # and the autograd engine casts each node's results to its inputs' dtypes
        # (``validate_outputs``) before anything reads them: a backward kernel's widened
        # result is rounded back, as a correct chip computing it through float32 rounds it
        # (what accumulates gradients, an ``add``, is a forward op and still counts)
        engine = not DIRECT_BACKWARD_API.search(api)
        return any(touches(fault, op) for r in _relevant(fault, rows)
                   for op in r.get("own", r["footprint"]) if not (engine and "backward" in op))
    if fault == "strides" and not NEW_LAYOUT_API.search(api):
        # the fault makes new outputs contiguous: where every compared CPU output is
        # contiguous (a scalar norm, an in-place API's result), it changes nothing
        rows = [r for r in rows if _shows(r, ("strided",))]
    # a fault in the scenario's scaffolding (a model's loss, an input transform) is not a
    # fault of the API: only the ops the API (or a callable it ran) dispatched count
    return any(touches(fault, op) for r in _relevant(fault, rows) for op in r.get("own", r["footprint"]))


def _shows(row: Dict[str, Any], kinds: Sequence[str]) -> bool:
    """Whether the row's compared CPU answer may hold one of ``kinds`` (``outputs``, from
    ``judge.compare.output_kinds``): unrecorded or opaque answers may hold anything."""
    outputs = row.get("outputs")
    return outputs is None or "opaque" in outputs or any(k in outputs for k in kinds)


def forgiven(row: Dict[str, Any], profile: Optional[str]) -> float:
    """The relative error the judge forgives a correct device on this row's outputs when
    they differ from the CPU's: its golden row's min(mean, RMSE ratio fail) x floor, the row
    of the precision the chip computes the row's own ops in (HF32 for float32 convolutions
    on A2); 0 where no golden row applies (exact comparisons, integers)."""
    from torchparity.judge.standards import THRESHOLDS

    golden = THRESHOLDS["golden"]
    key = row.get("dtype")
    if key == "float32" and profile and _reduced(row.get("own", row.get("footprint", [])), profile):
        key = "hf32"
    r = golden.get(key or "")
    if r is None:
        return 0.0
    return min(r["mean_rel_ratio_fail"], r["rmse_ratio_fail"]) * r["floor"]


def _reduced(ops: Sequence[str], profile: str) -> bool:
    """Whether the chip computes one of ``ops`` (aten names) in reduced precision in float32."""
    import torch

    from torchparity.devices.emulator.noise import declared_precision

    for name in ops:
        namespace, _, rest = name.replace("::", ".").partition(".")
        if namespace != "aten":
            continue
        base, _, overload = rest.partition(".")
        packet = getattr(torch.ops.aten, base, None)
        if packet is None:
            continue
        try:
            op = getattr(packet, overload or (packet.overloads() or ["default"])[0])
        except (AttributeError, RuntimeError):
            continue
        bits = (declared_precision(op, profile) or {}).get(torch.float32)
        if bits is not None and bits <= 10:
            return True
    return False


def profile_of(device: str) -> Optional[str]:
    """``ascend-a2`` for ``emu:ascend-a2``; None for a device without a profile."""
    return device.split(":", 1)[1] if device.startswith("emu:") else None


def account(clean: Dict[str, Any], runs: Dict[str, Dict[str, Any]], stratum: Dict[str, str],
            faults: Iterable[str], profile: Optional[str] = None,
            only: Optional[Iterable[str]] = None) -> Dict[str, Any]:
    """Pairs tried / killed / survived per source and per fault, survivors and false fails.

    ``clean``: the clean run (``{"apis": {api: {"verdict", "rows"}}}``); ``runs``: config ->
    run of the same shape (a fault name, or ``noise``)."""
    from torchparity.devices.emulator.faults import touches

    per_source: Dict[str, Counter] = defaultdict(Counter)
    per_fault: Dict[str, Counter] = defaultdict(Counter)
    survivors: List[Dict[str, Any]] = []
    false_fails: List[Dict[str, Any]] = []
    not_applicable: Counter = Counter()
    equivalent: List[Dict[str, Any]] = []
    keep = None if only is None else set(only)
    for api, base in sorted(clean["apis"].items()):
        if keep is not None and api not in keep:
            continue
        src = stratum.get(api, "?")
        passed = {_key(r): r for r in base["rows"] if r["status"] == "pass"}
        if not passed:
            continue  # nothing that passed: nothing a fault could turn red
        for fault in faults:
            # a probed config's pairs are those it ran (its probe counts the rest)
            if not probed(fault) and not applicable(fault, api, base, profile):
                not_applicable[fault_class(fault)] += 1
                continue
            got = (runs.get(fault) or {}).get("apis", {}).get(api)
            if got is None:
                continue
            if got.get("fired") is False:  # probed: the fault changed no result on this API
                not_applicable[fault_class(fault)] += 1
                continue
            cls = fault_class(fault)
            rows = {_key(r): r for r in got["rows"]}
            red = [rows[k] for k in passed if k in rows and rows[k]["status"] != "pass"]
            gone = [k for k in passed if k not in rows]
            changed = got["verdict"] != base["verdict"]
            if (probed(fault) and not (red or changed or gone)
                    and all(_unchanged(passed[k], rows[k]) for k in passed)):
                # the probe at the API's level: every compared output is bit for bit the CPU's,
                # as in the clean run: the mutant fired inside but the API's device output is
                # the clean one (an equivalent mutant, e.g. an alias of an intermediate)
                not_applicable[cls] += 1
                equivalent.append({"api": api, "fault": fault})
                continue
            per_source[src]["tried"] += 1
            per_fault[cls]["tried"] += 1
            if red or changed or gone:
                harness = red and all(r["status"] in HARNESS or r["cause"] == "harness_error"
                                      for r in red) and not changed
                kind = "killed_by_harness" if harness else "killed"
                per_source[src][kind] += 1
                per_fault[cls][kind] += 1
            else:
                per_source[src]["survived"] += 1
                per_fault[cls]["survived"] += 1
                touched = _relevant(fault, [r for r in got["rows"] if _key(r) in passed
                                            and any(touches(fault, op) for op in r["footprint"])])
                survivors.append({
                    "api": api, "source": src, "fault": fault, "verdict": got["verdict"],
                    "why": _why(fault, touched, got["rows"]),
                    "rows": [{"scenario": f"{r['source']}:{r['id']}", "dtype": r["dtype"],
                              "metric": r["metric"]} for r in (touched or got["rows"])[:5]],
                })
        noisy = (runs.get(NOISE) or {}).get("apis", {}).get(api)
        if noisy is not None:
            per_source[src]["noise_tried"] += 1
            rows = {_key(r): r for r in noisy["rows"]}
            red = [rows[k] for k in passed if k in rows and rows[k]["status"] != "pass"]
            if red or noisy["verdict"] != base["verdict"]:
                per_source[src]["false_fails"] += 1
                false_fails.append({"api": api, "source": src, "verdict": noisy["verdict"],
                                    "rows": [{"scenario": f"{r['source']}:{r['id']}", "dtype": r["dtype"],
                                              "status": r["status"], "cause": r["cause"],
                                              "detail": r["detail"][:200]} for r in red[:5]]})
    return {"per_source": {k: dict(v) for k, v in sorted(per_source.items())},
            "per_fault": {k: dict(v) for k, v in sorted(per_fault.items())},
            "not_applicable": dict(not_applicable), "equivalent": equivalent, "survivors": survivors,
            "false_fails": false_fails}


# metrics that say a row's compared outputs are the CPU's bit for bit (judge.standards)
_IDENTICAL = {"elements_differing_from_cpu": 0.0, "mismatched_elements": 0.0, "abs_diff": 0.0, "equal": 1.0}


# the sources whose rows compare the API's own return (and gradients), not values a
# scenario derived from it (a counter's growth, a flag): only there does "every compared
# output is the clean one" say that the API's device output did not change
OWN_OUTPUT_SOURCES = ("opinfo", "module")


def _unchanged(clean_row: Dict[str, Any], row: Dict[str, Any]) -> bool:
    """Whether a row's device output is provably the clean run's: a row of a source that
    compares the API's own return, both runs' metrics saying the outputs equal the CPU's
    bit for bit (a row without such a metric may have changed)."""
    if row.get("source") not in OWN_OUTPUT_SOURCES:
        return False
    def identical(r):
        m = r.get("metric") or {}
        return m.get("name") in _IDENTICAL and m.get("value") == _IDENTICAL[m["name"]]
    return row.get("status") == "pass" and identical(clean_row) and identical(row)


FLOATING = ("float16", "bfloat16", "float32", "float64", "complex32", "complex64", "complex128")


def _relevant(fault: str, rows: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The rows a fault can show in: floating dtypes for value faults, float16/bfloat16
    for ``dtype-widen`` (a row without a dtype is kept)."""
    if fault.startswith("numeric-") or fault in ("reduce-drop", "nan-drop", "grad-zero"):
        keep = FLOATING
    elif fault == "dtype-widen":
        keep = ("float16", "bfloat16")
    else:
        return rows
    return [r for r in rows if not r.get("dtype") or r["dtype"] in keep or r["dtype"] == "-"]


def _why(fault: str, touched: List[Dict[str, Any]], rows: List[Dict[str, Any]]) -> str:
    if fault == "memstat-zero":
        return ("every compared row stayed pass with the counters at 0: the scenario compares "
                "counters with one another (0 equals 0), not with the bytes of an allocation it made")
    if not touched and probed(fault):
        return ("the fault fired in the API's run (its probe) but every compared row stayed pass: the "
                "scenario compares values derived from the API's answer (a counter's growth and release, "
                "a flag), which the fault leaves equal")
    if not touched:
        return ("the fault acts in the world's rank processes, whose ops the footprint does not "
                "see, and every compared row stayed pass")
    if fault == "dtype-widen" and not any(r.get("cause") == "metadata" for r in rows):
        return ("every compared output kept the CPU's dtype: the widened float32 results were "
                "written back in place into tensors of the CPU's dtype (parameters, optimizer "
                "state, an out= tensor), which rounds them as a correct device computing in "
                "float32 does; the values stayed within the dtype's bar")
    warned = [r for r in touched if "warn:" in (r.get("detail") or "")]
    if warned:
        return f"the judge saw it and only warned: {warned[0]['detail'][:180]}"
    with_metric = [r for r in touched if r.get("metric")]
    if with_metric:
        m = with_metric[0]["metric"]
        if not m.get("value"):
            return (f"the compared outputs equal the CPU's ({m.get('name')} = {m.get('value')}): the "
                    "scenario's inputs or outputs do not show this fault (e.g. values the fault leaves "
                    "unchanged, outputs not compared)")
        return (f"the touched rows passed under the judge's bar: {m.get('name')} = {m.get('value')} "
                f"within {m.get('threshold')} ({m.get('standard') or 'standard'})")
    return "the touched rows compare no value the fault changes (metadata, a property, or a boolean)"


def rate(c: Dict[str, int]) -> str:
    tried = c.get("tried", 0)
    killed = c.get("killed", 0) + c.get("killed_by_harness", 0)
    return f"{100.0 * killed / tried:.1f} %" if tried else "–"


def summary(acc: Dict[str, Any]) -> str:
    """``killed/tried (rate), N survivors, M false fails`` over every source."""
    total: Counter = Counter()
    for c in acc["per_source"].values():
        total.update(c)
    return (f"{total.get('killed', 0) + total.get('killed_by_harness', 0)}/{total.get('tried', 0)} "
            f"pairs killed ({rate(total)}), {len(acc['survivors'])} survivors, "
            f"{len(acc['false_fails'])} false fails of {total.get('noise_tried', 0)} APIs under noise")


def render(result: Dict[str, Any]) -> str:
    acc = result["accounting"]
    runs_total = round(sum(v or 0 for v in result["run_seconds"].values()), 1)
    lines = [f"oracle: {len(result['apis'])} APIs on {result['device']} (seed {result['seed']}), "
             f"wall {result['wall_seconds']} s this invocation, {runs_total} s in the check runs "
             "(a run already on disk is reused)", "",
             "| source | APIs | pairs tried | killed | killed by harness | survived | kill rate | "
             "noise: APIs | false fails |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    sizes = Counter(result["strata"][a] for a in result["apis"])
    for src in sorted(set(sizes) | set(acc["per_source"])):
        c = acc["per_source"].get(src, {})
        lines.append(f"| {src} | {sizes.get(src, 0)} | {c.get('tried', 0)} | {c.get('killed', 0)} | "
                     f"{c.get('killed_by_harness', 0)} | {c.get('survived', 0)} | {rate(c)} | "
                     f"{c.get('noise_tried', 0)} | {c.get('false_fails', 0)} |")
    lines += ["", "| fault | pairs tried | killed | killed by harness | survived | kill rate | not applicable |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    classes = list(dict.fromkeys(fault_class(f) for f in result["faults"]))
    for fault in classes:
        c = acc["per_fault"].get(fault, {})
        lines.append(f"| {fault} | {c.get('tried', 0)} | {c.get('killed', 0)} | "
                     f"{c.get('killed_by_harness', 0)} | {c.get('survived', 0)} | {rate(c)} | "
                     f"{acc['not_applicable'].get(fault, 0)} |")
    for label, key in (("the stratified sample alone", "accounting_sample"),
                       ("the fixed fault-targeted set alone", "accounting_fixed")):
        sub = result.get(key)
        if sub:
            lines += ["", f"{label}: " + summary(sub)]
            lines += ["  per fault: " + ", ".join(f"{f} {c.get('killed', 0) + c.get('killed_by_harness', 0)}/"
                                                  f"{c.get('tried', 0)}" for f, c in sub["per_fault"].items())]
    lines += ["", "wall time per run: " + ", ".join(f"{k} {v} s" for k, v in result["run_seconds"].items())]
    if acc.get("equivalent"):
        lines += ["", f"equivalent mutants (fired inside the API, its device output bit for bit the clean one; "
                  f"counted as not applicable) ({len(acc['equivalent'])}): "
                  + ", ".join(f"{e['api']} under {e['fault']}" for e in acc["equivalent"])]
    lines += ["", f"survivors ({len(acc['survivors'])}):"]
    for s in acc["survivors"]:
        rows = "; ".join(f"{r['scenario']} [{r['dtype']}]" for r in s["rows"])
        lines.append(f"- {s['api']} ({s['source']}) under {s['fault']}: {s['why']} — {rows}")
    lines += ["", f"false fails under device noise ({len(acc['false_fails'])}):"]
    for f in acc["false_fails"]:
        rows = "; ".join(f"{r['scenario']} [{r['dtype']}] {r['status']}/{r['cause']}: {r['detail'][:120]}"
                         for r in f["rows"]) or f"verdict {f['verdict']}"
        lines.append(f"- {f['api']} ({f['source']}): {rows}")
    lines += ["", "all: " + summary(acc)]
    lines += ["", "APIs: " + ", ".join(result["apis"])]
    if result.get("fixed"):
        lines += ["", "of them the fixed fault-targeted set: " + ", ".join(result["fixed"])]
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--docs", type=Path, default=DOCS, help="vendor docs folder")
    parser.add_argument("--torch-version", default="2.13.0")
    parser.add_argument("--device", default="emu:ascend-a2")
    parser.add_argument("--sample", type=int, default=400, help="APIs in the stratified sample [400]")
    parser.add_argument("--all", action="store_true", help="the whole list (slow suite)")
    parser.add_argument("--apis", nargs="*", default=None, help="these APIs instead of a sample")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plan-limit", type=int, default=None,
                        help="stratify only the first N APIs of the seeded shuffle")
    parser.add_argument("--faults", default=None,
                        help="comma-separated fault names or fault modules (a .py path or module name) "
                             "[the built-in catalogue]")
    parser.add_argument("--mutants", action="store_true",
                        help="also the generic per-op mutants (devices/emulator/mutants.py), probed")
    parser.add_argument("--mutant-ops", type=int, default=4,
                        help="with --mutants: at most this many footprint ops per API [4]")
    parser.add_argument("--no-noise", action="store_true", help="skip the device-noise run")
    parser.add_argument("--no-fixed", action="store_true",
                        help="leave out the fixed fault-targeted set (FIXED_SET) run beside a sample")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--max-samples", type=int, default=2)
    parser.add_argument("--dtypes", type=lambda v: [d.strip() for d in v.split(",") if d.strip()],
                        default=None, help="only these dtypes of each scenario (comma-separated) [all]")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child)
        return

    from torchparity.devices.emulator import catalogue, mutants
    from torchparity.devices.emulator import faults as F

    # --faults: fault names, or fault modules (a .py path or an importable name): every
    # fault of a module, the module plugged into every run (TORCHPARITY_EMU_FAULT_MODULE)
    items = [f.strip() for f in (args.faults or "").split(",") if f.strip()]
    args.modules = []
    faults = []
    for item in items:
        if F.split(item)[0] in F.FAULTS:
            faults.append(item)
            continue
        try:
            module = F.load_module(item)
        except ValueError as e:
            print(f"oracle: {item!r} is no known fault and no fault module ({e})", file=sys.stderr)
            raise SystemExit(2) from None
        args.modules.append(item)
        F.plug(item)
        faults.extend(module.FAULTS)
    if not items and not args.mutants:
        faults = list(catalogue.FAULTS)
    out = args.out or Path(tempfile.mkdtemp(prefix="oracle-"))
    out.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    strata_file = out / "strata.json"
    if strata_file.exists():
        by_source = json.loads(strata_file.read_text())
    else:
        from torchparity.evidence.vendor_docs import load_vendor_docs

        names = list(args.apis) if args.apis else load_vendor_docs(args.docs, args.torch_version).names()
        by_source = strata(names, args.seed, None if args.apis else args.plan_limit)
        strata_file.write_text(json.dumps(by_source))
    if args.apis:
        apis = sorted(a for a in args.apis if a in by_source)
    elif args.all:
        apis = sorted(by_source)
    else:
        apis = stratified(by_source, args.sample, args.seed)
    fixed: List[str] = []
    if not args.apis and not args.no_fixed:
        fixed_file = out / "fixed.json"
        if fixed_file.exists():
            fixed_by_source = json.loads(fixed_file.read_text())
        else:
            fixed_by_source = strata(FIXED_SET, args.seed)
            fixed_file.write_text(json.dumps(fixed_by_source))
        fixed = sorted(fixed_by_source)
        by_source = dict(fixed_by_source, **by_source)
        apis = sorted(set(apis) | set(fixed))
    profile = profile_of(args.device)
    print(f"[oracle] {len(apis)} APIs over {len(set(by_source[a] for a in apis))} sources", file=sys.stderr)
    clean = run_config("clean", apis, out, args)
    runs: Dict[str, Dict[str, Any]] = {}
    seconds = {"clean": clean.get("seconds")}
    to_probe: Dict[str, List[str]] = {}
    if args.mutants:  # every generic mutant class on up to --mutant-ops ops of each API's footprint
        configs = mutant_configs(clean, apis, list(mutants.FAULTS), args.mutant_ops, args.seed)
        print(f"[oracle] mutants: {len(configs)} (class, op) configs", file=sys.stderr)
        faults.extend(configs)
        to_probe.update(configs)  # the APIs it chose, hidden ops included
    for fault in faults:
        if fault in to_probe:
            continue
        targets = [a for a in apis if a in clean["apis"] and applicable(fault, a, clean["apis"][a], profile)
                   and any(r["status"] == "pass" for r in clean["apis"][a]["rows"])]
        if not targets:
            continue
        if probed(fault):
            to_probe[fault] = targets
            continue
        print(f"[oracle] {fault}: {len(targets)} APIs", file=sys.stderr, flush=True)
        runs[fault] = run_config(fault, targets, out, args)
        seconds[fault] = runs[fault].get("seconds")
    if to_probe:
        print(f"[oracle] probed: {len(to_probe)} configs, {sum(map(len, to_probe.values()))} pairs",
              file=sys.stderr, flush=True)
        for config, run in run_probed(to_probe, clean, out, args).items():
            runs[config] = run
            seconds[config] = run.get("seconds")
    if not args.no_noise:
        targets = [a for a in apis if a in clean["apis"]]
        runs[NOISE] = run_config(NOISE, targets, out, args)
        seconds[NOISE] = runs[NOISE].get("seconds")
    result = {"device": args.device, "seed": args.seed, "apis": apis, "faults": faults,
              "strata": {a: by_source[a] for a in apis},
              "accounting": account(clean, runs, by_source, faults, profile),
              "fixed": fixed,
              "accounting_sample": account(clean, runs, by_source, faults, profile,
                                           only=[a for a in apis if a not in fixed]) if fixed else None,
              "accounting_fixed": account(clean, runs, by_source, faults, profile, only=fixed) if fixed else None,
              "run_seconds": seconds, "wall_seconds": round(time.monotonic() - start, 1)}
    (out / "oracle.json").write_text(json.dumps(result, indent=1))
    print(render(result))
    print(f"\n(written to {out / 'oracle.json'})", file=sys.stderr)


if __name__ == "__main__":
    main()
