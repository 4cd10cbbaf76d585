"""The cases of the ``tooling`` source: one real function per tooling API, and the table.

Every body ``f(device, dtype)`` applies its tool to tensors and modules on the device
under test (a profile of device work, a package holding a device model, an export of a
device module, an op registered for the device's dispatch key, ...) and returns what the
tool produced, compared with the same body run on the CPU. Profilers record op names,
counts and times that differ between a device and the CPU for reasons that are not the
API's (an accelerator's own kernels, the emulator's CPU views): the bodies keep only the
facts the API promises on any device — the ``record_function`` labels and the listed ops
that ran (:func:`ran`), structure and counts of what the API produced. Timings are never
compared. A tool that is host-side only (``torch.monitor``, ITT ranges, name lookups of
``torch.overrides``, build and config queries) gets host inputs and no device work: its
rows are host-only evidence. APIs that cannot run here are ``Excluded`` with the reason.

A package is written to memory with a model whose parameters live on the device, then
imported back; a hub repo is a ``hubconf.py`` in a temporary folder, loaded with
``source="local"`` (or a GitHub repo's copy cached in a temporary hub dir, which ``list``
and ``help`` read, ``source="github"`` having no local form), and checkpoints are fetched from ``file://`` URLs (no network). The
helpers and bodies live in this one file: a body's snippet is its source with the helpers
it uses (``Case.snippet``), and runs on its own.
"""

from __future__ import annotations

import datetime
import io
import json
import os
import platform
import re
import sys
import tempfile
import types
import warnings

import torch
from torch.library import Library, fallthrough_kernel
from torch.overrides import (
    TorchFunctionMode,
    get_overridable_functions,
    has_torch_function,
    resolve_name,
)
from torch.package import (
    Directory,
    EmptyMatchError,
    PackageExporter,
    PackageImporter,
    PackagingError,
)
from torch.profiler import ProfilerAction, ProfilerActivity, profile, schedule

from ..base import Case, Excluded
from . import tensorboard

F32 = ("float32",)
# the cases whose answer is about the tensor's dtype (what is serialised, compared, shared
# or filled): asked in every float dtype, float16 and bfloat16 (what an Ascend user trains
# in) included; the source is unprobed, so each of these runs on the CPU in all four
FD = ("float32", "float64", "float16", "bfloat16")
# a case whose dtype only feeds scaffolding compute (a registered kernel's ``t * s + 1``,
# compared as Python numbers): float32 and float64
FD64 = ("float32", "float64")


def vals(t):
    return t.detach().cpu().tolist()


def inputs(device, dtype):
    """the input ``x`` (4 x 3), made on the CPU and moved"""
    return torch.linspace(-1, 1, 12, dtype=dtype).reshape(4, 3).to(device)


def model(device, dtype):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU()).to(device=device, dtype=dtype)


LISTED = ("tp.block", "aten::mm", "aten::relu", "aten::sum")


def ran(names):
    """The listed labels and ops that ran (an accelerator may run more ops)."""
    names = set(names)
    return [n for n in LISTED if n in names]


def work(x):
    with torch.profiler.record_function("tp.block"):
        return (x @ x.T).relu().sum()


def chrome_trace(prof):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            return json.load(f)


# --- profilers ------------------------------------------------------------------------------


def profiled(x):
    """device work under the autograd profiler"""
    with torch.autograd.profiler.profile() as prof:
        y = work(x)
    return prof, y


def kineto(x, with_stack=False, before_stop=None):
    """device work under a Kineto profile (``with_stack``: the two exports that need
    Python stacks; ``before_stop(kp, y)``: what is done before it stops)"""
    kp = torch.profiler._KinetoProfile(activities=[ProfilerActivity.CPU], record_shapes=True,
                                       profile_memory=True, with_stack=with_stack)
    kp.start()
    y = work(x)
    if before_stop is not None:
        before_stop(kp, y)
    kp.stop()
    return kp, y


def scheduled(x):
    """six steps of device work under a scheduled profile (wait 1, warmup 1, active 2)"""
    sched = schedule(wait=1, warmup=1, active=2, repeat=1)
    traces = []

    def on_ready(p):
        names = [e.name for e in p.events()]
        traces.append([ran(names), sorted({n for n in names if n.startswith("tp.step")})])

    with profile(schedule=sched, on_trace_ready=on_ready) as prof:
        for step in range(6):
            with torch.profiler.record_function(f"tp.step{step}"):
                y = (x @ x.T).relu().sum()
            prof.step()
    return prof, sched, traces, y


def autograd_profiler_key_averages(device, dtype):
    prof, y = profiled(inputs(device, dtype))
    ka = prof.key_averages()
    return [ran(e.key for e in ka), [e.count for e in ka if e.key == "tp.block"], vals(y)]


def autograd_profiler_export_chrome_trace(device, dtype):
    prof, y = profiled(inputs(device, dtype))
    trace = chrome_trace(prof)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    return [ran(e.get("name") for e in events), vals(y)]


def autograd_profiler_self_cpu_time_total(device, dtype):
    prof, y = profiled(inputs(device, dtype))
    t = prof.self_cpu_time_total
    return [type(t).__name__, t >= 0, vals(y)]


def autograd_profiler_total_average(device, dtype):
    prof, y = profiled(inputs(device, dtype))
    avg = prof.total_average()
    return [type(avg).__name__, avg.key, avg.count >= 3, vals(y)]


def kineto_step_tracker(device, dtype, member):
    """``KinetoStepTracker`` and its step counters (``member``): host-only bookkeeping"""
    from torch.autograd.profiler import KinetoStepTracker as K
    if member == "current_step":
        K.init_step_count("tp.current")
        steps = [K.current_step()]
        K.increment_step("tp.current")
        steps.append(K.current_step())
        K.erase_step_count("tp.current")
        return [steps[1] - steps[0]]
    if member == "increment_step":
        K.init_step_count("tp.incr")
        returned = [K.increment_step("tp.incr") for _ in range(2)]
        K.erase_step_count("tp.incr")
        return [returned[1] - returned[0]]
    K.init_step_count("tp.tracker")
    before = K.current_step()
    for _ in range(3):
        K.increment_step("tp.tracker")
    after = K.current_step()
    K.erase_step_count("tp.tracker")
    return [after - before]


def profiler_profile(device, dtype):
    prof, sched, traces, y = scheduled(inputs(device, dtype))
    return [traces, vals(y)]


def profiler_profile_step(device, dtype):
    prof, sched, traces, y = scheduled(inputs(device, dtype))
    return [prof.step_num, traces]


def profiler_schedule(device, dtype):
    prof, sched, traces, y = scheduled(inputs(device, dtype))
    return [[sched(i).name for i in range(6)], traces]


def profiler_ProfilerAction(device, dtype):
    prof, sched, traces, y = scheduled(inputs(device, dtype))
    return [[str(sched(i)) for i in range(6)], sorted(a.name for a in ProfilerAction), traces]


def profiler_ProfilerActivity(device, dtype):
    kp, y = kineto(inputs(device, dtype))
    kinds = sorted({e.device_type.name for e in kp.events() if e.name in ("tp.block", "aten::mm")})
    return [kinds, ProfilerActivity.CPU in torch.profiler.supported_activities(), vals(y)]


def profiler_ProfilerActivity_name(device, dtype):
    kp, y = kineto(inputs(device, dtype))
    return [ProfilerActivity.CPU.name, sorted({e.device_type.name for e in kp.events() if e.name == "tp.block"})]


def profiler_KinetoProfile(device, dtype):
    kp, y = kineto(inputs(device, dtype))
    return [ran(e.name for e in kp.events()), vals(y)]


def profiler_KinetoProfile_events(device, dtype):
    kp, y = kineto(inputs(device, dtype))
    ev = kp.events()
    return [type(ev).__name__, ran(e.name for e in ev), [e.count for e in ev.key_averages() if e.key == "tp.block"]]


def profiler_KinetoProfile_key_averages(device, dtype):
    kp, y = kineto(inputs(device, dtype))
    ka = kp.key_averages(group_by_input_shape=True)
    return [ran(e.key for e in ka), sorted(str(e.input_shapes) for e in ka if e.key == "aten::mm")]


def profiler_KinetoProfile_add_metadata(device, dtype):
    kp, y = kineto(inputs(device, dtype), before_stop=lambda kp, y: kp.add_metadata("tp_note", "tooling"))
    return [chrome_trace(kp).get("tp_note"), ran(e.name for e in kp.events())]


def profiler_KinetoProfile_add_metadata_json(device, dtype):
    kp, y = kineto(inputs(device, dtype),
                   before_stop=lambda kp, y: kp.add_metadata_json("tp_json", '{"rows": %d}' % y.numel()))
    return [chrome_trace(kp).get("tp_json"), ran(e.name for e in kp.events())]


def profiler_KinetoProfile_export_chrome_trace(device, dtype):
    kp, y = kineto(inputs(device, dtype))
    trace = chrome_trace(kp)
    return [ran(e.get("name") for e in trace["traceEvents"]), vals(y)]


def profiler_KinetoProfile_export_stacks(device, dtype):
    kp, y = kineto(inputs(device, dtype), with_stack=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "stacks.txt")
        kp.export_stacks(path, "self_cpu_time_total")
        with open(path) as f:
            lines = f.read().splitlines()
    return [all(ln.rsplit(" ", 1)[-1].isdigit() for ln in lines), vals(y)]


def profiler_KinetoProfile_export_memory_timeline(device, dtype):
    kp, y = kineto(inputs(device, dtype), with_stack=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "memory.json")
        kp.export_memory_timeline(path, device=str(torch.device(device)))
        with open(path) as f:
            timeline = json.load(f)
    return [type(timeline).__name__, len(timeline), len(timeline[0]) == len(timeline[1]), vals(y)]


def profiler_tensorboard_trace_handler(device, dtype):
    from torch.profiler import tensorboard_trace_handler
    x = inputs(device, dtype)
    with tempfile.TemporaryDirectory() as tmp:
        handler = tensorboard_trace_handler(tmp, worker_name="tp_worker")
        with profile(schedule=schedule(wait=0, warmup=0, active=1, repeat=2), on_trace_ready=handler) as prof:
            for _ in range(3):
                work(x)
                prof.step()
        files = sorted(os.listdir(tmp))
        with open(os.path.join(tmp, files[0])) as f:
            names = ran(e.get("name") for e in json.load(f)["traceEvents"])
    return [len(files), all(f.startswith("tp_worker.") and f.endswith(".pt.trace.json") for f in files), names]


def itt_is_available(device, dtype):
    """a build query: host-only"""
    return [torch.profiler.itt.is_available()]


def itt_range(device, dtype, member):
    """an ITT range pushed and popped (``member``: whose answer is returned, the depth):
    host-side annotations, no device work"""
    depth = torch.profiler.itt.range_push("tp.range")
    popped = torch.profiler.itt.range_pop()
    return [depth if member == "range_push" else popped]


def itt_mark(device, dtype):
    return [torch.profiler.itt.mark("tp.mark")]


# --- torch.monitor (host-side counters: host inputs) --------------------------------------------


def monitored(dtype):
    """A Stat fed losses computed on the host, an Event logged, a handler registered and
    unregistered: what each step left (torch.monitor keeps host-side counters only)"""
    from torch.monitor import (
        Aggregation,
        Event,
        Stat,
        log_event,
        register_event_handler,
        unregister_event_handler,
    )
    A = Aggregation
    x = inputs("cpu", dtype)
    seen = []
    handle = register_event_handler(
        lambda e: seen.append(e) if e.name.startswith("tp.") or e.name == "torch.monitor.Stat" else None)
    stat = Stat("tp.loss", [A.MEAN, A.COUNT, A.MAX, A.SUM, A.MIN], datetime.timedelta(hours=1), max_samples=3)
    losses = ((x @ x.T).sum(dim=1) / 4).tolist()
    counts = []
    for v in losses:
        stat.add(v)
        counts.append(stat.count)
    got = {k.name: v for k, v in stat.get().items()}
    when = datetime.datetime(2024, 1, 1, 12, 0, 0)
    ev = Event("tp.step", when, {"loss": losses[0], "rows": x.shape[0], "tag": "tp"})
    log_event(ev)
    unregister_event_handler(handle)
    log_event(Event("tp.after", when, {}))
    stats = [dict(e.data) for e in seen if e.name == "torch.monitor.Stat" and "tp.loss.count" in e.data]
    mine = [e for e in seen if e.name.startswith("tp.")]
    return types.SimpleNamespace(A=A, handle=handle, stat=stat, counts=counts, got=got, ev=ev, seen=seen,
                                 stats=stats, mine=mine)


def monitor_Aggregation(device, dtype):
    m = monitored(dtype)
    return [sorted(m.A.__members__), sorted(m.got)]


def monitor_Aggregation_name(device, dtype):
    return sorted(k.name for k in monitored(dtype).stat.get())


def monitor_Stat(device, dtype):
    m = monitored(dtype)
    return [m.got, m.counts]


def monitor_Stat_init(device, dtype):
    m = monitored(dtype)
    return [m.stat.name, m.got]


def monitor_Stat_add(device, dtype):
    m = monitored(dtype)
    return [m.counts, m.stats]


def monitor_Stat_count(device, dtype):
    return monitored(dtype).counts


def monitor_Stat_get(device, dtype):
    return monitored(dtype).got


def monitor_Stat_name(device, dtype):
    return monitored(dtype).stat.name


def monitor_Event(device, dtype):
    m = monitored(dtype)
    return [[e.name for e in m.mine], [dict(e.data) for e in m.mine]]


def monitor_Event_init(device, dtype):
    m = monitored(dtype)
    return [m.ev.name, str(m.ev.timestamp), dict(m.ev.data)]


def monitor_Event_data(device, dtype):
    return dict(monitored(dtype).ev.data)


def monitor_Event_name(device, dtype):
    m = monitored(dtype)
    return [m.ev.name, [e.name for e in m.mine]]


def monitor_Event_timestamp(device, dtype):
    m = monitored(dtype)
    return [str(m.ev.timestamp), str(m.mine[0].timestamp)]


def monitor_EventHandlerHandle(device, dtype):
    m = monitored(dtype)
    return [type(m.handle).__name__, [e.name for e in m.mine], len(m.stats)]


def monitor_data_value_t(device, dtype):
    return sorted((k, type(v).__name__, v) for k, v in monitored(dtype).ev.data.items())


def monitor_log_event(device, dtype):
    m = monitored(dtype)
    return [[e.name for e in m.mine], dict(m.mine[0].data)]


def monitor_register_event_handler(device, dtype):
    m = monitored(dtype)
    return [len(m.stats), m.stats]


def monitor_unregister_event_handler(device, dtype):
    m = monitored(dtype)
    return ["tp.after" in [e.name for e in m.seen], [e.name for e in m.mine]]


# --- torch.utils.benchmark (facts of the measurement, never its times) --------------------------


def timer(device, dtype):
    """a Timer of device work"""
    from torch.utils.benchmark import Timer
    x = inputs(device, dtype)
    return Timer(stmt="torch.relu(x @ x.T)", globals={"x": x, "torch": torch}, label="tp.mm",
                 sub_label=str(dtype), description="relu(mm)", num_threads=1)


def benchmark_Timer(device, dtype):
    m = timer(device, dtype).timeit(4)
    return [m.label, m.sub_label, m.description, m.stmt, m.number_per_run, len(m.times)]


def benchmark_Timer_timeit(device, dtype):
    m = timer(device, dtype).timeit(3)
    return [type(m).__name__, m.number_per_run, len(m.raw_times), m.task_spec.num_threads]


def benchmark_Timer_blocked_autorange(device, dtype):
    m = timer(device, dtype).blocked_autorange(min_run_time=0.02)
    return [type(m).__name__, m.label, m.number_per_run >= 1, len(m.times) >= 1, m.mean > 0]


def benchmark_Measurement(device, dtype):
    from torch.utils.benchmark import Measurement
    t = timer(device, dtype)
    m = t.timeit(2)
    merged = Measurement.merge([m, t.timeit(2)])
    return [isinstance(m, Measurement), m.title, m.env, len(merged), len(merged[0].times), m.has_warnings in (True, False)]


def function_counts(dtype):
    """FunctionCounts built from the label counts of a host profile (a pure-Python
    container: host inputs)"""
    from torch.utils.benchmark import FunctionCounts
    from torch.utils.benchmark.utils.valgrind_wrapper.timer_interface import FunctionCount
    x = inputs("cpu", dtype)
    with torch.autograd.profiler.profile() as prof:
        for label in ("tp.a", "tp.a", "tp.b", "tp.a", "tp.b"):
            with torch.profiler.record_function(label):
                (x @ x.T).relu()
    calls = sorted((e.count, "tooling.py:" + e.key) for e in prof.key_averages() if e.key.startswith("tp."))
    return FunctionCounts(tuple(FunctionCount(c, k) for c, k in calls), inclusive=False)


def benchmark_FunctionCounts(device, dtype):
    fc = function_counts(dtype)
    return [list(fc), fc.sum(), len(fc)]


def benchmark_FunctionCounts_denoise(device, dtype):
    return list(function_counts(dtype).denoise())


def benchmark_FunctionCounts_filter(device, dtype):
    return list(function_counts(dtype).filter(lambda name: name.endswith("tp.a")))


def benchmark_FunctionCounts_transform(device, dtype):
    return list(function_counts(dtype).transform(lambda name: name.split(":")[-1].upper()))


def callgrind_stats(dtype, reps, build):
    """CallgrindStats as ``Timer.collect_callgrind`` fills it, from instruction counts that
    stand for callgrind's: the label counts of a host profile of ``reps`` runs (each label
    under a source path of the ``build`` dir, as callgrind names a function), and one
    noisy CPython dict lookup. Valgrind is not installed; the container is pure Python
    (host inputs)."""
    from torch.utils.benchmark import CallgrindStats, FunctionCounts
    from torch.utils.benchmark.utils.common import TaskSpec
    from torch.utils.benchmark.utils.valgrind_wrapper.timer_interface import FunctionCount
    x = inputs("cpu", dtype)
    with torch.autograd.profiler.profile() as prof:
        for label in ("tp.a", "tp.b", "tp.a")[:reps]:
            with torch.profiler.record_function(label):
                (x @ x.T).relu()
    calls = {f"/tmp/{build}/build/../torch/csrc/tp.cpp:{e.key} [libtorch.so]": e.count * 100
             for e in prof.key_averages() if e.key.startswith("tp.")}
    calls[f"/tmp/{build}/Objects/dictobject.c:lookdict_unicode"] = 7 * reps

    def counts(scale, inclusive):
        return FunctionCounts(tuple(FunctionCount(c * scale, fn) for fn, c in sorted(calls.items())), inclusive)

    return CallgrindStats(
        task_spec=TaskSpec("(x @ x.T).relu()", "x = torch.ones(4, 3)"), number_per_run=reps,
        built_with_debug_symbols=False,
        baseline_inclusive_stats=counts(1, True), baseline_exclusive_stats=counts(1, False),
        stmt_inclusive_stats=counts(3, True), stmt_exclusive_stats=counts(2, False), stmt_callgrind_out=None)


def benchmark_CallgrindStats(device, dtype):
    """The stats, totals, a delta and the standardized stats of two collections (builds in
    other dirs): what each method answers"""
    a, b = callgrind_stats(dtype, 3, "first"), callgrind_stats(dtype, 2, "second")
    std = a.as_standardized()

    def rows(fc):
        return [[c, fn] for c, fn in fc]
    return [rows(a.stats()), rows(a.stats(inclusive=True)), a.counts(), a.counts(denoise=True),
            rows(a.delta(b)), rows(a.delta(b, inclusive=True)),
            rows(std.stats()), rows(std.delta(b.as_standardized())), std.number_per_run]


# --- torch.compiler (the "eager" backend: dynamo's tracing of device tensors, not a codegen) ---


def counting_backend():
    """a compiler backend that records each graph's called functions (after a reset)"""
    graphs = []

    def counting(gm, example_inputs):
        graphs.append(sorted(getattr(n.target, "__name__", str(n.target)) for n in gm.graph.nodes
                             if n.op == "call_function"))
        return gm.forward

    torch.compiler.reset()
    return graphs, counting


def compiler_compile(device, dtype):
    x = inputs(device, dtype)
    torch.compiler.reset()
    f = torch.compiler.compile(lambda t: torch.relu(t @ t.T) + 1, backend="eager")
    y = f(x)
    return [vals(y), y.device.type == x.device.type]


def compiler_list_backends(device, dtype):
    x = inputs(device, dtype)
    everything = torch.compiler.list_backends(exclude_tags=())
    torch.compiler.reset()
    y = torch.compile(lambda t: t.sin() * 2, backend=everything[everything.index("eager")])(x)
    return [[b for b in ("eager", "inductor", "aot_eager") if b in everything],
            "inductor" in torch.compiler.list_backends(), vals(y)]


def compiler_reset(device, dtype):
    x = inputs(device, dtype)
    graphs, counting = counting_backend()
    f = torch.compile(lambda t: t.cos() + t, backend=counting)
    a = f(x)
    f(x)
    torch.compiler.reset()
    b = f(x)
    return [len(graphs), vals(a), vals(b)]


def compiler_disable(device, dtype):
    x = inputs(device, dtype)
    graphs, counting = counting_backend()

    @torch.compiler.disable
    def host(t):
        return t.exp()

    f = torch.compile(lambda t: host(t * 2) - 1, backend=counting)
    y = f(x)
    return [graphs, vals(y)]


def compiler_allow_in_graph(device, dtype):
    x = inputs(device, dtype)
    graphs, counting = counting_backend()

    def opaque(t):
        return t.abs() + 1

    torch.compiler.allow_in_graph(opaque)
    f = torch.compile(lambda t: opaque(t) * 3, backend=counting)
    y = f(x)
    return [graphs, vals(y)]


def compiler_assume_constant_result(device, dtype):
    x = inputs(device, dtype)
    graphs, counting = counting_backend()

    @torch.compiler.assume_constant_result
    def rows():
        return 4

    f = torch.compile(lambda t: t * rows(), backend=counting)
    y = f(x)
    return [graphs, vals(y)]


# --- torch.export ---------------------------------------------------------------------------


def exported(device, dtype):
    x = inputs(device, dtype)
    return x, torch.export.export(model(device, dtype), (x,))


def export_export(device, dtype):
    x, ep = exported(device, dtype)
    return [[n.op for n in ep.graph.nodes], [str(n.target) for n in ep.graph.nodes if n.op == "call_function"],
            vals(ep.module()(x))]


def export_ExportedProgram(device, dtype):
    x, ep = exported(device, dtype)
    sig = ep.graph_signature
    return [type(ep).__name__, [(s.kind.name, s.target) for s in sig.input_specs],
            [s.kind.name for s in sig.output_specs], sorted(ep.state_dict),
            sorted(t.device.type == x.device.type for t in ep.state_dict.values())]


def export_ExportedProgram_module(device, dtype):
    x, ep = exported(device, dtype)
    gm = ep.module()
    y = gm(x)
    dev = x.device.type
    return [type(gm).__name__, vals(y), y.device.type == dev, sorted(p.device.type == dev for p in gm.parameters())]


def nested_export(device, dtype):
    """a nested module exported with the inner call's signature preserved"""
    x = inputs(device, dtype)
    m = torch.nn.Sequential(torch.nn.Sequential(torch.nn.Linear(3, 2)), torch.nn.ReLU()).to(device=device, dtype=dtype)
    return x, torch.export.export(m, (x,), preserve_module_call_signature=("0",))


def export_ModuleCallEntry(device, dtype):
    x, ep = nested_export(device, dtype)
    return [[(type(e).__name__, e.fqn, e.signature is not None) for e in ep.module_call_graph], vals(ep.module()(x))]


def export_ModuleCallSignature(device, dtype):
    x, ep = nested_export(device, dtype)
    sig = [e.signature for e in ep.module_call_graph if e.fqn == "0"][0]
    return [type(sig).__name__, len(sig.inputs), len(sig.outputs), str(sig.in_spec), str(sig.out_spec)]


def export_save(device, dtype):
    x, ep = exported(device, dtype)
    buf = io.BytesIO()
    torch.export.save(ep, buf)
    buf.seek(0)
    loaded = torch.export.load(buf)
    y = loaded.module()(x)
    return [buf.getbuffer().nbytes > 0, vals(y), y.device.type == x.device.type]


def export_load(device, dtype):
    x, ep = exported(device, dtype)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "tiny.pt2")
        torch.export.save(ep, path)
        loaded = torch.export.load(path)
    y = loaded.module()(x)
    return [[n.op for n in loaded.graph.nodes], vals(y),
            sorted(t.device.type == x.device.type for t in loaded.state_dict.values())]


# --- torch.package --------------------------------------------------------------------------

HELPER_SRC = "def scale(t):\n    return t * 2\n"
TINY_SRC = "import tp_helper\nimport yaml\n\ndef run(model, t):\n    return tp_helper.scale(model(t))\n"


def export_pkg(x, inspect=None, hooks=None, target=None):
    """A package holding the device model, two source modules, a text and a binary
    (``hooks(exp)`` first, ``inspect(exp)``'s answer returned)."""
    buf = io.BytesIO() if target is None else target
    answer = None
    with PackageExporter(buf) as exp:
        if hooks:
            hooks(exp)
        exp.extern("torch.**")
        exp.mock("yaml")
        exp.intern(["tp_tiny", "tp_helper"])
        exp.save_source_string("tp_helper", HELPER_SRC)
        exp.save_source_string("tp_tiny", TINY_SRC)
        exp.save_pickle("res", "model.pkl", model(x.device, x.dtype))
        exp.save_text("res", "note.txt", "rows=%d" % x.shape[0])
        exp.save_binary("res", "x.bin", json.dumps(vals(x)).encode())
        if inspect:
            answer = inspect(exp)
    return buf, answer


def run_pkg(imp, x):
    y = imp.import_module("tp_tiny").run(imp.load_pickle("res", "model.pkl"), x)
    return [vals(y), y.device.type == x.device.type]


def opened(buf):
    buf.seek(0)
    return PackageImporter(buf)


def package_roundtrip(device, dtype):
    """the package exported and imported back: its model run on the device"""
    x = inputs(device, dtype)
    buf, _ = export_pkg(x)
    return run_pkg(opened(buf), x)


def package_PackageExporter_init(device, dtype):
    x = inputs(device, dtype)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "tiny.pt")
        with PackageExporter(path, debug=True) as exp:
            exp.extern("torch.**")
            exp.save_pickle("res", "model.pkl", model(device, dtype))
        m = PackageImporter(path).load_pickle("res", "model.pkl")
        y = m(x)
    return [vals(y), y.device.type == x.device.type]


def package_PackageExporter_close(device, dtype):
    x = inputs(device, dtype)
    buf = io.BytesIO()
    exp = PackageExporter(buf)
    exp.extern("torch.**")
    exp.save_pickle("res", "model.pkl", model(device, dtype))
    size_open = buf.getbuffer().nbytes
    exp.close()
    y = opened(buf).load_pickle("res", "model.pkl")(x)
    return [buf.getbuffer().nbytes > size_open, vals(y)]


def package_PackageExporter_save_pickle(device, dtype):
    x = inputs(device, dtype)
    buf, _ = export_pkg(x)
    m = opened(buf).load_pickle("res", "model.pkl")
    return [type(m).__name__, sorted((k, v.device.type == x.device.type, vals(v)) for k, v in m.state_dict().items())]


def package_PackageExporter_save_text(device, dtype):
    x = inputs(device, dtype)
    buf, _ = export_pkg(x)
    return [opened(buf).load_text("res", "note.txt"), run_pkg(opened(buf), x)]


def package_PackageExporter_save_binary(device, dtype):
    buf, _ = export_pkg(inputs(device, dtype))
    return json.loads(opened(buf).load_binary("res", "x.bin"))


def package_PackageExporter_save_source_string(device, dtype):
    x = inputs(device, dtype)
    buf, _ = export_pkg(x)
    imp = opened(buf)
    return [imp.import_module("tp_helper").scale(x).tolist(), run_pkg(imp, x)]


def package_PackageExporter_save_source_file(device, dtype):
    x = inputs(device, dtype)
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "tp_srcfile.py")
        with open(src, "w") as f:
            f.write("def triple(t):\n    return t * 3\n")
        buf = io.BytesIO()
        with PackageExporter(buf) as exp:
            exp.save_source_file("tp_srcfile", src)
    y = opened(buf).import_module("tp_srcfile").triple(x)
    return [vals(y), y.device.type == x.device.type]


def package_PackageExporter_save_module(device, dtype):
    x = inputs(device, dtype)
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "tp_realmod.py"), "w") as f:
            f.write("import torch\n\ndef halve(t):\n    return torch.div(t, 2)\n")
        sys.path.insert(0, tmp)
        try:
            buf = io.BytesIO()
            with PackageExporter(buf) as exp:
                exp.extern("torch.**")
                exp.save_module("tp_realmod")
        finally:
            sys.path.remove(tmp)
            sys.modules.pop("tp_realmod", None)
    y = opened(buf).import_module("tp_realmod").halve(x)
    return [vals(y), y.device.type == x.device.type]


def package_module_lists(device, dtype, api):
    """what the exporter lists (``api``: extern / intern / mock and their ``*_modules``)
    while it packages the device model; the package then runs"""
    x = inputs(device, dtype)
    member = api.rsplit(".", 1)[1]
    if member in ("extern", "externed_modules"):
        prefix = "torch.nn" if member == "extern" else "torch.nn.modules"
        buf, names = export_pkg(x, lambda e: sorted(n for n in e.externed_modules() if n.startswith(prefix)))
    elif member in ("intern", "interned_modules"):
        buf, names = export_pkg(x, lambda e: sorted(e.interned_modules()))
    elif member == "mock":
        buf, names = export_pkg(x, lambda e: sorted(e.mocked_modules()))
    else:  # mocked_modules
        buf, names = export_pkg(x, lambda e: e.mocked_modules())
    return [names, run_pkg(opened(buf), x)]


def package_PackageExporter_intern(device, dtype):
    """``intern``: a module found on the path, that a saved module imports, is packaged as
    source (not interned, the exporter refuses the package); the device model runs through
    it from the package"""
    x = inputs(device, dtype)
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "tp_internmod.py"), "w") as f:
            f.write(HELPER_SRC)
        sys.path.insert(0, tmp)
        try:
            buf = io.BytesIO()
            with PackageExporter(buf) as exp:
                exp.extern("torch.**")
                exp.intern("tp_internmod")
                exp.save_source_string("tp_user", TINY_SRC.replace("tp_helper", "tp_internmod")
                                       .replace("import yaml\n", ""))
                exp.save_pickle("res", "model.pkl", model(device, dtype))
                names = sorted(exp.interned_modules())
        finally:
            sys.path.remove(tmp)
            sys.modules.pop("tp_internmod", None)
    imp = opened(buf)
    y = imp.import_module("tp_user").run(imp.load_pickle("res", "model.pkl"), x)
    return [names, vals(y), y.device.type == x.device.type]


def package_PackageExporter_add_dependency(device, dtype):
    x = inputs(device, dtype)

    def probe(e):
        e.add_dependency("torch.nn.functional")
        return "torch.nn.functional" in e.externed_modules()

    buf, added = export_pkg(x, probe)
    return [added, run_pkg(opened(buf), x)]


def package_PackageExporter_get_rdeps(device, dtype):
    x = inputs(device, dtype)
    buf, rdeps = export_pkg(x, lambda e: e.get_rdeps("yaml"))
    return [rdeps, run_pkg(opened(buf), x)]


def package_PackageExporter_dependency_graph_string(device, dtype):
    x = inputs(device, dtype)
    buf, dot = export_pkg(x, lambda e: e.dependency_graph_string())
    return [dot.splitlines()[0], sorted(ln.strip() for ln in dot.splitlines() if '"tp_' in ln), run_pkg(opened(buf), x)]


def package_PackageExporter_all_paths(device, dtype):
    # torch 2.13's DiGraph.all_paths seeds its walks with set(src) and deque(dst): the
    # module names are single letters so that the walks start where they should
    x = inputs(device, dtype)
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "b.py"), "w") as f:
            f.write(HELPER_SRC)
        with open(os.path.join(tmp, "a.py"), "w") as f:
            f.write("import b\n\ndef run(t):\n    return b.scale(t)\n")
        sys.path.insert(0, tmp)
        try:
            buf = io.BytesIO()
            with PackageExporter(buf) as exp:
                exp.intern(["a", "b"])
                exp.save_module("a")
                dot = exp.all_paths("a", "b")
        finally:
            sys.path.remove(tmp)
            sys.modules.pop("a", None)
            sys.modules.pop("b", None)
    y = opened(buf).import_module("a").run(x)
    return [sorted(ln.strip() for ln in dot.splitlines()), vals(y)]


def package_PackageExporter_get_unique_id(device, dtype):
    x = inputs(device, dtype)
    buf, ids = export_pkg(x, lambda e: [e.get_unique_id(), e.get_unique_id()])
    return [int(ids[1]) - int(ids[0]), run_pkg(opened(buf), x)]


def deny_yaml(e):
    e.deny("yaml")


def package_PackageExporter_deny(device, dtype):
    x = inputs(device, dtype)
    try:
        export_pkg(x, hooks=deny_yaml)
        return "no error"
    except PackagingError as exc:
        return [type(exc).__name__, "yaml" in str(exc)]


def package_PackageExporter_denied_modules(device, dtype):
    x = inputs(device, dtype)
    denied = []
    try:
        export_pkg(x, inspect=lambda e: denied.append(e.denied_modules()), hooks=deny_yaml)
    except PackagingError:
        pass
    return denied


def package_PackagingError(device, dtype):
    buf = io.BytesIO()
    try:
        with PackageExporter(buf) as exp:
            exp.save_pickle("res", "model.pkl", model(device, dtype))
            exp.save_source_string("tp_lonely", "import yaml\n")
        return "no error"
    except PackagingError as exc:
        return [type(exc).__name__, "yaml" in str(exc)]


def package_EmptyMatchError(device, dtype):
    x = inputs(device, dtype)

    def strict(e):
        e.intern("tp_nothing_matches.**", allow_empty=False)

    try:
        export_pkg(x, hooks=strict)
        return "no error"
    except EmptyMatchError as exc:
        return [type(exc).__name__, "tp_nothing_matches" in str(exc)]


def package_register_hook(device, dtype, kind):
    """``register_<kind>_hook``: the names the hook saw while the device model was packaged"""
    x = inputs(device, dtype)
    seen = []
    buf, _ = export_pkg(x, hooks=lambda e: getattr(e, f"register_{kind}_hook")(lambda exp, name: seen.append(name)))
    names = sorted(n for n in seen if n.startswith("torch.nn.modules")) if kind == "extern" else sorted(seen)
    return [names, run_pkg(opened(buf), x)]


def package_PackageImporter_init(device, dtype):
    x = inputs(device, dtype)
    buf, _ = export_pkg(x)
    return [run_pkg(PackageImporter(io.BytesIO(buf.getvalue())), x),
            run_pkg(PackageImporter(io.BytesIO(buf.getvalue()), module_allowed=lambda name: True), x)]


def package_PackageImporter_import_module(device, dtype):
    x = inputs(device, dtype)
    buf, _ = export_pkg(x)
    imp = opened(buf)
    mod = imp.import_module("tp_tiny")
    return [mod.__name__.split(".")[-1], run_pkg(imp, x)]


def package_PackageImporter_load_pickle(device, dtype):
    x = inputs(device, dtype)
    buf, _ = export_pkg(x)
    m = opened(buf).load_pickle("res", "model.pkl")
    y = m(x)
    return [vals(y), sorted(p.device.type == x.device.type for p in m.parameters())]


def package_PackageImporter_load_text(device, dtype):
    buf, _ = export_pkg(inputs(device, dtype))
    return opened(buf).load_text("res", "note.txt")


def package_PackageImporter_load_binary(device, dtype):
    buf, _ = export_pkg(inputs(device, dtype))
    raw = opened(buf).load_binary("res", "x.bin")
    return [type(raw).__name__, json.loads(raw)]


def package_PackageImporter_file_structure(device, dtype):
    buf, _ = export_pkg(inputs(device, dtype))
    tree = opened(buf).file_structure(include=["res/**", "tp_*"])
    return [type(tree).__name__, str(tree).splitlines()[1:]]


def package_Directory(device, dtype):
    buf, _ = export_pkg(inputs(device, dtype))
    tree = opened(buf).file_structure(include=["res/**"])
    return [isinstance(tree, Directory), sorted(tree.children), sorted(tree.children["res"].children)]


def package_Directory_has_file(device, dtype):
    buf, _ = export_pkg(inputs(device, dtype))
    tree = opened(buf).file_structure()
    return [tree.has_file("res/model.pkl"), tree.has_file("res/x.bin"), tree.has_file("res/absent.txt")]


def package_PackageImporter_id(device, dtype):
    x = inputs(device, dtype)
    buf, _ = export_pkg(x)
    imp = opened(buf)
    return [re.sub(r"\d+", "N", imp.id()), imp.import_module("tp_tiny").__name__.startswith(imp.id()), run_pkg(imp, x)]


def package_PackageImporter_python_version(device, dtype):
    x = inputs(device, dtype)
    buf, _ = export_pkg(x)
    v = opened(buf).python_version()
    # the whole version the exporter wrote (a part of it would be kept by a wrong answer too)
    return [v, v == platform.python_version(), run_pkg(opened(buf), x)]


# --- torch.hub on a local repo and file:// URLs ---------------------------------------------

HUBCONF = '''dependencies = ["torch"]
import torch

def tiny(device="cpu", dtype=torch.float32):
    """A two-layer model for the tooling tests."""
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU()).to(device=device, dtype=dtype)


def tiny_tanh(device="cpu", dtype=torch.float32):
    """The same layers with a tanh."""
    torch.manual_seed(1)
    return torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh()).to(device=device, dtype=dtype)


def _helper():  # private: not an entrypoint
    return None
'''


def hub_repo(tmp):
    repo = os.path.join(tmp, "repo")
    os.makedirs(repo)
    with open(os.path.join(repo, "hubconf.py"), "w") as f:
        f.write(HUBCONF)
    return repo


# a GitHub repo as torch.hub names it ("owner/name:ref"), and the folder its downloaded copy
# is cached in under the hub dir ("owner_name_ref"): list, help and load read that copy
HUB_REPO, HUB_CACHED = "tp-owner/tp-hub:main", "tp-owner_tp-hub_main"


def hub_cache(tmp):
    """A hub dir holding the cached copy of ``HUB_REPO`` (what a first ``torch.hub.list``
    downloads): with it, no network is asked."""
    hub = os.path.join(tmp, "hub")
    os.makedirs(os.path.join(hub, HUB_CACHED))
    with open(os.path.join(hub, HUB_CACHED, "hubconf.py"), "w") as f:
        f.write(HUBCONF)
    return hub


def hub_cached(device, dtype, api):
    """``list`` / ``help`` (``api``) of a GitHub repo read from its cached copy: the
    entrypoints listed (or the one helped), each loaded from the cache and run on the device"""
    x = inputs(device, dtype)
    old = torch.hub.get_dir()
    with tempfile.TemporaryDirectory() as tmp:
        torch.hub.set_dir(hub_cache(tmp))
        try:
            if api.endswith("help"):
                doc = torch.hub.help(HUB_REPO, "tiny_tanh", trust_repo=True)
                names = ["tiny_tanh"]
            else:
                doc = None
                names = torch.hub.list(HUB_REPO, trust_repo=True, verbose=False)
            ys = [torch.hub.load(HUB_REPO, n, trust_repo=True, verbose=False, device=device, dtype=dtype)(x)
                  for n in names]
        finally:
            torch.hub.set_dir(old)
    return [names, doc, [[vals(y), y.device.type == x.device.type] for y in ys]]


def checkpoint_url(tmp, device, dtype):
    """A state dict (saved from the device model) served from a file:// URL."""
    path = os.path.join(tmp, "tiny-state.pt")
    torch.save(model(device, dtype).state_dict(), path)
    return "file://" + path


def state_summary(sd, device):
    return {k: [vals(v), v.device.type == torch.device(device).type] for k, v in sorted(sd.items())}


def hub_load(device, dtype):
    x = inputs(device, dtype)
    with tempfile.TemporaryDirectory() as tmp:
        m = torch.hub.load(hub_repo(tmp), "tiny", source="local", device=device, dtype=dtype)
    y = m(x)
    return [vals(y), y.device.type == x.device.type]


def hub_download_url_to_file(device, dtype):
    with tempfile.TemporaryDirectory() as tmp:
        dst = os.path.join(tmp, "copy.pt")
        torch.hub.download_url_to_file(checkpoint_url(tmp, device, dtype), dst, progress=False)
        sd = torch.load(dst, map_location=device)
    return state_summary(sd, device)


def hub_load_state_dict_from_url(device, dtype):
    with tempfile.TemporaryDirectory() as tmp:
        sd = torch.hub.load_state_dict_from_url(checkpoint_url(tmp, device, dtype), model_dir=os.path.join(tmp, "hub"),
                                                map_location=device, progress=False)
    return state_summary(sd, device)


def model_zoo_load_url(device, dtype):
    import torch.utils.model_zoo
    with tempfile.TemporaryDirectory() as tmp:
        sd = torch.utils.model_zoo.load_url(checkpoint_url(tmp, device, dtype), model_dir=os.path.join(tmp, "zoo"),
                                            map_location=device, progress=False)
    return state_summary(sd, device)


def hub_dir(device, dtype, api):
    """``set_dir`` / ``get_dir`` (``api``): a checkpoint fetched into the hub dir set, then
    the old dir back"""
    old = torch.hub.get_dir()
    with tempfile.TemporaryDirectory() as tmp:
        torch.hub.set_dir(os.path.join(tmp, "hubdir"))
        try:
            here = torch.hub.get_dir() == os.path.join(tmp, "hubdir")
            sd = torch.hub.load_state_dict_from_url(checkpoint_url(tmp, device, dtype), map_location=device,
                                                    progress=False)
            cached = os.listdir(os.path.join(torch.hub.get_dir(), "checkpoints"))
        finally:
            torch.hub.set_dir(old)
    if api.endswith("set_dir"):
        return [cached, state_summary(sd, device)]
    return [here, torch.hub.get_dir() == old, cached, state_summary(sd, device)]


# --- torch.library: an op defined here, implemented for the device's dispatch key ------------


def dispatch_keys(device):
    dev = torch.device(device).type
    return ({"cpu": "CPU", "cuda": "CUDA"}.get(dev, "PrivateUse1"),
            {"cpu": "AutogradCPU", "cuda": "AutogradCUDA"}.get(dev, "AutogradPrivateUse1"))


def library_Library(device, dtype):
    x = inputs(device, dtype)
    key, _ = dispatch_keys(device)
    lib = Library("tp_tooling", "DEF")
    try:
        lib.define("scaled(Tensor x, float s) -> Tensor")
        lib.impl("scaled", lambda t, s: t * s + 1, key)
        y = torch.ops.tp_tooling.scaled(x, 2.5)
        return [vals(y), y.device.type == x.device.type, str(torch.ops.tp_tooling.scaled.default._schema)]
    finally:
        lib._destroy()


def library_fallthrough_kernel(device, dtype):
    x = inputs(device, dtype)
    key, autograd_key = dispatch_keys(device)
    lib = Library("tp_tooling", "DEF")
    try:
        lib.define("scaled(Tensor x, float s) -> Tensor")
        lib.impl("scaled", lambda t, s: t * s + 1, key)
        lib.impl("scaled", fallthrough_kernel, autograd_key)
        g = x.clone().requires_grad_()
        y = torch.ops.tp_tooling.scaled(g, 2.0)
        return [vals(y), y.requires_grad, y.grad_fn is None]
    finally:
        lib._destroy()


# --- torch.overrides (name lookups: host-only, a host input) --------------------------------


class Names(TorchFunctionMode):
    """records every torch function called under it"""

    def __init__(self):
        super().__init__()
        self.funcs = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.funcs.append(func)
        return func(*args, **(kwargs or {}))


def traced(dtype):
    """the torch functions a small computation calls (on the host)"""
    x = inputs("cpu", dtype)
    with Names() as mode:
        y = torch.add(x, 1).relu().sum(dim=0)
    return mode.funcs, y


def overrides_resolve_name(device, dtype):
    funcs, y = traced(dtype)
    return [[resolve_name(f) for f in funcs], vals(y)]


class Tagged(torch.Tensor):
    pass


def overrides_has_torch_function(device, dtype):
    """a device tensor and a subclass of it asked (metadata of the device tensor)"""
    x = inputs(device, dtype)
    funcs, y = traced(dtype)
    return [has_torch_function((x,)), has_torch_function((x.as_subclass(Tagged),)), vals(y)]


def overrides_get_overridable_functions(device, dtype):
    funcs, y = traced(dtype)
    table = get_overridable_functions()
    known = {f for fs in table.values() for f in fs}
    return [[resolve_name(f) for f in funcs if f in known], vals(y)]


# --- torch.testing, torch.onnx (what runs without the onnx package), torch.utils, config -------


def mismatch_report(text):
    """the numbers of a torch.testing mismatch message: how many elements, the greatest
    absolute and relative differences and where"""
    found = {}
    for key, pattern in (("mismatched", r"Mismatched elements: (\d+ / \d+)"),
                         ("absolute", r"Greatest absolute difference: (\S+) at index (\(.*?\))"),
                         ("relative", r"Greatest relative difference: (\S+) at index (\(.*?\))")):
        m = re.search(pattern, text)
        found[key] = None if m is None else [float(g) if key != "mismatched" and i == 0 else g
                                             for i, g in enumerate(m.groups())]
    return found


def testing_assert_allclose(device, dtype):
    """its own bar on device tensors: equal ones pass; of ``b`` against ``a`` (rtol 5 %,
    atol 0), two elements off by 1 and 0.5 fail and two off by 1 % pass, so the report
    counts 2 mismatched elements and names the greatest differences"""
    a = torch.linspace(-1, 1, 12, dtype=dtype).reshape(4, 3)
    b = a.clone()
    b.view(-1)[0] += 1
    b.view(-1)[1] += 0.5
    b.view(-1)[2:4] *= 1.01
    a, b = a.to(device), b.to(device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.testing.assert_allclose(a * 2, a + a)
        try:
            torch.testing.assert_allclose(b, a, rtol=0.05, atol=0)
            return "passed"
        except AssertionError as exc:
            return mismatch_report(str(exc))


def onnx_select_model_mode_for_export(device, dtype):
    """a flag on the device model's modules, set and restored on the host"""
    from torch.onnx import TrainingMode
    m = model(device, dtype)
    m.train()
    with torch.onnx.select_model_mode_for_export(m, TrainingMode.EVAL):
        inside = [m.training]
    return [inside, m.training]


def onnx_is_in_onnx_export(device, dtype):
    """read in a forward hook, outside an export: host-only (a host model)"""
    seen = []
    m = model("cpu", dtype)
    m.register_forward_hook(lambda mod, i, o: seen.append(torch.onnx.is_in_onnx_export()))
    y = m(inputs("cpu", dtype))
    return [seen, vals(y)]


def onnx_custom_op_symbolic(device, dtype):
    """``register_custom_op_symbolic`` / ``unregister_custom_op_symbolic``: an op defined
    here for the device's dispatch key gets a symbolic at opsets 9 and 17; a TorchScript
    export (opset 17) of a module calling it on the device input asks the opset-17 one,
    and once that is unregistered, the opset-9 one. Compared: which symbolic each export
    asked, with the sizes and dtype the trace gave it, and how the export ended (without
    the ``onnx`` package its last step, serialising the proto, raises OnnxExporterError;
    the graph, and the symbolics' calls, come before it). What the exporter does is
    host-side: the device only runs the traced forward."""
    x = inputs(device, dtype)
    key, _ = dispatch_keys(device)
    seen = []

    def symbolic(opset):
        def fn(g, t, s):
            seen.append([opset, t.type().sizes(), t.type().scalarType()])
            return g.op("tp_onnx::Scaled", t, s_f=2.5)
        return fn

    class Scaled(torch.nn.Module):
        def forward(self, t):
            return torch.ops.tp_onnx.scaled(t.relu(), 2.5)

    def export():
        n = len(seen)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the TorchScript exporter is deprecated
                torch.onnx.export(Scaled(), (x,), io.BytesIO(), dynamo=False, opset_version=17)
            end = "exported"
        except torch.onnx.OnnxExporterError as e:  # no onnx package; an op without a symbolic
            end = type(e).__name__
        return [seen[n:], end]

    lib = Library("tp_onnx", "DEF")
    try:
        lib.define("scaled(Tensor x, float s) -> Tensor")
        lib.impl("scaled", lambda t, s: t * s + 1, key)
        for opset in (9, 17):
            torch.onnx.register_custom_op_symbolic("tp_onnx::scaled", symbolic(opset), opset)
        first = export()
        torch.onnx.unregister_custom_op_symbolic("tp_onnx::scaled", 17)
        second = export()
        torch.onnx.unregister_custom_op_symbolic("tp_onnx::scaled", 9)
    finally:
        lib._destroy()
    return [first, second]


def dlpack_to_dlpack(device, dtype):
    from torch.utils.dlpack import from_dlpack, to_dlpack
    x = inputs(device, dtype)
    cap = to_dlpack(x)
    y = from_dlpack(cap)
    y.add_(1)
    # x itself (not its Python numbers): the shared memory's values judged in their dtype
    return [type(cap).__name__, x.detach().clone(), y.device.type == x.device.type, y.dtype == x.dtype]


def deterministic_fill_uninitialized_memory(device, dtype):
    import torch.utils.deterministic as det
    old = (torch.are_deterministic_algorithms_enabled(), det.fill_uninitialized_memory)
    torch.use_deterministic_algorithms(True)
    det.fill_uninitialized_memory = True
    try:
        e = torch.empty(5, dtype=dtype, device=device)
        i = torch.empty(5, dtype=torch.int32, device=device)
        return [e.isnan().tolist(), (i == torch.iinfo(torch.int32).max).tolist(), det.fill_uninitialized_memory]
    finally:
        torch.use_deterministic_algorithms(old[0])
        det.fill_uninitialized_memory = old[1]


def get_cpp_backtrace(device, dtype):
    """asked in a gradient hook of a host backward: host-only"""
    traces = []
    g = inputs("cpu", dtype).clone().requires_grad_()
    g.register_hook(lambda grad: traces.append(torch.utils.get_cpp_backtrace(frames_to_skip=0,
                                                                             maximum_number_of_frames=4)))
    (g * 3).sum().backward()
    return [[type(t).__name__ for t in traces], vals(g.grad)]


def cpp_extension_include_paths(device, dtype):
    import torch.utils.cpp_extension as ext
    paths = ext.include_paths(torch.device(device).type)
    base = ext.include_paths("cpu")
    return [all(p in paths for p in base), all(os.path.isdir(p) for p in paths)]


def cpp_extension_is_ninja_available(device, dtype):
    import shutil

    import torch.utils.cpp_extension as ext
    return [ext.is_ninja_available() == (shutil.which("ninja") is not None)]


def cpp_extension_verify_ninja_availability(device, dtype):
    import torch.utils.cpp_extension as ext
    try:
        ext.verify_ninja_availability()
        ok = True
    except RuntimeError:
        ok = False
    return [ok == ext.is_ninja_available()]


def cpp_extension_get_compiler_abi_compatibility_and_version(device, dtype):
    import torch.utils.cpp_extension as ext
    ok, version = ext.get_compiler_abi_compatibility_and_version("c++")
    return [type(ok).__name__, str(version).count(".") >= 1 or str(version) == "0.0.0"]


def config_show(device, dtype):
    return [torch.__config__.show().splitlines()[0].strip()]


def config_parallel_info(device, dtype):
    text = torch.__config__.parallel_info()
    return [sorted(ln.split(":")[0].strip() for ln in text.splitlines() if ":" in ln)[:6]]


# --- the table ----------------------------------------------------------------------------

AP = "torch.autograd.profiler."
PR = "torch.profiler."
KP = "torch.profiler._KinetoProfile."
MO = "torch.monitor."
BM = "torch.utils.benchmark."
PE = "torch.package.PackageExporter."
PI = "torch.package.PackageImporter."
CX = "torch.utils.cpp_extension."

CASES = (
    # torch.autograd.profiler
    Case(AP + "profile.key_averages", autograd_profiler_key_averages),
    Case(AP + "profile.export_chrome_trace", autograd_profiler_export_chrome_trace),
    Case(AP + "profile.self_cpu_time_total", autograd_profiler_self_cpu_time_total),
    Case(AP + "profile.total_average", autograd_profiler_total_average),
    Case(AP + "KinetoStepTracker", kineto_step_tracker, params={"member": ""}),
    Case(AP + "KinetoStepTracker.current_step", kineto_step_tracker, params={"member": "current_step"}),
    Case(AP + "KinetoStepTracker.increment_step", kineto_step_tracker, params={"member": "increment_step"}),
    # torch.profiler
    Case(PR + "profile", profiler_profile),
    Case(PR + "profile.step", profiler_profile_step),
    Case(PR + "schedule", profiler_schedule),
    Case(PR + "ProfilerAction", profiler_ProfilerAction),
    Case(PR + "ProfilerActivity", profiler_ProfilerActivity),
    Case(PR + "ProfilerActivity.name", profiler_ProfilerActivity_name),
    Case(PR + "_KinetoProfile", profiler_KinetoProfile),
    Case(KP + "events", profiler_KinetoProfile_events),
    Case(KP + "key_averages", profiler_KinetoProfile_key_averages),
    Case(KP + "add_metadata", profiler_KinetoProfile_add_metadata),
    Case(KP + "add_metadata_json", profiler_KinetoProfile_add_metadata_json),
    Case(KP + "export_chrome_trace", profiler_KinetoProfile_export_chrome_trace),
    Case(KP + "export_stacks", profiler_KinetoProfile_export_stacks),
    Case(KP + "export_memory_timeline", profiler_KinetoProfile_export_memory_timeline),
    Case(PR + "tensorboard_trace_handler", profiler_tensorboard_trace_handler),
    Case(PR + "itt.is_available", itt_is_available),
    Case(PR + "itt.range_push", itt_range, params={"member": "range_push"}),
    Case(PR + "itt.range_pop", itt_range, params={"member": "range_pop"}),
    Case(PR + "itt.mark", itt_mark),
    Excluded(AP + "emit_nvtx", "emits NVTX ranges: needs a CUDA build (this torch raises 'not compiled with CUDA')"),
    Excluded(AP + "load_nvprof", "reads an nvprof trace, which only NVIDIA's nvprof writes"),
    # torch.monitor
    Case(MO + "Aggregation", monitor_Aggregation),
    Case(MO + "Aggregation.name", monitor_Aggregation_name),
    Case(MO + "Stat", monitor_Stat),
    Case(MO + "Stat.__init__", monitor_Stat_init),
    Case(MO + "Stat.add", monitor_Stat_add),
    Case(MO + "Stat.count", monitor_Stat_count),
    Case(MO + "Stat.get", monitor_Stat_get),
    Case(MO + "Stat.name", monitor_Stat_name),
    Case(MO + "Event", monitor_Event),
    Case(MO + "Event.__init__", monitor_Event_init),
    Case(MO + "Event.data", monitor_Event_data),
    Case(MO + "Event.name", monitor_Event_name),
    Case(MO + "Event.timestamp", monitor_Event_timestamp),
    Case(MO + "EventHandlerHandle", monitor_EventHandlerHandle),
    Case(MO + "data_value_t", monitor_data_value_t),
    Case(MO + "log_event", monitor_log_event),
    Case(MO + "register_event_handler", monitor_register_event_handler),
    Case(MO + "unregister_event_handler", monitor_unregister_event_handler),
    # torch.utils.benchmark
    Case(BM + "Timer", benchmark_Timer),
    Case(BM + "Timer.timeit", benchmark_Timer_timeit),
    Case(BM + "Timer.blocked_autorange", benchmark_Timer_blocked_autorange),
    Case(BM + "Measurement", benchmark_Measurement),
    Case(BM + "FunctionCounts", benchmark_FunctionCounts),
    Case(BM + "FunctionCounts.denoise", benchmark_FunctionCounts_denoise),
    Case(BM + "FunctionCounts.filter", benchmark_FunctionCounts_filter),
    Case(BM + "FunctionCounts.transform", benchmark_FunctionCounts_transform),
    Case(BM + "CallgrindStats", benchmark_CallgrindStats,
         aliases=tuple(f"{BM}CallgrindStats.{m}" for m in ("as_standardized", "counts", "delta", "stats"))),
    # torch.compiler
    Case("torch.compiler.compile", compiler_compile),
    Case("torch.compiler.list_backends", compiler_list_backends),
    Case("torch.compiler.reset", compiler_reset),
    Case("torch.compiler.disable", compiler_disable),
    Case("torch.compiler.allow_in_graph", compiler_allow_in_graph),
    Case("torch.compiler.assume_constant_result", compiler_assume_constant_result),
    # torch.export
    Case("torch.export.export", export_export),
    Case("torch.export.ExportedProgram", export_ExportedProgram),
    Case("torch.export.ExportedProgram.module", export_ExportedProgram_module),
    Case("torch.export.exported_program.ModuleCallEntry", export_ModuleCallEntry),
    Case("torch.export.exported_program.ModuleCallSignature", export_ModuleCallSignature),
    Case("torch.export.save", export_save),
    Case("torch.export.load", export_load),
    # torch.package: exporter
    Case("torch.package.PackageExporter", package_roundtrip, aliases=("torch.package.PackageImporter",)),
    Case(PE + "__init__", package_PackageExporter_init),
    Case(PE + "close", package_PackageExporter_close),
    Case(PE + "save_pickle", package_PackageExporter_save_pickle, FD),
    Case(PE + "save_text", package_PackageExporter_save_text),
    Case(PE + "save_binary", package_PackageExporter_save_binary, FD),
    Case(PE + "save_source_string", package_PackageExporter_save_source_string),
    Case(PE + "save_source_file", package_PackageExporter_save_source_file),
    Case(PE + "save_module", package_PackageExporter_save_module),
    Case(PE + "extern", package_module_lists,
         aliases=(PE + "externed_modules", PE + "interned_modules", PE + "mock", PE + "mocked_modules")),
    Case(PE + "intern", package_PackageExporter_intern),
    Case(PE + "add_dependency", package_PackageExporter_add_dependency),
    Case(PE + "get_rdeps", package_PackageExporter_get_rdeps),
    Case(PE + "dependency_graph_string", package_PackageExporter_dependency_graph_string),
    Case(PE + "all_paths", package_PackageExporter_all_paths),
    Case(PE + "get_unique_id", package_PackageExporter_get_unique_id),
    Case(PE + "deny", package_PackageExporter_deny),
    Case(PE + "denied_modules", package_PackageExporter_denied_modules),
    Case("torch.package.PackagingError", package_PackagingError),
    Case("torch.package.EmptyMatchError", package_EmptyMatchError),
    Case(PE + "register_extern_hook", package_register_hook, params={"kind": "extern"}),
    Case(PE + "register_intern_hook", package_register_hook, params={"kind": "intern"}),
    Case(PE + "register_mock_hook", package_register_hook, params={"kind": "mock"}),
    # torch.package: importer
    Case(PI + "__init__", package_PackageImporter_init),
    Case(PI + "import_module", package_PackageImporter_import_module),
    Case(PI + "load_pickle", package_PackageImporter_load_pickle),
    Case(PI + "load_text", package_PackageImporter_load_text),
    Case(PI + "load_binary", package_PackageImporter_load_binary),
    Case(PI + "file_structure", package_PackageImporter_file_structure),
    Case("torch.package.Directory", package_Directory),
    Case("torch.package.Directory.has_file", package_Directory_has_file),
    Case(PI + "id", package_PackageImporter_id),
    Case(PI + "python_version", package_PackageImporter_python_version),
    # torch.hub
    Case("torch.hub.load", hub_load),
    Case("torch.hub.download_url_to_file", hub_download_url_to_file),
    Case("torch.hub.load_state_dict_from_url", hub_load_state_dict_from_url, FD),
    Case("torch.utils.model_zoo.load_url", model_zoo_load_url),
    Case("torch.hub.set_dir", hub_dir, aliases=("torch.hub.get_dir",)),
    Case("torch.hub.list", hub_cached, aliases=("torch.hub.help",)),
    # torch.library
    Case("torch.library.Library", library_Library, FD64),
    Case("torch.library.fallthrough_kernel", library_fallthrough_kernel),
    # torch.overrides
    Case("torch.overrides.resolve_name", overrides_resolve_name),
    Case("torch.overrides.has_torch_function", overrides_has_torch_function),
    Case("torch.overrides.get_overridable_functions", overrides_get_overridable_functions),
    # torch.testing
    Case("torch.testing.assert_allclose", testing_assert_allclose, FD),
    # torch.onnx
    Case("torch.onnx.select_model_mode_for_export", onnx_select_model_mode_for_export),
    Case("torch.onnx.is_in_onnx_export", onnx_is_in_onnx_export),
    Case("torch.onnx.unregister_custom_op_symbolic", onnx_custom_op_symbolic,
         aliases=("torch.onnx.register_custom_op_symbolic",)),
    # torch.utils
    Case("torch.utils.dlpack.to_dlpack", dlpack_to_dlpack, FD),
    Case("torch.utils.deterministic.fill_uninitialized_memory", deterministic_fill_uninitialized_memory, FD),
    Case("torch.utils.get_cpp_backtrace", get_cpp_backtrace),
    Case(CX + "include_paths", cpp_extension_include_paths),
    Case(CX + "is_ninja_available", cpp_extension_is_ninja_available),
    Case(CX + "verify_ninja_availability", cpp_extension_verify_ninja_availability),
    Case(CX + "get_compiler_abi_compatibility_and_version", cpp_extension_get_compiler_abi_compatibility_and_version),
    # torch.__config__
    Case("torch.__config__.show", config_show),
    Case("torch.__config__.parallel_info", config_parallel_info),
)

# APIs left without a case, and why (shown by ``why_not``)
DYNAMO_ONNX = "made by the dynamo ONNX exporter, which needs onnxscript (not installed)"
CALLGRIND = "needs valgrind runs with callgrind bindings compiled at run time (a C++ toolchain, minutes)"
CPP_BUILD = "a setuptools build of C++ sources (a C++ toolchain, minutes)"
CPP_LOAD = "compiles C++ sources at run time (a C++ toolchain, minutes)"

EXCLUDED = (
    Excluded("torch.onnx.export", "needs the onnx and onnxscript packages, which are not installed"),
    Excluded("torch.onnx.ONNXProgram", DYNAMO_ONNX),
    Excluded("torch.onnx.ONNXProgram.model_proto", DYNAMO_ONNX),
    Excluded("torch.onnx.ONNXProgram.save", DYNAMO_ONNX),
    Excluded("torch.onnx.OnnxExporterError", "raised by the ONNX exporters, which need onnx/onnxscript (not installed)"),
    Excluded(BM + "Timer.collect_callgrind", CALLGRIND),
    Excluded(CX + "BuildExtension", CPP_BUILD),
    Excluded(CX + "CppExtension", CPP_BUILD),
    Excluded(CX + "CUDAExtension", "builds CUDA sources: needs nvcc and a CUDA build"),
    Excluded(CX + "load", CPP_LOAD),
    Excluded(CX + "load_inline", CPP_LOAD),
    Excluded("torch.utils.mobile_optimizer.optimize_for_mobile",
             "this torch is built without XNNPACK: it fails on the CPU itself"),
    Excluded("torch.utils.rename_privateuse1_backend",
             "renames the process's one PrivateUse1 backend, once and for good (a device backend holds it)"),
    Excluded("torch.utils.generate_methods_for_privateuse1_backend",
             "installs methods for the process's one PrivateUse1 backend, once and for good"),
)

# torch.utils.tensorboard and torch.monitor's TensorBoard handler: cases where the
# tensorboard package is installed, named reasons where it is not (``tensorboard``)
ROWS = CASES + EXCLUDED + tensorboard.rows()
