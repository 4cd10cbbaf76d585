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
