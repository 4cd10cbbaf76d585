"""Reading the vendor's operator sources: dtype support lists in CANN ``aclnn_*.cpp`` files.

A source tree is a bare git directory (read at ``HEAD`` with ``git cat-file``; the commit
is recorded) or a plain folder (a checkout or an extracted archive; its ``.git`` is used
for the commit when present). The C++ is not compiled or fully parsed: the lists are read
as the files declare them, and which chip a list applies to is told by its name and the
architecture tests around it, as the hicann repositories write them:

- ``NpuArch::DAV_2201`` / ``SocVersion::ASCEND910B`` / ``ASCEND910_93``: Atlas A2 / A3;
- ``NpuArch::DAV_3510`` ("RegBase", ``IsRegBase()``) / ``SocVersion::ASCEND950``: Ascend 950;
- ``GetDtypeSupportListV2/V3(l1, l2)``: ``l1`` on DAV_2201 *and* RegBase, ``l2`` elsewhere;
  ``GetDtypeSupportListV1(l1, l2)``: ``l1`` on DAV_2201 only;
- a range ``ASCEND910B <= soc <= ASCEND910E`` contains ASCEND950 (enum order).

Each list keeps its file and line; facts are data, no code is copied.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Set, Tuple

from ..errors import InputError

# kernel chip keys, by NPU architecture: DAV_2201 = Atlas A2 (ascend910b) and A3 (ascend910_93),
# DAV_3510 = Ascend 950 (ascend950, "RegBase"); the sources tell A2 and A3 apart nowhere we read
CHIPS = ("dav_2201", "dav_3510")

# CANN DataType -> torch dtype name; the others (hifloat8, uint16, ...) are kept as written
DT_TORCH = {"FLOAT": "float32", "FLOAT16": "float16", "BF16": "bfloat16", "DOUBLE": "float64",
            "BOOL": "bool", "UINT8": "uint8", "INT8": "int8", "INT16": "int16", "INT32": "int32",
            "INT64": "int64", "COMPLEX32": "complex32", "COMPLEX64": "complex64",
            "COMPLEX128": "complex128"}


class SourceTree:
    """Files of one repository snapshot: a bare git dir or a folder."""

    def __init__(self, path: Path, ref: Optional[str] = None):
        self.path = Path(path)
        self.ref = ref or "HEAD"  # a branch, tag or commit of a bare git dir
        self.git_dir: Optional[Path] = None
        if (self.path / "HEAD").is_file() and (self.path / "objects").is_dir():
            self.git_dir = self.path
        elif (self.path / ".git").exists():
            self.git_dir = self.path / ".git"
        if not self.path.is_dir():
            raise InputError(f"kernel source {self.path} is not a folder or a git directory")
        self.bare = self.git_dir is not None and self.git_dir == self.path
        if ref and not self.bare:
            raise InputError(f"kernel source {self.path}@{ref}: a ref needs a bare git directory")
        self.commit = self._git("rev-parse", self.ref + "^{commit}").strip() if self.git_dir else "unknown"
        self.release = self._release() if self.git_dir else None
        # hicann+ops-math/repo (a mirror) -> hicann/ops-math; a folder -> its name
        base = self.path.parent.name if self.path.name in ("repo", ".git") else self.path.name
        self.name = base.replace("+", "/", 1)
        self._blobs: Dict[str, str] = {}
        self._files: List[str] = self._list()
        self._cat: Optional[subprocess.Popen] = None

    def _git(self, *args: str) -> str:
        run = subprocess.run(["git", f"--git-dir={self.git_dir}", *args], capture_output=True, text=True)
        if run.returncode:
            raise InputError(f"git {' '.join(args)} failed in {self.git_dir}: {run.stderr.strip()}")
        return run.stdout

    def _release(self) -> Optional[str]:
        """The CANN release the commit belongs to, where the repository says: the ref read is
        a release branch or tag (``8.5.0``, ``v9.1.0``), else the oldest release branch that
        contains the commit; None when no release branch does (master ahead of them)."""
        ver = re.compile(r"^v?(\d+\.\d+\.\d+)$")
        m = ver.match(self.ref)
        if m:
            return m.group(1)
        found = []
        for line in self._git("branch", "--contains", self.commit).splitlines():
            name = line.strip().lstrip("* ").strip()
            mm = ver.match(name)
            if mm:
                found.append(tuple(int(x) for x in mm.group(1).split(".")))
        return ".".join(map(str, min(found))) if found else None

    def _list(self) -> List[str]:
        if self.bare:
            out = []
            for line in self._git("ls-tree", "-r", self.commit).splitlines():
                meta, _, path = line.partition("\t")
                parts = meta.split()
                if len(parts) == 3 and parts[1] == "blob":
                    self._blobs[path] = parts[2]
                    out.append(path)
            return sorted(out)
        return sorted(str(p.relative_to(self.path)).replace("\\", "/") for p in self.path.rglob("*")
                      if p.is_file() and ".git" not in p.relative_to(self.path).parts)

    def files(self, pattern: str) -> List[str]:
        rx = re.compile(pattern)
        return [f for f in self._files if rx.search(f)]

    def has(self, path: str) -> bool:
        return path in self._blobs if self.bare else (self.path / path).is_file()

    def read(self, path: str) -> str:
        if not self.bare:
            return (self.path / path).read_text(encoding="utf-8", errors="replace")
        if self._cat is None:
            self._cat = subprocess.Popen(["git", f"--git-dir={self.git_dir}", "cat-file", "--batch"],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self._cat.stdin and self._cat.stdout
        self._cat.stdin.write((self._blobs[path] + "\n").encode())
        self._cat.stdin.flush()
        size = int(self._cat.stdout.readline().split()[2])
        data = self._cat.stdout.read(size + 1)[:-1]
        return data.decode("utf-8", errors="replace")

    def close(self) -> None:
        if self._cat is not None:
            self._cat.stdin.close()  # type: ignore[union-attr]
            self._cat.wait()
            self._cat = None


# ---------------------------------------------------------------------------------------
# dtype lists in one C++ file

_LIST_DEF = re.compile(
    r"(?:std::)?(?:initializer_list|vector|set)\s*<\s*(?:op::|ge::)?DataType\s*>\s*&?\s*(\w+)\s*=\s*\{([^{}]*)\}")
_DT = re.compile(r"DT_(\w+)")
_ASSIGN = re.compile(r"(\w+)\s*=\s*([^;=][^;]*);")
_RETURN_FN = re.compile(r"^[\w:<>&\s]*?\b(\w+)\s*\([^;{)]*\)\s*(?:const\s*)?\{", re.M)
# a tensor, or a tensor list's element ((*self)[0], (*x)[i]: read as the list)
_CHECK = re.compile(r"OP_CHECK_DTYPE_NOT_SUPPORT\(\s*(?:\(\s*\*\s*)?(\w+)(?:\s*\)\s*\[\s*\w+\s*\])?\s*,\s*(\w+)"
                    r"|CheckType\(\s*(?:\(\s*\*\s*)?(\w+)(?:\s*\)\s*\[\s*\w+\s*\])?->GetDataType\(\)\s*,\s*(\w+)")
# case labels of an architecture switch, then "if (x->GetDataType() != DT_Y) { error }"
_CASE_EXCEPTION = re.compile(r"((?:case\s+NpuArch::DAV_\d+\s*:\s*)+)\{?\s*if\s*\(\s*\w+->GetDataType\(\)\s*!=\s*"
                             r"(?:op::)?DataType::DT_(\w+)\s*\)")
_A2 = re.compile(r"910B|910_93|2201|WITH_BF16|INCLUDE_BF16|(?<!NOT_)SUPPORT_BF16|V200")
_950 = re.compile(r"950|REGBASE|3510|ARCH35|910_95|(?:^|_)A5(?:_|$)")
_OLD = re.compile(r"910_|_910$|_910_|^910|310|1001|2002|WITHOUT_BF16|NOT_SUPPORT_BF16|NO_BF16|V100")
_ROLE_DROP = re.compile(r"NOT_SUPPORT_BF16|SUPPORT_BF16|SUPPORT_REGBASE|NO_BF16|ASCEND|910B_C|910BC|910B|910_93|910_95|910|950|310P|310B|REGBASE|ARCH3510|ARCH(?=_)|"
                        r"DAV_\d+|3510|WITH_BF16|INCLUDE_BF16|WITHOUT_BF16|V100|V200|AICORE|AICPU|CURRENT|"
                        r"AFTER|(?<![A-Z0-9])A5(?![A-Z0-9])")


def _snake(name: str) -> str:
    """dtypeSupportListWithoutBf16 -> DTYPE_SUPPORT_LIST_WITHOUT_BF16."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", "_", name).upper()


@dataclass
class DtypeList:
    name: str
    dtypes: Tuple[str, ...]  # torch names where known, else the CANN name lower-cased
    line: int
    path: str

    @property
    def scope(self) -> str:
        """a2 (A2/A3) | 950 | old (other chips) | any, read from the name."""
        n = _snake(self.name)
        if _950.search(n):
            return "950"
        if _A2.search(n):
            return "a2"
        if _OLD.search(n):
            return "old"
        return "any"

    @property
    def role(self) -> str:
        role = _ROLE_DROP.sub("", _snake(self.name))
        role = re.sub(r"_+", "_", role).strip("_").replace("DTYPE_DTYPE", "DTYPE")
        return role or "DTYPE_SUPPORT_LIST"

    @property
    def aicore(self) -> bool:
        return "AICORE" in _snake(self.name)


@dataclass
class FileLists:
    """The dtype lists of one file and how it uses them."""

    path: str
    lists: Dict[str, DtypeList] = field(default_factory=dict)
    args: Dict[str, Set[str]] = field(default_factory=dict)  # list name -> tensors checked with it
    follows_a2_on_950: bool = False  # RegBase takes the DAV_2201 list (V2/V3, range to 910E)
    aicpu_fallback: bool = False  # the file launches an AiCpu kernel when AiCore refuses
    # dtypes let through by code rather than a list: arch -> (dtype, line), e.g. aclnn_sign's
    # "case NpuArch::DAV_2201: case NpuArch::DAV_3510: if (dtype != DT_BF16) error"
    exceptions: Dict[str, List[Tuple[str, int]]] = field(default_factory=dict)

    def for_chip(self, chip: str) -> Dict[str, DtypeList]:
        """role -> the list that applies on one chip (a2, a3 or 950)."""
        by_role: Dict[str, Dict[str, DtypeList]] = {}
        for lst in self.lists.values():
            if lst.aicore or "AICPU" in _snake(lst.name):
                continue
            by_role.setdefault(lst.role, {}).setdefault(lst.scope, lst)
        out = {}
        for role, scoped in by_role.items():
            if chip == "dav_3510":
                order = ["950", "a2", "any"] if self.follows_a2_on_950 else ["950", "any", "old"]
            else:
                order = ["a2", "any"]
            for scope in order:
                if scope in scoped:
                    out[role] = scoped[scope]
                    break
        return out

    def aicore_for_chip(self, chip: str) -> Optional[DtypeList]:
        scoped = {lst.scope: lst for lst in self.lists.values() if lst.aicore}
        order = (["950", "a2", "any"] if self.follows_a2_on_950 else ["950", "any"]) if chip == "dav_3510" \
            else ["a2", "any"]
        return next((scoped[s] for s in order if s in scoped), None)


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _strip_comments(text: str) -> str:
    """Comments blanked out, line numbers kept."""
    def blank(m: re.Match) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r"//[^\n]*|/\*.*?\*/", blank, text, flags=re.S)


strip_comments = _strip_comments


def dtype_name(cann: str) -> str:
    return DT_TORCH.get(cann, cann.lower())


def read_lists(path: str, text: str) -> FileLists:
    code = _strip_comments(text)
    found = FileLists(path=path)
    for m in _LIST_DEF.finditer(code):
        name = m.group(1)
        dtypes = tuple(dict.fromkeys(dtype_name(d) for d in _DT.findall(m.group(2))))
        if dtypes and name not in found.lists:
            found.lists[name] = DtypeList(name, dtypes, _line_of(code, m.start(1)), path)
    if not found.lists:
        return found
    names = set(found.lists)
    # functions returning lists, and variables assigned from lists: name -> list names
    aliases: Dict[str, Set[str]] = {}
    starts = [(m.group(1), m.end()) for m in _RETURN_FN.finditer(code)]
    for i, (fn, start) in enumerate(starts):
        end = starts[i + 1][1] if i + 1 < len(starts) else len(code)
        body = code[start:end]
        returned = {n for n in re.findall(r"return\s+[^;]*?(\w+)\s*;", body) if n in names}
        returned |= {n for expr in re.findall(r"return\s+([^;]*);", body)
                     for n in re.findall(r"\w+", expr) if n in names}
        if returned:
            aliases.setdefault(fn, set()).update(returned)
    for _ in range(2):  # aliases of aliases
        for m in _ASSIGN.finditer(code):
            var, rhs = m.group(1), m.group(2)
            hit = {w for w in re.findall(r"\w+", rhs) if w in names}
            for w in re.findall(r"(\w+)\s*\(", rhs):
                hit |= aliases.get(w, set())
            hit |= {n for w in re.findall(r"\w+", rhs) for n in aliases.get(w, set()) if w != var}
            if hit and var not in names:
                aliases.setdefault(var, set()).update(hit)
    for m in _CHECK.finditer(code):
        tensor, listname = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        for n in ({listname} & names) | aliases.get(listname, set()):
            found.args.setdefault(n, set()).add(tensor)
    found.follows_a2_on_950 = bool(
        re.search(r"GetDtypeSupportListV[23]\s*\(", code)
        or re.search(r"IsReg[Bb]ase\s*\(|DAV_3510|(?:op::)?SocVersion::ASCEND950|<=\s*(?:op::)?SocVersion::ASCEND910E", code)
        and re.search(r"DAV_2201|SocVersion::ASCEND910B\b|ASCEND910_93", code)
        and not re.search(r"GetDtypeSupportListV1\s*\(", code))
    found.aicpu_fallback = "ADD_TO_LAUNCHER_LIST_AICPU" in code
    for m in _CASE_EXCEPTION.finditer(code):
        for arch in re.findall(r"DAV_(2201|3510)", m.group(1)):
            found.exceptions.setdefault(f"dav_{arch}", []).append(
                (dtype_name(m.group(2)), _line_of(code, m.start(2))))
    return found


def workspace_apis(text: str) -> Iterator[Tuple[str, int, List[str]]]:
    """(aclnnXxx, line, parameter names) for each ``aclnnXxxGetWorkspaceSize(`` definition."""
    for m in re.finditer(r"aclnnStatus\s+(aclnn\w+?)GetWorkspaceSize\s*\(([^)]*)\)\s*\{", text):
        params = [re.findall(r"\w+", p)[-1] for p in m.group(2).split(",") if re.findall(r"\w+", p)]
        yield m.group(1), _line_of(text, m.start(1)), params


# ---------------------------------------------------------------------------------------
# op_host/*_def.cpp: the AiCore kernel's inputs and the SoCs it is built for

_DEF_INPUT = re.compile(r"this->Input\(\s*\"(\w+)\"\s*\)([^;]*);", re.S)
_DEF_DTYPES = re.compile(r"\.DataType\(\s*\{([^}]*)\}")
_DEF_SOC = re.compile(r"AddConfig\(\s*\"(\w+)\"")


@dataclass
class OpDef:
    path: str
    line: int
    socs: List[str]  # as AddConfig names them: ascend910b, ascend910_93, ascend950, ...
    inputs: Dict[str, List[str]]  # input -> dtypes of the top-level definition
    # per SoC, where its AddConfig's OpAICoreConfig declares other input dtypes than the
    # top level: soc -> input -> dtypes, and soc -> the AddConfig line
    soc_inputs: Dict[str, Dict[str, List[str]]] = field(default_factory=dict)
    soc_lines: Dict[str, int] = field(default_factory=dict)


_DEF_SOC_CONFIG = re.compile(r"AddConfig\(\s*\"(\w+)\"\s*(?:,\s*(\w+)\s*)?\)")


def _dtypes_of(statement: str) -> Optional[List[str]]:
    lists = _DEF_DTYPES.search(statement)
    return list(dict.fromkeys(dtype_name(d) for d in _DT.findall(lists.group(1)))) if lists else None


def read_op_def(path: str, text: str) -> Optional[OpDef]:
    """Per-input dtypes and SoCs of one ``*_def.cpp``, and the per-SoC input dtypes of an
    ``AddConfig("ascend910b", config)`` whose ``config.Input("x").DataType({...})`` differs
    from the top level. A config variable whose inputs are declared twice with different
    lists (two helpers naming their local alike) is not read for that SoC."""
    code = _strip_comments(text)
    inputs: Dict[str, List[str]] = {}
    first = None
    for m in _DEF_INPUT.finditer(code):
        found = _dtypes_of(m.group(2))
        if found:
            first = first or m.start()
            inputs.setdefault(m.group(1), found)
    socs = sorted(set(_DEF_SOC.findall(code)))
    if not inputs or first is None:
        return None
    soc_inputs: Dict[str, Dict[str, List[str]]] = {}
    soc_lines: Dict[str, int] = {}
    for m in _DEF_SOC_CONFIG.finditer(code):
        soc, var = m.group(1), m.group(2)
        if not var:
            continue
        per: Dict[str, List[str]] = {}
        clash = False
        for c in re.finditer(r"(?<![\w.>])" + re.escape(var) + r"\s*\.\s*Input\(\s*\"(\w+)\"\s*\)([^;]*);", code):
            found = _dtypes_of(c.group(2))
            if found is None:
                continue
            if c.group(1) in per and per[c.group(1)] != found:
                clash = True
            per.setdefault(c.group(1), found)
        if clash or not per:
            continue
        if any(inputs.get(k) != v for k, v in per.items()):
            soc_inputs[soc] = {k: v for k, v in per.items() if inputs.get(k) != v}
            soc_lines[soc] = _line_of(code, m.start())
    return OpDef(path, _line_of(code, first), socs, inputs, soc_inputs, soc_lines)
