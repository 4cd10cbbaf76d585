"""A second reader of the kernel facts (issue 44, item 4): per (profile, op, dtype), the
shipped profile's verdict against an independent reading of the vendor's sources.

    python benchmarks/kernel_second_reader.py --repos-root /path/to/mirrors
    TORCHPARITY_OPS_NN_GIT=... TORCHPARITY_OPS_MATH_GIT=... python benchmarks/kernel_second_reader.py
    python benchmarks/kernel_second_reader.py ... --list unexplained     # every disagreement
    python benchmarks/kernel_second_reader.py ... --propose   # rules for unexplained docs cells

Repositories are git directories (bare or not); each is given by a flag (--op-plugin,
--ops-nn, --ops-math, --ops-cv, --ops-transformer), an environment variable
(TORCHPARITY_OP_PLUGIN_GIT, TORCHPARITY_OPS_NN_GIT, ...), or found under --repos-root as
``<owner>+<name>/repo`` or ``<name>``. Files are read with ``git show COMMIT:path`` at the
commit the facts file cites, so the working copy's checkout does not matter.

The reading is this file's own code; it shares with the extraction only the loading of the
YAML files (the facts files name the kernel file and commit per op, nothing else is taken
from them). Three readings, each with its citation:

1. **kernel**: every ``initializer_list<DataType>`` / ``vector<DataType>`` constant of the
   kernel's aclnn file, assigned to a chip by the ``GetDtypeSupportListV1/V2/V3(l1, l2)``
   call that selects it (level2_base.h: V1 gives l1 on DAV_2201 only, V2 and V3 on DAV_2201
   and DAV_3510), else by the branch of a selector that returns it (``if (arch cond) return
   A; else return B;``, ``flag ? A : B``; the condition's tokens name the arch), else by its name (910B/910_93/BF16 -> DAV_2201, 910_95/950/REGBASE/ARCH35
   -> DAV_3510, 910 alone/310 -> neither), else generic (every chip). Constants named for
   another argument (index, out, mask, scalar, weight, bias, AiCore routing ...) are left
   out, and so are lists only used to pick a route (``if (CheckType(x, NAME))``): a list
   counts where it is checked (OP_CHECK_DTYPE_NOT_SUPPORT, ``if (!CheckType(x, NAME)) {...
   return false``), returned or passed by a selector, or assigned. If the remaining lists of a chip agree, that list is the reading; where they
   differ, a dtype in all is accepted, one in none refused, and the reader abstains on
   the rest. No list: the reader abstains.
2. **op-plugin**: the ``TORCH_CHECK``s on the first tensor argument's ``scalar_type()``
   in the op-plugin function of the op's name (``x.scalar_type() != at::kDouble`` refuses
   float64; ``== a || == b`` refuses all but a, b; it never accepts). They override the kernel reading.
3. **docs**: the vendor docs section ``torch.<op>`` / ``torch.Tensor.<op>`` /
   ``torch.nn.functional.<op>`` (torch version of the profile): a chip marked unsupported
   refuses all; a restriction "`input`/`self` 仅支持 a, b" accepts only those.

A cell where a reading has a verdict and the profile has the other is a disagreement;
``tests/data/kernel-second-reader-explained.yaml`` settles some, each with the line that
settles it and who is right: ``right: profile`` (the reader misread: explained) or ``right:
reader`` (the shipped fact is wrong: known, to be fixed by the extraction of issue 44); the docs
reading's are settled by class in ``tests/data/kernel-second-reader-docs-explained.yaml``. Prints,
per reading: cells compared, agree, disagree (explained / profile wrong / unexplained).
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
PROFILES = ROOT / "src" / "torchparity" / "devices" / "profiles"
SOURCES = PROFILES / "sources"
EXPLAINED = ROOT / "tests" / "data" / "kernel-second-reader-explained.yaml"
# the docs reading's disagreements, settled by class (docs narrower or broader than the kernel
# list, the docs' chip table, an in-place op read through the out-of-place section, ...)
DOCS_EXPLAINED = ROOT / "tests" / "data" / "kernel-second-reader-docs-explained.yaml"
DEFAULT_PROFILES = ["ascend-a2", "ascend-a2-latest", "ascend-a3", "ascend-950dt"]
REPOS = {"Ascend/op-plugin": "op-plugin", "hicann/ops-nn": "ops-nn", "hicann/ops-math": "ops-math",
         "hicann/ops-cv": "ops-cv", "hicann/ops-transformer": "ops-transformer"}
# the dtypes a profile speaks of: the cells
UNIVERSE = ["float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
            "bool", "complex64", "complex128"]
DT = {"DT_FLOAT": "float32", "DT_FLOAT16": "float16", "DT_BF16": "bfloat16", "DT_DOUBLE": "float64",
      "DT_INT8": "int8", "DT_INT16": "int16", "DT_INT32": "int32", "DT_INT64": "int64",
      "DT_UINT8": "uint8", "DT_UINT16": "uint16", "DT_UINT32": "uint32", "DT_UINT64": "uint64",
      "DT_BOOL": "bool", "DT_COMPLEX64": "complex64", "DT_COMPLEX128": "complex128",
      "DT_COMPLEX32": "complex32"}
AT = {"Double": "float64", "Float": "float32", "Half": "float16", "BFloat16": "bfloat16", "Int": "int32",
      "Long": "int64", "Short": "int16", "Char": "int8", "Byte": "uint8", "Bool": "bool",
      "ComplexFloat": "complex64", "ComplexDouble": "complex128"}
DOC_DT = {"fp16": "float16", "fp32": "float32", "fp64": "float64", "bf16": "bfloat16", "int8": "int8",
          "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8", "bool": "bool",
          "complex64": "complex64", "complex128": "complex128", "double": "float64"}
CHIPS = ("dav_2201", "dav_3510")
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the profiles are large: libyaml where it is built


def load_yaml(path):
    return yaml.load(Path(path).read_text(encoding="utf-8"), Loader=_LOADER)

_CONST = re.compile(r"(?:initializer_list|vector)\s*<\s*(?:op::|ge::)?DataType\s*>\s*&?\s*(\w+)\s*(?:\[\s*\])?\s*=\s*\{",
                    re.S)
_SELECT = re.compile(r"GetDtypeSupportListV([123])\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)")
_SECONDARY = re.compile(r"INDEX|IDX|INDICE|OUT|MASK|SCALAR|TARGET|WEIGHT|BIAS|ARGMAX|SEED|OFFSET|AICORE|AI_CORE|"
                        r"SHAPE|SIZE|ALPHA|BETA|DIM|SCALE|ZERO|QUANT|GROUP|ROUTING|EXPERT|LENGTH|LABEL|COUNT|STEP",
                        re.I)
_ARCH_3510 = re.compile(r"910_?95|950|REGBASE|REG_BASE|ARCH35|3510|DAVID", re.I)
_ARCH_2201 = re.compile(r"910_?B|910_?93|BF16|2201|A2\b", re.I)
_ARCH_OLD = re.compile(r"910(?!_?B|_?9)|310|1001|NOT_SUPPORT_BF16|WITHOUT_BF16|NO_BF16", re.I)


class Repos:
    """git show COMMIT:path, cached; the only I/O on the vendor's sources."""

    def __init__(self, dirs):
        self.dirs = dirs
        self.cache = {}

    def show(self, repo, commit, path):
        key = (repo, commit, path)
        if key not in self.cache:
            d = self.dirs.get(repo)
            if d is None:
                self.cache[key] = None
            else:
                r = subprocess.run(["git", "--git-dir", str(d), "show", f"{commit}:{path}"],
                                   capture_output=True, text=True, errors="replace")
                self.cache[key] = r.stdout if r.returncode == 0 else None
        return self.cache[key]

    def grep(self, repo, commit, pattern, under):
        d = self.dirs.get(repo)
        if d is None:
            return []
        r = subprocess.run(["git", "--git-dir", str(d), "grep", "-n", "-E", pattern, commit, "--", under],
                           capture_output=True, text=True, errors="replace")
        return r.stdout.splitlines()


def _git_dir(path: Path) -> Path:
    return path / ".git" if (path / ".git").exists() else path


def find_repos(args) -> dict:
    out = {}
    for repo, short in REPOS.items():
        flag = getattr(args, short.replace("-", "_"))
        env = os.environ.get("TORCHPARITY_" + short.upper().replace("-", "_") + "_GIT")
        cand = flag or env
        if not cand and args.repos_root:
            for sub in (Path(args.repos_root) / repo.replace("/", "+") / "repo", Path(args.repos_root) / short):
                if sub.exists():
                    cand = str(sub)
                    break
        if cand:
            out[repo] = _git_dir(Path(cand))
    return out


# ---------------------------------------------------------------------------------------
# reading 1: the kernel file's dtype-list constants, grouped by the arch that selects them

def _line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def constants(text):
    """name -> (line, dtypes) for every DataType list constant of the file."""
    out = {}
    for m in _CONST.finditer(text):
        end = text.index("}", m.end())
        body = text[m.end():end]
        dts = [DT[d] for d in re.findall(r"\bDT_\w+", body) if d in DT]
        out.setdefault(m.group(1), (_line_of(text, m.start(1)), dts))
    return out


def _role_ok(name):
    bare = re.sub(r"SUPPORT|LIST|DTYPE|TYPE|WITHOUT", "", name.upper())
    return not _SECONDARY.search(bare)


_NO_BF16 = re.compile(r"WITHOUT_?BF16|NOT_SUPPORT_BF16|NO_BF16", re.I)


def _chip_of_name(name):
    if _NO_BF16.search(name):
        return set()
    if _ARCH_3510.search(name):
        return {"dav_3510"}
    if _ARCH_2201.search(name):
        return {"dav_2201"}
    if _ARCH_OLD.search(name):
        return set()
    return set(CHIPS)


def inplace_out_lists(text):
    """chip -> (union of the out/self-ref lists that apply, citation): an in-place op's self is
    its out, so a dtype in none of them is refused."""
    allc = constants(text)
    outs = {n: v for n, v in allc.items()
            if re.search(r"OUT|SELFREF|SELF_REF|INPLACE", re.sub(r"WITHOUT", "", n, flags=re.I), re.I) and v[1]
            and _checks(text, n)}
    sel = {}
    for m in _SELECT.finditer(text):
        ver, l1, l2 = m.group(1), m.group(2), m.group(3)
        for name, chips in ((l1, ("dav_2201",) if ver == "1" else CHIPS), (l2, ("dav_3510",) if ver == "1" else ())):
            if name in outs:
                sel.setdefault(name, set()).update(chips)
    res = {}
    for c in CHIPS:
        names = [n for n in outs if c in sel.get(n, _chip_of_name(n))]
        if names:
            res[c] = (set().union(*(set(outs[n][1]) for n in names)),
                      ", ".join(f"{n} :{outs[n][0]} (in place: self is out)" for n in sorted(names)))
    return res


def _checks(text, name):
    """Is the constant used as a check (OP_CHECK_DTYPE_NOT_SUPPORT, a selector's return or
    argument, an assignment) rather than only to pick a route (CheckType(x, NAME) in an if)?"""
    n = re.escape(name)
    return bool(re.search(rf"OP_CHECK_DTYPE_NOT_SUPPORT\([^;]*\b{n}\b|return\s+&?{n}\s*;|[?:]\s*{n}\b|"
                          rf"=\s*{n}\s*;|GetDtypeSupportListV[123]\s*\([^)]*\b{n}\b|"
                          rf"!\s*(?:op::)?CheckType\([^)]*\b{n}\b\)\s*\)\s*\{{[^}}]*(?:return false|OP_LOGE)", text))


_COND_2201 = re.compile(r"DAV_2201|ASCEND910B\b|ASCEND910_93")
_COND_3510 = re.compile(r"IsReg[Bb]ase|DAV_3510|ASCEND950|ASCEND910_95|IsNpuArch3510")
_COND_RANGE = re.compile(r">=\s*(?:op::)?SocVersion::ASCEND910B\s*&&[^;{]*<=\s*(?:op::)?SocVersion::ASCEND910E")


def _cond_chips(cond):
    """The chips an arch condition holds on, or None where it cannot be read (negations)."""
    if "!=" in cond or re.search(r"!\s*(?:Ops::NN::AclnnUtil::)?IsReg", cond):
        return None
    chips = set()
    if _COND_RANGE.search(cond):
        chips |= set(CHIPS)  # the 910B..910E range holds 910B/910_93 and 910_95 (950)
    if _COND_2201.search(cond):
        chips.add("dav_2201")
    if _COND_3510.search(cond):
        chips.add("dav_3510")
    return chips


def _helpers(text):
    """Small bool helpers of the file (`static inline bool IsX() { ... return <expr>; }`):
    name -> the returned expression, so a condition calling one reads its arch tokens."""
    out = {}
    for m in re.finditer(r"\bbool\s+(\w+)\s*\(\s*(?:void)?\s*\)\s*\{(.{0,400}?)\n\}", text, re.S):
        r = re.search(r"return\s+(.*?);", m.group(2), re.S)
        if r:
            out[m.group(1)] = r.group(1)
    return out


def _expand(cond, helpers):
    for name, expr in helpers.items():
        cond = re.sub(rf"\b{name}\s*\(\s*\)", "(" + expr + ")", cond)
    return cond


def selector_returns(text, names):
    """name -> chips, read from selector functions: `if (cond) { return A; } else if (cond)
    {...} else { return B; }`, and `cond ? A : B` ternaries. The arch a branch holds on is read
    from its condition's tokens; `else` holds on the chips no earlier branch took."""
    out = {}
    helpers = _helpers(text)
    lines = text.splitlines()
    covered, cur = set(), None
    for i, line in enumerate(lines):
        if re.match(r"^\S.*\)\s*(const)?\s*\{?\s*$", line) or line.startswith("}"):
            covered, cur = set(), None  # a new top-level function
        m = re.search(r"\b(?:else\s+)?if\s*\((.*)", line)
        if m:
            cond = m.group(1)
            k = i
            while cond.count("(") >= cond.count(")") and k + 1 < len(lines) and k < i + 4:
                k += 1
                cond += lines[k]
            if not line.strip().startswith(("if", "} else if", "else if")):
                pass
            got = _cond_chips(_expand(cond, helpers))
            if "else" not in line:
                covered = set()
            cur = None if got is None else got - covered
            if got:
                covered |= got
            continue
        if re.search(r"\belse\b\s*\{?\s*$", line):
            cur = set(CHIPS) - covered
            continue
        r = re.search(r"return\s+&?(\w+)\s*;", line)
        if r and r.group(1) in names and cur is not None:
            out.setdefault(r.group(1), set()).update(cur)
        t = re.search(r"(\w+)\s*\?\s*(\w+)\s*:\s*(\w+)", line)
        if t and t.group(2) in names and t.group(3) in names:
            # flag ? A : B with the flag defined from an arch condition a few lines up
            flag = re.search(rf"\b{t.group(1)}\s*=\s*([^;]*)", "\n".join(lines[max(0, i - 6):i + 1]))
            got = _cond_chips(_expand(flag.group(1), helpers)) if flag else None
            if got:  # a flag with no arch token in its definition is not read
                out.setdefault(t.group(2), set()).update(got)
                out.setdefault(t.group(3), set()).update(set(CHIPS) - got)
    return out


def kernel_reading(text):
    """chip -> (accepted set, refused set, citation) or None (abstain), from the constants."""
    consts = {n: v for n, v in constants(text).items() if _role_ok(n) and v[1] and _checks(text, n)}
    if not consts:
        return {c: None for c in CHIPS}
    chosen = {c: {} for c in CHIPS}
    selected = set()
    for m in _SELECT.finditer(text):
        ver, l1, l2 = m.group(1), m.group(2), m.group(3)
        line = _line_of(text, m.start())
        for name, chips in ((l1, ("dav_2201",) if ver == "1" else CHIPS), (l2, ("dav_3510",) if ver == "1" else ())):
            if name in consts:
                selected.add(name)
                for c in chips:
                    chosen[c][name] = f"GetDtypeSupportListV{ver} at :{line}"
    for name, chips in selector_returns(text, set(consts) - selected).items():
        selected.add(name)
        for c in chips:
            chosen[c][name] = "selected by an arch branch"
    for name in consts:
        if name in selected or _NO_BF16.search(name):
            continue
        if _ARCH_3510.search(name):
            chosen["dav_3510"].setdefault(name, "named for DAV_3510")
        elif _ARCH_2201.search(name):
            chosen["dav_2201"].setdefault(name, "named for DAV_2201")
        elif _ARCH_OLD.search(name):
            continue
    generic = [n for n in consts if n not in selected and not (
        _NO_BF16.search(n) or _ARCH_3510.search(n) or _ARCH_2201.search(n) or _ARCH_OLD.search(n))]
    out = {}
    for c in CHIPS:
        names = dict(chosen[c])
        if not names:
            names = {n: "generic" for n in generic}
            if not names and c == "dav_3510":
                # a file with DAV_2201-named lists and none for DAV_3510: the 2201 list is the
                # only one left that a DAV_3510 path can take (no arch gate read here)
                names = {n: "named for DAV_2201, none for DAV_3510" for n in chosen["dav_2201"]}
        if not names:
            out[c] = None
            continue
        sets = [set(consts[n][1]) for n in names]
        acc = set.intersection(*sets)
        allx = set.union(*sets)
        cite = ", ".join(f"{n} :{consts[n][0]} ({why})" for n, why in sorted(names.items()))
        out[c] = (acc, set(UNIVERSE) - allx, cite)
    return out


# ---------------------------------------------------------------------------------------
# reading 2: op-plugin's TORCH_CHECKs on the first tensor's scalar_type

def _plugin_functions(repos, commit, fname):
    key = ("index", commit)
    if key not in repos.cache:
        index = defaultdict(list)
        for h in repos.grep("Ascend/op-plugin", commit, r"^(at::Tensor|std::tuple|void|at::Tensor&)[^(]*\b\w+\(",
                            "op_plugin/ops/opapi"):
            _, path, line, text = h.split(":", 3)
            m = re.search(r"(\w+)\(", text)
            if m:
                index[m.group(1)].append((path, int(line)))
        repos.cache[key] = index
    return repos.cache[key].get(fname, [])


def plugin_reading(repos, commit, op):
    """(refused set, only-accepted set or None, citation) or None."""
    fname = op.split(".", 1)[1]
    refused, only, cites = set(), None, []
    for path, line in _plugin_functions(repos, commit, fname):
        text = repos.show("Ascend/op-plugin", commit, path) or ""
        lines = text.splitlines()
        sig = []
        i = line - 1
        while i < len(lines):
            sig.append(lines[i])
            if ")" in lines[i]:
                break
            i += 1
        m = re.search(r"\(\s*(?:const\s+)?at::Tensor\s*&?\s*(\w+)", " ".join(sig))
        if not m:
            continue
        names = {m.group(1)}
        j = i
        while j < len(lines) and not lines[j].startswith("}"):
            alias = re.search(r"at::Tensor\s+(\w+)\s*=\s*(\w+)\s*;", lines[j])
            if alias and alias.group(2) in names:  # at::Tensor self = self_ex;
                names.add(alias.group(1))
            first = "(?:" + "|".join(sorted(names)) + ")"
            if "TORCH_CHECK" in lines[j]:
                stmt, k = lines[j], j
                while ";" not in stmt and k + 1 < len(lines):
                    k += 1
                    stmt += lines[k]
                cond = stmt.split(",")[0] if "(" in stmt else stmt
                cond = stmt[stmt.index("TORCH_CHECK") + len("TORCH_CHECK"):]
                cond = cond.split('"', 1)[0]
                ne = re.findall(rf"\b{first}\.scalar_type\(\)\s*!=\s*at::(?:ScalarType::|k)(\w+)", cond)
                eq = re.findall(rf"\b{first}\.scalar_type\(\)\s*==\s*at::(?:ScalarType::|k)(\w+)", cond)
                if ne and not eq and "||" not in cond:
                    refused |= {AT[x] for x in ne if x in AT}
                    cites.append(f"Ascend/op-plugin {path}:{j + 1}")
                elif eq and not ne and "&&" not in cond:
                    got = {AT[x] for x in eq if x in AT}
                    only = got if only is None else only & got
                    cites.append(f"Ascend/op-plugin {path}:{j + 1}")
            j += 1
    if not cites:
        return None
    return refused, only, "; ".join(f"{c}@{commit[:12]}" for c in cites)


# ---------------------------------------------------------------------------------------
# reading 3: the vendor docs

@functools.lru_cache(maxsize=None)
def docs_sections(docs_dir: Path):
    """'torch.x' -> (file, line, {chip term: bool}, [(arg, dtypes, line, chip terms in line)])."""
    out = {}
    for f in sorted(docs_dir.glob("*.md")):
        lines = f.read_text(encoding="utf-8").splitlines()
        cur = None
        for n, text in enumerate(lines, 1):
            m = re.match(r"^###\s+(torch\.[\w.]+)\s*$", text)
            if m:
                cur = out.setdefault(m.group(1), [f"{docs_dir.name}/{f.name}", n, {}, []])
                continue
            if cur is None:
                continue
            t = re.match(r"^\|\s*<term>(.+?)</term>\s*\|\s*(\S+)\s*\|", text)
            if t:
                cur[2][t.group(1)] = "✔" in t.group(2)
                continue
            for r in re.finditer(r"`(\w+)`仅支持([^。；;]*)", text):
                dts = [DOC_DT[w] for w in re.findall(r"[a-z0-9]+", r.group(2).lower()) if w in DOC_DT]
                if dts:
                    cur[3].append((r.group(1), set(dts), n, re.findall(r"<term>(.+?)</term>", text)))
    return out


def docs_reading(sections, op, chip_term):
    base = op.split(".", 1)[1]
    names = [base, base.rstrip("_")]
    for n in list(names):
        for pre, strip in (("linalg_", "torch.linalg."), ("special_", "torch.special."), ("fft_", "torch.fft.")):
            if n.startswith(pre):
                names.append(strip[6:] + n[len(pre):])
    for n in names:
        for full in (f"torch.{n}", f"torch.Tensor.{n}", f"torch.nn.functional.{n}"):
            s = sections.get(full)
            if not s:
                continue
            file, line, chips, only = s
            if chip_term in chips and not chips[chip_term]:
                return set(), set(UNIVERSE), f"docs {full} ({file}:{line}): unsupported on {chip_term}"
            for arg, dts, ln, terms in only:
                if arg in ("input", "self", "tensor", "tensors") and (not terms or chip_term in terms):
                    return dts, set(UNIVERSE) - dts, f"docs {full} ({file}:{ln})"
            return None
    return None


# ---------------------------------------------------------------------------------------

def profile_cells(profile):
    """(op, dtype) -> supported? for the profile's kernel-sourced entries."""
    for op, e in profile["ops"].items():
        if not str(e.get("source", "")).startswith("kernel "):
            continue
        if not e.get("supported"):
            yield op, {d: False for d in UNIVERSE}, e["source"]
        elif "dtypes" in e:
            yield op, {d: d in e["dtypes"] for d in UNIVERSE}, e["source"]
        # supported without dtypes: the profile says nothing per dtype (no check refuses)
        # and the reader cannot refute "no check" from constants alone: not compared


def chip_of(profile):
    return "dav_3510" if any("950" in c for c in profile["chips"]) else "dav_2201"


def run(args):
    repos = Repos(find_repos(args))
    missing = [r for r in REPOS if r not in repos.dirs]
    if missing:
        print("missing repositories: " + ", ".join(missing) + " (give --repos-root, flags or env)", file=sys.stderr)
        return None
    docs_root = Path(args.docs)
    explained = load_explained()
    rows = []
    for pname in args.profiles:
        profile = load_yaml(PROFILES / f"{pname}.yaml")
        m = re.search(r"--kernel-facts (\S+)", profile["generated"]["command"])
        facts = load_yaml(SOURCES / m.group(1))
        chip = chip_of(profile)
        plugin_commit = facts["repos"]["Ascend/op-plugin"]
        for op, says, psource in profile_cells(profile):
            k = facts["ops"].get(op)
            readings = []
            if k:
                repo, path = k["kernel"].split(" ", 1)
                commit = facts["repos"][repo]
                text = repos.show(repo, commit, path)
                if text:
                    kr = kernel_reading(text).get(chip)
                    base = op.split(".", 1)[1]
                    outs = inplace_out_lists(text).get(chip) if base.endswith("_") and not base.endswith("__") else None
                    if kr and outs:
                        kr = (kr[0] & outs[0], kr[1] | (set(UNIVERSE) - outs[0]), kr[2] + "; " + outs[1])
                    if kr:
                        readings.append(("kernel", kr[0], kr[1], f"{repo} {path} {kr[2]}@{commit[:12]}"))
            pr = plugin_reading(repos, plugin_commit, op)
            if pr:
                refused, only, cite = pr
                acc = set()  # op-plugin passing a dtype on says nothing of the kernel
                ref = set(refused) | (set(UNIVERSE) - only if only is not None else set())
                readings.append(("op-plugin", acc, ref, cite))
                # op-plugin's refusals override the kernel reading
                readings = [(w, a - ref, r | ref, c) if w == "kernel" else (w, a, r, c) for w, a, r, c in readings]
            for d in UNIVERSE:
                for who, acc, ref, cite in readings:
                    verdict = True if d in acc else False if d in ref else None
                    if verdict is None:
                        continue
                    row = {"profile": pname, "chip": chip, "op": op, "dtype": d, "reading": who,
                           "profile_says": says[d], "reader_says": verdict,
                           "profile_source": psource, "reader_source": cite}
                    row["why"] = _explain(row, explained) if verdict != says[d] else None
                    rows.append(row)
        rows.extend(docs_rows(pname, profile, docs_root, explained))
    return rows


def load_explained():
    out = []
    for f in (EXPLAINED, DOCS_EXPLAINED):
        if f.exists():
            out.extend(load_yaml(f)["explained"] or [])
    return out


def docs_rows(pname, profile, docs_root, explained):
    """The docs reading's cells of one profile: it needs no vendor repository (the profile and
    the docs folder only), so a test can hold its disagreements against the rules."""
    tv = re.search(r"--torch-version (\S+)", profile["generated"]["command"]).group(1)
    sections = docs_sections(Path(docs_root) / ("pytorch_" + tv.replace(".", "-")))
    chip, term = chip_of(profile), profile["chips"][0]
    rows = []
    for op, says, psource in profile_cells(profile):
        dr = docs_reading(sections, op, term)
        if not dr:
            continue
        acc, ref, cite = dr
        for d in UNIVERSE:
            verdict = True if d in acc else False if d in ref else None
            if verdict is None:
                continue
            row = {"profile": pname, "chip": chip, "op": op, "dtype": d, "reading": "docs",
                   "profile_says": says[d], "reader_says": verdict,
                   "profile_source": psource, "reader_source": cite}
            row["why"] = _explain(row, explained) if verdict != says[d] else None
            rows.append(row)
    return rows


def _explain(row, explained):
    for e in explained:
        if e["reading"] != row["reading"]:
            continue
        if "op" in e and e["op"] != row["op"] and row["op"] not in e.get("ops", []):
            continue
        if "op_prefix" in e and not row["op"].startswith(e["op_prefix"]):
            continue
        if e.get("profiles") and row["profile"] not in e["profiles"]:
            continue
        if e.get("dtypes") and row["dtype"] not in e["dtypes"]:
            continue
        if "profile_says" in e and e["profile_says"] != row["profile_says"]:
            continue
        return e
    return None


_INTS = {"int8", "int16", "int32", "int64", "uint8", "bool"}


def _kernel_cite(source):
    """'repo path NAME :L (why), ...@commit' (a kernel reading's citation) -> 'repo path:L,...@commit'."""
    head, commit = source.rsplit("@", 1)
    repo, path, rest = head.split(" ", 2)
    lines = sorted({int(n) for n in re.findall(r"\w+ :(\d+)", rest)})
    return f"{repo} {path}:{','.join(map(str, lines))}@{commit}" if lines else f"{repo} {path}@{commit}"


def _int_result_is_float(base):
    """Does torch's out-of-place form of an in-place op give a float result for an integer input
    (acos, sqrt: yes; remainder: no)? Asked of torch on the CPU; None where it cannot be asked."""
    import torch

    fn = getattr(torch, base.rstrip("_"), None)
    try:
        got = fn([torch.ones(2, dtype=torch.int32)]) if base.startswith("_foreach_") else fn(
            torch.ones(2, dtype=torch.int32))
    except Exception:
        return None
    got = got[0] if isinstance(got, (list, tuple)) else got
    return got.is_floating_point() if isinstance(got, torch.Tensor) else None


def docs_class(row, kernel_row):
    """The class of one unexplained docs disagreement, from the independent kernel reading of the
    same cell (None: no kernel reading decides it; read it by hand)."""
    if kernel_row is None:
        return None
    if kernel_row["reader_says"] != row["profile_says"]:
        # the kernel reading disagrees too: settled (or not) by a kernel rule
        return "kernel-rule" if kernel_row["why"] else None
    base = row["op"].split(".", 1)[1]
    section = re.search(r"docs (\S+)", row["reader_source"]).group(1)
    if (not row["profile_says"] and base.endswith("_") and not base.endswith("__") and row["dtype"] in _INTS
            and not section.endswith("_") and _int_result_is_float(base)):
        return "inplace-integer-self"
    if "unsupported on" in row["reader_source"]:
        return "docs-chip-table"
    return "docs-narrower-than-kernel" if row["profile_says"] else "docs-broader-than-kernel"


_CLASS_TEXT = {
    "docs-narrower-than-kernel": "the list the kernel checks on {chip} holds {dts}; the docs' line ({doc}) leaves "
                                 "them out (the docs' list is narrower than the kernel's)",
    "docs-broader-than-kernel": "the list the kernel checks on {chip} lacks {dts}, which the docs' line ({doc}) "
                                "lists (the docs' list is broader than the kernel's)",
    "docs-chip-table": "the kernel checks a list on {chip} that holds {dts}; the docs' table ({doc}) marks the chip "
                       "unsupported",
    "inplace-integer-self": "in place, self is the out and the out list the kernel checks on {chip} holds none of "
                            "{dts} (torch itself cannot write a float result into an integer self); the docs' "
                            "line ({doc}) is the out-of-place API's",
}


_PROFILE_CONST = re.compile(r"kernel \w+: (\S+) (\S+?):(\d+) \((\w+), :(\d+)\).*?@([0-9a-f]{12})")


def cited_list_holds(repos, row):
    """Where no kernel reading decides a cell (the reader abstains: several lists differ), does
    the list the profile cites for the check hold the dtype, read by this file's own constant
    reader at the cited commit? 'repo path:check,list@commit' or None."""
    m = _PROFILE_CONST.search(row["profile_source"])
    if not m or repos is None:
        return None
    repo, path, line, const, cline, commit = m.groups()
    text = repos.show(repo, commit, path) or ""  # git takes the cited 12-digit prefix
    got = constants(text).get(const)
    if got and (row["dtype"] in got[1]) == row["profile_says"]:
        return f"{repo} {path}:{line},{cline}@{commit} ({const}; the kernel reading abstains)"
    return None


def propose_docs_rules(rows, repos=None):
    """YAML rules for the unexplained docs disagreements, one per (class, op, direction, dtype
    set), citing the kernel reading that agrees with the profile; cells no kernel reading decides
    are left for a hand reading (printed as comments)."""
    kern = {(r["profile"], r["op"], r["dtype"]): r for r in rows if r["reading"] == "kernel"}
    groups = defaultdict(lambda: defaultdict(list))
    by_op = defaultdict(list)
    for r in rows:
        if r["reading"] == "docs" and r["profile_says"] != r["reader_says"] and not r["why"]:
            by_op[(r["op"], r["profile_says"], r["profile"])].append(r)
    hand = []
    for (op, says, prof), rs in sorted(by_op.items()):
        by_cls = defaultdict(list)
        for r in rs:
            k = kern.get((r["profile"], r["op"], r["dtype"]))
            if k is None:
                cite = cited_list_holds(repos, r)
                if cite:  # a stand-in kernel row: the cited list, read here, agrees with the profile
                    k = {"reader_says": r["profile_says"], "why": None, "cite": cite}
            by_cls[docs_class(r, k)].append((r, k))
        for cls, items in by_cls.items():
            if cls is None:
                hand.extend(r for r, _ in items)
                continue
            dts = tuple(r["dtype"] for r, _ in items)
            groups[(cls, op, says, dts)][prof] = items
    out = []
    for (cls, op, says, dts), per in sorted(groups.items()):
        items = [it for its in per.values() for it in its]
        r0, k0 = items[0]
        doc = re.search(r"\((\S+:\d+)\)", r0["reader_source"]).group(1)
        if cls == "kernel-rule":
            why = k0["why"]
            text = f"the kernel reading's rule settles it: {why['settled_by']}"
            right = why["right"]
        else:
            cites = sorted({k.get("cite") or _kernel_cite(k["reader_source"]) for _, k in items})
            text = "; ".join(cites) + ": " + _CLASS_TEXT[cls].format(
                chip="/".join(sorted({r["chip"].upper() for r, _ in items})), dts=", ".join(dts), doc=doc)
            right = "profile"
        out.append({"op": op, "reading": "docs", "class": cls, "profiles": sorted(per),
                    "dtypes": list(dts), "profile_says": says, "right": right, "settled_by": text})
    return out, hand


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repos-root", default=os.environ.get("TORCHPARITY_KERNEL_REPOS"),
                    help="folder holding <owner>+<name>/repo or <name> git directories")
    for short in REPOS.values():
        ap.add_argument("--" + short, default=None, help=f"git directory of {short}")
    ap.add_argument("--docs", default=os.environ.get("TORCHPARITY_ASCEND_DOCS",
                                                     str(ROOT / "tests" / "data" / "ascend-native-api-docs")))
    ap.add_argument("--profiles", nargs="+", default=DEFAULT_PROFILES)
    ap.add_argument("--list", choices=["none", "unexplained", "all"], default="none")
    ap.add_argument("--reading", choices=["kernel", "op-plugin", "docs"], default=None,
                    help="list only this reading's disagreements")
    ap.add_argument("--propose", action="store_true",
                    help="print YAML rules for the unexplained docs disagreements that the kernel reading settles "
                         "(to read and commit by hand), and the cells left for a hand reading")
    a = ap.parse_args(argv)
    for p in a.profiles:
        if not (PROFILES / f"{p}.yaml").exists():
            print(f"no profile {p}", file=sys.stderr)
            return 2
    rows = run(a)
    if rows is None:
        return 2
    if a.propose:
        rules, hand = propose_docs_rules(rows, Repos(find_repos(a)))
        print(yaml.safe_dump(rules, allow_unicode=True, sort_keys=False, width=120))
        for r in hand:
            print(f"# by hand: {r['profile']} {r['op']} {r['dtype']} profile={r['profile_says']} "
                  f"docs={r['reader_says']}: {r['profile_source'][:160]}")
        return 0
    tally = Counter()
    for r in rows:
        agree = r["profile_says"] == r["reader_says"]
        kind = ("agree" if agree else "unexplained" if not r["why"] else
                "profile_wrong" if r["why"]["right"] == "reader" else "explained")
        tally[(r["reading"], kind)] += 1
    print("| reading | cells compared | agree | disagree | explained (profile right) "
          "| profile wrong (known, to fix) | unexplained |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    tot = Counter()
    for who in ("kernel", "op-plugin", "docs"):
        n = {k: tally[(who, k)] for k in ("agree", "explained", "profile_wrong", "unexplained")}
        tot.update(n)
        print(f"| {who} | {sum(n.values())} | {n['agree']} | {sum(n.values()) - n['agree']} | {n['explained']} "
              f"| {n['profile_wrong']} | {n['unexplained']} |")
    print(f"| all | {sum(tot.values())} | {tot['agree']} | {sum(tot.values()) - tot['agree']} | {tot['explained']} "
          f"| {tot['profile_wrong']} | {tot['unexplained']} |")
    explained = load_explained()
    # _explain returns the rule objects of its own load: compare by content
    used_keys = {yaml.safe_dump(r["why"]) for r in rows if r["why"] and r["profile_says"] != r["reader_says"]}
    stale = [e for e in explained if yaml.safe_dump(e) not in used_keys]
    print(f"\nrules in {EXPLAINED.name} and {DOCS_EXPLAINED.name}: {len(explained)}, "
          f"matching no disagreement now: {len(stale)}"
          + "".join(f"\n  stale: {e.get('op') or e.get('op_prefix')} ({e['reading']}, right: {e['right']})"
                    for e in stale))
    by_op = defaultdict(list)
    for r in rows:
        if r["profile_says"] != r["reader_says"] and (a.list == "all" or (a.list == "unexplained" and not r["why"])):
            if a.reading and r["reading"] != a.reading:
                continue
            by_op[(r["profile"], r["op"], r["reading"], r["profile_says"], r["reader_says"])].append(r)
    for (p, op, who, ps, rs), rs_ in sorted(by_op.items()):
        r = rs_[0]
        dts = ",".join(x["dtype"] for x in rs_)
        why = (f"  {'PROFILE WRONG' if r['why']['right'] == 'reader' else 'EXPLAINED'}: {r['why']['settled_by']}"
               if r["why"] else "")
        print(f"{p} {op} [{dts}] profile={'yes' if ps else 'no'} {who}={'yes' if rs else 'no'}\n"
              f"    profile: {r['profile_source']}\n    {who}: {r['reader_source']}{why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
