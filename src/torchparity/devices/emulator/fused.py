"""Ops ATen routes every accelerator to but implements only for CUDA.

``torch.nn.LSTM``/``GRU`` (and their cells) on a non-CPU device call the fused cell
kernels ``_thnn_fused_lstm_cell`` / ``_thnn_fused_gru_cell`` and their backward ops, which
have no CPU kernel. Here they are written with ordinary CPU ops; each runs through the
generic fallback machinery (profile checks, CPU views, results mapped back), with the
function below standing in for the missing CPU kernel.

Workspace layouts (what forward saves for backward): LSTM ``[i, f, g, o]`` (the activated
gates), GRU ``[r, z, n, hx, hn]``.
"""

from __future__ import annotations

import torch

from .dispatch import direct_kernel, register_plan

aten = torch.ops.aten


def _add(a, b):
    return a if b is None else a + b


def lstm_cell(input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    gates = _add(_add(input_gates, input_bias), _add(hidden_gates, hidden_bias))
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = f * cx + i * g
    hy = o * cy.tanh()
    return hy, cy, torch.cat([i, f, g, o], 1)


def lstm_cell_backward(grad_hy, grad_cy, cx, cy, workspace, has_bias):
    i, f, g, o = workspace.chunk(4, 1)
    tanh_cy = cy.tanh()
    if grad_hy is None:
        grad_hy = torch.zeros_like(cy)
    grad_c = grad_hy * o * (1 - tanh_cy * tanh_cy)
    if grad_cy is not None:
        grad_c = grad_c + grad_cy
    grad_gates = torch.cat([grad_c * g * i * (1 - i), grad_c * cx * f * (1 - f),
                            grad_c * i * (1 - g * g), grad_hy * tanh_cy * o * (1 - o)], 1)
    grad_bias = grad_gates.sum(0) if has_bias else None
    return grad_gates, grad_c * f, grad_bias


def gru_cell(input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    ir, ii, in_ = _add(input_gates, input_bias).chunk(3, 1)
    hr, hi, hn = _add(hidden_gates, hidden_bias).chunk(3, 1)
    r = (ir + hr).sigmoid()
    z = (ii + hi).sigmoid()
    n = (in_ + r * hn).tanh()
    hy = (hx - n) * z + n
    return hy, torch.cat([r, z, n, hx, hn], 1)


def gru_cell_backward(grad_hy, workspace, has_bias):
    r, z, n, hx, hn = workspace.chunk(5, 1)
    grad_z = grad_hy * (hx - n) * z * (1 - z)
    grad_n = grad_hy * (1 - z) * (1 - n * n)
    grad_r = grad_n * hn * r * (1 - r)
    grad_input = torch.cat([grad_r, grad_z, grad_n], 1)
    grad_hidden = torch.cat([grad_r, grad_z, grad_n * r], 1)
    if has_bias:
        return grad_input, grad_hidden, grad_hy * z, grad_input.sum(0), grad_hidden.sum(0)
    return grad_input, grad_hidden, grad_hy * z, None, None


FUSED = {
    "_thnn_fused_lstm_cell": lstm_cell,
    "_thnn_fused_lstm_cell_backward_impl": lstm_cell_backward,
    "_thnn_fused_gru_cell": gru_cell,
    "_thnn_fused_gru_cell_backward": gru_cell_backward,
}


def register(lib: torch.library.Library) -> int:
    for name, fn in FUSED.items():
        op = getattr(aten, name).default
        register_plan(op, fn)
        lib.impl(name, direct_kernel(op), "PrivateUse1")
    return len(FUSED)
