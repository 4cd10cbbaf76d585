"""profile build --from-kernels and docs-audit through the console script, on fake sources."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

FIX = Path(__file__).resolve().parents[1] / "evidence" / "fixtures" / "kernels"
CHIPS = ("Atlas A2 训练系列产品", "Atlas A3 训练系列产品", "Ascend 950DT")


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "torchparity", *args], capture_output=True,
                          text=True, env=dict(os.environ), timeout=600)


def _docs(root: Path) -> Path:
    folder = root / "docs" / "pytorch_2-13-0"
    folder.mkdir(parents=True)
    rows = "\n".join(f"| <term>{c}</term> | ✔ |" for c in CHIPS)
    (folder / "torch.md").write_text(
        "# torch\n\n### torch.mm\n\n<div style=\"margin-left: 2em\">\n\n"
        "**原生文档**：[torch.mm](https://pytorch.org/docs/2.13/generated/torch.mm.html)\n\n"
        f"**支持情况**：\n\n| 硬件 | 是否支持 |\n| ---- | :----: |\n{rows}\n\n"
        "**限制与说明**：`input`仅支持fp16，fp32\n\n</div>\n", encoding="utf-8")
    return root / "docs"


@pytest.mark.slow
def test_build_from_kernels_then_audit(tmp_path):
    docs, out = _docs(tmp_path), tmp_path / "profiles"
    proc = _cli("profile", "build", "--from-ascend-docs", str(docs), "--torch-version", "2.13.0",
                "--from-kernels", str(FIX / "op-plugin"), "--from-kernels", str(FIX / "ops-fake"),
                "--no-observations", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    a2 = yaml.safe_load((out / "ascend-a2.yaml").read_text(encoding="utf-8"))
    assert a2["ops"]["aten.mm"]["dtypes"] == ["float16", "bfloat16", "float32"]
    assert "docs say float16, float32" in a2["ops"]["aten.mm"]["note"]
    facts = out / "ascend-kernels.yaml"
    assert "ops-fake matmul/common/op_api/cube_util.cpp:2" in facts.read_text(encoding="utf-8")
    proc = _cli("docs-audit", "--vendor-docs", str(docs), "--torch-version", "2.13.0",
                "--kernel-facts", str(facts), "--out", str(tmp_path / "audit"))
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "audit" / "docs-audit.md").read_text(encoding="utf-8")
    assert "### torch.mm" in text
    assert "- <term>Atlas A2 训练系列产品</term>/<term>Atlas A3 训练系列产品</term>：`input`仅支持fp16，bf16，fp32" in text
    assert "- <term>Ascend 950DT</term>：`input`仅支持bf16，fp32" in text


def test_kernel_sources_without_op_plugin_is_one_line(tmp_path):
    proc = _cli("profile", "build", "--from-ascend-docs", str(_docs(tmp_path)), "--torch-version", "2.13.0",
                "--from-kernels", str(FIX / "ops-fake"), "--out", str(tmp_path / "p"))
    assert proc.returncode == 2 and "op-plugin" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
