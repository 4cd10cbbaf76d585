"""Profiles generated from vendor docs: the rules, on a small docs tree, and the shipped ones."""

from pathlib import Path

import pytest
import yaml

from torchparity.app.profile_build import KERNEL_CHIP, KERNELS, build_profiles
from torchparity.devices.profiles import dump_profile, load_profile
from torchparity.errors import InputError
from torchparity.evidence.kernels import extract_kernel_facts, load_kernel_facts

DATA = Path(__file__).resolve().parents[1] / "data" / "ascend-native-api-docs"
CHIPS = ("Atlas A2 训练系列产品", "Atlas A3 训练系列产品", "Ascend 950DT")


def _entry(name, marks, limits=""):
    rows = "\n".join(f"| <term>{c}</term> | {m} |" for c, m in zip(CHIPS, marks))
    lim = f"\n**限制与说明**：{limits}\n" if limits else ""
    return (f"### {name}\n\n<div style=\"margin-left: 2em\">\n\n"
            f"**原生文档**：[{name}](https://pytorch.org/docs/2.12/generated/{name}.html)\n\n"
            f"**支持情况**：\n\n| 硬件 | 是否支持 |\n| ---- | :----: |\n{rows}\n{lim}\n</div>\n\n")


@pytest.fixture
def docs(tmp_path):
    folder = tmp_path / "pytorch_2-12-0"
    folder.mkdir()
    text = "# torch\n\n" + "".join([
        _entry("torch.dot", "✔✔✔", "`input`仅支持fp16，fp32"),
        _entry("torch.inner", "✔✔✘", "`input`仅支持fp32，fp64"),  # same op, another list
        _entry("torch.mm", "✔✔✘", "`input`仅支持fp16，fp32"),
        _entry("torch.exp", "✔✔✔"),  # no limit
        _entry("torch.autograd.profiler.emit_itt", "✘✘✘"),
        _entry("torch.nn.functional.normalize", "✔✔✔", "`input`仅支持fp32"),  # two ops
    ])
    (folder / "torch.md").write_text(text, encoding="utf-8")
    return tmp_path


OPS = {"torch.dot": ["aten.dot"], "torch.inner": ["aten.dot"], "torch.mm": ["aten.mm"],
       "torch.exp": ["aten.exp"], "torch.nn.functional.normalize": ["aten.linalg_vector_norm", "aten.div"]}


def test_rules_on_a_small_docs_tree(docs, tmp_path):
    obs = tmp_path / "obs.yaml"
    obs.write_text(yaml.safe_dump({"observations": [
        {"unsupported": ["aten.exp", "aten.cosh"], "dtypes": ["float64"], "chips": ["A2"], "source": "bench"}]}),
        encoding="utf-8")
    profiles = build_profiles(docs, "2.12.0", observations=obs, compute_ops=OPS.get)
    a2, dt = profiles["ascend-a2"], profiles["ascend-950dt"]
    # entries reaching one op are united, and the disagreement is noted
    assert a2.ops["aten.dot"].dtypes == ["float16", "float32", "float64"]
    assert a2.ops["aten.dot"].note and "torch.inner" in a2.ops["aten.dot"].source
    # a chip marked ✘ in the only entry has no kernel for the op
    assert dt.ops["aten.mm"].supported is False and not dt.allows("aten.mm", "float32")
    assert dt.ops["aten.dot"].dtypes == ["float16", "float32"]  # torch.inner is ✘ there
    # an API with two compute ops lends nothing; an undocumented op stays allowed
    assert "aten.div" not in a2.ops and a2.allows("aten.div", "float64")
    # observations: refused dtypes removed, also from undocumented ops
    assert not a2.allows("aten.exp", "float64") and a2.allows("aten.exp", "float32")
    assert not a2.allows("aten.cosh", "float64") and a2.allows("aten.cosh", "float16")
    assert profiles["ascend-a3"].allows("aten.exp", "float64")
    assert a2.features.itt is False
    # a generated profile loads back unchanged
    path = tmp_path / "a2.yaml"
    path.write_text(dump_profile(a2), encoding="utf-8")
    assert load_profile(path).ops == a2.ops


def test_kernel_lists_win_over_docs_and_observations_over_both(docs, tmp_path):
    fix = Path(__file__).resolve().parents[1] / "evidence" / "fixtures" / "kernels"
    kernels = extract_kernel_facts([fix / "op-plugin", fix / "ops-fake"], "2.13.0")
    obs = tmp_path / "obs.yaml"
    obs.write_text(yaml.safe_dump({"observations": [
        {"unsupported": ["aten.relu", "aten.exp"], "dtypes": ["float64"], "chips": ["A2"], "source": "seed"}]}),
        encoding="utf-8")
    ops = dict(OPS, **{"torch.relu": ["aten.relu"]})
    profiles = build_profiles(docs, "2.12.0", observations=obs, kernels=kernels,
                              cann_kernels={"8.5.0": kernels}, compute_ops=ops.get)
    a2, dt = profiles["ascend-a2"], profiles["ascend-950dt"]
    # the docs say fp16, fp32 for torch.mm; the kernel takes bfloat16 too, and the docs are noted
    assert a2.ops["aten.mm"].dtypes == ["float16", "bfloat16", "float32"]
    assert "kernel aclnnMm" in a2.ops["aten.mm"].source and "docs say float16, float32" in a2.ops["aten.mm"].note
    # 950DT: ✘ in the docs, but the kernel has a list there
    assert dt.allows("aten.mm", "bfloat16") and "docs say ✘" in dt.ops["aten.mm"].note
    # a kernel list naming float64, refused on hardware: the observation wins, the conflict is noted
    relu = a2.ops["aten.relu"]
    assert not a2.allows("aten.relu", "float64") and a2.allows("aten.relu", "int32")
    assert "conflict" in relu.note and "float64" in relu.note
    assert profiles["ascend-a3"].allows("aten.relu", "float64")
    # AiCpu-only dtypes: supported, marked slow
    assert a2.ops["aten.abs"].aicpu_dtypes == ["int16", "float64"] and a2.allows("aten.abs", "int16")
    # an op without kernel facts keeps its docs rule
    assert a2.ops["aten.exp"].source.startswith("docs torch.exp") and not a2.allows("aten.exp", "float64")
    assert a2.generated["kernel_ops"] == "12" and "ops-fake@" in a2.generated["kernels"]
    # the output tensor's check, with the dtype op-plugin gives the output: float64 refused, in
    # aclnn's words; op-plugin's own TORCH_CHECK refuses float64 before the kernel, in its words
    assert a2.allows("aten.logaddexp", "bfloat16") and not a2.allows("aten.logaddexp", "float64")
    (out,) = a2.ops["aten.logaddexp"].refusals
    assert out.dtypes == ["int32", "float64"] and "result_type(self, other)" in out.source
    assert not dt.allows("aten.logaddexp", "bfloat16")  # the 950's out list has no bfloat16 (V1)
    assert a2.allows("aten.upsample_bilinear2d", "float32") and not a2.allows("aten.upsample_bilinear2d", "float64")
    (up,) = a2.ops["aten.upsample_bilinear2d"].refusals
    assert up.message == "upsample_bilinear2d: no float64 here" and "KernelNpuOpApi.cpp:8@" in up.source


def test_an_undecided_kernel_check_leaves_the_op_silent(docs, tmp_path):
    """A check the reader could not follow makes no rule, and the docs' rule does not come
    back in its place: the op is silent (predict says unknown), not allowed by the docs."""
    from torchparity.evidence.kernels import ChipKernel

    fix = Path(__file__).resolve().parents[1] / "evidence" / "fixtures" / "kernels"
    kernels = extract_kernel_facts([fix / "op-plugin", fix / "ops-fake"], "2.13.0")
    kernels.ops["aten.dot"].chips["dav_2201"] = ChipKernel(
        source="ops-fake math/dot/op_api/aclnn_dot.cpp:9", undecided="IsX() not read")
    obs = tmp_path / "obs.yaml"
    obs.write_text(yaml.safe_dump({"observations": []}), encoding="utf-8")
    profiles = build_profiles(docs, "2.12.0", observations=obs, kernels=kernels,
                              cann_kernels={"8.5.0": kernels}, compute_ops=OPS.get)
    a2, dt = profiles["ascend-a2"], profiles["ascend-950dt"]
    assert a2.op_support("aten.dot") is None  # the docs say fp16, fp32, fp64: not kept
    assert dt.ops["aten.dot"].dtypes == ["float16", "bfloat16", "float32"]  # read there
    assert "aten.exp" in a2.ops  # no kernel fact at all: the docs' rule stays


def test_a_profile_per_chip_and_cann(docs, tmp_path):
    """ascend-a2 takes the kernel facts of its CANN release and the observations made there;
    ascend-a2-latest the newest kernels, where an A2 path without a dtype check refuses
    nothing, and not the 8.5.0 observations."""
    fix = Path(__file__).resolve().parents[1] / "evidence" / "fixtures" / "kernels"
    newest = extract_kernel_facts([fix / "op-plugin", fix / "ops-fake"], "2.13.0")
    old = newest.model_copy(deep=True)
    old.cann = "8.5.0"
    old.ops["aten.linalg_vector_norm"].chips["dav_2201"] = old.ops["aten.linalg_vector_norm"].chips["dav_3510"]
    obs = tmp_path / "obs.yaml"
    obs.write_text(yaml.safe_dump({"observations": [
        {"unsupported": ["aten.neg"], "dtypes": ["int32"], "chips": ["A2"], "cann": "8.5.0", "source": "seed"}]}),
        encoding="utf-8")
    profiles = build_profiles(docs, "2.12.0", observations=obs, kernels=newest,
                              cann_kernels={"8.5.0": old}, compute_ops=OPS.get)
    a2, latest = profiles["ascend-a2"], profiles["ascend-a2-latest"]
    assert a2.generated["cann"] == "8.5.0" and latest.generated["cann"].startswith("none")
    assert not a2.allows("aten.linalg_vector_norm", "float64") and "CANN 8.5.0" in a2.ops["aten.linalg_vector_norm"].source
    norm = latest.ops["aten.linalg_vector_norm"]
    assert norm.dtypes is None and "taken as a choice" in norm.source
    assert not a2.allows("aten.neg", "int32") and "on CANN 8.5.0" in a2.ops["aten.neg"].source
    assert latest.allows("aten.neg", "int32")


def test_unknown_chip_and_bad_observations(docs, tmp_path):
    with pytest.raises(InputError):
        build_profiles(docs, "2.12.0", chips=["Z9"], observations=None, compute_ops=OPS.get)
    bad = tmp_path / "obs.yaml"
    bad.write_text("observations: [{dtypes: [float64]}]\n", encoding="utf-8")
    with pytest.raises(InputError, match="obs.yaml"):
        build_profiles(docs, "2.12.0", observations=bad, compute_ops=OPS.get)
@pytest.mark.slow
def test_shipped_profiles_rebuild_identically():
    """The shipped A2, A3 and 950DT profiles are what the docs data, the shipped kernel facts
    and the observations give (one build: the docs footprints are computed once)."""
    shipped = {name: load_profile(name) for name in KERNEL_CHIP}
    a2 = shipped["ascend-a2"]
    version = a2.generated["docs"].rsplit("pytorch_", 1)[1].replace("-", ".")
    assert "--kernel-facts" in a2.generated["command"]
    rebuilt = build_profiles(DATA, version, kernels=load_kernel_facts(KERNELS))
    for name, profile in shipped.items():
        assert dump_profile(rebuilt[name]) == Path(profile.path).read_text(encoding="utf-8"), name
    # the kernel list wins over the docs: mm in bfloat16 on A2 ("input仅支持fp16，fp32" in the docs)
    mm = shipped["ascend-a2"].ops["aten.mm"]
    assert shipped["ascend-a2"].allows("aten.mm", "bfloat16") and "kernel aclnnMm" in mm.source
    assert "docs say" in mm.note


def test_c10d_rules_follow_the_hccl_facts_with_kernel_facts(docs, tmp_path):
    """With kernel facts, a c10d op takes what the HCCL facts say per chip (docs noted where
    they differ), an op the facts refuse is unsupported, and without kernel facts the docs
    rule stays."""
    folder = docs / "pytorch_2-12-0"
    (folder / "dist.md").write_text("# torch.distributed\n\n" + "".join([
        _entry("torch.distributed.all_gather", "✔✔✔", "`tensor`仅支持int32，fp32"),
        _entry("torch.distributed.all_reduce", "✔✔✘", "`tensor`仅支持fp32"),
    ]), encoding="utf-8")
    hccl = tmp_path / "hccl.yaml"
    hccl.write_text(yaml.safe_dump({
        "repo": "Ascend/pytorch", "commit": "ab" * 20, "chips": {"dav_2201": "A2/A3", "dav_3510": "950"},
        "facts": {"map": "HCCLUtils.cpp:49"},
        "ops": {"c10d.allgather_": {"call": "ProcessGroupHCCL::allgather", "chips": {
                    "dav_2201": {"dtypes": ["bool", "int64", "float32"], "source": "ProcessGroupHCCL.cpp:10"},
                    "dav_3510": {"dtypes": ["int64", "float64"], "source": "ProcessGroupHCCL.cpp:10"}}},
                "c10d.allreduce_": {"call": "ProcessGroupHCCL::allreduce", "chips": {
                    "dav_3510": {"dtypes": ["float32", "float64"], "source": "ProcessGroupHCCL.cpp:20"}}},
                "c10d.recv_any_source_": {"call": "ProcessGroupHCCL::recvAnysource",
                                          "refused": "ProcessGroupHCCL.cpp:30"}}}), encoding="utf-8")
    kernels = extract_kernel_facts([Path(__file__).resolve().parents[1] / "evidence" / "fixtures" / "kernels"
                                    / d for d in ("op-plugin", "ops-fake")], "2.13.0")
    ops = dict(OPS, **{"torch.distributed.all_gather": ["c10d.allgather_"],
                       "torch.distributed.all_reduce": ["c10d.allreduce_"]})
    profiles = build_profiles(docs, "2.12.0", observations=None, kernels=kernels, hccl=hccl,
                              compute_ops=ops.get)
    a2, dt = profiles["ascend-a2"], profiles["ascend-950dt"]
    ag = a2.ops["c10d.allgather_"]
    assert a2.allows("c10d.allgather_", "int64") and not a2.allows("c10d.allgather_", "int32")
    assert "Ascend/pytorch@abababababab ProcessGroupHCCL.cpp:10" in ag.source
    assert "docs say int32, float32" in ag.note and "the HCCL source is followed" in ag.note
    assert dt.allows("c10d.allgather_", "float64") and not dt.allows("c10d.allgather_", "bool")
    # no HCCL fact for the chip: the docs rule stays (A2: float32 only); 950DT ✘ in the docs, HCCL takes it
    assert a2.ops["c10d.allreduce_"].source.startswith("docs ") and not a2.allows("c10d.allreduce_", "int64")
    assert dt.allows("c10d.allreduce_", "float64") and "docs say ✘" in dt.ops["c10d.allreduce_"].note
    assert a2.ops["c10d.recv_any_source_"].supported is False
    assert a2.generated["hccl_ops"] == "2" and dt.generated["hccl_ops"] == "3"
    # without kernel facts the c10d rules are the docs'
    plain = build_profiles(docs, "2.12.0", observations=None, hccl=hccl, compute_ops=ops.get)["ascend-a2"]
    assert not plain.allows("c10d.allgather_", "int64") and "c10d.recv_any_source_" not in plain.ops


def test_shipped_c10d_rules_are_the_hccl_process_group_s():
    """The shipped c10d rules follow torch_npu's ProcessGroupHCCL (sources/ascend-hccl.yaml):
    DDP's int64 all_gather is taken on A2 (the docs list left int64 out), reductions refuse
    float64 below Ascend950 (checkSupportedDataType) and take it on the 950DT."""
    a2, dt = load_profile("ascend-a2"), load_profile("ascend-950dt")
    assert a2.allows("c10d.allgather_", "int64") and "ProcessGroupHCCL.cpp" in a2.ops["c10d.allgather_"].source
    assert "docs say" in a2.ops["c10d.allgather_"].note
    assert not a2.allows("c10d.allreduce_", "float64") and dt.allows("c10d.allreduce_", "float64")
    assert not a2.allows("c10d.reduce_scatter_", "bool") and a2.allows("c10d.allreduce_", "bool")
    assert a2.allows("c10d.alltoall_base_", "int64")  # the docs said float32 only
