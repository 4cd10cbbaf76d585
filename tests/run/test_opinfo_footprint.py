"""An OpInfo row's footprint is recorded the way its samples were judged: an in-place
sample on a leaf that requires grad is retried without autograd, and a footprint no sample
ran to its end for is "not recorded", never host-only (issue 48: F.leaky_relu_ was filed
device-independent from an empty footprint)."""

import json
import subprocess
import sys


def test_an_in_place_opinfo_api_records_its_own_kernel(tmp_path):
    out = tmp_path / "o"
    proc = subprocess.run([sys.executable, "-m", "torchparity", "check", "torch.nn.functional.leaky_relu_",
                           "--device", "cpu", "--max-samples", "2", "--dtypes", "float32", "--out", str(out),
                           "-q"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    api = json.loads((out / "report.json").read_text(encoding="utf-8"))["apis"][0]
    assert api["verdict"]["status"] == "supported", api["verdict"]
    assert {s["evidence"] for s in api["scenarios"]} == {"device-compute"}
    assert any(e["op"] == "aten.leaky_relu_" for e in api["analysis"]["footprint"]), api["analysis"]["footprint"]
