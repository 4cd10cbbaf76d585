"""Support matrix writers: the JSON contract, the CSV header, the Markdown table, the banner."""

import csv
import io
import json

from torchparity.deliver.sweep_matrix import (
    CSV_HEADER,
    build_matrix,
    merge_matrices,
    render_csv,
    render_markdown,
    write_matrix,
)
from torchparity.results.models import EMULATED_BANNER

CONTRACT_STATUSES = {"pass", "fail", "unsupported", "error", "crash", "timeout", "skip", "partial"}


def rows():
    def r(api, dtype, status, cause=None, detail="", claimed=True, **kw):
        return dict(api=api, variant=api.rsplit(".", 1)[-1], sample_set="sample_inputs",
                    dtype=dtype, status=status, cause=cause, detail=detail, claimed=claimed,
                    metric={"name": "nan_mismatch", "value": 3.0, "threshold": 0.0,
                            "standard": "special_values"} if status == "fail" else None,
                    counts=kw.get("counts"), kind="values", seconds=0.01, note=kw.get("note"))
    return [
        r("torch.dot", "float32", "pass"),
        r("torch.dot", "float64", "unsupported", "dtype_limit", "\"dot_npu\" not implemented for 'Double'"),
        r("torch.dot", "int64", "pass", claimed=False,
          note="OpInfo 'dot' marks test_dtypes for int64: expected failure"),
        r("torch.exp", "float16", "fail", "mismatch", "output: NaN positions differ | really"),
        r("torch.exp", "float32", "partial", "dtype_limit", "2 of 3 samples ran"),
        r("torch.bernoulli", "float32", "skip", "upstream_skip", "non-deterministic",
          counts={"forward": {"not_comparable": 3}}),
        r("torch.bad", "float32", "crash", "crash", "worker died: SIGSEGV"),
    ]


def meta(emulated=False):
    dev = {"type": "npu" if emulated else "cpu", "name": "x", "emulated": emulated,
           "profile": "ascend-a2" if emulated else None, "spec": "emu:ascend-a2" if emulated else "cpu"}
    return {"tool_version": "0.1.0", "created": "2026-01-01T00:00:00+00:00", "device": dev,
            "environment": {"torch": "2.13.0", "python": "3.11", "os": "Linux"},
            "no_scenarios": ["torch.nn.functional.nothing_here"]}


def test_json_contract():
    doc = build_matrix(rows(), meta(emulated=True))
    doc = json.loads(json.dumps(doc))  # JSON-able
    assert doc["device"]["emulated"] is True and doc["device"]["profile"] == "ascend-a2"
    assert doc["emulated"] is True and doc["banner"] == EMULATED_BANNER
    assert len(doc["rows"]) == 7
    for r in doc["rows"]:
        assert {"api", "dtype", "status", "cause", "detail"} <= set(r)
        assert r["status"] in CONTRACT_STATUSES
    assert doc["counts"]["by_status"] == {"pass": 2, "partial": 1, "fail": 1, "unsupported": 1,
                                          "crash": 1, "skip": 1}
    assert doc["counts"]["by_cause"]["dtype_limit"] == 2
    assert doc["no_scenarios"] == ["torch.nn.functional.nothing_here"]
    dot = next(e for e in doc["dtype_discovery"] if e["api"] == "torch.dot")
    assert dot["claimed_not_supported"] == ["float64"] and dot["supported_not_claimed"] == ["int64"]
    assert dot["upstream_notes"] == {"int64": "OpInfo 'dot' marks test_dtypes for int64: expected failure"}
    bern = next(e for e in doc["dtype_discovery"] if e["api"] == "torch.bernoulli")
    assert bern["supported"] == ["float32"]  # skipped comparison, but it ran


def test_csv_header_and_rows():
    text = render_csv(build_matrix(rows(), meta()))
    table = list(csv.reader(io.StringIO(text)))
    assert tuple(table[0]) == CSV_HEADER
    assert table[0][:7] == ["device", "api", "variant", "dtype", "status", "cause", "detail"]
    fail = next(r for r in table[1:] if r[4] == "fail")
    assert fail[8:11] == ["nan_mismatch", "3", "0"]
    assert len(table) == 8


def test_markdown_table_and_banner():
    md = render_markdown(build_matrix(rows(), meta(emulated=True)))
    assert md.splitlines()[0] == EMULATED_BANNER
    assert "| API | variant | int64 | float16 | float32 | float64 |" in md
    assert "| `torch.dot` | dot | ✓ |  | ✓ | – |" in md
    assert "output: NaN positions differ \\| really" in md  # pipes escaped in cells
    assert "torch.nn.functional.nothing_here" in md and "## Counts" in md
    assert "| `torch.dot` | dot | float64 | int64 | OpInfo 'dot' marks test_dtypes" in md
    real = render_markdown(build_matrix(rows(), meta()))
    assert EMULATED_BANNER not in real and real.startswith("# Support matrix")


def test_writes_three_files_and_merges_devices(tmp_path):
    paths = write_matrix(build_matrix(rows(), meta()), tmp_path)
    assert [p.name for p in paths] == ["matrix.json", "matrix.md", "matrix.csv"]
    assert json.loads(paths[0].read_text(encoding="utf-8"))["rows"]
    both = merge_matrices([build_matrix(rows(), meta()), build_matrix(rows(), meta(emulated=True))])
    assert len(both["devices"]) == 2 and len(both["rows"]) == 14 and both["emulated"]
    assert {r["device"] for r in both["rows"]} == {"cpu", "npu (emulated: ascend-a2)"}
    assert "| device | API |" in render_markdown(both)
