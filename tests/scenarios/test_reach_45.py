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
