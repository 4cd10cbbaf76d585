"""Issue 46 item 6: `review` checks the text against its evidence, not the template only.

The fixtures are the issues of README command 1's run (the session's emu:ascend-a2 check of
the seed APIs), each with one false sentence planted: review, given the bundle (the
report.json above the issue's ``issues/`` folder), names every one; the true issue passes;
without a bundle review says which checks it could not make.
"""

import json
import re
import shutil

import pytest

from torchparity.app.review import review

UNPACK = "torch.autograd.forward_ad.unpack_dual"
GRADCHECK = "torch.autograd.gradcheck"


def _place(tmp_path, bundle, api, text, report=None):
    """The issue ``text`` in ``tmp_path/issues/``, the bundle's report.json (or ``report``)
    beside that folder, as `check` writes them."""
    (tmp_path / "issues").mkdir(exist_ok=True)
    if report is None:
        shutil.copy(bundle / "report.json", tmp_path / "report.json")
    else:
        (tmp_path / "report.json").write_text(json.dumps(report), encoding="utf-8")
    path = tmp_path / "issues" / f"{api}.zh.md"
    path.write_text(text, encoding="utf-8")
    return path


def _issue(bundle, api):
    return (bundle / "issues" / f"{api}.zh.md").read_text(encoding="utf-8")


def _truth(result):
    return [p.zh for p in result.problems if p.part in ("truth", "snippet", "category")]


@pytest.fixture(scope="module")
def bundle(seed_bundle_a2):
    return seed_bundle_a2


@pytest.mark.parametrize("api", [UNPACK, GRADCHECK])
def test_the_true_issue_passes_with_its_bundle(tmp_path, bundle, api):
    result = review(str(_place(tmp_path, bundle, api, _issue(bundle, api))), run=False)
    assert result.problems == [], [p.zh for p in result.problems]
    assert not any("未给出报告包" in w.zh for w in result.warnings)


def _sub(pattern, repl, text, count=1):
    out, n = re.subn(pattern, repl, text, count=count)
    assert n, pattern
    return out


PLANTS = {
    # "实测" for a prediction, and a docs update asked on its strength
    "measured": (UNPACK, lambda t: _sub(r"模拟设备预测 float16 亦通过", "实测 float16 亦通过", t), "实测"),
    "docs_update": (UNPACK, lambda t: _sub(r"待硬件确认", "资料需更新", t), "要求厂商更新资料"),
    # the environment: CANN missing, the chip not said to be emulated, another torch
    "cann": (UNPACK, lambda t: _sub(r"(?m)^- CANN软件版本：.*$", "- CANN软件版本：无", t), "CANN 版本"),
    "not_emulated": (UNPACK, lambda t: _sub(r"(?m)^- 昇腾硬件信息：.*$", "- 昇腾硬件信息：Ascend910B3", t), "模拟设备"),
    "torch": (UNPACK, lambda t: _sub(r"(?m)^(- 安装的对应软件版本：)torch \S+", r"\1torch 2.7.1", t), "torch 版本"),
    # a world where the rows ran in-process
    "world": (UNPACK, lambda t: _sub(r"(?m)^(`torch\.autograd\.forward_ad\.unpack_dual`：Python 函数.*)$",
                                     r"\1该接口在 2 个进程组成的分布式环境中运行。", t), "分布式环境"),
    # docs said to agree where float16 passed outside the documented list
    "docs_agree": (UNPACK, lambda t: _sub(r"(?m)^- 资料与模拟设备预测不一致：.*$", "- 资料与模拟设备预测一致", t), "却写一致"),
    # a limit the facts do not have
    "limit": (UNPACK, lambda t: _sub(r"(?m)^(### 适配方案)$",
                                     r"- `torch.autograd.forward_ad.unpack_dual`：float16 因硬件能力限制无法运行。\n\n\1", t),
              "float16 在设备上通过"),
    # the census misread: upstream tests that run on the device said to be none
    "census": (UNPACK, lambda t: _sub(r"上游已有用例，但在设备上运行的调用处只占 [\d.]+%（不足一半）",
                                      "上游已有用例，但没有在设备上运行的用例", t), "没有在设备上运行的用例"),
    # a verification command that never calls the API
    "command": (UNPACK, lambda t: _sub(r"(?s)```python\n.*?```", "```python\nimport torch\nprint(torch.tanh(torch.ones(2)))  "
                                                               "# tensor([0.7616, 0.7616])\n```", t, 1),
                "没有调用"),
    # the category against the API's own footprint: gradcheck issues aten ops itself
    "no_ops": (GRADCHECK, lambda t: _sub(r"(?m)^(`torch\.autograd\.gradcheck`：.*)$",
                                         r"\1不涉及 —— 其场景中没有设备算子执行。", t), "API 自身在设备上下发了计算算子"),
    "category": (UNPACK, lambda t: t.replace("1.1①", "1.2①"), "1.2①"),
}


@pytest.mark.parametrize("kind", sorted(PLANTS))
def test_every_planted_false_sentence_is_named(tmp_path, bundle, kind):
    api, plant, said = PLANTS[kind]
    result = review(str(_place(tmp_path, bundle, api, plant(_issue(bundle, api)))), run=False)
    found = _truth(result)
    assert any(said in p for p in found), (kind, [p.zh for p in result.problems])
    assert not result.accepted


def test_api_supported_where_both_sides_raised_is_named(tmp_path, bundle):
    """A bundle whose rows pass only because the device and the CPU both raised: the text
    that calls the API supported is false for it."""
    data = json.loads((bundle / "report.json").read_text(encoding="utf-8"))
    api = next(a for a in data["apis"] if a["name"] == UNPACK)
    for s in api["scenarios"]:
        s["detail"] = "raised as expected: RuntimeError: not on this device"
    text = _issue(bundle, UNPACK)
    assert "API 已支持" in text
    result = review(str(_place(tmp_path, bundle, UNPACK, text, report=data)), run=False)
    assert any("均抛出异常" in p for p in _truth(result)), [p.zh for p in result.problems]


def test_without_a_bundle_review_says_what_it_could_not_check(tmp_path, bundle):
    path = tmp_path / "alone.zh.md"
    path.write_text(_issue(bundle, UNPACK), encoding="utf-8")
    result = review(str(path), reports=[], run=False)
    notes = " ".join(w.zh for w in result.warnings)
    assert "未给出报告包" in notes
    for what in ("「实测」与结果来源", "环境信息", "能力限制与事实", "上游用例结论"):
        assert what in notes, notes


def test_a_hardware_text_with_a_cpu_bundle_is_checked_for_the_apis_own_facts(seed_bundle):
    """Seed 001 reviewed with the CPU check's bundle: not the same run, so only the API's
    own facts are checked, and the note says so (seed 001 still passes: tests/deliver/test_review.py)."""
    from support import FIXTURES

    seed = next((FIXTURES / "seeds").glob("001_*.txt"))
    result = review(str(seed), reports=[str(seed_bundle)], run=False)
    assert result.accepted, [p.zh for p in result.problems]
    assert any("另一次运行" in w.zh for w in result.warnings)


def test_the_verdict_on_the_seed_report_covers_every_api_once(bundle):
    """Issue 46: on the tool's own seed report the verdict's 验证策略 listed one API's items,
    the environment came twice, and emit_itt was left out of 资料检查."""
    result = review(str(bundle / "report.zh.md"), reports=[str(bundle)], run=False)
    lines = {part: [(k, t.zh) for k, t in items] for part, items in result.lines.items()}
    flat = [(k, t) for items in lines.values() for k, t in items]
    strategy = next(t for k, t in flat if k == "strategy")
    m = re.match(r"5 张用例表共 (\d+) 个测试项（(\d+) 行）", strategy)
    md = (bundle / "report.zh.md").read_text(encoding="utf-8")
    rows = len(re.findall(r"^\| `[^|]+` \| [^|]+ \| [^|]+ \| [^|]+ \| [^|]+ \| [✔✘–◐]", md, re.M))
    assert m and int(m.group(1)) > 12 and int(m.group(2)) == rows, (strategy, rows)
    assert sum(1 for k, _ in flat if k == "env") == 1
    docs = next(t for k, t in flat if k == "docs")
    for api in ("gradcheck", "gradgradcheck", "emit_itt", "enter_dual_level", "unpack_dual"):
        assert f"{api}：" in docs, docs


def test_a_world_said_of_hollow_world_rows_is_true(tmp_path, bundle):
    """A row that ran in a world and came out hollow (skip: the outcome is the same without
    the API) still ran there: "在 2 个进程组成的分布式环境中运行" is true of it. The same
    sentence over in-process rows is the "world" plant above, and is named."""
    data = json.loads((bundle / "report.json").read_text(encoding="utf-8"))
    api = next(a for a in data["apis"] if a["name"] == UNPACK)
    for s in api["scenarios"]:
        s["id"] = "world2-" + s["id"]
        s["status"], s["cause"] = "skip", "not_comparable"
    text = PLANTS["world"][1](_issue(bundle, UNPACK))
    result = review(str(_place(tmp_path, bundle, UNPACK, text, report=data)), run=False)
    assert not any("分布式环境" in p for p in _truth(result)), [p.zh for p in result.problems]
