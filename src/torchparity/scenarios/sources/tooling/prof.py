"""Cases of the ``tooling`` source: profilers, torch.monitor, torch.utils.benchmark,
torch.compiler and torch.export (the rest is in ``tooling.misc``).

Each case is a code block run with ``torch``, ``device``, ``dtype`` and the helpers of
``tooling.PRELUDE`` in scope; it leaves its answer in ``out``. Profilers record op names,
counts and times that differ between a device and the CPU for reasons that are not the
API's (an accelerator's own kernels, the emulator's CPU views); the blocks keep only the
facts the API promises on any device: the ``record_function`` labels and the listed ops
that ran (``ran``), structure and counts of what the API produced. Timings are never
compared.
"""

from __future__ import annotations

from typing import Dict, Tuple

F32 = ("float32",)
FD = ("float32", "float64")

PROFILE = '''\
with torch.autograd.profiler.profile() as prof:
    y = work()
'''

KINETO = '''\
from torch.profiler import ProfilerActivity
kp = torch.profiler._KinetoProfile(activities=[ProfilerActivity.CPU], record_shapes=True,
                                   profile_memory=True, with_stack=False)
kp.start()
y = work()
kp.stop()
'''

# with_stack=True for the two exports that need Python stacks
KINETO_STACK = KINETO.replace("with_stack=False", "with_stack=True")

SCHEDULED = '''\
from torch.profiler import ProfilerAction, profile, schedule
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
'''

COMPILE_COUNT = '''\
graphs = []
def counting(gm, example_inputs):
    graphs.append(sorted(getattr(n.target, "__name__", str(n.target)) for n in gm.graph.nodes if n.op == "call_function"))
    return gm.forward
torch.compiler.reset()
'''

EXPORT = '''\
m = model()
ep = torch.export.export(m, (x,))
'''

CASES: Dict[str, Tuple[str, Tuple[str, ...]]] = {
    # torch.autograd.profiler
    "torch.autograd.profiler.profile.key_averages": (
        PROFILE + "ka = prof.key_averages()\n"
        "out = [ran(e.key for e in ka), [e.count for e in ka if e.key == 'tp.block'], vals(y)]", F32),
    "torch.autograd.profiler.profile.export_chrome_trace": (
        PROFILE + "with tempfile.TemporaryDirectory() as tmp:\n"
        "    path = os.path.join(tmp, 'trace.json')\n"
        "    prof.export_chrome_trace(path)\n"
        "    with open(path) as f:\n"
        "        trace = json.load(f)\n"
        "events = trace['traceEvents'] if isinstance(trace, dict) else trace\n"
        "out = [ran(e.get('name') for e in events), vals(y)]", F32),
    "torch.autograd.profiler.profile.self_cpu_time_total": (
        PROFILE + "t = prof.self_cpu_time_total\nout = [type(t).__name__, t >= 0, vals(y)]", F32),
    "torch.autograd.profiler.profile.total_average": (
        PROFILE + "avg = prof.total_average()\n"
        "out = [type(avg).__name__, avg.key, avg.count >= 3, vals(y)]", F32),
    "torch.autograd.profiler.KinetoStepTracker": (
        "from torch.autograd.profiler import KinetoStepTracker as K\n"
        "K.init_step_count('tp.tracker')\nbefore = K.current_step()\n"
        "for _ in range(3):\n    K.increment_step('tp.tracker')\n"
        "after = K.current_step()\nK.erase_step_count('tp.tracker')\nout = [after - before]", F32),
    "torch.autograd.profiler.KinetoStepTracker.current_step": (
        "from torch.autograd.profiler import KinetoStepTracker as K\n"
        "K.init_step_count('tp.current')\nsteps = [K.current_step()]\n"
        "K.increment_step('tp.current')\nsteps.append(K.current_step())\n"
        "K.erase_step_count('tp.current')\nout = [steps[1] - steps[0]]", F32),
    "torch.autograd.profiler.KinetoStepTracker.increment_step": (
        "from torch.autograd.profiler import KinetoStepTracker as K\n"
        "K.init_step_count('tp.incr')\nreturned = []\n"
        "for _ in range(2):\n    returned.append(K.increment_step('tp.incr'))\n"
        "K.erase_step_count('tp.incr')\nout = [returned[1] - returned[0]]", F32),
    # torch.profiler
    "torch.profiler.profile": (SCHEDULED + "out = [traces, vals(y)]", F32),
    "torch.profiler.profile.step": (
        SCHEDULED + "out = [prof.step_num, traces]", F32),
    "torch.profiler.schedule": (
        SCHEDULED + "out = [[sched(i).name for i in range(6)], traces]", F32),
    "torch.profiler.ProfilerAction": (
        SCHEDULED + "out = [[str(sched(i)) for i in range(6)], sorted(a.name for a in ProfilerAction), traces]", F32),
    "torch.profiler.ProfilerActivity": (
        KINETO + "from torch.profiler import ProfilerActivity\n"
        "kinds = sorted({e.device_type.name for e in kp.events() if e.name in ('tp.block', 'aten::mm')})\n"
        "out = [kinds, ProfilerActivity.CPU in torch.profiler.supported_activities(), vals(y)]", F32),
    "torch.profiler.ProfilerActivity.name": (
        KINETO + "from torch.profiler import ProfilerActivity\n"
        "out = [ProfilerActivity.CPU.name, sorted({e.device_type.name for e in kp.events() if e.name == 'tp.block'})]",
        F32),
    "torch.profiler._KinetoProfile": (KINETO + "out = [ran(e.name for e in kp.events()), vals(y)]", F32),
    "torch.profiler._KinetoProfile.events": (
        KINETO + "ev = kp.events()\n"
        "out = [type(ev).__name__, ran(e.name for e in ev), [e.count for e in ev.key_averages() if e.key == 'tp.block']]",
        F32),
    "torch.profiler._KinetoProfile.key_averages": (
        KINETO + "ka = kp.key_averages(group_by_input_shape=True)\n"
        "out = [ran(e.key for e in ka), sorted(str(e.input_shapes) for e in ka if e.key == 'aten::mm')]", F32),
    "torch.profiler._KinetoProfile.add_metadata": (
        KINETO.replace("kp.stop()", "kp.add_metadata('tp_note', 'tooling')\nkp.stop()")
        + "out = [chrome_trace(kp).get('tp_note'), ran(e.name for e in kp.events())]", F32),
    "torch.profiler._KinetoProfile.add_metadata_json": (
        KINETO.replace("kp.stop()", "kp.add_metadata_json('tp_json', '{\"rows\": %d}' % y.numel())\nkp.stop()")
        + "out = [chrome_trace(kp).get('tp_json'), ran(e.name for e in kp.events())]", F32),
    "torch.profiler._KinetoProfile.export_chrome_trace": (
        KINETO + "trace = chrome_trace(kp)\n"
        "out = [ran(e.get('name') for e in trace['traceEvents']), vals(y)]", F32),
    "torch.profiler._KinetoProfile.export_stacks": (
        KINETO_STACK + "with tempfile.TemporaryDirectory() as tmp:\n"
        "    path = os.path.join(tmp, 'stacks.txt')\n"
        "    kp.export_stacks(path, 'self_cpu_time_total')\n"
        "    with open(path) as f:\n"
        "        lines = f.read().splitlines()\n"
        "out = [all(ln.rsplit(' ', 1)[-1].isdigit() for ln in lines), vals(y)]", F32),
    "torch.profiler._KinetoProfile.export_memory_timeline": (
        KINETO_STACK + "with tempfile.TemporaryDirectory() as tmp:\n"
        "    path = os.path.join(tmp, 'memory.json')\n"
        "    kp.export_memory_timeline(path, device=str(torch.device(device)))\n"
        "    with open(path) as f:\n"
        "        timeline = json.load(f)\n"
        "out = [type(timeline).__name__, len(timeline), len(timeline[0]) == len(timeline[1]), vals(y)]", F32),
    "torch.profiler.tensorboard_trace_handler": (
        "from torch.profiler import profile, schedule, tensorboard_trace_handler\n"
        "with tempfile.TemporaryDirectory() as tmp:\n"
        "    handler = tensorboard_trace_handler(tmp, worker_name='tp_worker')\n"
        "    with profile(schedule=schedule(wait=0, warmup=0, active=1, repeat=2), on_trace_ready=handler) as prof:\n"
        "        for _ in range(3):\n"
        "            y = work()\n"
        "            prof.step()\n"
        "    files = sorted(os.listdir(tmp))\n"
        "    with open(os.path.join(tmp, files[0])) as f:\n"
        "        names = ran(e.get('name') for e in json.load(f)['traceEvents'])\n"
        "out = [len(files), all(f.startswith('tp_worker.') and f.endswith('.pt.trace.json') for f in files), names]", F32),
    "torch.profiler.itt.is_available": (
        "out = [torch.profiler.itt.is_available()]", F32),
    "torch.profiler.itt.range_push": (
        "depth = torch.profiler.itt.range_push('tp.range')\ny = work()\ntorch.profiler.itt.range_pop()\n"
        "out = [depth, vals(y)]", F32),
    "torch.profiler.itt.range_pop": (
        "torch.profiler.itt.range_push('tp.range')\ny = work()\ndepth = torch.profiler.itt.range_pop()\n"
        "out = [depth, vals(y)]", F32),
    "torch.profiler.itt.mark": (
        "marked = torch.profiler.itt.mark('tp.mark')\nout = [marked]", F32),
}

MONITOR = '''\
import datetime
from torch.monitor import Aggregation, Event, Stat, log_event, register_event_handler, unregister_event_handler
A = Aggregation
seen = []
handle = register_event_handler(lambda e: seen.append(e) if e.name.startswith("tp.") or e.name == "torch.monitor.Stat" else None)
stat = Stat("tp.loss", [A.MEAN, A.COUNT, A.MAX, A.SUM, A.MIN], datetime.timedelta(hours=1), max_samples=3)
losses = ((x @ x.T).sum(dim=1) / 4).tolist()
counts = []
for v in losses:
    stat.add(v)
    counts.append(stat.count)
got = {k.name: v for k, v in stat.get().items()}
when = datetime.datetime(2024, 1, 1, 12, 0, 0)
ev = Event("tp.step", when, {"loss": losses[0], "rows": x.shape[0], "device_ok": x.device.type == DEV, "tag": "tp"})
log_event(ev)
unregister_event_handler(handle)
log_event(Event("tp.after", when, {}))
stats = [dict(e.data) for e in seen if e.name == "torch.monitor.Stat" and "tp.loss.count" in e.data]
mine = [e for e in seen if e.name.startswith("tp.")]
'''

CASES.update({
    "torch.monitor.Aggregation": (MONITOR + "out = [sorted(A.__members__), sorted(got)]", F32),
    "torch.monitor.Aggregation.name": (MONITOR + "out = sorted(k.name for k in stat.get())", F32),
    "torch.monitor.Stat": (MONITOR + "out = [got, counts]", F32),
    "torch.monitor.Stat.__init__": (MONITOR + "out = [stat.name, got]", F32),
    "torch.monitor.Stat.add": (MONITOR + "out = [counts, stats]", F32),
    "torch.monitor.Stat.count": (MONITOR + "out = counts", F32),
    "torch.monitor.Stat.get": (MONITOR + "out = got", F32),
    "torch.monitor.Stat.name": (MONITOR + "out = stat.name", F32),
    "torch.monitor.Event": (MONITOR + "out = [[e.name for e in mine], [dict(e.data) for e in mine]]", F32),
    "torch.monitor.Event.__init__": (MONITOR + "out = [ev.name, str(ev.timestamp), dict(ev.data)]", F32),
    "torch.monitor.Event.data": (MONITOR + "out = dict(ev.data)", F32),
    "torch.monitor.Event.name": (MONITOR + "out = [ev.name, [e.name for e in mine]]", F32),
    "torch.monitor.Event.timestamp": (MONITOR + "out = [str(ev.timestamp), str(mine[0].timestamp)]", F32),
    "torch.monitor.EventHandlerHandle": (
        MONITOR + "out = [type(handle).__name__, [e.name for e in mine], len(stats)]", F32),
    "torch.monitor.data_value_t": (
        MONITOR + "out = sorted((k, type(v).__name__, v) for k, v in ev.data.items())", F32),
    "torch.monitor.log_event": (MONITOR + "out = [[e.name for e in mine], dict(mine[0].data)]", F32),
    "torch.monitor.register_event_handler": (MONITOR + "out = [len(stats), stats]", F32),
    "torch.monitor.unregister_event_handler": (
        MONITOR + "out = ['tp.after' in [e.name for e in seen], [e.name for e in mine]]", F32),
})

TIMER = '''\
from torch.utils.benchmark import Measurement, Timer
timer = Timer(stmt="torch.relu(x @ x.T)", globals={"x": x, "torch": torch}, label="tp.mm",
              sub_label=str(dtype), description="relu(mm)", num_threads=1)
'''

COUNTS = '''\
from torch.utils.benchmark import FunctionCounts
from torch.utils.benchmark.utils.valgrind_wrapper.timer_interface import FunctionCount
with torch.autograd.profiler.profile() as prof:
    for label in ("tp.a", "tp.a", "tp.b", "tp.a", "tp.b"):
        with torch.profiler.record_function(label):
            y = (x @ x.T).relu()
calls = sorted((e.count, "tooling.py:" + e.key) for e in prof.key_averages() if e.key.startswith("tp."))
fc = FunctionCounts(tuple(FunctionCount(c, k) for c, k in calls), inclusive=False)
'''

CASES.update({
    # torch.utils.benchmark (facts of the measurement, never its times)
    "torch.utils.benchmark.Timer": (
        TIMER + "m = timer.timeit(4)\nout = [m.label, m.sub_label, m.description, m.stmt, m.number_per_run, len(m.times)]", F32),
    "torch.utils.benchmark.Timer.timeit": (
        TIMER + "m = timer.timeit(3)\nout = [type(m).__name__, m.number_per_run, len(m.raw_times), m.task_spec.num_threads]",
        F32),
    "torch.utils.benchmark.Timer.blocked_autorange": (
        TIMER + "m = timer.blocked_autorange(min_run_time=0.02)\n"
        "out = [type(m).__name__, m.label, m.number_per_run >= 1, len(m.times) >= 1, m.mean > 0]", F32),
    "torch.utils.benchmark.Measurement": (
        TIMER + "m = timer.timeit(2)\nmerged = Measurement.merge([m, timer.timeit(2)])\n"
        "out = [isinstance(m, Measurement), m.title, m.env, len(merged), len(merged[0].times), m.has_warnings in (True, False)]",
        F32),
    "torch.utils.benchmark.FunctionCounts": (COUNTS + "out = [list(fc), fc.sum(), len(fc)]", F32),
    "torch.utils.benchmark.FunctionCounts.denoise": (COUNTS + "out = list(fc.denoise())", F32),
    "torch.utils.benchmark.FunctionCounts.filter": (
        COUNTS + "out = list(fc.filter(lambda name: name.endswith('tp.a')))", F32),
    "torch.utils.benchmark.FunctionCounts.transform": (
        COUNTS + "out = list(fc.transform(lambda name: name.split(':')[-1].upper()))", F32),
    # torch.compiler (the "eager" backend: dynamo's tracing of device tensors, not a codegen)
    "torch.compiler.compile": (
        "torch.compiler.reset()\nf = torch.compiler.compile(lambda t: torch.relu(t @ t.T) + 1, backend='eager')\n"
        "y = f(x)\nout = [vals(y), y.device.type == DEV]", F32),
    "torch.compiler.list_backends": (
        "everything = torch.compiler.list_backends(exclude_tags=())\ntorch.compiler.reset()\n"
        "y = torch.compile(lambda t: t.sin() * 2, backend=everything[everything.index('eager')])(x)\n"
        "out = [[b for b in ('eager', 'inductor', 'aot_eager') if b in everything], 'inductor' in torch.compiler.list_backends(),"
        " vals(y)]",
        F32),
    "torch.compiler.reset": (
        COMPILE_COUNT + "f = torch.compile(lambda t: t.cos() + t, backend=counting)\n"
        "a = f(x)\nf(x)\ntorch.compiler.reset()\nb = f(x)\nout = [len(graphs), vals(a), vals(b)]", F32),
    "torch.compiler.disable": (
        COMPILE_COUNT + "@torch.compiler.disable\ndef host(t):\n    return t.exp()\n"
        "f = torch.compile(lambda t: host(t * 2) - 1, backend=counting)\n"
        "y = f(x)\nout = [graphs, vals(y)]", F32),
    "torch.compiler.allow_in_graph": (
        COMPILE_COUNT + "def opaque(t):\n    return t.abs() + 1\n"
        "torch.compiler.allow_in_graph(opaque)\n"
        "f = torch.compile(lambda t: opaque(t) * 3, backend=counting)\n"
        "y = f(x)\nout = [graphs, vals(y)]", F32),
    "torch.compiler.assume_constant_result": (
        COMPILE_COUNT + "@torch.compiler.assume_constant_result\ndef rows():\n    return 4\n"
        "f = torch.compile(lambda t: t * rows(), backend=counting)\n"
        "y = f(x)\nout = [graphs, vals(y)]", F32),
    # torch.export
    "torch.export.export": (
        EXPORT + "out = [[n.op for n in ep.graph.nodes], [str(n.target) for n in ep.graph.nodes if n.op == 'call_function'],"
        " vals(ep.module()(x))]", F32),
    "torch.export.ExportedProgram": (
        EXPORT + "sig = ep.graph_signature\n"
        "out = [type(ep).__name__, [(s.kind.name, s.target) for s in sig.input_specs],"
        " [s.kind.name for s in sig.output_specs], sorted(ep.state_dict),"
        " sorted(t.device.type == DEV for t in ep.state_dict.values())]", F32),
    "torch.export.ExportedProgram.module": (
        EXPORT + "gm = ep.module()\ny = gm(x)\nout = [type(gm).__name__, vals(y), y.device.type == DEV,"
        " sorted(p.device.type == DEV for p in gm.parameters())]", F32),
    "torch.export.exported_program.ModuleCallEntry": (
        "m = torch.nn.Sequential(torch.nn.Sequential(torch.nn.Linear(3, 2)), torch.nn.ReLU()).to(device=device, dtype=dtype)\n"
        "ep = torch.export.export(m, (x,), preserve_module_call_signature=('0',))\n"
        "from torch.export.exported_program import ModuleCallEntry\n"
        "out = [[(type(e).__name__, e.fqn, e.signature is not None) for e in ep.module_call_graph], vals(ep.module()(x))]",
        F32),
    "torch.export.exported_program.ModuleCallSignature": (
        "m = torch.nn.Sequential(torch.nn.Sequential(torch.nn.Linear(3, 2)), torch.nn.ReLU()).to(device=device, dtype=dtype)\n"
        "ep = torch.export.export(m, (x,), preserve_module_call_signature=('0',))\n"
        "sig = [e.signature for e in ep.module_call_graph if e.fqn == '0'][0]\n"
        "out = [type(sig).__name__, len(sig.inputs), len(sig.outputs), str(sig.in_spec), str(sig.out_spec)]", F32),
    "torch.export.save": (
        EXPORT + "buf = io.BytesIO()\ntorch.export.save(ep, buf)\nbuf.seek(0)\n"
        "loaded = torch.export.load(buf)\ny = loaded.module()(x)\nout = [buf.getbuffer().nbytes > 0, vals(y), y.device.type == DEV]",
        F32),
    "torch.export.load": (
        EXPORT + "with tempfile.TemporaryDirectory() as tmp:\n"
        "    path = os.path.join(tmp, 'tiny.pt2')\n"
        "    torch.export.save(ep, path)\n"
        "    loaded = torch.export.load(path)\n"
        "y = loaded.module()(x)\n"
        "out = [[n.op for n in loaded.graph.nodes], vals(y), sorted(t.device.type == DEV for t in loaded.state_dict.values())]",
        F32),
})
