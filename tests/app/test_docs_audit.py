"""docs-audit on a small docs tree and the fake kernel sources written for the tests."""

import json
from pathlib import Path

import yaml

from torchparity.app.docs_audit import audit, render_markdown, write_audit
from torchparity.evidence.kernels import extract_kernel_facts

FIX = Path(__file__).resolve().parents[1] / "evidence" / "fixtures" / "kernels"
OPS = {"torch.mm": ["aten.mm"], "torch.dot": ["aten.dot"], "torch.relu": ["aten.relu"],
       "torch.Tensor.relu": ["aten.relu"], "torch.exp": ["aten.exp"],
       "torch.isclose": ["aten.isclose", "aten.abs"], "torch.Tensor.isclose": ["aten.isclose", "aten.abs"]}


CHIPS = ("Atlas A2 训练系列产品", "Atlas A3 训练系列产品", "Ascend 950DT")


def _entry(name, marks, limits):
    rows = "\n".join(f"| <term>{c}</term> | {m} |" for c, m in zip(CHIPS, marks))
    return (f"### {name}\n\n<div style=\"margin-left: 2em\">\n\n"
            f"**原生文档**：[{name}](https://pytorch.org/docs/2.13/generated/{name}.html)\n\n"
            f"**支持情况**：\n\n| 硬件 | 是否支持 |\n| ---- | :----: |\n{rows}\n\n"
            f"**限制与说明**：{limits}\n\n</div>\n\n")


def _run(tmp_path):
    folder = tmp_path / "docs" / "pytorch_2-13-0"
    folder.mkdir(parents=True)
    (folder / "torch.md").write_text("# torch\n\n" + "".join([
        _entry("torch.mm", "✔✔✘", "`input`仅支持fp16，fp32"),  # kernel: bf16 too, and a 950 list
        _entry("torch.dot", "✔✔✔", "`input`仅支持fp16，fp32，fp64"),  # fp64: the kernel refuses
        _entry("torch.relu", "✔✔✔", "`input`仅支持fp16，fp32，int32"),
        _entry("torch.Tensor.relu", "✔✔✔", "`self`仅支持fp32"),  # the same op, another list
        _entry("torch.exp", "✔✔✔", "`input`仅支持fp32"),  # no kernel facts: nothing to say
        _entry("torch.isclose", "✔✔✔", "`input`仅支持fp16，fp32"),  # two ops in the footprint
        _entry("torch.Tensor.isclose", "✔✔✘", "`self`仅支持fp32"),
    ]), encoding="utf-8")
    obs = tmp_path / "obs.yaml"
    obs.write_text(yaml.safe_dump({"observations": [
        {"unsupported": ["aten.relu"], "dtypes": ["float64"], "chips": ["A2"], "source": "seed 000"}]}),
        encoding="utf-8")
    kernels = extract_kernel_facts([FIX / "op-plugin", FIX / "ops-fake"], "2.13.0")
    return audit(tmp_path / "docs", "2.13.0", kernels, observations=obs, compute_ops=OPS.get)


def test_findings_evidence_and_corrected_lines(tmp_path):
    report = _run(tmp_path)
    found = {(f["kind"], f["api"]): f for f in report["findings"]}
    dot = found[("kernel", "torch.dot")]
    assert dot["severity"] == "claims" and dot["chips"]["Atlas A2 训练系列产品"]["docs_only"] == ["float64"]
    assert dot["corrected"] == ["**限制与说明**：`input`仅支持fp16，bf16，fp32"]
    assert any("aclnn_dot.cpp:9 (ASCEND910B_DTYPE_SUPPORT_LIST, :4)@" in e for e in dot["evidence"])
    mm = found[("kernel", "torch.mm")]
    assert mm["severity"] == "denies" and mm["chips"]["Ascend 950DT"]["docs"] == "✘"
    assert mm["corrected"][0] == "| <term>Ascend 950DT</term> | ✔ |"
    # chips whose kernel lists differ get a <term> line each
    assert any(line.startswith("- <term>Ascend 950DT</term>：`input`仅支持bf16，fp32") for line in mm["corrected"])
    # the seed observation stays the override: relu's kernel names float64, A2 refuses it
    relu = found[("kernel", "torch.relu")]
    assert relu["corrected"] == [
        "**限制与说明**：",
        "- <term>Atlas A2 训练系列产品</term>：`input`仅支持int32，fp16，fp32",
        "- <term>Atlas A3 训练系列产品</term>/<term>Ascend 950DT</term>：`input`仅支持int32，fp16，fp32，fp64"]
    assert report["seed_conflicts"] == [{"op": "aten.relu", "chip": "Atlas A2 训练系列产品", "dtypes": "float64",
                                         "kernel": report["seed_conflicts"][0]["kernel"],
                                         "observation": "seed 000"}]
    # torch.relu against torch.Tensor.relu
    both = found[("entries", "torch.Tensor.relu / torch.relu")]
    assert both["chips"]["Atlas A2 训练系列产品"] == {"torch.relu": ["int32", "float16", "float32"],
                                                 "torch.Tensor.relu": ["float32"]}
    assert not any(f["api"] == "torch.exp" for f in report["findings"])
    # a pair whose footprint is not one op is still compared, as the vendor's aten.isclose
    pair = found[("entries", "torch.Tensor.isclose / torch.isclose")]
    assert pair["op"] == "aten.isclose" and pair["chips"]["Ascend 950DT"]["torch.Tensor.isclose"] == "✘"


def test_markdown_and_json_written(tmp_path):
    report = _run(tmp_path)
    md, js = write_audit(report, tmp_path / "out")
    text = md.read_text(encoding="utf-8")
    assert text == render_markdown(report)
    assert "## Docs list dtypes the kernel refuses" in text and "### torch.dot" in text
    assert "`aten.relu` on Atlas A2 训练系列产品" in text  # the seed conflict, named
    assert json.loads(js.read_text(encoding="utf-8"))["findings"] == report["findings"]
