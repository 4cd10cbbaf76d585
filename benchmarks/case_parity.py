"""Did converting a source's table change its scenarios? Every case of one source, old tree vs this.

For each API the source (``--source``) has a case for, in this tree and in ``--base``
(another checkout's ``src`` folder, put first on ``PYTHONPATH`` of a child process),
the scenarios it makes are listed: id, dtypes (after the CPU probe and the float
widening), tags, expected exception, compare mode; and each scenario's function is run on
the CPU in its first dtype under seed 0: the output's structure (types, tensor shapes and
dtypes; an API whose tensors differ only in value is counted apart: see
``shape_only``) and its tensor values. With ``--device SPEC`` (e.g. ``emu:ascend-a2``,
emulated) the function is also run once on that device, in the same dtype and seed: its
output, or the exception it raised there, is compared the same way. Cheap (no worker
pool) and exact: a row that differs is printed. ``benchmarks/refactor_parity.py --source``
then checks the judged rows on a device.

    python benchmarks/case_parity.py --base OTHER_CHECKOUT/src --source quant [--show]
        [--device emu:ascend-a2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, warnings
warnings.filterwarnings("ignore")
import torch
from torchparity.scenarios.sources import source
from torchparity.api.resolve import maybe_resolve

def shape(v, depth=0):
    if isinstance(v, torch.Tensor):
        v = v.detach().cpu()
        if v.is_quantized:
            v = v.dequantize()
        if v.layout != torch.strided:
            v = v.to_dense()
        return ["T", list(v.shape), str(v.dtype), v.detach().double().nan_to_num(0.0, 1e300, -1e300).flatten().tolist()[:64]]
    if isinstance(v, dict):
        return {str(k): shape(x, depth + 1) for k, x in v.items()} if depth < 6 else "..."
    if isinstance(v, (list, tuple)):
        return [shape(x, depth + 1) for x in v] if depth < 6 else "..."
    if isinstance(v, (int, float, bool, str, type(None))):
        return v if not isinstance(v, float) or v == v else "nan"
    return type(v).__name__

name = sys.argv[1]
device = sys.argv[3] if len(sys.argv) > 3 else ""
if device:
    from torchparity.devices import get_adapter
    adapter = get_adapter(device)
    adapter.setup()
    device = adapter.torch_device
src = source(name)
out = {}
for api in sorted(src.members()):
    r = maybe_resolve(api)
    obj = r.obj if r is not None else None
    try:
        scs = src.scenarios(api, obj)
    except Exception as exc:
        out[api] = f"failed: {type(exc).__name__}: {exc}"
        continue
    rows = []
    for sc in scs:
        row = dict(id=sc.id, dtypes=list(sc.dtypes), tags=list(sc.tags), compare=sc.compare,
                   raises=[sc.raises.type, sc.raises.match] if sc.raises else None,
                   golden=sc.golden is not None, why_not=None)
        torch.manual_seed(0)
        try:
            row["output"] = shape(sc.fn("cpu", getattr(torch, sc.dtypes[0])))
        except Exception as exc:
            row["output"] = f"raised {type(exc).__name__}"
        if device:  # the same function on the device under test, same dtype and seed
            torch.manual_seed(0)
            try:
                row["on_device"] = shape(sc.fn(device, getattr(torch, sc.dtypes[0])))
            except Exception as exc:
                row["on_device"] = f"raised {type(exc).__name__}"
        rows.append(row)
    out[api] = rows or src.why_not(api, obj)
json.dump(out, open(sys.argv[2], "w"), default=str)
"""


def side(src_dir: str, name: str, dump: Path, device: str = "") -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([src_dir, os.environ.get("PYTHONPATH", "")]))
    subprocess.run([sys.executable, "-c", CHILD, name, str(dump)] + ([device] if device else []),
                   env=env, check=True)
    return json.loads(dump.read_text())


def shape_only(tree):
    """The dump without tensor values: a body that draws its inputs in another order (it no
    longer draws one it does not use) gives other values under the same seed, not another
    answer to compare (the CPU reference and the device run share the order)."""
    if isinstance(tree, list) and len(tree) == 4 and tree[:1] == ["T"]:
        return tree[:3]
    if isinstance(tree, list):
        return [shape_only(t) for t in tree]
    if isinstance(tree, dict):
        return {k: shape_only(v) for k, v in tree.items()}
    return tree


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True)
    parser.add_argument("--source", required=True, action="append")
    parser.add_argument("--out", type=Path, default=Path("/tmp"))
    parser.add_argument("--show", action="store_true", help="print both sides of a differing API")
    parser.add_argument("--device", default="", help="also run each function once on this device "
                        "(e.g. emu:ascend-a2, emulated)")
    args = parser.parse_args()
    bad = 0
    tag = args.device.replace(":", "-") if args.device else "cpu"
    if args.device:
        print(f"outputs also on {args.device}" + (" (emulated)" if args.device.startswith("emu:") else ""))
    for name in args.source:
        a = side(str(Path(args.base).resolve()), name, args.out / f"case-parity-{name}-{tag}-base.json",
                 args.device)
        b = side(str(ROOT / "src"), name, args.out / f"case-parity-{name}-{tag}-this.json", args.device)
        apis = sorted(set(a) | set(b))
        diff = [api for api in apis if shape_only(a.get(api)) != shape_only(b.get(api))]
        values = [api for api in apis if api not in diff and a.get(api) != b.get(api)]
        bad += len(diff)
        print(f"{name}: {len(apis)} APIs ({len(a)} base, {len(b)} this), "
              f"{sum(len(v) for v in b.values() if isinstance(v, list))} scenarios here; {len(diff)} differ; "
              f"{len(values)} more differ in output values only")
        for api in values:
            print("   values only:", api)
        for api in diff:
            print("   differs:", api)
            if args.show:
                print("      base:", json.dumps(a.get(api))[:600])
                print("      this:", json.dumps(b.get(api))[:600])
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
