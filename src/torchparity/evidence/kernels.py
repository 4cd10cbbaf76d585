"""Kernel facts: per aten op, the aclnn API torch_npu calls and its dtype list per chip.

Two kinds of vendor source, read with :class:`~.kernel_source.SourceTree`:

- ``Ascend/op-plugin``: ``op_plugin/config/op_plugin_functions.yaml`` says which aten ops
  torch_npu registers (``op_api`` for a torch version) and, for generated ones, the
  ``exec: aclnnXxx`` they run; hand-written ones call ``EXEC_NPU_CMD(aclnnXxx, ...)`` (or name the
  API in ``DO_COMPATIBILITY(aclnnXxx, ...)``) in
  ``op_plugin/ops/opapi/*.cpp`` (function ``mm`` / ``mm_out`` -> aten ``mm``);
- the CANN operator repositories (``hicann/ops-*``): ``*/op_api/aclnn_*.cpp`` define
  ``aclnnXxxGetWorkspaceSize`` and the dtype lists it checks (see kernel_source).

The result (:class:`KernelFacts`) is data with a source (repository, path:line, commit)
for every list, written to ``devices/profiles/sources/ascend-kernels.yaml`` so that the
shipped profiles can be rebuilt without the sources.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Set, Tuple

import yaml
from pydantic import BaseModel, ConfigDict

from ..errors import InputError
from ..yamlmodel import load_yaml_model, safe_load
from . import kernel_paths as kp
from . import plugin_code as pc
from .kernel_source import (
    CHIPS,
    FileLists,
    SourceTree,
    dtype_name,
    read_lists,
    read_op_def,
    strip_comments,
    workspace_apis,
)

PLUGIN_YAML = "op_plugin/config/op_plugin_functions.yaml"
OPAPI_DIR = "op_plugin/ops/opapi/"
# where the sources say which SoC each product is, and which architecture is RegBase
CHIP_SOCS = {"dav_2201": "Atlas A2 (ascend910b) and Atlas A3 (ascend910_93)",
             "dav_3510": "Ascend 950PR / 950DT (ascend950, RegBase)"}
_SIDE_ROLES = re.compile(r"OUT|INDEX|INDICES|MASK|TARGET|WEIGHT|BIAS|SCALE|GRAD|FORMAT|NULL|EMPTY|"
                         r"SCALAR|OFFSET|SEED|GROUP")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ChipKernel(_Strict):
    # what the aclnn API accepts for its main input on this chip; None: no dtype list is
    # checked on this chip's path (``unchecked`` says why) or it could not be read
    # (``undecided`` says why)
    dtypes: Optional[List[str]] = None
    source: str  # repo path:line of the check that runs (or of the list, by name, when not followed)
    branch: Optional[str] = None  # the architecture branch the check runs under
    unchecked: Optional[str] = None  # no dtype check runs on this path, and what happens instead
    undecided: Optional[str] = None  # why the check that runs could not be read
    refused: Optional[str] = None  # the API refuses every call on this chip (dtypes: []), and where
    args: Optional[Dict[str, List[str]]] = None  # per checked tensor, where the file says
    aicpu: Optional[List[str]] = None  # taken only by the AiCpu fallback: supported, slow
    # a dtype promoted before the check, and the dtype the check (and the kernel) sees
    # (aclnn_ge_tensor.cpp: bool as int8)
    promoted: Optional[Dict[str, str]] = None
    out: Optional["OutCheck"] = None  # the output tensor's check on this path


class OutCheck(_Strict):
    """The aclnn file's dtype check on the output tensor, on this chip's path."""

    tensor: str
    dtypes: List[str]
    source: str  # repo path:line of the check (list, :line)
    # the aclnn refusal text (OP_CHECK_DTYPE_NOT_SUPPORT's format, ``#tensor`` filled in;
    # ``%s``: the dtype, then the list) and where the macro writes it
    message: Optional[str] = None


class PluginRefusal(_Strict):
    """op-plugin refuses these dtypes itself, before any kernel runs (a ``TORCH_CHECK``)."""

    dtypes: List[str]
    message: str  # the refusal text as op-plugin writes it (other arguments as {expr})
    source: str  # Ascend/op-plugin path:line of the TORCH_CHECK
    condition: str


class OutDtypeRule(_Strict):
    """The dtype op-plugin gives the output tensor it passes to the aclnn API."""

    expr: str  # as op-plugin writes it: self, at::native::result_type(self, other), at::kBool, ...
    source: str  # Ascend/op-plugin path:line
    fixed: Optional[str] = None  # one dtype whatever the input
    integral_to: Optional[str] = None  # integral and bool inputs get this dtype, others their own

    def of(self, dtype: str) -> str:
        if self.fixed:
            return self.fixed
        if self.integral_to and dtype in ("bool", "uint8", "int8", "int16", "int32", "int64"):
            return self.integral_to
        return dtype


ChipKernel.model_rebuild()


class OpHost(_Strict):
    """An AiCore kernel definition next to the aclnn API (``op_host/*_def.cpp``): data, not
    used for rules (it says what the kernel is built for, not what the API accepts)."""

    source: str  # repo path:line of the first input
    socs: List[str]
    inputs: Dict[str, List[str]]
    # per SoC whose AddConfig's OpAICoreConfig declares other input dtypes (the kernel built
    # for that SoC): soc -> {input: dtypes}; ``soc_sources``: soc -> path:line of the AddConfig
    soc_inputs: Optional[Dict[str, Dict[str, List[str]]]] = None
    soc_sources: Optional[Dict[str, str]] = None


class OpKernel(_Strict):
    aclnn: str
    plugin: str  # op-plugin path:line naming the call
    kernel: str  # repo path of the aclnn_*.cpp
    calls: Optional[List[str]] = None  # other aclnn APIs the op may run
    chips: Dict[str, ChipKernel]
    op_host: Optional[List[OpHost]] = None
    plugin_checks: Optional[List[PluginRefusal]] = None  # op-plugin's own dtype checks
    out_dtype: Optional[OutDtypeRule] = None  # the dtype op-plugin gives the output


class KernelFacts(_Strict):
    generated: Dict[str, str]
    repos: Dict[str, str]  # repository -> commit read
    # the CANN release the facts are for: the operator repositories' release branch read
    # (all of them the same), else None (``cann_note`` says why)
    cann: Optional[str] = None
    cann_note: Optional[str] = None
    refs: Optional[Dict[str, str]] = None  # repository -> ref read, where not HEAD
    chips: Dict[str, str]  # architecture -> products and SoCs, as the sources name them
    ops: Dict[str, OpKernel]

    def op(self, op: str) -> Optional[OpKernel]:
        return self.ops.get(op) or (self.ops.get(".".join(op.split(".")[:2])) if op.count(".") >= 2 else None)


def load_kernel_facts(path: Path) -> KernelFacts:
    return load_yaml_model(path, KernelFacts, what="kernel facts")


def dump_kernel_facts(facts: KernelFacts) -> str:
    head = ("# Kernel facts extracted from Ascend's operator sources (generated by\n"
            "# `torchparity profile build --from-kernels DIR...`; do not edit by hand).\n"
            "# Each list: repository path:line at the commit under `repos`. Data, not code.\n")
    data = facts.model_dump(mode="json", exclude_none=True)
    return head + yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=110,
                                 default_flow_style=None)


# ---------------------------------------------------------------------------------------
# op-plugin: aten op -> aclnn API

def _covers(spec, version: str) -> bool:
    """Does an op_api version spec (all_version, [v2.1, newest], 'v2.1, v2.2') cover version?"""
    def num(v: str) -> Tuple[int, ...]:
        return tuple(int(x) for x in re.findall(r"\d+", v)[:2])
    want = num(version)
    if spec is None:
        return False
    if spec == "all_version":
        return True
    if isinstance(spec, list) and len(spec) == 2 and isinstance(spec[1], str) and (
            spec[1] == "newest" or re.match(r"v\d", spec[1])):
        lo = num(str(spec[0]))
        return lo <= want and (spec[1] == "newest" or want <= num(spec[1]))
    items = spec if isinstance(spec, list) else str(spec).split(",")
    return any(num(str(i).strip()) == want for i in items)


def plugin_calls(tree: SourceTree, torch_version: str, yaml_out: Optional[Dict[str, Tuple[str, str, str]]] = None
                 ) -> Dict[str, List[Tuple[str, str]]]:
    """aten op -> [(aclnn API, 'path:line')] for the ops op-plugin registers via op_api; with
    ``yaml_out``, also aten op -> (its functional entry's ``gen_opapi: out/result: dtype:``, path:line,
    its first tensor argument)."""
    yaml_out = {} if yaml_out is None else yaml_out
    text = tree.read(PLUGIN_YAML)
    data = safe_load(text) or {}
    lines = text.splitlines()
    func_line = {}
    for i, line in enumerate(lines, 1):
        m = re.match(r"\s*- func:\s*([\w.]+)\(", line)
        if m:
            func_line.setdefault(m.group(1), i)
    registered: Dict[str, List[Tuple[str, str]]] = {}
    for entries in data.values():
        if not isinstance(entries, list):
            continue
        for e in entries:
            if not isinstance(e, dict) or "func" not in e or not _covers(e.get("op_api"), torch_version):
                continue
            full = str(e["func"]).split("(")[0]
            op = full.split(".")[0]
            calls = registered.setdefault(op, [])
            gen = e.get("gen_opapi") if isinstance(e.get("gen_opapi"), dict) else {}
            exe = gen.get("exec")
            # the functional entry's output: ``out:`` or ``result:`` (its size and dtype)
            out = next((gen[k] for k in ("out", "result") if isinstance(gen.get(k), dict)), {})
            if full == op and exe and "dtype" in out:
                at = func_line.get(full, 0)
                dline = next((i for i in range(at, min(at + 40, len(lines)) + 1)
                              if re.match(r"\s+dtype:", lines[i - 1])), at)
                first = re.search(r"\(\s*Tensor(?:\([^)]*\))?\s+(\w+)", str(e["func"]))
                yaml_out[op] = (str(out["dtype"]), f"{PLUGIN_YAML}:{dline}", first.group(1) if first else "self")
            if exe:
                api = str(exe).split(",")[0].strip()
                calls.append((api, f"{PLUGIN_YAML}:{func_line.get(full, 0)}"))
    for path in tree.files("^" + re.escape(OPAPI_DIR) + r"[^/]+\.cpp$"):
        code = tree.read(path)
        funcs = _functions(code)
        for fn in funcs:
            op = fn[:-4] if fn.endswith("_out") and fn[:-4] in registered else fn
            op = op[:-7] if op.endswith("_symint") else op
            if op not in registered:
                continue
            for api, line in _reach(fn, funcs):
                if (api, f"{path}:{line}") not in registered[op]:
                    registered[op].append((api, f"{path}:{line}"))
    return registered


_FUNC = re.compile(r"^(?!namespace|using|return|if|else|#)[A-Za-z_][\w:<>,\s&*]*?[\s&*](\w+)\s*\(([^;{]*?)\)\s*(?:const\s*)?\{",
                   re.M)


def _functions(code: str) -> Dict[str, Tuple[List[Tuple[str, int]], Set[str]]]:
    """C++ function -> (its EXEC_NPU_CMD calls with lines, the names it calls), by body: from its
    ``{`` to the next definition's first character (not into the next one's header, whose name
    would read as a call). Every EXEC macro counts (``EXEC_NPU_NO_FORMAT_CHECK_CMD`` too)."""
    defs = [(m.group(1), m.end(), m.start()) for m in _FUNC.finditer(code)]
    out: Dict[str, Tuple[List[Tuple[str, int]], Set[str]]] = {}
    for i, (fn, start, _) in enumerate(defs):
        end = defs[i + 1][2] if i + 1 < len(defs) else len(code)
        body = code[start:end]
        execs = [(m.group(1), code.count("\n", 0, start + m.start()) + 1)
                 for m in re.finditer(r"(?:EXEC_NPU\w*CMD\w*|DO_COMPATIBILITY)\(\s*(aclnn\w+)", body)]
        prev = out.get(fn, ([], set()))
        # a call, also of a template helper with its arguments (``run_aclnn<c10::optional<T>>(...)``)
        out[fn] = (prev[0] + execs, prev[1] | set(re.findall(r"(\w+)\s*(?:<[\w:<>,\s&*]*>)?\s*\(", body)))
    return out


def _reach(fn: str, funcs, depth: int = 3) -> List[Tuple[str, int]]:
    """EXEC_NPU_CMD calls of a function and of the file's helpers it calls (last call last)."""
    execs, callees = funcs[fn]
    found = list(execs)
    if depth:
        for callee in sorted(callees):
            if callee in funcs and callee != fn:
                found += _reach(callee, funcs, depth - 1)
    return found


# ---------------------------------------------------------------------------------------
# hicann: aclnn API -> dtype lists per chip

class _ApiIndex:
    """aclnn API -> (tree, aclnn_*.cpp path, line, parameters) over the CANN repositories."""

    def __init__(self, trees: Sequence[SourceTree]):
        self.where: Dict[str, Tuple[SourceTree, str, int, List[str]]] = {}
        for tree in trees:
            paths = tree.files(r"op_api/aclnn_[^/]+\.cpp$")
            # the maintained copy first: not experimental, not a vendored 3rd-party copy
            paths.sort(key=lambda p: ("experimental" in p or "/3rd/" in p, p))
            for path in paths:
                for api, line, params in workspace_apis(tree.read(path)):
                    self.where.setdefault(api, (tree, path, line, params))


def _file_lists(tree: SourceTree, path: str, cache: Dict[Tuple[str, str], FileLists]) -> FileLists:
    key = (tree.name, path)
    if key not in cache:
        text = tree.read(path)
        fl = read_lists(path, text)
        if not fl.lists:  # lists kept in a helper next to an included header (matmul's cube_util)
            for inc in re.findall(r'#include\s+"([^"]+)\.h"', text):
                for cand in (f"{inc}.cpp", f"{path.rsplit('/', 1)[0]}/{inc}.cpp"):
                    if tree.has(cand):
                        helper = read_lists(cand, tree.read(cand))
                        fl.lists.update({k: v for k, v in helper.lists.items() if k not in fl.lists})
                        for k, v in helper.args.items():
                            fl.args.setdefault(k, set()).update(v)
                        fl.follows_a2_on_950 |= helper.follows_a2_on_950
        cache[key] = fl
    return cache[key]


def _main_list(fl: FileLists, chip: str, first_param: Optional[str]):
    roles = fl.for_chip(chip)
    if not roles:
        return None, {}
    by_line = sorted(roles.values(), key=lambda lst: lst.line)
    main = roles.get("DTYPE_SUPPORT_LIST") or next(
        (lst for lst in by_line if first_param and first_param in fl.args.get(lst.name, ())), None)
    main = main or next(
        (lst for lst in by_line if not _SIDE_ROLES.search(lst.role)), None)
    args: Dict[str, List[str]] = {}
    for lst in by_line:
        for tensor in sorted(fl.args.get(lst.name, ())):
            args.setdefault(tensor, list(lst.dtypes))
    return main, args


def _aicpu_only(tree: SourceTree, path: str, chip: str, dtypes: Sequence[str],
                cache: Dict[Tuple[str, str], FileLists],
                promoted: Optional[Dict[str, str]] = None) -> Optional[List[str]]:
    folder = path.rsplit("/", 1)[0] + "/"
    seen = promoted or {}
    only: List[str] = []
    for l0 in tree.files("^" + re.escape(folder) + r"[^/]+\.cpp$"):
        if "/aclnn_" in l0:
            continue
        fl = _file_lists(tree, l0, cache)
        core = fl.aicore_for_chip(chip)
        if core is not None and fl.aicpu_fallback:
            only += [d for d in dtypes if seen.get(d, d) not in core.dtypes and d not in only]
    return only or None


def _op_hosts(tree: SourceTree, path: str) -> Optional[List[OpHost]]:
    """The ``*_def.cpp`` files of the operator folder an aclnn file belongs to."""
    folder = re.split(r"/op_host/op_api/|/op_api/", path)[0]
    out = []
    for d in tree.files("^" + re.escape(folder) + r"/op_host/[^/]+_def\.cpp$"):
        found = read_op_def(d, tree.read(d))
        if found:
            out.append(OpHost(source=f"{tree.name} {found.path}:{found.line}", socs=found.socs,
                              inputs=found.inputs, soc_inputs=found.soc_inputs or None,
                              soc_sources={k: f"{tree.name} {found.path}:{n}"
                                           for k, n in found.soc_lines.items()} or None))
    return out or None


# the dtype names profiles know (devices/profiles/model.py DTYPES); kernel lists also name others
DT_KNOWN = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
            "complex32", "complex64", "complex128")
# a predicate choosing the AiCore route (``IsAiCoreSupport(self)``: ``return CheckType(x, AICORE_LIST)``,
# used as ``if (IsAiCoreSupport(..))`` / ``needTranspose = IsAiCoreSupport(..) && ...``): its list
# says which kernel runs, not what the API refuses; the op's own check, where there is one, wins
_ROUTE_TEST = re.compile(r"^Is\w*AiCore", re.I)
_OUTPUT = re.compile(r"^out$|^out[A-Z_]|Out$|^result|Result$")


def _followed(tree: SourceTree, path: str, fl: FileLists, first: Optional[str], params: List[str],
              cache, api: Optional[str] = None) -> Optional[Dict[str, ChipKernel]]:
    """Per architecture, the check that runs (kernel_paths), or None where the file's own
    lists are not what it checks (lists in a helper file: read by name, as before)."""
    if not fl.lists or all(lst.path != path for lst in fl.lists.values()):
        return None
    key = ("paths", tree.name, path)
    if key not in cache:
        fc = kp.parse(strip_comments(tree.read(path)), set(fl.lists))
        cache[key] = (fc, kp.check_sites(fc))
    fc, sites = cache[key]
    # only the checks the API's own entry reaches (a file defines aclnnMul and aclnnMuls)
    entry = kp.reachable(fc, f"{api}GetWorkspaceSize") if api else None
    if entry is not None:
        sites = [st for st in sites if st.func in entry]
    where = f"{tree.name} {path}"
    out: Dict[str, ChipKernel] = {}
    tensors = [p for p in params if p not in ("workspaceSize", "executor")]
    for chip in CHIPS:
        on = [(st, name, pth) for st in sites for name, paths in st.lists.items() for pth in paths
              if chip in pth.archs]
        # ops-nn names a forward API's output ``y`` (rms_norm_quant's quantized y); a backward
        # API's ``y`` is the forward output it takes as an input
        y_out = bool(api) and not api.endswith("Backward")
        inputs = [i for i in on if not _OUTPUT.search(i[0].tensor) and not re.search(r"\W", i[0].tensor)
                  and not (y_out and i[0].tensor == "y")]
        if on and not inputs:
            if not _factory(fc, api):
                continue  # only outputs checked here: the input's list is read by name (as before)
            # a factory (eye, randperm): no input tensor, the out's check is the op's dtype (a mask
            # or an index out has its own dtype: dropout_gen_mask's uint8 mask)
            inputs = [i for i in on if not re.search(r"MASK|INDEX|INDICES|SEED|OFFSET", i[1].upper())]
            if not inputs:
                if not _dtype_param(fc, api):
                    # only the mask/index out is checked and no dtype comes in: nothing on this
                    # path checks the op's dtype (dropout_gen_mask: a list read by name here
                    # belongs to a helper fed another API's dtype argument)
                    st, name, pth = min(on, key=lambda i: i[0].line)
                    out[chip] = ChipKernel(source=f"{where}:{st.line}", branch=pth.branch or None, unchecked=(
                        f"only the output {st.tensor} is checked here (:{st.line}, {name}: "
                        f"{', '.join(fl.lists[name].dtypes)}), a mask/index of its own dtype; the API takes no "
                        "input tensor and no dtype argument, so no dtype of the op is checked"))
                continue
        checked, on = on, inputs
        if on:
            def rank(item):
                st = item[0]
                # the main input: not a side tensor (index, mask, weight...), named like the
                # API's first tensor or a helper's self/x, then in signature order
                return (bool(_ROUTE_TEST.search(st.func)), bool(_SIDE_ROLES.search(st.tensor.upper())),
                        st.conditional,
                        st.tensor not in (first, "self", "x", "input", "selfRef", "x1"),
                        tensors.index(st.tensor) if st.tensor in tensors else len(tensors), st.line)
            st, name, pth = min(on, key=rank)
            lst = fl.lists[name]
            lines = fc.code.splitlines()
            apart = [(s2, n2) for s2, n2, _ in on if s2.tensor == st.tensor and s2.line != st.line
                     and not set(fl.lists[n2].dtypes) & set(lst.dtypes)
                     and _refusing(lines, s2.line) and _refusing(lines, st.line)]
            if apart:
                # two checks of the same tensor with no dtype in common cannot both run: they
                # are on routes chosen by something not read (quant_matmul's fp8 and int8 paths)
                s2, n2 = apart[0]
                out[chip] = ChipKernel(source=f"{where}:{st.line}", branch=pth.branch or None, undecided=(
                    f"{st.tensor} is checked at :{st.line} ({name}, :{lst.line}: {', '.join(lst.dtypes)}) and at "
                    f":{s2.line} ({n2}, :{fl.lists[n2].line}: {', '.join(fl.lists[n2].dtypes)}), lists with no "
                    "dtype in common: the checks are on different routes, and which one a call takes is not read"))
                continue
            args: Dict[str, List[str]] = {}
            for s2, n2, _ in sorted(checked, key=lambda i: i[0].line):
                if s2.tensor in tensors:
                    args.setdefault(s2.tensor, list(fl.lists[n2].dtypes))
            if all(v == list(lst.dtypes) for v in args.values()):
                args = {}
            dtypes, source = list(lst.dtypes), f"{where}:{st.line} ({name}, :{lst.line})"
            for dtype, line, archs in st.extra:
                if chip in archs and dtype_name(dtype) not in dtypes:
                    dtypes.append(dtype_name(dtype))
                    source += f" + {dtype_name(dtype)} at :{line}"
            promoted: Dict[str, str] = {}
            for frm, to, line, archs in st.promoted:
                if chip in archs and dtype_name(to) in dtypes and dtype_name(frm) not in dtypes:
                    dtypes.append(dtype_name(frm))
                    promoted[dtype_name(frm)] = dtype_name(to)
                    source += f" + {dtype_name(frm)} as {dtype_name(to)} at :{line}"
            if api and api.startswith("aclnnInplace"):
                dtypes, source = _in_place(fc, entry, checked, st, name, fl, where, dtypes, source, tensors)
            elif api and api.endswith("Backward") and not _GRAD.search(st.tensor):
                dtypes, source = _same_dtype(checked, st, name, fl, where, dtypes, source, _GRAD,
                                             "the gradient has the op's dtype")
            out[chip] = ChipKernel(dtypes=dtypes, source=source, branch=pth.branch or None, args=args or None,
                                   promoted=promoted or None, out=_out_check(checked, tensors, fl, where, fc))
            continue
        refusing = [st for st in sites if chip in st.refuses]
        if refusing:
            st = refusing[0]
            out[chip] = ChipKernel(dtypes=[], source=f"{where}:{st.refuse_line}", refused=(
                f"an error return at :{st.refuse_line} before the dtype checks refuses every call on this chip"))
            continue
        undecided = [st for st in sites if st.undecided]
        if undecided:
            out[chip] = ChipKernel(source=f"{where}:{undecided[0].line}",
                                   undecided=undecided[0].undecided)
            continue
        elsewhere = [(st, pth) for st in sites for paths in st.lists.values() for pth in paths]
        selects = [st for st in sites if chip in st.selects]
        if selects:
            st = selects[0]
            out[chip] = ChipKernel(source=f"{where}:{st.select_line}", unchecked=(
                f"the check at :{st.line} is taken as a choice here (:{st.select_line}): a dtype outside "
                "its list goes the other way (a cast), not refused"))
        elif elsewhere:
            st, pth = elsewhere[0]
            out[chip] = ChipKernel(source=f"{where}:{st.line}", unchecked=(
                f"the dtype checks run on {', '.join(sorted(pth.archs))} only"
                + (f" ({pth.branch})" if pth.branch else "")))
    return out


_GROUPS = re.compile(r"std::vector<\s*std::vector<\s*(?:op::)?DataType\s*>\s*>\s+(\w+)\s*=\s*\{")
_GROUP_PICK = re.compile(r"(\w+)\s*\(\s*\)\s*\{\s*return\s+([^;?]+?)\s*\?\s*(\w+)\s*:\s*(\w+)\s*;\s*\}")


def _dtype_groups(tree: SourceTree, path: str, cache) -> Dict[str, ChipKernel]:
    """An API that checks its tensors' dtypes as combinations (rows of a ``vector<vector<DataType>>``
    table whose first column is the input, ``// input, weight, output, bias``), the table picked
    per architecture by a helper (``return IsSocSupportND() ? GROUPS_DAV : GROUPS_DEFAULT;``):
    per chip, the input's dtypes are the first column of the chip's table (quant_convolution).
    Empty where the file does not check that way or the pick is not about the architecture."""
    key = ("groups", tree.name, path)
    if key in cache:
        return cache[key]
    cache[key] = out = {}
    raw = tree.read(path)
    code = strip_comments(raw)
    if len(code) != len(raw):
        return out
    fc = kp.parse(code, set())
    tables: Dict[str, Tuple[int, List[str]]] = {}
    for m in _GROUPS.finditer(code):
        end = fc.match.get(m.end() - 1)
        if end is None:
            continue
        head = re.match(r"\s*//\s*(\w+)", raw[m.end():end])
        if head is None or head.group(1) not in ("input", "x", "self"):
            continue  # the first column is not said to be the input
        rows = re.findall(r"\{([^{}]*)\}", code[m.end():end])
        firsts = [re.search(r"DT_(\w+)", r) for r in rows]
        if rows and all(firsts):
            tables[m.group(1)] = (fc.line(m.start()), list(dict.fromkeys(dtype_name(f.group(1)) for f in firsts)))
    if not tables:
        return out
    for pick in _GROUP_PICK.finditer(code):
        name, cond, yes, no = pick.groups()
        if yes not in tables or no not in tables:
            continue
        call = re.search(rf"(\w+)\s*=\s*{name}\s*\(\s*\)\s*;", code)
        use = call and re.search(rf"\b{call.group(1)}\s*\[", code[call.end():])
        if not use:
            continue
        check = fc.line(call.end() + use.start())
        try:
            can, must = kp.arch_set(cond, fc), kp.arch_set(cond, fc, must=True)
        except kp.Undecided:
            return out
        if can != must:
            return out  # the pick depends on more than the architecture
        for chip in CHIPS:
            table = yes if chip in can else no
            line, dtypes = tables[table]
            out[chip] = ChipKernel(
                dtypes=dtypes, source=f"{tree.name} {path}:{check} ({table}, :{line})",
                branch=f"line {fc.line(pick.start())}: {name}() returns {table} here (the input is its first column)")
        break
    return out


_RULE_PICK = re.compile(r"(?:if\s*\((?P<cond>.*?)\)\s*\{|else\s*\{)\s*return\s+std::make_shared<(?P<cls>\w+)>", re.S)


def _arch_rules(tree: SourceTree, path: str, api: Optional[str], cache) -> Dict[str, ChipKernel]:
    """An API that checks its dtypes through a per-architecture rule object (``archRule =
    BuildRule(); archRule->CheckInput(...)``, matmul's mv/mm): per architecture, the class the
    helper file's ``BuildRule()`` returns there, the list its ``GetSupportedDTypes()`` returns
    and the line of the base check that tests the first tensor against it. Empty where the
    API does not check that way or the helper is not read."""
    key = ("archrule", tree.name, path, api)
    if key in cache:
        return cache[key]
    cache[key] = out = {}
    code = strip_comments(tree.read(path))
    var = re.search(r"(\w+)\s*=\s*BuildRule\(\s*\)", code)
    if not api or var is None or not re.search(rf"\b{var.group(1)}->CheckInput\(", code):
        return out
    fc = kp.parse(code, set())
    entry = kp.reachable(fc, f"{api}GetWorkspaceSize") or set()
    if not any(re.search(rf"\b{var.group(1)}->CheckInput\(", code[f.start:f.end])
               for f in fc.funcs if f.name in entry):
        return out  # another API of the file checks that way, not this one
    util = None
    for inc in re.findall(r'#include\s+"([^"]+)\.h"', code):
        cand = f"{inc}.cpp"
        if tree.has(cand) and re.search(r"\bBuildRule\(\s*\)\s*\{", tree.read(cand)):
            util = cand
            break
    if util is None:
        return out
    ucode = strip_comments(tree.read(util))
    ufc = kp.parse(ucode, set())
    build = kp.fn_defined(ufc, "BuildRule")
    base = re.search(r"\w+::CheckInputTensorDtypeValid\s*\(", ucode)
    if build is None or base is None:
        return out
    check = re.compile(r"OP_CHECK_DTYPE_NOT_SUPPORT\(\s*\w+\s*,\s*dtypeList\b").search(ucode, base.end())
    if check is None:
        return out
    left = set(CHIPS)
    for m in _RULE_PICK.finditer(ucode, build.start, build.end):
        cls = m.group("cls")
        try:
            archs = set(kp.arch_set(m.group("cond"), ufc)) if m.group("cond") else set(left)
        except kp.Undecided:
            return {}
        archs &= left
        left -= archs
        body = re.search(rf"\b{cls}::GetSupportedDTypes\s*\(\s*\)\s*\{{(.*?)\n\}}", ucode, re.S)
        uses = re.search(rf"\b{cls}::CheckInput\s*\([^)]*\)\s*\{{(.*?)\n\}}", ucode, re.S)
        if body is None or uses is None or "CheckInputTensorDtypeValid(" not in uses.group(1):
            continue
        lst = re.search(r"=\s*\{([^}]*)\}", body.group(1))
        if lst is None:
            continue
        dtypes = [dtype_name(d) for d in re.findall(r"DT_(\w+)", lst.group(1))]
        at = body.start(1) + lst.start()
        stmt = max(ucode.rfind(";", 0, at), ucode.rfind("{", 0, at)) + 1
        stmt += len(ucode[stmt:at]) - len(ucode[stmt:at].lstrip())
        list_line = ufc.line(stmt)  # the statement declaring the list
        for chip in sorted(archs):
            out[chip] = ChipKernel(
                dtypes=dtypes,
                source=f"{tree.name} {util}:{ufc.line(check.start())} ({cls}::GetSupportedDTypes, :{list_line})",
                branch=f"{util}:{ufc.line(m.start())}: BuildRule() returns {cls} "
                       f"(the API's {var.group(1)}->CheckInput)")
    return out


# ``tmp = CheckType(self->GetDataType(), L) ? self->GetDataType() : DataType::DT_Y;`` then
# ``OP_CHECK_RESULT_DTYPE_CAST_FAILED(tmp, out->GetDataType(), ...)`` (erfinv: integer inputs
# give a float32 result, which must cast to out)
_RESULT_CAST = re.compile(
    r"(\w+)\s*=\s*(?:op::)?CheckType\(\s*(\w+)->GetDataType\(\)\s*,\s*(\w+)\s*\)\s*\?\s*\2->GetDataType\(\)"
    r"\s*:\s*(?:op::)?DataType::DT_(\w+)\s*;\s*OP_CHECK_RESULT_DTYPE_CAST_FAILED\(\s*\1\s*,\s*(\w+)->GetDataType\(\)")
_INTEGRAL = {"bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64"}


def _can_cast(frm: str, to: str) -> bool:
    """torch's can_cast between kinds: a float does not cast to an integer or bool, an
    integer not to bool."""
    if frm in _INTEGRAL:
        return not (frm != "bool" and to == "bool")
    return to not in _INTEGRAL


# the gradient input of a backward API (aten's grad_output has the op's dtype)
_GRAD = re.compile(r"^grad(?:Output|Out|Y|_output|Outputs?)?$")


def _same_dtype(checked, st, name: str, fl: FileLists, where: str, dtypes: List[str], source: str,
                also, why: str) -> Tuple[List[str], str]:
    """Every check of a tensor that has the main tensor's dtype must pass: the main tensor's
    other checks (sinc_: self at :58 and again at :75) and those of the tensors ``also`` names
    (the out of an in-place API, the gradient of a backward one). The check that narrows the
    list is cited first."""
    # another check site passes a dtype in any list it may check on this chip (its lists are
    # alternatives); the sites are conjunctive
    sites: Dict[int, List[Tuple[object, str]]] = {}
    for s2, n2, _ in checked:
        if s2 is not st and (s2.tensor == st.tensor or (also is not None and also.search(s2.tensor))):
            sites.setdefault(id(s2), []).append((s2, n2))
    kept = [d for d in dtypes if all(any(d in fl.lists[n2].dtypes for _, n2 in alts) for alts in sites.values())]
    if kept == dtypes or not kept:
        return dtypes, source
    limiting = [alts[0] for alts in sites.values()
                if len(alts) == 1 and set(fl.lists[alts[0][1]].dtypes) & set(dtypes) == set(kept)]
    if not limiting:
        return dtypes, source  # narrowed by several checks together: not one line to cite (kept as read)
    s2, n2 = min(limiting, key=lambda i: (i[0].tensor != st.tensor, i[0].line))
    source = (f"{where}:{s2.line} ({n2}, :{fl.lists[n2].line}) ({why + '; ' if why else ''}"
              f"{st.tensor} checked at :{st.line} ({name}, :{fl.lists[name].line}) too)")
    return kept, source


def _in_place(fc, entry, checked, st, name: str, fl: FileLists, where: str, dtypes: List[str],
              source: str, own: List[str]) -> Tuple[List[str], str]:
    """An in-place API (``aclnnInplaceAcos(selfRef)``) passes its tensor as the input and as the
    out: every check of that tensor, and the output's check, must pass (acos_: the input list
    :59 has ints, the out list :62 has floats only, so ints are refused in place); a result
    dtype cast into the out (erfinv_: integers give float32, which cannot cast back)."""
    outs = {s2.tensor for s2, _, _ in checked if _OUTPUT.search(s2.tensor)}
    # the same tensor: the out, and the entry's own tensor (sqrt_'s selfRef, checked at :62
    # against the in-place list, while the shared path checks it as self)
    same = set(own[:1]) | (outs if len(outs) == 1 else set()) | {st.tensor + "Ref", re.sub(r"Ref$", "", st.tensor)}
    also = re.compile("^(?:" + "|".join(re.escape(t) for t in sorted(same)) + ")$") if same else None
    dtypes, source = _same_dtype(checked, st, name, fl, where, dtypes, source, also,
                                 f"{st.tensor} is also the out" if same else "")
    funcs = [f for f in fc.funcs if entry is None or f.name in entry]
    for f in funcs:
        for m in _RESULT_CAST.finditer(fc.code, f.start, f.end):
            lst, to = m.group(3), dtype_name(m.group(4))
            if m.group(2) != st.tensor or lst not in fl.lists or not _OUTPUT.search(m.group(5)):
                continue
            kept = [d for d in dtypes if d in fl.lists[lst].dtypes or _can_cast(to, d)]
            if kept != dtypes:
                line = fc.line(m.start(5))
                source = (f"{where}:{line} ({lst}, :{fl.lists[lst].line}) (in place: {st.tensor} is also the out; "
                          f"a {st.tensor} outside {lst} gives a {to} result, which does not cast back; "
                          f"{st.tensor} checked at :{st.line} ({name}, :{fl.lists[name].line}))")
                dtypes = kept
    return dtypes, source


def _refusing(lines: List[str], line: int) -> bool:
    """Whether the check on that line is an error when the dtype is outside the list
    (``OP_CHECK_DTYPE_NOT_SUPPORT``, ``if (!CheckType(...))``), not inside it."""
    text = lines[line - 1] if line <= len(lines) else ""
    return bool(re.search(r"OP_CHECK_DTYPE_NOT_SUPPORT|!\s*(?:op::)?CheckType\s*\(", text))


def _dtype_param(fc, api: Optional[str]) -> bool:
    """Whether the API's GetWorkspaceSize takes a dtype argument (``DataType probDataType``)."""
    m = re.search(rf"\b{api}GetWorkspaceSize\s*\(", fc.code) if api else None
    return m is None or bool(re.search(r"\b(?:op::)?DataType\b|aclDataType", fc.code[m.end():fc.code.find(")", m.end())]))


def _factory(fc, api: Optional[str]) -> bool:
    """Whether the API takes no input tensor (``aclnnEye(n, m, out)``): every ``aclTensor``
    parameter of its GetWorkspaceSize is an output."""
    if not api:
        return False
    m = re.search(rf"\b{api}GetWorkspaceSize\s*\(", fc.code)
    if m is None:
        return False
    params = fc.code[m.end():fc.code.find(")", m.end())].split(",")
    tensors = [re.findall(r"\w+", p)[-1] for p in params if "aclTensor" in p and re.findall(r"\w+", p)]
    return bool(tensors) and all(_OUTPUT.search(t) for t in tensors)


def _out_check(checked, tensors: List[str], fl: FileLists, where: str, fc) -> Optional[OutCheck]:
    """The output tensor's dtype check on this path: one output tensor checked against one
    list (several outputs, or one with different lists, are not read)."""
    outs = [(st, name) for st, name, _ in checked if _OUTPUT.search(st.tensor) and st.tensor in tensors]
    if len({st.tensor for st, _ in outs}) != 1 or len({tuple(fl.lists[n].dtypes) for _, n in outs}) != 1:
        return None
    st, name = min(outs, key=lambda i: i[0].line)
    text = fc.code.splitlines()[st.line - 1] if st.line <= len(fc.code.splitlines()) else ""
    return OutCheck(tensor=st.tensor, dtypes=list(fl.lists[name].dtypes),
                    source=f"{where}:{st.line} ({name}, :{fl.lists[name].line})",
                    message="OP_CHECK_DTYPE_NOT_SUPPORT" if "OP_CHECK_DTYPE_NOT_SUPPORT" in text else None)


_MACRO_HEADER = "common/inc/external/aclnn_kernels/common/op_error_check.h"


def _macro_message(tree: SourceTree, cache) -> Optional[Tuple[str, str]]:
    """OP_CHECK_DTYPE_NOT_SUPPORT's refusal format and where the tree writes it."""
    key = ("macro", tree.name)
    if key not in cache:
        cache[key] = None
        if tree.has(_MACRO_HEADER):
            text = tree.read(_MACRO_HEADER)
            m = re.search(r"#define\s+OP_CHECK_DTYPE_NOT_SUPPORT\(.*?\"([^\"]*)\"", text, re.S)
            if m:
                cache[key] = (m.group(1), f"{tree.name} {_MACRO_HEADER}:{text.count(chr(10), 0, m.start(1)) + 1}")
    return cache[key]


def _plugin_view(tree: SourceTree, op: str, api: str, at: str, yaml_out: Dict[str, Tuple[str, str, str]],
                 cache) -> Tuple[List[PluginRefusal], Optional[OutDtypeRule]]:
    """op-plugin's own dtype checks for the op (top-level TORCH_CHECKs of its entry functions in
    the file that calls the API) and the dtype it gives the output."""
    path = at.rsplit(":", 1)[0]
    checks: List[PluginRefusal] = []
    rule: Optional[OutDtypeRule] = None
    if path.startswith(OPAPI_DIR) and tree.has(path):
        key = ("plugin", path)
        if key not in cache:
            code = strip_comments(tree.read(path))
            cache[key] = (code, pc.functions(code))
        code, funcs = cache[key]
        names = {op, op + "_out", op + "_symint", op + "_out_symint"}
        seen = set()
        for fn in funcs:
            if fn.name not in names:
                continue
            for c in pc.checks_in(code, fn, DT_KNOWN):
                if (c.line, c.tensor) in seen:
                    continue
                seen.add((c.line, c.tensor))
                checks.append(PluginRefusal(dtypes=c.refuses, message=c.message,
                                            source=f"{tree.name} {path}:{c.line}", condition=c.condition))
            if fn.name in (op, op + "_symint") and rule is None:
                found = pc.allocated_out(code, fn, pc.exec_args(code, fn, api))
                if found is not None:
                    rule = OutDtypeRule(expr=found.expr, source=f"{tree.name} {path}:{found.line}",
                                        fixed=found.fixed, integral_to=found.integral_to)
    if rule is None and op in yaml_out:
        expr, where, first = yaml_out[op]
        found = pc.out_dtype(expr, [first], 0)
        if found is not None:
            rule = OutDtypeRule(expr=found.expr, source=f"{tree.name} {where}", fixed=found.fixed,
                                integral_to=found.integral_to)
    return checks, rule


def _disagreeing(chips: Dict[str, ChipKernel], checks: List[PluginRefusal]) -> None:
    """Where op-plugin's own check refuses every dtype the kernel list takes, the two readings
    cannot both be the op input's (``_fft_c2c``: op-plugin takes complex inputs only, the list
    read is that of a matmul on real tensors inside): the chip's fact is ``undecided``, citing
    both."""
    if not checks:
        return
    refused = {d for c in checks for d in c.dtypes}
    for chip, ck in list(chips.items()):
        if ck.dtypes and set(ck.dtypes) <= refused | {d for d in ck.dtypes if d not in DT_KNOWN}:
            chips[chip] = ChipKernel(source=ck.source, branch=ck.branch, undecided=(
                f"op-plugin's check ({checks[0].source}: {checks[0].condition}) refuses every dtype of "
                f"the kernel list ({ck.source}: {', '.join(ck.dtypes)}): the list is not the op input's"))


def _pick(op: str, calls: List[Tuple[str, str]], index: _ApiIndex) -> List[Tuple[str, str]]:
    """Calls with a known aclnn file: the one named like the op (``Inplace`` for ``add_``), then
    its tensor variant (``aclnnGeTensor`` before ``aclnnGeScalar``), then the general path
    (``aclnnMm`` before the format-specific ``aclnnMatmulWeightNz``), then the most called."""
    count: Dict[str, int] = {}
    for api, _ in calls:
        count[api] = count.get(api, 0) + 1
    first = {}
    for api, at in calls:
        if api in index.where:
            first.setdefault(api, at)
    plain = ("inplace" if op.endswith("_") and not op.startswith("_") else "") + op.strip("_").replace("_", "").lower()

    def rank(api: str):
        name = api[5:].lower()  # aclnnAdd -> add
        return (name != plain, not (name.startswith(plain) and "tensor" in name[len(plain):]),
                "scalar" in name[len(plain):] or name == plain + "s", "Nz" in api, -count[api], api)
    ranked = sorted(first, key=rank)
    return [(a, first[a]) for a in ranked]


def _path_ref(d) -> Tuple[Path, Optional[str]]:
    """``DIR`` or ``DIR@REF`` (a branch, tag or commit of a bare git dir)."""
    text = str(d)
    if "@" in Path(text).name:
        base, _, ref = text.rpartition("@")
        return Path(base), ref
    return Path(text), None


def extract_kernel_facts(dirs: Sequence[Path], torch_version: str) -> KernelFacts:
    """Kernel facts from op-plugin and hicann snapshots (bare git dirs or folders)."""
    trees = [SourceTree(*_path_ref(d)) for d in dirs]
    plugin = [t for t in trees if t.has(PLUGIN_YAML)]
    cann = [t for t in trees if t not in plugin]
    if len(plugin) != 1 or not cann:
        raise InputError("--from-kernels needs one Ascend/op-plugin tree (with "
                         f"{PLUGIN_YAML}) and at least one hicann/ops-* tree; got "
                         f"{', '.join(t.name for t in trees) or 'none'}")
    try:
        yaml_out: Dict[str, Tuple[str, str, str]] = {}
        calls = plugin_calls(plugin[0], torch_version, yaml_out)
        index = _ApiIndex(cann)
        cache: Dict[Tuple[str, str], FileLists] = {}
        ops: Dict[str, OpKernel] = {}
        for op in sorted(calls):
            picked = _pick(op, calls[op], index)
            if not picked:
                continue
            api, at = picked[0]
            tree, path, _, params = index.where[api]
            fl = _file_lists(tree, path, cache)
            first = next((p for p in params if p in ("self", "input", "x", "x1", "selfRef", "tensor")), None)
            chips = {}
            followed = _followed(tree, path, fl, first, params, cache, api)
            for chip in CHIPS:
                ck = (followed or {}).get(chip)
                if ck is not None:
                    if ck.dtypes is not None:
                        ck.aicpu = _aicpu_only(tree, path, chip, ck.dtypes, cache, ck.promoted)
                        for dtype, line in fl.exceptions.get(chip, []):
                            if dtype not in ck.dtypes:
                                ck.dtypes.append(dtype)
                                ck.source += f" + {dtype} at :{line}"
                    chips[chip] = ck
                    continue
                ruled = _arch_rules(tree, path, api, cache).get(chip) or _dtype_groups(tree, path, cache).get(chip)
                if ruled is not None:
                    chips[chip] = ruled
                    continue
                main, args = _main_list(fl, chip, first)
                if main is None:
                    continue
                if all(v == list(main.dtypes) for v in args.values()):
                    args = {}  # every checked tensor takes the main list
                dtypes, source = list(main.dtypes), f"{tree.name} {main.path}:{main.line}"
                for dtype, line in fl.exceptions.get(chip, []):
                    if dtype not in dtypes:
                        dtypes.append(dtype)
                        source += f" + {dtype} at :{line}"
                chips[chip] = ChipKernel(
                    dtypes=dtypes, source=source,
                    args=args or None, aicpu=_aicpu_only(tree, path, chip, main.dtypes, cache))
            if chips:
                others = sorted({a for a, _ in calls[op] if a != api})
                checks, rule = _plugin_view(plugin[0], op, api, at, yaml_out, cache)
                _disagreeing(chips, checks)
                macro = _macro_message(tree, cache)
                for ck in chips.values():
                    if ck.out is not None and ck.out.message:
                        ck.out.message = (macro[0].replace("Tensor %s", f"Tensor {ck.out.tensor}", 1)
                                          + f" ({macro[1]})") if macro else None
                ops[f"aten.{op}"] = OpKernel(aclnn=api, plugin=f"{plugin[0].name} {at}",
                                             kernel=f"{tree.name} {path}", calls=others or None,
                                             chips=chips, op_host=_op_hosts(tree, path),
                                             plugin_checks=checks or None,
                                             out_dtype=rule if any(ck.out for ck in chips.values()) else None)
        repos = {t.name: t.commit for t in sorted(trees, key=lambda t: t.name)}
        refs = {t.name: t.ref for t in sorted(trees, key=lambda t: t.name) if t.ref != "HEAD"}
        releases = {t.name: t.release for t in cann}
        rel = set(releases.values())
        cann_release = rel.pop() if len(rel) == 1 and None not in rel else None
        cann_note = None if cann_release else "; ".join(
            f"{n}: {r or 'on no release branch (ahead of them)'}" for n, r in sorted(releases.items()))
    finally:
        for t in trees:
            t.close()
    return KernelFacts(
        generated={"command": "torchparity profile build --from-kernels DIR...",
                   "torch_version": torch_version,
                   "chips_source": "hicann/ops-math docs/zh/install/compile.md (--soc per product); "
                                   "common/inc/op_api/level2_base.h (GetDtypeSupportListV1/V2/V3)"},
        repos=repos, cann=cann_release, cann_note=cann_note, refs=refs or None,
        chips=dict(CHIP_SOCS), ops=ops)
