"""Issue 45, second round: the inputs that show kernel bugs reach the cases that lacked
them (module masks / padding / batch-first forms, the runtime gradient's broadcast
operand, NaN / inf samples)."""

from __future__ import annotations

import torch

from torchparity.scenarios.sources import module


def _inputs(api, index):
    cls = module.resolve_quiet(api)
    info = module.info_for(cls)
    return info.module_inputs_func(info, device="cpu", dtype=torch.float32, requires_grad=True,
                                   training=True)[index]


def test_multihead_attention_reaches_its_masks_and_both_layouts():
    ids = {sc.id.split(".")[0] for sc in module.scenarios("torch.nn.MultiheadAttention", None)}
    indices = sorted(int(i[len("input"):]) for i in ids)
    kwargs = [_inputs("torch.nn.MultiheadAttention", i).forward_input.kwargs for i in indices]
    assert any(k.get("attn_mask") is not None for k in kwargs)
    assert any(k.get("key_padding_mask") is not None for k in kwargs)
    firsts = {_inputs("torch.nn.MultiheadAttention", i).constructor_input.kwargs["batch_first"]
              for i in indices}
    assert firsts == {True, False}
    # a per-module cap, not every one of its 64 inputs
    assert len(indices) <= module.INPUTS + module.REACH


def test_an_rnn_reaches_batch_first_and_a_plain_module_keeps_two_inputs():
    ids = {sc.id.split(".")[0] for sc in module.scenarios("torch.nn.LSTM", None)}
    assert any(_inputs("torch.nn.LSTM", int(i[5:])).constructor_input.kwargs["batch_first"]
               for i in ids)
    assert {sc.id.split(".")[0] for sc in module.scenarios("torch.nn.Linear", None)} == {"input0", "input1"}


# outside the project: an in-place masked fill that writes nothing (MultiheadAttention
# turns a boolean mask into an additive one with masked_fill_: the mask is then ignored)
MASK_IGNORED = '''
FAULTS = {"masked-fill-nowhere": "masked_fill_ leaves its input as it was"}
def wrap(fault, op, call, fire=None):
    if str(op) not in ("aten.masked_fill_.Scalar", "aten.masked_fill_.Tensor"):
        return None
    def run(x, mask, value):
        if fire and bool(mask.any()):
            fire()
        return x
    return run
'''


def test_a_device_that_ignores_attention_masks_fails_multihead_attention(emu, tmp_path):
    from torchparity.devices.emulator import faults
    from torchparity.run.execute import execute

    adapter = emu
    path = tmp_path / "mask_ignored.py"
    path.write_text(MASK_IGNORED)
    scs = [sc for sc in module.scenarios("torch.nn.MultiheadAttention", None) if sc.id.endswith(".train")]
    assert all(execute(sc, "float32", adapter)[0].status == "pass" for sc in scs)
    with faults.injecting(["masked-fill-nowhere"], modules=[str(path)]):
        rows = [execute(sc, "float32", adapter)[0] for sc in scs]
    assert any(r.status == "fail" for r in rows), [(r.id, r.status) for r in rows]
