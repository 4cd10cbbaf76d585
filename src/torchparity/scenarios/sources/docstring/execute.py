"""Running one docstring example block, on the CPU or with a device as the default device.

Not a source itself (the ``docstring`` source uses it). What is run, and how:

- the block's text with clear CUDA spellings mapped to the run's device (:func:`rewrite`):
  ``.cuda()``, ``'cuda'`` / ``"cuda:0"`` string literals (``device="cuda"``,
  ``.to('cuda')``, ``torch.device('cuda')``) and ``torch.cuda.`` (the device's own module,
  ``torch.cpu`` on the CPU). Nothing else in the text changes;
- inside ``with torch.device(device)``, so factory calls without a device land on it;
- on a device other than the CPU, every random aten op (``randn``, ``uniform_``,
  ``native_dropout``, ``bernoulli``, ...) draws on the CPU and moves to the device
  (:class:`CpuRandom`): a device generator has its own stream, and both runs must see the
  same draws. Where the API under test is itself a random op, its device kernel is
  therefore not what runs (the test databases cover those ops);
- statement by statement: the value of every expression statement is kept, what the block
  printed (:class:`Printed`: compared with device names and addresses normalised, each
  printed decimal number within one unit of its last digit), and after the
  block every tensor (and every ``nn.Module``'s state) the block bound. On the device run,
  a kept tensor that the example puts on the CPU by design (``get_state`` answers a CPU
  tensor) is moved to the device before it is compared: its values are the question. One
  that belongs on the run's device (a run with ``meta`` as the default device puts it
  there) and that the device run left on the CPU stays there, and the judge reports it
  (``metadata``: "on cpu, expected on npu"); see :func:`run_examples`.

Outputs are made comparable by :func:`plain`: tensors stay tensors (the judge compares
them), containers are walked, other objects become their repr with device names and
addresses normalised.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import io
import re
from typing import Any, Dict, List, Optional, Tuple

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves, tree_map

from ....api.footprint import call_from_mode
from ....results.error_rules import classify_exception
from ....results.models import Cause

DEVICE_VAR, MODULE_VAR = "_tp_device", "_tp_devmod"
SEED = 0  # the runner's seed (run.execute seeds each run with it)

_REWRITES: Tuple[Tuple[re.Pattern, str], ...] = (
    (re.compile(r"\.cuda\(\s*(?:\d+|device\s*=\s*\d+)?\s*\)"), f".to({DEVICE_VAR})"),
    (re.compile(r"torch\.device\(\s*(['\"])cuda(?::\d+)?\1\s*(?:,\s*\d+\s*)?\)"), f"torch.device({DEVICE_VAR})"),
    (re.compile(r"(['\"])cuda(?::\d+)?\1"), DEVICE_VAR),
    (re.compile(r"\btorch\.cuda\."), f"{MODULE_VAR}."),
    # an example written for the CPU hands its tensor to NumPy; on any accelerator a user
    # writes .cpu() first (a device tensor refuses .numpy() by design, on every backend),
    # and on the CPU .cpu() is the tensor itself
    (re.compile(r"\.numpy\(\s*\)"), ".cpu().numpy()"),
)


def rewrite(text: str) -> str:
    """``text`` with its clear CUDA spellings mapped to the run's device variables."""
    for pattern, repl in _REWRITES:
        text = pattern.sub(repl, text)
    return text


def device_module(device: str) -> Any:
    kind = torch.device(device).type
    try:
        return torch.get_device_module(kind)
    except Exception:  # no module registered for the type: torch.cuda.* cannot map
        return None


# random aten ops: every draw the device run makes, however deep inside the API
_RANDOM_OPS = ("bernoulli", "bernoulli_", "native_dropout", "normal", "normal_", "uniform_", "random_",
               "exponential_", "cauchy_", "log_normal_", "geometric_", "rand", "rand_like", "randn",
               "randn_like", "randint", "randint_like", "randperm", "multinomial", "poisson",
               "rrelu_with_noise", "_standard_gamma", "_sample_dirichlet", "binomial")


def _random_packets() -> set:
    return {getattr(torch.ops.aten, n) for n in _RANDOM_OPS if hasattr(torch.ops.aten, n)}


def _to(tree: Any, device: Any) -> Any:
    return tree_map(lambda t: t.to(device) if isinstance(t, torch.Tensor) else t, tree)


class CpuRandom(TorchDispatchMode):
    """Every random aten op of the device run drawn on the CPU and moved to the device
    (see the module docstring): a dispatch mode, so draws nested in other functions
    (``nn.Linear``'s initialisation, a module's dropout) are caught too."""

    def __init__(self, device: str):
        super().__init__()
        self.device, self.ops = torch.device(device), _random_packets()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        # a device kernel raising in backward must not raise through the mode there
        # (api.footprint's module docstring: it would kill the process)
        return call_from_mode(self._dispatch, (func, args, dict(kwargs or {})), {})

    def _dispatch(self, func, args, kwargs):
        if func.overloadpacket not in self.ops or "out" in kwargs:
            return func(*args, **kwargs)
        gen = kwargs.get("generator")
        if gen is not None and gen.device.type != "cpu":  # the example's own device generator
            return func(*args, **kwargs)
        first = next((t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)), None)
        where = first.device if first is not None else torch.device(kwargs.get("device") or self.device)
        if where.type == "cpu":
            return func(*args, **kwargs)
        if func.overloadpacket.__name__.endswith("_"):  # a fill: overwrites every element
            target = args[0]
            blank = torch.empty(target.shape, dtype=target.dtype, device="cpu")
            func(blank, *_to(args[1:], "cpu"), **_to(kwargs, "cpu"))
            target.copy_(blank)
            return target
        if "device" in kwargs:
            kwargs["device"] = torch.device("cpu")
        return _to(func(*_to(args, "cpu"), **_to(kwargs, "cpu")), where)


_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_DEVICE_NAMES = r"(?:cpu|cuda|npu|xpu|mps|hpu|privateuseone|meta)"
_DEVICE_ARG = re.compile(r",\s*device='" + _DEVICE_NAMES + r"(?::\d+)?'")
_DEVICE_REPR = re.compile(r"device\(type='" + _DEVICE_NAMES + r"'(?:,\s*index=\d+)?\)")
_DEVICE_STR = re.compile(r"\A" + _DEVICE_NAMES + r"(?::\d+)?\Z")


def normalise(text: str) -> str:
    """A repr or string with device names and memory addresses made run-independent."""
    if _DEVICE_STR.match(text):
        return "<device>"
    text = _DEVICE_ARG.sub("", text)
    text = _DEVICE_REPR.sub("device(<device>)", text)
    return _ADDRESS.sub("0x?", text)


_NUMBER = re.compile(r"(?<![\w.])[-+]?(\d+\.\d*|\.\d+)(?:[eE]([-+]?\d+))?|(?<![\w.])[-+]?\d+(?![\w.])")


class Printed:
    """What an example printed (stdout), device names and addresses normalised: the text
    outside numbers must match; integers must match; a number printed with decimals may
    differ by one unit of its last printed digit (a correct device's last-bit difference
    can cross a rounding boundary of the print, nothing more)."""

    def __init__(self, text: str):
        self.text = "\n".join(normalise(line) for line in text.splitlines())
        self.skeleton = _NUMBER.sub("#", self.text)
        self.numbers = [(m.group(0), m.group(1), m.group(2)) for m in _NUMBER.finditer(self.text)]

    @staticmethod
    def _close(a, b) -> bool:
        (ta, da, ea), (tb, db, eb) = a, b
        if ta == tb:
            return True
        if da is None or db is None:  # an integer: exact
            return False
        unit = max(10.0 ** (-(len(x.split(".")[1]) if "." in x else 0) + int(e or 0))
                   for x, e in ((da, ea), (db, eb)))
        return abs(float(ta) - float(tb)) <= unit * 1.0001

    def __eq__(self, other) -> bool:
        if not isinstance(other, Printed):
            return NotImplemented
        return (self.skeleton == other.skeleton and len(self.numbers) == len(other.numbers)
                and all(self._close(a, b) for a, b in zip(self.numbers, other.numbers)))

    def __hash__(self):
        return hash(self.skeleton)

    def __repr__(self) -> str:
        return f"printed {self.text[:200]!r}"


def plain(value: Any, depth: int = 0) -> Any:
    """``value`` made comparable across runs (see the module docstring)."""
    if isinstance(value, torch.Tensor):
        if isinstance(value, torch.nn.parameter.UninitializedTensorMixin):
            return "uninitialised (lazy) parameter"
        if value.is_nested:  # its components (a nested tensor has no single shape)
            return [plain(t, depth + 1) for t in value.unbind()]
        return value
    if isinstance(value, (torch.SymInt, torch.SymFloat)):  # nested ints: j1, j2, ... per process
        return "<symbolic size>"
    if value is None or isinstance(value, (bool, int, float, complex, torch.dtype)):
        return value
    if isinstance(value, str):
        return normalise(value)
    if isinstance(value, torch.device):
        return "device(<device>)"
    if depth > 6:
        return normalise(repr(value))
    if isinstance(value, (list, tuple)):  # torch.Size, named tuples and return types too
        return [plain(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {normalise(repr(k)) if not isinstance(k, str) else k: plain(v, depth + 1)
                for k, v in value.items()}
    if isinstance(value, torch.nn.Module):
        return {"module": type(value).__name__, "state": plain(dict(value.state_dict()), depth + 1)}
    return normalise(repr(value))


def _first_line(exc: BaseException) -> str:
    return next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")


class ExampleError(Exception):
    """An example statement raised where its docstring shows no traceback."""

    def __init__(self, index: int, source: str, exc: BaseException):
        super().__init__(f"example line {index} ({source.strip().splitlines()[0][:80]}): "
                         f"{type(exc).__name__}: {_first_line(exc)[:200]}")


class _State:
    """Process-wide torch settings an example may change, restored after it."""

    def __enter__(self):
        self.saved = (torch.get_default_dtype(), torch.is_grad_enabled(),
                      torch.are_deterministic_algorithms_enabled(), torch.get_num_threads())
        return self

    def __exit__(self, *exc):
        dtype, grad, det, threads = self.saved
        torch.set_default_dtype(dtype)
        torch.set_grad_enabled(grad)
        torch.use_deterministic_algorithms(det)
        torch.set_num_threads(threads)
        return False


def run_examples(examples: List[Tuple[str, Optional[str]]], setup: List[str], namespace: Dict[str, Any],
                 device: str, filename: str = "<docstring example>") -> Dict[str, Any]:
    """Run ``setup`` sources (values not kept), then ``examples`` (``(source, exc_msg)``:
    ``exc_msg`` set where the docstring shows a traceback), with ``device`` as the default
    device; the values to compare (see the module docstring). ``filename``: the name the
    code is compiled under (the footprint recorder tells scenario code from the API by it).

    Where a kept tensor lives: on a device run, a tensor left on the CPU is moved to the
    device before it is compared only where the example puts it on the CPU by design
    (:func:`placements`: a run with ``meta`` as the default device leaves it on the CPU:
    ``get_state``, ``frombuffer``, an explicit ``.cpu()``); a tensor that belongs on the
    run's device stays where it is, so the judge sees a tensor left on the CPU ("on cpu,
    expected on npu"). Where the example cannot run on ``meta`` (values read, data-dependent
    shapes) every tensor is moved, as before: its placement is not judged."""
    out = _run(examples, setup, namespace, device, filename)
    wanted = placements(examples, setup, namespace, filename) if torch.device(device).type != "cpu" else None
    # where a tensor lives is the example's business where it is the CPU by design (get_state,
    # frombuffer, lengths of a packed sequence are CPU tensors; torch.accelerator.* picks the
    # accelerator even in the CPU run): values are compared, each run's on its own device
    return {k: _onto(v, torch.device(device), _leaf_plan(v, (wanted or {}).get(k))) for k, v in out.items()}


ON_DEVICE = "device"  # a placement: the run's default device


def placements(examples: List[Tuple[str, Optional[str]]], setup: List[str], namespace: Dict[str, Any],
               filename: str = "<docstring example>") -> Optional[Dict[str, List[str]]]:
    """Where each kept tensor of the example lives when ``meta`` is the default device
    (a run that computes nothing): per kept value, its tensors' placements in order,
    ``"device"`` (on the default device) or the device type it chose itself (``"cpu"``);
    a statement that cannot run on ``meta`` (``.cpu()``, ``.item()``, data-dependent
    shapes) keeps nothing there; None where the set-up does not run. Out of sight of any dispatch mode
    (a footprint recorder) and with the CPU generator's state restored."""
    from torch.utils._python_dispatch import _disable_current_modes

    try:
        with _disable_current_modes(), torch.random.fork_rng(devices=[]):
            out = _run(examples, setup, namespace, "meta", filename, tolerant=True)
    except Exception:
        return None
    return {k: [ON_DEVICE if t.device.type == "meta" else t.device.type for t in _tensor_leaves(v)]
            for k, v in out.items()}


def _tensor_leaves(tree: Any) -> List[torch.Tensor]:
    if isinstance(tree, torch.Tensor):
        return [tree]
    if isinstance(tree, list):
        return [t for v in tree for t in _tensor_leaves(v)]
    if isinstance(tree, dict):
        return [t for v in tree.values() for t in _tensor_leaves(v)]
    return []


def _leaf_plan(value: Any, wanted: Optional[List[str]]) -> Optional[List[bool]]:
    """Per tensor leaf of ``value``: whether it may be moved to the device (not where the
    meta run shows it belongs on the default device); None: move every leaf (no
    placement known, or the runs kept different tensors)."""
    if wanted is None or len(wanted) != len(_tensor_leaves(value)):
        return None
    return [w != ON_DEVICE for w in wanted]


def _run(examples: List[Tuple[str, Optional[str]]], setup: List[str], namespace: Dict[str, Any],
         device: str, filename: str, tolerant: bool = False) -> Dict[str, Any]:
    """The values of one run (see :func:`run_examples`). ``tolerant`` (the ``meta`` run of
    :func:`placements`): a statement that raises is left out, with the names it binds
    (what it would have kept is not known), and the next one runs."""
    ns = dict(namespace)
    ns[DEVICE_VAR], ns[MODULE_VAR] = device, device_module(device)
    before = {k: id(v) for k, v in ns.items()}
    out: Dict[str, Any] = {}
    random_mode = (CpuRandom(device) if torch.device(device).type not in ("cpu", "meta")
                   else contextlib.nullcontext())
    printed = io.StringIO()
    with _State(), torch.device(device), random_mode, contextlib.redirect_stdout(printed):
        for src in setup:
            exec(compile(rewrite(src), filename, "exec"), ns)
        for n, (src, exc_msg) in enumerate(examples, 1):
            code = rewrite(src)
            key = f"[{n}] {src.strip().splitlines()[0][:80]}"
            try:
                tree = ast.parse(code)
                if len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr):
                    value = eval(compile(ast.Expression(tree.body[0].value), filename, "eval"), ns)
                    if value is not None:
                        out[key] = plain(value)
                else:
                    exec(compile(tree, filename, "exec"), ns)
            except (Exception, SystemExit) as exc:  # an example's sys.exit() must not end the worker
                if tolerant:
                    for name in _bound_by(code):
                        ns.pop(name, None)
                    continue
                if exc_msg is None:
                    raise ExampleError(n, src, exc) from exc
                if _emulator_gap(exc):  # not the example's raise: what the emulator cannot do
                    raise
                out[key] = f"raises {type(exc).__name__}: {normalise(_first_line(exc))}"
    if printed.getvalue().strip():  # what print showed is often the whole example
        out["stdout"] = Printed(printed.getvalue())
    for name, value in ns.items():
        if name.startswith("_") or before.get(name) == id(value):
            continue
        if isinstance(value, (torch.Tensor, torch.nn.Module)):
            out[f"bound {name}"] = plain(value)
        elif isinstance(value, (list, tuple)) and value and all(isinstance(v, torch.Tensor) for v in value):
            out[f"bound {name}"] = plain(value)
    return out


def _bound_by(code: str) -> set:
    try:
        return bound_and_used(ast.parse(code))[0]
    except SyntaxError:
        return set()


def _onto(tree: Any, device: torch.device, movable: Optional[List[bool]] = None) -> Any:
    """``tree`` with its tensors moved to ``device``; ``movable``: per tensor leaf, in
    order, whether it may be (None: every one)."""
    leaves = iter(movable) if movable is not None else None

    def walk(node: Any) -> Any:
        if isinstance(node, torch.Tensor):
            move = next(leaves) if leaves is not None else True
            if (move and node.device.type != device.type and node.layout == torch.strided
                    and not node.is_quantized):
                try:
                    return node.detach().to(device)
                except Exception:  # a layout or dtype the device cannot hold: left where it is
                    return node
            return node
        if isinstance(node, list):
            return [walk(v) for v in node]
        if isinstance(node, dict):
            return {k: walk(v) for k, v in node.items()}
        return node
    return walk(tree)


def differs(a: Any, b: Any, path: str = "output") -> str:
    """Where two results of :func:`run_examples` differ ("" where they are the same):
    tensors bit for bit (NaN equal to NaN), everything else by ``==``."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        same = (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape
                and a.dtype == b.dtype and a.layout == b.layout
                and bool(torch.equal(_dense(a), _dense(b)) or _nan_equal(_dense(a), _dense(b))))
        return "" if same else path
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return path
        return next((w for k in a for w in [differs(a[k], b[k], f"{path}[{k!r}]")] if w), "")
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return path
        return next((w for i, (x, y) in enumerate(zip(a, b)) for w in [differs(x, y, f"{path}[{i}]")] if w), "")
    try:
        return "" if bool(a == b) else path
    except Exception:
        return "" if repr(a) == repr(b) else path


def _dense(t: torch.Tensor) -> torch.Tensor:
    t = t.detach()
    return t.to_dense() if t.layout != torch.strided else t


def _nan_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    try:
        return bool(torch.equal(torch.nan_to_num(a, nan=0.0), torch.nan_to_num(b, nan=0.0))
                    and torch.equal(torch.isnan(a), torch.isnan(b)))
    except Exception:  # integer, quantized or other layouts without these ops
        return False


def bound_and_used(tree: ast.AST) -> Tuple[set, set]:
    """(names the code binds anywhere, names it reads)."""
    bound, used = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (used if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
    return bound, used


BUILTINS = frozenset(dir(builtins))


def _emulator_gap(exc: BaseException) -> bool:
    """An exception the emulated device raised for what it cannot do (a sparse CSR tensor,
    a generator): the row is an emulator limit, never a "raises" the CPU can be compared to."""
    got = classify_exception(type(exc).__name__, str(exc))
    return got is not None and got[1] == Cause.EMULATOR_LIMIT
