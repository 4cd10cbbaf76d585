"""OpInfo conformance of the emulated device: every op_db entry, float32, every sample.

    python benchmarks/emulator_opinfo.py [--workers 2] [--ops add,mm] [--json out.json]
    python benchmarks/emulator_opinfo.py --mode gradcheck   # backward formulas, float64

Each OpInfo's float32 samples are made on the CPU; the op runs on the CPU and on copies of
the samples moved to the emulated device (allow-all profile), both after the same
``torch.manual_seed``. Outputs are compared with ``torch.testing.assert_close``
(atol = rtol = 1e-4, NaN equal to NaN) after the device outputs are moved back; device
outputs must be on the device. A sample where both runs raise agrees.

Verdicts per op: pass, fail (values or metadata differ), error (the device raised, the CPU
did not), crash / timeout (the worker died or hung), not comparable (uninitialised
outputs: ``empty*``, ``new_empty*``), not applicable (no float32 on the CPU, or every
sample fails on the CPU too). Agreement = pass / (ops that run on the CPU, less the not
comparable ones). Ops run in worker subprocesses fed one op at a time, so a crash costs
one op and a restart.

``--mode gradcheck`` runs slow-mode ``torch.autograd.gradcheck`` on each differentiable
OpInfo's first float64 sample on the CPU and on the device: the device agrees when it
passes where the CPU passes (or both raise).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from typing import Dict, List, Optional

ATOL = RTOL = 1e-4
OP_TIMEOUT_S = {"values": 120.0, "gradcheck": 600.0}  # sort's 8000-element sample: 40 s
UNINITIALISED = re.compile(r"(^|[._])(new_)?empty")


# ------------------------------------------------------------------------- worker side


def _move(value, device_type: str):
    """Sample values for the device run: tensors moved, CPU device arguments retargeted."""
    import torch

    if isinstance(value, torch.Tensor):
        return _move_tensor(value, device_type)
    if isinstance(value, torch.device):
        return torch.device(device_type) if value.type == "cpu" else value
    if isinstance(value, str) and value == "cpu":
        return device_type
    if isinstance(value, list):
        return [_move(v, device_type) for v in value]
    if isinstance(value, tuple):
        items = [_move(v, device_type) for v in value]
        return tuple(items) if type(value) is tuple else type(value)(items)
    if isinstance(value, dict):
        return {k: _move(v, device_type) for k, v in value.items()}
    return value


def _move_tensor(t, device_type: str):
    """Copy the whole storage and rebuild the same view on the device, so that ops that
    read memory around a view (as_strided on a partial view) see the same bytes."""
    import torch

    with torch.no_grad():
        if t.layout != torch.strided or t.is_conj() or t.is_neg() or t.requires_grad:
            return t.to(device_type)
        storage = t.untyped_storage()
        on_device = getattr(storage, device_type)()
        out = torch.empty(0, dtype=t.dtype, device=device_type)
        return out.set_(on_device, t.storage_offset(), t.size(), t.stride())


def _on_device(value, device_type: str) -> bool:
    """Whether a (moved) sample refers to the device at all."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.device.type == device_type
    if isinstance(value, torch.device):
        return value.type == device_type
    if isinstance(value, str):
        return value == device_type
    if isinstance(value, (list, tuple)):
        return any(_on_device(v, device_type) for v in value)
    if isinstance(value, dict):
        return any(_on_device(v, device_type) for v in value.values())
    return False


def _to_cpu(value):
    import torch

    if isinstance(value, torch.Tensor):
        return value.cpu()
    if isinstance(value, list):
        return [_to_cpu(v) for v in value]
    if isinstance(value, tuple):
        items = [_to_cpu(v) for v in value]
        return tuple(items) if type(value) is tuple else type(value)(items)
    if isinstance(value, dict):
        return {k: _to_cpu(v) for k, v in value.items()}
    return value


def _off_device(value, device_type: str) -> Optional[str]:
    import torch

    if isinstance(value, torch.Tensor):
        return None if value.device.type == device_type else f"an output is on {value.device}"
    if isinstance(value, (list, tuple)):
        for v in value:
            problem = _off_device(v, device_type)
            if problem:
                return problem
    return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]


def run_op(op, device_type: str) -> Dict[str, object]:
    import torch

    name = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
    if torch.float32 not in op.supported_dtypes("cpu"):
        return {"op": name, "verdict": "not applicable", "reason": "no float32 on the CPU"}
    if UNINITIALISED.search(op.name):
        return {"op": name, "verdict": "not comparable", "reason": "uninitialised output"}
    try:
        samples = list(op.sample_inputs("cpu", torch.float32, requires_grad=False))
    except Exception as exc:
        return {"op": name, "verdict": "not applicable",
                "reason": f"sample_inputs failed: {_first_line(exc)}"}
    ran_on_cpu = 0
    for k, sample in enumerate(samples):
        d_input = _move(sample.input, device_type)
        d_args = _move(sample.args, device_type)
        d_kwargs = _move(sample.kwargs, device_type)
        torch.manual_seed(k)
        try:
            expected = op(sample.input, *sample.args, **sample.kwargs)
            cpu_exc = None
        except Exception as exc:
            cpu_exc = exc
        torch.manual_seed(k)
        try:
            actual = op(d_input, *d_args, **d_kwargs)
            dev_exc = None
        except Exception as exc:
            dev_exc = exc
        if cpu_exc is not None:
            if dev_exc is None:
                return {"op": name, "verdict": "fail", "sample": k,
                        "reason": f"the CPU raised {_first_line(cpu_exc)}, the device did not"}
            continue
        ran_on_cpu += 1
        if dev_exc is not None:
            return {"op": name, "verdict": "error", "sample": k, "reason": _first_line(dev_exc)}
        # a factory sample without a device argument makes CPU tensors everywhere
        problem = _off_device(actual, device_type) if _on_device(
            (d_input, d_args, d_kwargs), device_type) else None
        if problem:
            return {"op": name, "verdict": "fail", "sample": k, "reason": problem}
        try:
            torch.testing.assert_close(_to_cpu(actual), expected, atol=ATOL, rtol=RTOL,
                                       equal_nan=True)
        except Exception as exc:
            text = " ".join(str(exc).split())
            return {"op": name, "verdict": "fail", "sample": k, "reason": text[:300]}
    if ran_on_cpu == 0:
        return {"op": name, "verdict": "not applicable",
                "reason": f"all {len(samples)} samples fail on the CPU"}
    return {"op": name, "verdict": "pass", "samples": ran_on_cpu}


def run_gradcheck(op, device_type: str) -> Dict[str, object]:
    """Slow-mode gradcheck of the op's first float64 sample, on the CPU and on the device."""
    import torch
    from torch.utils import _pytree as pytree

    name = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
    if not op.supports_autograd or torch.float64 not in op.supported_dtypes("cpu"):
        return {"op": name, "verdict": "not applicable", "reason": "no float64 autograd"}
    try:
        sample = next(iter(op.sample_inputs("cpu", torch.float64, requires_grad=True)))
    except Exception as exc:
        return {"op": name, "verdict": "not applicable",
                "reason": f"sample_inputs failed: {_first_line(exc)}"}

    def check(tree):
        leaves, spec = pytree.tree_flatten(tree)
        slots = [i for i, x in enumerate(leaves)
                 if isinstance(x, torch.Tensor) and x.requires_grad]

        def fn(*inputs):
            filled = list(leaves)
            for i, x in zip(slots, inputs):
                filled[i] = x
            inp, args, kwargs = pytree.tree_unflatten(filled, spec)
            out = op.gradcheck_wrapper(op.get_op(), inp, *args, **kwargs)
            return sample.output_process_fn_grad(out)

        try:
            ok = torch.autograd.gradcheck(fn, tuple(leaves[i] for i in slots),
                                          fast_mode=False, check_batched_grad=False,
                                          raise_exception=True)
            return "pass" if ok else "fail", ""
        except Exception as exc:
            return "raised", _first_line(exc)

    def to_device(x):
        if isinstance(x, torch.Tensor):
            return x.detach().to(device_type).requires_grad_(x.requires_grad)
        return _move(x, device_type)

    tree = (sample.input, sample.args, sample.kwargs)
    cpu, cpu_why = check(tree)
    if not any(isinstance(x, torch.Tensor) and x.requires_grad
               for x in pytree.tree_leaves(tree)):
        return {"op": name, "verdict": "not applicable", "reason": "no differentiable input"}
    dev, dev_why = check(pytree.tree_map(to_device, tree))
    if cpu == "raised" and dev == "raised":
        return {"op": name, "verdict": "pass", "note": f"raised on both: {cpu_why}"}
    if cpu != "pass":
        return {"op": name, "verdict": "not applicable", "reason": f"CPU: {cpu} {cpu_why}"}
    if dev == "pass":
        return {"op": name, "verdict": "pass", "samples": 1}
    return {"op": name, "verdict": "fail" if dev == "fail" else "error", "reason": dev_why}


def worker(profile_name: str, mode: str = "values") -> int:
    """Read op indices on stdin, print one JSON line per op (after a 'start' line)."""
    import warnings

    warnings.filterwarnings("ignore")
    from torchparity.devices.emulator import activate
    from torchparity.devices.profiles import load_profile

    profile = load_profile(profile_name)
    activate(profile)  # before torch.testing._internal is imported
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    torch.set_num_threads(1)
    print(json.dumps({"ready": len(op_db)}), flush=True)
    for line in sys.stdin:
        i = int(line)
        print(json.dumps({"start": i}), flush=True)
        try:
            run = run_gradcheck if mode == "gradcheck" else run_op
            result = run(op_db[i], profile.device_type)
        except Exception as exc:  # the harness itself
            result = {"op": op_db[i].name, "verdict": "error",
                      "reason": f"harness: {_first_line(exc)}"}
        result["index"] = i
        print(json.dumps(result), flush=True)
    return 0


# ------------------------------------------------------------------------- parent side


class _Worker:
    """A worker subprocess; a thread turns its stdout into a queue of parsed lines."""

    def __init__(self, profile: str, mode: str):
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker", "--profile", profile,
             "--mode", mode],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, bufsize=1)
        self.lines: "queue.Queue[Optional[dict]]" = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.read(timeout=300)

    def _pump(self) -> None:
        for line in self.proc.stdout:
            try:
                self.lines.put(json.loads(line))
            except json.JSONDecodeError:
                continue  # something else printed to stdout
        self.lines.put(None)  # end of output: the worker exited

    def read(self, timeout: float) -> Optional[dict]:
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            return None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def _drive(todo: "queue.Queue[tuple]", results: List[dict], profile: str, mode: str) -> None:
    w: Optional[_Worker] = None
    while True:
        try:
            i, name = todo.get_nowait()
        except queue.Empty:
            break
        if w is None:
            w = _Worker(profile, mode)
        w.proc.stdin.write(f"{i}\n")
        w.proc.stdin.flush()
        first = w.read(timeout=60)
        limit = OP_TIMEOUT_S[mode]
        result = w.read(timeout=limit) if first is not None else None
        if result is None:
            crashed = w.proc.poll() is not None
            w.close()
            w = None
            result = {"op": name, "index": i, "verdict": "crash" if crashed else "timeout",
                      "reason": "the worker died" if crashed else f"over {limit:.0f} s"}
        results.append(result)
    if w is not None:
        w.proc.stdin.close()
        w.close()


def sweep(ops: Optional[List[str]] = None, workers: int = 2, profile: str = "allow-all",
          mode: str = "values") -> dict:
    from torch.testing._internal.common_methods_invocations import op_db

    todo: "queue.Queue[tuple]" = queue.Queue()
    for i, op in enumerate(op_db):
        if ops is None or op.name in ops:
            todo.put((i, op.name))
    results: List[dict] = []
    start = time.time()
    threads = [threading.Thread(target=_drive, args=(todo, results, profile, mode))
               for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    results.sort(key=lambda r: r["index"])
    counts: Dict[str, int] = {}
    for r in results:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    ran = len(results) - counts.get("not applicable", 0) - counts.get("not comparable", 0)
    agreement = counts.get("pass", 0) / ran if ran else 0.0
    return {"results": results, "counts": counts, "ran_on_cpu": ran, "agreement": agreement,
            "seconds": time.time() - start}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--ops", help="comma-separated OpInfo names (default: all)")
    parser.add_argument("--profile", default="allow-all")
    parser.add_argument("--mode", choices=["values", "gradcheck"], default="values",
                        help="values: float32 outputs vs the CPU (default); gradcheck: slow "
                             "gradcheck of the first float64 sample on both")
    parser.add_argument("--json", help="write the full results here")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args.profile, args.mode)
    import warnings

    warnings.filterwarnings("ignore")
    ops = args.ops.split(",") if args.ops else None
    report = sweep(ops, args.workers, args.profile, args.mode)
    for r in report["results"]:
        if r["verdict"] not in ("pass", "not applicable"):
            print(f"{r['verdict']:15} {r['op']}: {r.get('reason', '')}")
    counts = ", ".join(f"{v} {k}" for k, v in sorted(report["counts"].items()))
    print(f"\n{len(report['results'])} OpInfos in {report['seconds']:.0f} s: {counts}")
    print(f"agreement: {report['agreement']:.1%} of {report['ran_on_cpu']} ops that run on the "
          "CPU (not comparable ones excluded)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
