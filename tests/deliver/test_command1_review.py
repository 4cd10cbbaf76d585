"""Issue 46, must-show 4: the sentence kinds a reviewer struck in README command 1's report
(tests/data/command1-review-46.yaml), each against a row that makes the old sentence false."""

from torchparity.deliver import narrative as nv


def _case(sid, dtype, status, cause=None, detail=""):
    return {"id": sid, "dtype": dtype, "status": status, "cause": cause, "detail": detail, "metric": None}


def _api(name, **analysis):
    a = {"implementation": "python_function", "device_involvement": "indirect", "kind": "function"}
    a.update(analysis)
    return {"name": name, "analysis": a, "scenarios": [_case("a", "float32", "pass")],
            "verdict": {"status": "supported", "category": "1.1①"}}


def test_an_indirect_api_is_never_said_to_act_on_device_tensors():
    """D1: emit_itt (a context manager, host-only evidence) and enter_dual_level (no device op
    of its own) were "作用于设备张量"; only an API whose own code issued device operators is."""
    cm = _api("torch.autograd.profiler.emit_itt", kind="class", implementation="python_class", harness=True)
    zh = nv.nature(cm["analysis"], "zh", cm)
    assert "作用于设备张量" not in zh and "作用于其包裹的代码" in zh
    assert "acting on device tensors" not in nv.nature(cm["analysis"], "en", cm)
    level = _api("torch.autograd.forward_ad.enter_dual_level")
    zh = nv.nature(level["analysis"], "zh", level)
    assert "作用于设备张量" not in zh and "自身不下发设备算子" in zh
    fn = _api("torch.autograd.functional.jacobian", harness=True)
    assert "在设备张量上运行用户函数" in nv.nature(fn["analysis"], "zh", fn)
    direct = _api("torch.autograd.forward_ad.unpack_dual", device_involvement="direct")
    assert "作用于设备张量" in nv.nature(direct["analysis"], "zh", direct)


def _docs(url="https://pytorch.org/docs/2.13/generated/torch.autograd.gradcheck.gradcheck.html"):
    return {"official": {"status": "unknown",
                         "url": "https://pytorch.org/docs/2.13/generated/torch.autograd.gradcheck.html"},
            "vendor": {"present": True, "name": "torch.autograd.gradcheck.gradcheck", "url": url,
                       "chips": {"Atlas A2 训练系列产品": True, "Atlas A3 训练系列产品": True, "Ascend 950DT": False}}}


def test_english_text_names_the_vendor_chips_in_english():
    """D4: report.en.md said "(Atlas A2 训练系列产品 ✔, …)" beside its environment line's
    "Atlas A2 Training Series"."""
    from torchparity.deliver.evidence_md import docs_lines

    en = "\n".join(docs_lines(_docs(), {}, "en"))
    assert "训练系列产品" not in en and "Atlas A2 Training Series ✔" in en and "Ascend 950DT ✘" in en
    assert "Atlas A2 训练系列产品 ✔" in "\n".join(docs_lines(_docs(), {}, "zh"))


def test_the_official_page_is_the_vendor_entrys_link_not_a_guess_beside_it():
    """D5: "按命名规则推断的页面 …/torch.autograd.gradcheck.html" (no such page) stood next to
    the vendor's link to …/torch.autograd.gradcheck.gradcheck.html."""
    from torchparity.deliver.evidence_md import docs_lines

    zh = docs_lines(_docs(), {}, "zh")[0]
    assert "torch.autograd.gradcheck.html" not in zh and "torch.autograd.gradcheck.gradcheck.html" in zh
    guessed = _docs(url=None)
    assert "按命名规则推断的页面" in docs_lines(guessed, {}, "zh")[0]


def test_census_says_when_a_non_generic_class_runs_on_the_device():
    """D6: Ascend's own npu/test_emit_itt.py tests run on the NPU (runs_on_backend), yet the
    class read "非设备通用" / "CPU/CUDA only"."""
    from torchparity.deliver.evidence_md import upstream_tables

    sites = [{"file": "npu/test_emit_itt.py", "class": "TestEmitItt", "test": f"test_{i}", "direct": 1,
              "runs_on_backend": i > 0} for i in range(3)]
    sites += [{"file": "npu/test_npu_only.py", "class": "TestNpu", "test": "test_a", "direct": 1, "runs_on_backend": True}]
    sites.append({"file": "test_autograd.py", "class": "TestAutograd", "test": "test_x", "direct": 1,
                  "runs_on_backend": False})
    tests = {"tree": "t", "direct_sites": 4, "indirect_sites": 0, "tests": sites,
             "classes": [{"file": "npu/test_emit_itt.py", "class": "TestEmitItt", "direct": 3},
                         {"file": "test_autograd.py", "class": "TestAutograd", "direct": 1},
                         {"file": "npu/test_npu_only.py", "class": "TestNpu", "direct": 1}]}
    api = {"name": "torch.autograd.profiler.emit_itt", "analysis": {"device_involvement": "indirect"},
           "verdict": {"category": "1.2①"}, "evidence": {"tests": tests}}
    zh = upstream_tables([api], "zh", "—")
    assert "`TestEmitItt`（3 处，非设备通用，3 个用例中 2 个在设备上运行）" in zh
    assert "`TestAutograd`（1 处，非设备通用，不在设备上运行）" in zh
    assert "`TestNpu`（1 处，非设备通用，在设备上运行）" in zh
    en = upstream_tables([api], "en", "—")
    assert "CPU/CUDA only" not in en and "runs on the device" in en


def test_a_hollow_row_is_told_in_chinese():
    """D2: "原始记录：`hollow: the judged outcome is the same without the API, so this row
    cannot tell a wrong API; matches the CPU: …`" was English prose inside the zh text."""
    same = _case("disabled_noop", "float32", "skip", "not_comparable",
                 "hollow: the judged outcome is the same without the API, so this row cannot tell a wrong API; "
                 "matches the CPU: tensor(shape=(3,), dtype=float32, device=npu)")
    zh = nv.detail_text(same, "zh")
    assert zh == ("不构成检验：去掉该 API 后判定结果不变，该行无法发现 API 的错误；"
                  "与 CPU 一致，返回 `tensor(shape=(3,), dtype=float32, device=npu)`")
    never = _case("itt_is_available", "float32", "skip", "not_comparable",
                  "hollow: the case never calls the API, so this row cannot tell a wrong API; returned False (not compared)")
    assert nv.detail_text(never, "zh") == "不构成检验：用例从未调用该 API，该行无法发现 API 的错误；返回 `False`（不与 CPU 比较）"
    assert nv.detail_text(never, "en").startswith("hollow: the case never calls the API")
    odd = _case("x", "float32", "skip", "not_comparable", "hollow: a reason not known here, so this row cannot tell a wrong API; x")
    assert nv.detail_text(odd, "zh").startswith("原始记录：")


def test_the_sources_tried_are_said_in_chinese_and_a_source_that_gave_cases_applies():
    """D3: the html's zh view read "手写用例: 不适用（原文：`10 scenario(s)`）" (false: the hand
    source gave the 10 cases) and quoted every other source's English reason as 原文."""
    assert nv.source_said("10 scenario(s)", "zh") == "适用：10 个场景"
    assert nv.source_said("not a torch.nn module class", "zh") == "不适用：不是 torch.nn 的模块类"
    assert nv.source_said("not a torch.nn module class", "en") == "not a torch.nn module class"
    assert nv.source_said("a reason nobody wrote down", "zh") == "不适用（原文：`a reason nobody wrote down`）"
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from test_html import _report

    from torchparity.deliver.html import render_html

    report = _report()
    report.apis[1].sources_tried = {"hand": "1 scenario(s)", "module": "not a torch.nn module class"}
    html = render_html(report)
    assert '<span lang="zh">适用：1 个场景</span>' in html and "不是 torch.nn 的模块类" in html
    assert "原文" not in html


def test_the_review_record_adds_up_and_names_a_test_per_defect():
    """tests/data/command1-review-46.yaml: the counts add up, and every defect class has a
    test here that fails on the code of the first reading."""
    from pathlib import Path

    import yaml

    here = Path(__file__).parent
    rec = yaml.safe_load((here.parent / "data" / "command1-review-46.yaml").read_text(encoding="utf-8"))
    first, second = rec["first_reading"], rec["second_reading"]
    assert sum(d["count"] for d in first["defects"]) == first["total_rejectable"] == rec["before_after"]["before"]
    assert sum(d["count"] for d in second["defects"]) == second["total_rejectable"] == rec["before_after"]["after"]
    assert {d["id"] for d in first["defects"]} == {d["id"] for d in second["defects"]}
    names = set(globals())
    for d in second["defects"]:
        file, name = d["test"].split("::")
        assert file.endswith(Path(__file__).name) and name in names, d["test"]
