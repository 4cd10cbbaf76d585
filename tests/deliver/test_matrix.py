"""`matrix`: three bundles (two torch versions on A2, one emulated A5 profile) in one table.

The bundles are real `check` outputs (the session's seed bundle) with their environment
and device fields edited, and a few cases turned into refusals as a device would report.
"""

import csv
import io
import json
import os
import subprocess
import sys

import pytest

from torchparity.app.matrix import matrix
from torchparity.deliver.matrix import build, render_csv, render_markdown, vendor_docs
from torchparity.errors import InputError
from torchparity.evidence.vendor_docs import parse_vendor_file
from torchparity.evidence.writer import write_vendor_entry
from torchparity.results.store import load_report

GC = "torch.autograd.gradcheck"
ITT = "torch.autograd.profiler.emit_itt"
UNPACK = "torch.autograd.forward_ad.unpack_dual"


def _variant(seed_bundle, folder, *, torch, device_name, backend=None, cann=None, emulated=False,
             profile=None, chips=None, refuse=()):
    data = json.loads((seed_bundle / "report.json").read_text(encoding="utf-8"))
    env, dev = data["environment"], data["device"]
    env.update(torch=torch, device_name=device_name, backend=backend or {}, cann=cann)
    if chips:
        env["extra"] = {"profile": profile, "chips": chips}
    dev.update(type="npu", name=device_name, emulated=emulated, profile=profile,
               spec=f"emu:{profile}" if emulated else "npu")
    data["banner"] = "emulated: a prediction, not a hardware result" if emulated else None
    for api in data["apis"]:
        hit = False
        for s in api["scenarios"]:
            s["emulated"] = emulated
            for name, sid, dtype, cause, detail in refuse:
                if api["name"] == name and s["id"] == sid and (dtype is None or s["dtype"] == dtype):
                    s.update(status="unsupported", cause=cause, detail=detail)
                    hit = True
        if hit:
            api["verdict"]["status"] = "partial"
            api["verdict"]["causes"] = sorted({s["cause"] for s in api["scenarios"] if s["cause"]})
    folder.mkdir(parents=True)
    (folder / "report.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return folder


DOUBLE = "RuntimeError: \"dot_npu\" not implemented for 'Double'"
ITT_ERR = "RuntimeError: Can't use ITT profiler - PyTorch was compiled without ITT"
HALF = "RuntimeError: \"mul_npu\" not implemented for 'Half'"


@pytest.fixture(scope="module")
def bundles(seed_bundle, tmp_path_factory):
    root = tmp_path_factory.mktemp("bundles")
    a = _variant(seed_bundle, root / "a2-2.7.1", torch="2.7.1+cpu", device_name="Ascend910B3",
                 backend={"torch_npu": "2.7.1"}, cann="8.5.0",
                 refuse=[(GC, "fast_mul", None, "dtype_limit", DOUBLE), (GC, "fast_exp", None, "dtype_limit", DOUBLE),
                         (ITT, "enabled", None, "build_config", ITT_ERR),
                         (ITT, "record_shapes", None, "build_config", ITT_ERR)])
    b = _variant(seed_bundle, root / "a2-2.12.0", torch="2.12.0", device_name="Ascend910B3",
                 backend={"torch_npu": "2.12.0"}, cann="8.5.0")
    c = _variant(seed_bundle, root / "emu-a5", torch="2.12.0+cpu", device_name="ascend-a5 (emulated)",
                 emulated=True, profile="ascend-a5", chips="Ascend 950DT",
                 refuse=[(UNPACK, sid, "float16", "dtype_limit", HALF)
                         for sid in ("device_kept", "square_tangent", "plain_tensor")])
    return [c, a, b]  # deliberately out of order


def test_three_bundles_one_table(bundles):
    m, _ = matrix([str(b) for b in bundles])
    labels = [c.label for c in m.columns]
    assert labels == ["A2 v2.7.1", "A2 v2.12.0", "A5 v2.12.0 (emulated: ascend-a5)"]
    md = render_markdown(m)
    assert "| API | A2 v2.7.1 | A2 v2.12.0 | A5 v2.12.0 (emulated: ascend-a5) |" in md
    assert f"| `{GC}` | ◐ partial 10/12 | ✔ supported 12/12 | ✔ supported 12/12 |" in md
    assert f"| `{UNPACK}` | ✔ supported 7/7 | ✔ supported 7/7 | ◐ partial 4/7 |" in md
    assert md.index("emulated: a prediction, not a hardware result") < md.index("## Bundles")
    # scenario rows carry the cause; the seed-001 layout lists versions per chip group
    assert f"| `{GC}` | `fast_mul` | float64 | ✘ unsupported (dtype_limit) | ✔ pass | ✔ pass |" in md
    section = md.split("(the seed-001 layout)")[1]
    assert section.index("**A2/A3**") < section.index("- v2.7.1") < section.index("- v2.12.0")
    assert "**A5 (emulated)**" in section


def test_csv_is_long_format_and_labels_emulated(bundles):
    m = build([(str(b), load_report(b)) for b in bundles])
    rows = list(csv.DictReader(io.StringIO(render_csv(m))))
    assert len(rows) == len(m.cases) * 3
    emu = [r for r in rows if r["emulated"] == "yes"]
    assert emu and all(r["profile"] == "ascend-a5" and "emulated" in r["column"] for r in emu)
    refused = [r for r in rows if r["status"] == "unsupported"]
    assert {(r["api"], r["scenario"]) for r in refused} >= {(GC, "fast_mul"), (ITT, "enabled")}


def test_vendor_docs_blocks_per_version_and_chip(bundles):
    m = build([(str(b), load_report(b)) for b in bundles])
    docs = vendor_docs(m)
    assert sorted(docs) == ["pytorch_2-12-0", "pytorch_2-7-1"]
    old = docs["pytorch_2-7-1"]
    # gradcheck: refused only in dtype terms -> supported with a limit; emit_itt: build limit -> ✘
    gc = old.split("### torch.autograd.gradcheck.gradcheck\n", 1)[1].split("</div>", 1)[0]
    assert "| <term>Atlas A2 训练系列产品</term> | ✔ |" in gc
    assert "Atlas A3" not in gc and "950DT" not in gc  # not measured: no claim
    assert "fast_mul（fp64）" in gc and "硬件能力限制" in gc
    itt = old.split("### torch.autograd.profiler.emit_itt\n", 1)[1].split("</div>", 1)[0]
    assert "| <term>Atlas A2 训练系列产品</term> | ✘ |" in itt
    new = docs["pytorch_2-12-0"]
    expected = write_vendor_entry(
        UNPACK,
        {"Atlas A2 训练系列产品": True, "Ascend 950DT": True},
        "仅支持fp32；模拟设备预测，未经硬件验证：Ascend 950DT",
        "https://pytorch.org/docs/2.12/generated/torch.autograd.forward_ad.unpack_dual.html")
    assert expected in new
    assert "emulated: a prediction" in new.splitlines()[1]


def test_entries_read_back_with_the_vendor_docs_parser(bundles, tmp_path):
    m = build([(str(b), load_report(b)) for b in bundles])
    path = tmp_path / "torch-autograd.md"
    path.write_text(vendor_docs(m)["pytorch_2-12-0"], encoding="utf-8")
    entries = {e.name: e for e in parse_vendor_file(path, path.name)}
    assert set(entries) >= {UNPACK, "torch.autograd.gradcheck.gradcheck", ITT}
    unpack = entries[UNPACK]
    assert unpack.chips == {"Atlas A2 训练系列产品": True, "Ascend 950DT": True}
    assert unpack.dtypes == ["float32"]  # "仅支持fp32" parsed back
    assert unpack.url == "https://pytorch.org/docs/2.12/generated/torch.autograd.forward_ad.unpack_dual.html"


def test_cli_writes_every_format(bundles, tmp_path):
    out = tmp_path / "m"
    proc = subprocess.run([sys.executable, "-m", "torchparity", "matrix", *map(str, bundles), "--out", str(out)],
                          capture_output=True, text=True, env=dict(os.environ), timeout=300)
    assert proc.returncode == 0, proc.stderr
    for name in ("matrix.md", "matrix.csv", "matrix.html", "vendor-docs/pytorch_2-12-0.md"):
        assert (out / name).exists(), name
    html = (out / "matrix.html").read_text(encoding="utf-8")
    assert 'id="emulated-banner"' in html and "<link" not in html and html.count("<script>") == 1
    assert "A5 v2.12.0 (emulated: ascend-a5)" in html


def test_bad_inputs_are_one_line_errors(tmp_path):
    with pytest.raises(InputError):
        matrix([])
    with pytest.raises(InputError):
        matrix([str(tmp_path)])  # no report.json there
    (tmp_path / "report.json").write_text("{}", encoding="utf-8")
    with pytest.raises(InputError):
        matrix([str(tmp_path)])
