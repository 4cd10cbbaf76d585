"""Docstring examples over a vendor docs list: how many long-tail APIs have runnable ones,
and how they fare against the CPU.

For every API of the docs list: which earlier source covers it (then the docstring source
does not apply), else its docstring example blocks (``scenarios/sources/docstring.py``).
Every block then runs in a worker pool (one case per block, the ``source`` case kind, the
scenario's own timeout) on each ``--device``. Prints per device:

- APIs listed, covered by an earlier source, left over (the long tail), of those with at
  least one ``>>>`` block, and with at least one *runnable* block (a result other than
  ``skip``);
- blocks by status, the not-runnable reasons by kind, and the pass rate of the blocks that
  ran (pass / (ran));
- on ``cpu`` (the CPU against itself) every fail / error / crash / timeout is the tool's
  own: listed, exit status 1.

    python benchmarks/docstring_examples.py [--device cpu] [--device emu:ascend-a2]
        [--prefix torch.autograd] [--limit N] [--every K] [--jobs 1] [--show]
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
import time
import warnings
from typing import Dict, List, Tuple


def plan(names: List[str]) -> Tuple[Dict[str, str], Dict[str, list], Dict[str, str]]:
    """(api -> covering earlier source, api -> docstring scenarios, api -> why none)."""
    from torchparity.api.resolve import maybe_resolve
    from torchparity.scenarios import registry
    from torchparity.scenarios.sources import docstring as D
    from torchparity.scenarios.sources import first_answer

    registry.load_suites()
    covered, found, why = {}, {}, {}
    for api in names:
        try:
            r = maybe_resolve(api)
        except Exception:
            r = None
        if r is None:
            why[api] = "does not resolve"
            continue
        earlier = first_answer(api, r.obj, before="docstring")
        if earlier:
            covered[api] = earlier
            continue
        scs = D.scenarios(api, r.obj)
        if scs:
            found[api] = scs
        else:
            why[api] = D.why_not(api, r.obj)
    return covered, found, why


def run(device: str, found: Dict[str, list], jobs: int) -> List[Tuple[str, str, dict]]:
    from torchparity.devices import get_adapter
    from torchparity.run.pool import WorkerPool
    from torchparity.scenarios.sources import case_for

    adapter = get_adapter(device)
    reason = adapter.unavailable_reason()
    if reason:
        raise SystemExit(f"device {device}: {reason}")
    keys, cases, timeouts = [], [], []
    for api, scs in found.items():
        for sc in scs:
            keys.append((api, sc.id))
            cases.append(case_for(sc, api, "float32"))
            timeouts.append(sc.timeout_s or 60.0)
    out: List[Tuple[str, str, dict]] = [None] * len(cases)  # type: ignore[list-item]

    def on_event(ev):
        api, sid = keys[ev.index]
        if ev.kind == "result" and "result" in ev.payload:
            out[ev.index] = (api, sid, ev.payload["result"])
        else:
            detail = ev.payload.get("harness_error", "") if ev.kind == "result" else ev.detail
            out[ev.index] = (api, sid, {"status": "error" if ev.kind == "result" else ev.kind,
                                        "detail": str(detail)[:300]})

    WorkerPool({"device": adapter.spec, "modules": []}, jobs=jobs).run(cases, timeouts, on_event)
    return [o for o in out if o is not None]


def _reason_kind(detail: str) -> str:
    text = detail.replace("not runnable: ", "")
    if text.startswith("fails on the CPU"):
        m = re.match(r"fails on the CPU: example line \d+ \(.*?\): (\w+)", text)
        return f"fails on the CPU ({m.group(1) if m else 'other'})"
    return re.sub(r":.*| at example line \d+", "", text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", action="append", default=None)
    parser.add_argument("--docs", default="tests/data/ascend-native-api-docs")
    parser.add_argument("--version", default="2.13.0")
    parser.add_argument("--prefix", default="")
    parser.add_argument("--limit", type=int, default=0, help="run only the first N long-tail APIs")
    parser.add_argument("--every", type=int, default=1, help="run every K-th long-tail API (a subset)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--show", action="store_true", help="print every non-pass that ran")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    from torchparity.evidence.vendor_docs import load_vendor_docs

    names = sorted({e.name for e in load_vendor_docs(args.docs, args.version).entries
                    if e.name.startswith(args.prefix)})
    t0 = time.perf_counter()
    covered, found, why = plan(names)
    t_plan = time.perf_counter() - t0
    apis = sorted(found)[:: max(1, args.every)]
    if args.limit:
        apis = apis[: args.limit]
    found = {a: found[a] for a in apis}
    tail = len(names) - len(covered)
    print(f"{len(names)} APIs listed ({args.docs} {args.version}); {len(covered)} covered by an earlier "
          f"source ({', '.join(f'{k} {v}' for k, v in collections.Counter(covered.values()).most_common())}); "
          f"{tail} left over, {len(found)} of them run here with >=1 example block "
          f"(planning {t_plan:.0f} s)")
    print("why the rest have none:", dict(collections.Counter(re.sub(r":.*", "", w) for w in why.values())))
    own = 0
    for device in args.device or ["cpu"]:
        t1 = time.perf_counter()
        rows = run(device, found, args.jobs)
        statuses = collections.Counter(r["status"] for _, _, r in rows)
        ran = [x for x in rows if x[2]["status"] != "skip"]
        ran_apis = {a for a, _, _ in ran}
        passed = sum(1 for x in ran if x[2]["status"] == "pass")
        reasons = collections.Counter(_reason_kind(r.get("detail", "")) for _, _, r in rows if r["status"] == "skip")
        label = " (emulated)" if device.startswith("emu:") else ""
        print(f"\n## {device}{label}: {len(rows)} blocks of {len(found)} APIs, {time.perf_counter() - t1:.0f} s")
        print(f"APIs with a runnable block: {len(ran_apis)}; blocks by status: {dict(sorted(statuses.items()))}")
        if ran:
            print(f"pass rate of the blocks that ran: {passed}/{len(ran)} = {100 * passed / len(ran):.1f} %")
        print("not runnable, by reason:", dict(reasons.most_common()))
        bad = [x for x in ran if x[2]["status"] != "pass"]
        if device == "cpu":
            own += len(bad)
        for api, sid, r in bad if (args.show or device == "cpu") else ():
            print(f"    {api} {sid}: {r['status']} {r.get('cause')}: {r.get('detail', '')[:200]}")
    if own:
        print(f"{own} non-passes of the CPU against itself: the tool's own", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
