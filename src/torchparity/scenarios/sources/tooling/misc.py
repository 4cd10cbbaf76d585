"""Cases of the ``tooling`` source: torch.package, torch.hub (local), torch.library,
torch.overrides, torch.testing, torch.onnx (what runs without the onnx package),
torch.utils helpers and torch.__config__; and ``WHY_NOT``, the APIs left without a case
and the named reason.

A package is written to memory with a model whose parameters live on the device, then
imported back; a hub repo is a ``hubconf.py`` in a temporary folder, loaded with
``source="local"``, and checkpoints are fetched from ``file://`` URLs (no network).
"""

from __future__ import annotations

from typing import Dict, Tuple

F32 = ("float32",)
FD = ("float32", "float64")

PACKAGE = '''\
from torch.package import Directory, EmptyMatchError, PackageExporter, PackageImporter, PackagingError
HELPER_SRC = "def scale(t):\\n    return t * 2\\n"
TINY_SRC = "import tp_helper\\nimport yaml\\n\\ndef run(model, t):\\n    return tp_helper.scale(model(t))\\n"

def export_pkg(inspect=None, hooks=None, target=None):
    """A package holding the device model, two source modules, a text and a binary."""
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
        exp.save_pickle("res", "model.pkl", model())
        exp.save_text("res", "note.txt", "rows=%d" % x.shape[0])
        exp.save_binary("res", "x.bin", json.dumps(vals(x)).encode())
        if inspect:
            answer = inspect(exp)
    return buf, answer

def run_pkg(imp):
    y = imp.import_module("tp_tiny").run(imp.load_pickle("res", "model.pkl"), x)
    return [vals(y), y.device.type == DEV]

def opened(buf):
    buf.seek(0)
    return PackageImporter(buf)
'''

HUB = '''\
HUBCONF = """dependencies = ["torch"]
import torch

def tiny(device="cpu", dtype=torch.float32):
    \\"\\"\\"A two-layer model for the tooling tests.\\"\\"\\"
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU()).to(device=device, dtype=dtype)
"""
def hub_repo(tmp):
    repo = os.path.join(tmp, "repo")
    os.makedirs(repo)
    with open(os.path.join(repo, "hubconf.py"), "w") as f:
        f.write(HUBCONF)
    return repo

def checkpoint_url(tmp):
    """A state dict (saved from the device model) served from a file:// URL."""
    path = os.path.join(tmp, "tiny-state.pt")
    torch.save(model().state_dict(), path)
    return "file://" + path

def state_summary(sd):
    return {k: [vals(v), v.device.type == DEV] for k, v in sorted(sd.items())}
'''

LIBRARY = '''\
import itertools
from torch.library import Library, fallthrough_kernel
KEY = {"cpu": "CPU", "cuda": "CUDA"}.get(DEV, "PrivateUse1")
AUTOGRAD_KEY = {"cpu": "AutogradCPU", "cuda": "AutogradCUDA"}.get(DEV, "AutogradPrivateUse1")
lib = Library("tp_tooling", "DEF")
try:
    lib.define("scaled(Tensor x, float s) -> Tensor")
    lib.impl("scaled", lambda t, s: t * s + 1, KEY)
'''

LIBRARY_END = '''\
finally:
    lib._destroy()
'''

CASES: Dict[str, Tuple[str, Tuple[str, ...]]] = {
    # torch.package: exporter
    "torch.package.PackageExporter": (PACKAGE + "buf, _ = export_pkg()\nout = run_pkg(opened(buf))", F32),
    "torch.package.PackageExporter.__init__": (
        PACKAGE + "with tempfile.TemporaryDirectory() as tmp:\n"
        "    path = os.path.join(tmp, 'tiny.pt')\n"
        "    with PackageExporter(path, debug=True) as exp:\n"
        "        exp.extern('torch.**')\n"
        "        exp.save_pickle('res', 'model.pkl', model())\n"
        "    m = PackageImporter(path).load_pickle('res', 'model.pkl')\n"
        "    y = m(x)\n"
        "out = [vals(y), y.device.type == DEV]", F32),
    "torch.package.PackageExporter.close": (
        PACKAGE + "buf = io.BytesIO()\nexp = PackageExporter(buf)\nexp.extern('torch.**')\n"
        "exp.save_pickle('res', 'model.pkl', model())\nsize_open = buf.getbuffer().nbytes\nexp.close()\n"
        "y = opened(buf).load_pickle('res', 'model.pkl')(x)\n"
        "out = [buf.getbuffer().nbytes > size_open, vals(y)]", F32),
    "torch.package.PackageExporter.save_pickle": (
        PACKAGE + "buf, _ = export_pkg()\nm = opened(buf).load_pickle('res', 'model.pkl')\n"
        "out = [type(m).__name__, sorted((k, v.device.type == DEV, vals(v)) for k, v in m.state_dict().items())]", FD),
    "torch.package.PackageExporter.save_text": (
        PACKAGE + "buf, _ = export_pkg()\nout = [opened(buf).load_text('res', 'note.txt'), run_pkg(opened(buf))]", F32),
    "torch.package.PackageExporter.save_binary": (
        PACKAGE + "buf, _ = export_pkg()\nout = json.loads(opened(buf).load_binary('res', 'x.bin'))", FD),
    "torch.package.PackageExporter.save_source_string": (
        PACKAGE + "buf, _ = export_pkg()\nimp = opened(buf)\n"
        "out = [imp.import_module('tp_helper').scale(x).tolist(), run_pkg(imp)]", F32),
    "torch.package.PackageExporter.save_source_file": (
        PACKAGE + "with tempfile.TemporaryDirectory() as tmp:\n"
        "    src = os.path.join(tmp, 'tp_srcfile.py')\n"
        "    with open(src, 'w') as f:\n"
        "        f.write('def triple(t):\\n    return t * 3\\n')\n"
        "    buf = io.BytesIO()\n"
        "    with PackageExporter(buf) as exp:\n"
        "        exp.save_source_file('tp_srcfile', src)\n"
        "y = opened(buf).import_module('tp_srcfile').triple(x)\n"
        "out = [vals(y), y.device.type == DEV]", F32),
    "torch.package.PackageExporter.save_module": (
        PACKAGE + "import sys\nwith tempfile.TemporaryDirectory() as tmp:\n"
        "    with open(os.path.join(tmp, 'tp_realmod.py'), 'w') as f:\n"
        "        f.write('import torch\\n\\ndef halve(t):\\n    return torch.div(t, 2)\\n')\n"
        "    sys.path.insert(0, tmp)\n"
        "    try:\n"
        "        buf = io.BytesIO()\n"
        "        with PackageExporter(buf) as exp:\n"
        "            exp.extern('torch.**')\n"
        "            exp.save_module('tp_realmod')\n"
        "    finally:\n"
        "        sys.path.remove(tmp)\n"
        "        sys.modules.pop('tp_realmod', None)\n"
        "y = opened(buf).import_module('tp_realmod').halve(x)\n"
        "out = [vals(y), y.device.type == DEV]", F32),
    "torch.package.PackageExporter.extern": (
        PACKAGE + "buf, names = export_pkg(lambda e: sorted(n for n in e.externed_modules() if n.startswith('torch.nn')))\n"
        "out = [names, run_pkg(opened(buf))]", F32),
    "torch.package.PackageExporter.externed_modules": (
        PACKAGE + "buf, names = export_pkg(lambda e: e.externed_modules())\n"
        "out = [sorted(n for n in names if n.startswith('torch.nn.modules')), run_pkg(opened(buf))]", F32),
    "torch.package.PackageExporter.intern": (
        PACKAGE + "buf, names = export_pkg(lambda e: sorted(e.interned_modules()))\nout = [names, run_pkg(opened(buf))]", F32),
    "torch.package.PackageExporter.interned_modules": (
        PACKAGE + "buf, names = export_pkg(lambda e: sorted(e.interned_modules()))\nout = [names, run_pkg(opened(buf))]", F32),
    "torch.package.PackageExporter.mock": (
        PACKAGE + "buf, names = export_pkg(lambda e: sorted(e.mocked_modules()))\nout = [names, run_pkg(opened(buf))]", F32),
    "torch.package.PackageExporter.mocked_modules": (
        PACKAGE + "buf, names = export_pkg(lambda e: e.mocked_modules())\nout = [names, run_pkg(opened(buf))]", F32),
    "torch.package.PackageExporter.add_dependency": (
        PACKAGE + "def probe(e):\n    e.add_dependency('torch.nn.functional')\n"
        "    return 'torch.nn.functional' in e.externed_modules()\n"
        "buf, added = export_pkg(probe)\nout = [added, run_pkg(opened(buf))]", F32),
    "torch.package.PackageExporter.get_rdeps": (
        PACKAGE + "buf, rdeps = export_pkg(lambda e: e.get_rdeps('yaml'))\n"
        "out = [rdeps, run_pkg(opened(buf))]", F32),
    "torch.package.PackageExporter.dependency_graph_string": (
        PACKAGE + "buf, dot = export_pkg(lambda e: e.dependency_graph_string())\n"
        "out = [dot.splitlines()[0], sorted(ln.strip() for ln in dot.splitlines() if '\"tp_' in ln), run_pkg(opened(buf))]",
        F32),
    "torch.package.PackageExporter.all_paths": (
        # torch 2.13's DiGraph.all_paths seeds its walks with set(src) and deque(dst): the
        # module names are single letters so that the walks start where they should
        PACKAGE + "import sys\nwith tempfile.TemporaryDirectory() as tmp:\n"
        "    with open(os.path.join(tmp, 'b.py'), 'w') as f:\n        f.write(HELPER_SRC)\n"
        "    with open(os.path.join(tmp, 'a.py'), 'w') as f:\n"
        "        f.write('import b\\n\\ndef run(t):\\n    return b.scale(t)\\n')\n"
        "    sys.path.insert(0, tmp)\n    try:\n        buf = io.BytesIO()\n"
        "        with PackageExporter(buf) as exp:\n"
        "            exp.intern(['a', 'b'])\n            exp.save_module('a')\n"
        "            dot = exp.all_paths('a', 'b')\n"
        "    finally:\n        sys.path.remove(tmp)\n        sys.modules.pop('a', None)\n        sys.modules.pop('b', None)\n"
        "y = opened(buf).import_module('a').run(x)\n"
        "out = [sorted(ln.strip() for ln in dot.splitlines()), vals(y)]", F32),
    "torch.package.PackageExporter.get_unique_id": (
        PACKAGE + "buf, ids = export_pkg(lambda e: [e.get_unique_id(), e.get_unique_id()])\n"
        "out = [int(ids[1]) - int(ids[0]), run_pkg(opened(buf))]", F32),
    "torch.package.PackageExporter.deny": (
        PACKAGE + "def deny_it(e):\n    e.deny('yaml')\n"
        "try:\n    export_pkg(hooks=deny_it)\n    out = 'no error'\n"
        "except PackagingError as exc:\n    out = [type(exc).__name__, 'yaml' in str(exc)]", F32),
    "torch.package.PackageExporter.denied_modules": (
        PACKAGE + "denied = []\ndef deny_it(e):\n    e.deny('yaml')\n"
        "try:\n    export_pkg(inspect=lambda e: denied.append(e.denied_modules()), hooks=deny_it)\n"
        "except PackagingError:\n    pass\nout = denied", F32),
    "torch.package.PackagingError": (
        PACKAGE + "buf = io.BytesIO()\ntry:\n    with PackageExporter(buf) as exp:\n"
        "        exp.save_pickle('res', 'model.pkl', model())\n"
        "        exp.save_source_string('tp_lonely', 'import yaml\\n')\n    out = 'no error'\n"
        "except PackagingError as exc:\n"
        "    out = [type(exc).__name__, 'yaml' in str(exc)]", F32),
    "torch.package.EmptyMatchError": (
        PACKAGE + "def strict(e):\n    e.intern('tp_nothing_matches.**', allow_empty=False)\n"
        "try:\n    export_pkg(hooks=strict)\n    out = 'no error'\n"
        "except EmptyMatchError as exc:\n    out = [type(exc).__name__, 'tp_nothing_matches' in str(exc)]", F32),
    "torch.package.PackageExporter.register_extern_hook": (
        PACKAGE + "seen = []\n"
        "buf, _ = export_pkg(hooks=lambda e: e.register_extern_hook(lambda exp, name: seen.append(name)))\n"
        "out = [sorted(n for n in seen if n.startswith('torch.nn.modules')), run_pkg(opened(buf))]", F32),
    "torch.package.PackageExporter.register_intern_hook": (
        PACKAGE + "seen = []\n"
        "buf, _ = export_pkg(hooks=lambda e: e.register_intern_hook(lambda exp, name: seen.append(name)))\n"
        "out = [sorted(seen), run_pkg(opened(buf))]", F32),
    "torch.package.PackageExporter.register_mock_hook": (
        PACKAGE + "seen = []\n"
        "buf, _ = export_pkg(hooks=lambda e: e.register_mock_hook(lambda exp, name: seen.append(name)))\n"
        "out = [sorted(seen), run_pkg(opened(buf))]", F32),
    # torch.package: importer
    "torch.package.PackageImporter": (PACKAGE + "buf, _ = export_pkg()\nout = run_pkg(opened(buf))", F32),
    "torch.package.PackageImporter.__init__": (
        PACKAGE + "buf, _ = export_pkg()\nout = [run_pkg(PackageImporter(io.BytesIO(buf.getvalue()))),"
        " run_pkg(PackageImporter(io.BytesIO(buf.getvalue()), module_allowed=lambda name: True))]", F32),
    "torch.package.PackageImporter.import_module": (
        PACKAGE + "buf, _ = export_pkg()\nimp = opened(buf)\nmod = imp.import_module('tp_tiny')\n"
        "out = [mod.__name__.split('.')[-1], run_pkg(imp)]", F32),
    "torch.package.PackageImporter.load_pickle": (
        PACKAGE + "buf, _ = export_pkg()\nm = opened(buf).load_pickle('res', 'model.pkl')\ny = m(x)\n"
        "out = [vals(y), sorted(p.device.type == DEV for p in m.parameters())]", F32),
    "torch.package.PackageImporter.load_text": (
        PACKAGE + "buf, _ = export_pkg()\nout = opened(buf).load_text('res', 'note.txt')", F32),
    "torch.package.PackageImporter.load_binary": (
        PACKAGE + "buf, _ = export_pkg()\nraw = opened(buf).load_binary('res', 'x.bin')\n"
        "out = [type(raw).__name__, json.loads(raw)]", F32),
    "torch.package.PackageImporter.file_structure": (
        PACKAGE + "buf, _ = export_pkg()\ntree = opened(buf).file_structure(include=['res/**', 'tp_*'])\n"
        "out = [type(tree).__name__, str(tree).splitlines()[1:]]", F32),
    "torch.package.Directory": (
        PACKAGE + "buf, _ = export_pkg()\ntree = opened(buf).file_structure(include=['res/**'])\n"
        "out = [isinstance(tree, Directory), sorted(tree.children), sorted(tree.children['res'].children)]", F32),
    "torch.package.Directory.has_file": (
        PACKAGE + "buf, _ = export_pkg()\ntree = opened(buf).file_structure()\n"
        "out = [tree.has_file('res/model.pkl'), tree.has_file('res/x.bin'), tree.has_file('res/absent.txt')]", F32),
    "torch.package.PackageImporter.id": (
        PACKAGE + "buf, _ = export_pkg()\nimp = opened(buf)\n"
        "out = [re.sub(r'\\d+', 'N', imp.id()), imp.import_module('tp_tiny').__name__.startswith(imp.id()), run_pkg(imp)]",
        F32),
    "torch.package.PackageImporter.python_version": (
        PACKAGE + "import sys\nbuf, _ = export_pkg()\nv = opened(buf).python_version()\n"
        "out = [v.split('.')[:2] == [str(sys.version_info[0]), str(sys.version_info[1])], run_pkg(opened(buf))]", F32),
}

OVERRIDES = '''\
from torch.overrides import TorchFunctionMode, get_overridable_functions, has_torch_function, resolve_name
class Names(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.funcs = []
    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.funcs.append(func)
        return func(*args, **(kwargs or {}))
with Names() as mode:
    y = torch.add(x, 1).relu().sum(dim=0)
'''

CASES.update({
    # torch.hub on a local repo and file:// URLs
    "torch.hub.load": (
        HUB + "with tempfile.TemporaryDirectory() as tmp:\n"
        "    m = torch.hub.load(hub_repo(tmp), 'tiny', source='local', device=device, dtype=dtype)\n"
        "y = m(x)\nout = [vals(y), y.device.type == DEV]", F32),
    "torch.hub.download_url_to_file": (
        HUB + "with tempfile.TemporaryDirectory() as tmp:\n    dst = os.path.join(tmp, 'copy.pt')\n"
        "    torch.hub.download_url_to_file(checkpoint_url(tmp), dst, progress=False)\n"
        "    sd = torch.load(dst, map_location=device)\nout = state_summary(sd)", F32),
    "torch.hub.load_state_dict_from_url": (
        HUB + "with tempfile.TemporaryDirectory() as tmp:\n"
        "    sd = torch.hub.load_state_dict_from_url(checkpoint_url(tmp), model_dir=os.path.join(tmp, 'hub'),"
        " map_location=device, progress=False)\nout = state_summary(sd)", FD),
    "torch.utils.model_zoo.load_url": (
        HUB + "import torch.utils.model_zoo\nwith tempfile.TemporaryDirectory() as tmp:\n"
        "    sd = torch.utils.model_zoo.load_url(checkpoint_url(tmp), model_dir=os.path.join(tmp, 'zoo'),"
        " map_location=device, progress=False)\nout = state_summary(sd)", F32),
    "torch.hub.set_dir": (
        HUB + "old = torch.hub.get_dir()\nwith tempfile.TemporaryDirectory() as tmp:\n"
        "    torch.hub.set_dir(os.path.join(tmp, 'hubdir'))\n    try:\n"
        "        sd = torch.hub.load_state_dict_from_url(checkpoint_url(tmp), map_location=device, progress=False)\n"
        "        cached = os.listdir(os.path.join(tmp, 'hubdir', 'checkpoints'))\n    finally:\n"
        "        torch.hub.set_dir(old)\nout = [cached, state_summary(sd)]", F32),
    "torch.hub.get_dir": (
        HUB + "old = torch.hub.get_dir()\nwith tempfile.TemporaryDirectory() as tmp:\n"
        "    torch.hub.set_dir(os.path.join(tmp, 'hubdir'))\n    try:\n"
        "        here = torch.hub.get_dir() == os.path.join(tmp, 'hubdir')\n"
        "        sd = torch.hub.load_state_dict_from_url(checkpoint_url(tmp), map_location=device, progress=False)\n"
        "        cached = os.listdir(os.path.join(torch.hub.get_dir(), 'checkpoints'))\n    finally:\n"
        "        torch.hub.set_dir(old)\nout = [here, torch.hub.get_dir() == old, cached, state_summary(sd)]", F32),
    # torch.library: an op defined here, implemented for the device's dispatch key
    "torch.library.Library": (
        LIBRARY + "    y = torch.ops.tp_tooling.scaled(x, 2.5)\n    out = [vals(y), y.device.type == DEV,"
        " str(torch.ops.tp_tooling.scaled.default._schema)]\n" + LIBRARY_END, FD),
    "torch.library.fallthrough_kernel": (
        LIBRARY + "    lib.impl('scaled', fallthrough_kernel, AUTOGRAD_KEY)\n"
        "    g = x.clone().requires_grad_()\n    y = torch.ops.tp_tooling.scaled(g, 2.0)\n"
        "    out = [vals(y), y.requires_grad, y.grad_fn is None]\n" + LIBRARY_END, F32),
    # torch.overrides
    "torch.overrides.resolve_name": (OVERRIDES + "out = [[resolve_name(f) for f in mode.funcs], vals(y)]", F32),
    "torch.overrides.has_torch_function": (
        OVERRIDES + "class Tagged(torch.Tensor):\n    pass\n"
        "out = [has_torch_function((x,)), has_torch_function((x.as_subclass(Tagged),)), vals(y)]", F32),
    "torch.overrides.get_overridable_functions": (
        OVERRIDES + "table = get_overridable_functions()\nknown = {f for fs in table.values() for f in fs}\n"
        "out = [[resolve_name(f) for f in mode.funcs if f in known], vals(y)]", F32),
    # torch.testing
    "torch.testing.assert_allclose": (
        "import warnings\nwith warnings.catch_warnings():\n    warnings.simplefilter('ignore')\n"
        "    torch.testing.assert_allclose(x * 2, x + x)\n    try:\n"
        "        torch.testing.assert_allclose(x, x + 1)\n        err = None\n"
        "    except AssertionError as exc:\n        err = [ln for ln in str(exc).splitlines() if 'Mismatched elements' in ln]\n"
        "out = err", FD),
    # torch.onnx: what runs without the onnx package
    "torch.onnx.select_model_mode_for_export": (
        "m = model()\nm.train()\nfrom torch.onnx import TrainingMode\n"
        "with torch.onnx.select_model_mode_for_export(m, TrainingMode.EVAL):\n"
        "    inside = [m.training, vals(m(x))]\nout = [inside, m.training]", F32),
    "torch.onnx.is_in_onnx_export": (
        "seen = []\nm = model()\nm.register_forward_hook(lambda mod, i, o: seen.append(torch.onnx.is_in_onnx_export()))\n"
        "y = m(x)\nout = [seen, vals(y)]", F32),
    # torch.utils
    "torch.utils.dlpack.to_dlpack": (
        "from torch.utils.dlpack import from_dlpack, to_dlpack\ncap = to_dlpack(x)\ny = from_dlpack(cap)\n"
        "y.add_(1)\nout = [type(cap).__name__, vals(x), y.device.type == DEV, y.dtype == x.dtype]", FD),
    "torch.utils.deterministic.fill_uninitialized_memory": (
        "import torch.utils.deterministic as det\nold = (torch.are_deterministic_algorithms_enabled(), det.fill_uninitialized_memory)\n"
        "torch.use_deterministic_algorithms(True)\ndet.fill_uninitialized_memory = True\ntry:\n"
        "    e = torch.empty(5, dtype=dtype, device=device)\n    i = torch.empty(5, dtype=torch.int32, device=device)\n"
        "    out = [e.isnan().tolist(), (i == torch.iinfo(torch.int32).max).tolist(), det.fill_uninitialized_memory]\n"
        "finally:\n    torch.use_deterministic_algorithms(old[0])\n    det.fill_uninitialized_memory = old[1]", FD),
    "torch.utils.get_cpp_backtrace": (
        "traces = []\ng = x.clone().requires_grad_()\n"
        "g.register_hook(lambda grad: traces.append(torch.utils.get_cpp_backtrace(frames_to_skip=0, maximum_number_of_frames=4)))\n"
        "(g * 3).sum().backward()\nout = [[type(t).__name__ for t in traces], vals(g.grad)]", F32),
    "torch.utils.cpp_extension.include_paths": (
        "import torch.utils.cpp_extension as ext\npaths = ext.include_paths(DEV)\nbase = ext.include_paths('cpu')\n"
        "out = [all(p in paths for p in base), all(os.path.isdir(p) for p in paths)]", F32),
    "torch.utils.cpp_extension.is_ninja_available": (
        "import shutil\nimport torch.utils.cpp_extension as ext\n"
        "out = [ext.is_ninja_available() == (shutil.which('ninja') is not None)]", F32),
    "torch.utils.cpp_extension.verify_ninja_availability": (
        "import torch.utils.cpp_extension as ext\ntry:\n    ext.verify_ninja_availability()\n    ok = True\n"
        "except RuntimeError:\n    ok = False\nout = [ok == ext.is_ninja_available()]", F32),
    "torch.utils.cpp_extension.get_compiler_abi_compatibility_and_version": (
        "import torch.utils.cpp_extension as ext\nok, version = ext.get_compiler_abi_compatibility_and_version('c++')\n"
        "out = [type(ok).__name__, str(version).count('.') >= 1 or str(version) == '0.0.0']", F32),
    # torch.__config__
    "torch.__config__.show": (
        "text = torch.__config__.show()\nout = [text.splitlines()[0].strip()]", F32),
    "torch.__config__.parallel_info": (
        "text = torch.__config__.parallel_info()\n"
        "out = [sorted(ln.split(':')[0].strip() for ln in text.splitlines() if ':' in ln)[:6]]", F32),
})

# APIs left without a case, and why (shown by ``why_not``)
NEEDS_TB = "needs the tensorboard package, which is not installed (a large optional dependency)"
WHY_NOT: Dict[str, str] = {
    "torch.autograd.profiler.emit_nvtx": "emits NVTX ranges: needs a CUDA build (this torch raises 'not compiled with CUDA')",
    "torch.autograd.profiler.load_nvprof": "reads an nvprof trace, which only NVIDIA's nvprof writes",
    "torch.monitor.TensorboardEventHandler": NEEDS_TB,
    "torch.monitor.TensorboardEventHandler.__init__": NEEDS_TB,
    "torch.hub.list": "reads hubconf from a GitHub repo only (no source='local' in torch 2.13): needs the network",
    "torch.hub.help": "reads hubconf from a GitHub repo only (no source='local' in torch 2.13): needs the network",
    "torch.onnx.export": "needs the onnx and onnxscript packages, which are not installed",
    "torch.onnx.ONNXProgram": "made by the dynamo ONNX exporter, which needs onnxscript (not installed)",
    "torch.onnx.ONNXProgram.model_proto": "made by the dynamo ONNX exporter, which needs onnxscript (not installed)",
    "torch.onnx.ONNXProgram.save": "made by the dynamo ONNX exporter, which needs onnxscript (not installed)",
    "torch.onnx.OnnxExporterError": "raised by the ONNX exporters, which need onnx/onnxscript (not installed)",
    "torch.onnx.register_custom_op_symbolic": "used only by the TorchScript ONNX exporter, which needs onnx (not installed)",
    "torch.onnx.unregister_custom_op_symbolic": "used only by the TorchScript ONNX exporter, which needs onnx (not installed)",
    "torch.utils.benchmark.CallgrindStats": "needs valgrind runs with callgrind bindings compiled at run time (a C++ toolchain, minutes)",
    "torch.utils.benchmark.Timer.collect_callgrind": "needs valgrind runs with callgrind bindings compiled at run time (a C++ toolchain, minutes)",
    "torch.utils.cpp_extension.BuildExtension": "a setuptools build of C++ sources (a C++ toolchain, minutes)",
    "torch.utils.cpp_extension.CppExtension": "a setuptools build of C++ sources (a C++ toolchain, minutes)",
    "torch.utils.cpp_extension.CUDAExtension": "builds CUDA sources: needs nvcc and a CUDA build",
    "torch.utils.cpp_extension.load": "compiles C++ sources at run time (a C++ toolchain, minutes)",
    "torch.utils.cpp_extension.load_inline": "compiles C++ sources at run time (a C++ toolchain, minutes)",
    "torch.utils.mobile_optimizer.optimize_for_mobile": "this torch is built without XNNPACK: it fails on the CPU itself",
    "torch.utils.rename_privateuse1_backend": "renames the process's one PrivateUse1 backend, once and for good (a device backend holds it)",
    "torch.utils.generate_methods_for_privateuse1_backend": "installs methods for the process's one PrivateUse1 backend, once and for good",
}
for _m in ("as_standardized", "counts", "delta", "stats"):
    WHY_NOT[f"torch.utils.benchmark.CallgrindStats.{_m}"] = WHY_NOT["torch.utils.benchmark.CallgrindStats"]
for _m in ("__init__", "add_audio", "add_custom_scalars", "add_embedding", "add_figure", "add_graph", "add_histogram",
           "add_hparams", "add_image", "add_images", "add_mesh", "add_pr_curve", "add_scalar", "add_scalars",
           "add_text", "add_video", "close", "flush"):
    WHY_NOT[f"torch.utils.tensorboard.writer.SummaryWriter.{_m}"] = NEEDS_TB
WHY_NOT["torch.utils.tensorboard.writer.SummaryWriter"] = NEEDS_TB
