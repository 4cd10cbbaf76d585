"""Autocast on the emulated device (``torch.autocast("<device_type>")``).

torch has no autocast kernels for PrivateUse1, so without these every op under autocast
would fail at the AutocastPrivateUse1 key. The policy follows the one accelerators use:

- matrix products and convolutions run in the autocast dtype (float16 / bfloat16),
- numerically sensitive ops (exp/log family, norms, losses, softmax, reductions) run in
  float32,
- a few multi-input ops promote their floating inputs to the widest dtype among them;

every other op falls through unchanged. Only floating tensors on the emulated device are
cast, float64 ones never (as on CUDA). Whether ``torch.autocast`` may be used at all, and
with which dtypes, comes from ``profile.features`` (see ``module.get_amp_supported_dtype``).
"""

from __future__ import annotations

import functools

import torch

from .dispatch import STATE

LOWER = (
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "convolution", "_convolution", "conv_tbc", "prelu", "addmm", "addmv",
    "addr", "matmul", "einsum", "mm", "mv", "linear", "addbmm", "baddbmm", "bmm",
    "chain_matmul", "linalg_multi_dot", "linalg_vecdot", "scaled_dot_product_attention",
    "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell",
)
FLOAT32 = (
    "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p",
    "reciprocal", "rsqrt", "sinh", "tan", "pow", "softplus", "layer_norm", "group_norm",
    "norm", "frobenius_norm", "nuclear_norm", "cosine_similarity", "poisson_nll_loss",
    "cosine_embedding_loss", "nll_loss", "nll_loss2d", "hinge_embedding_loss", "kl_div",
    "l1_loss", "smooth_l1_loss", "huber_loss", "mse_loss", "margin_ranking_loss",
    "multilabel_margin_loss", "soft_margin_loss", "triplet_margin_loss",
    "multi_margin_loss", "binary_cross_entropy_with_logits", "dist", "pdist", "cdist",
    "renorm", "logsumexp", "softmax", "log_softmax", "cumsum", "cumprod", "sum", "prod",
    "linalg_vector_norm",
)
PROMOTE = (
    "addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "grid_sampler", "index_put",
    "scatter_add", "tensordot", "cat", "stack",
)

_KEYS = torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastPrivateUse1)


def _eligible(a) -> bool:
    return (isinstance(a, torch.Tensor) and a.is_floating_point() and a.dtype != torch.float64
            and not a.is_cpu and a.device.type == STATE.device_type)


def _cast(value, dtype):
    if _eligible(value):
        return value if value.dtype == dtype else value.to(dtype)
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, dtype) for v in value)
    return value


def _widest(args, kwargs):
    widest = None
    for a in list(args) + list(kwargs.values()):
        items = a if isinstance(a, (list, tuple)) else (a,)
        for x in items:
            if _eligible(x):
                widest = x.dtype if widest is None else torch.promote_types(widest, x.dtype)
    return widest


def _kernel(policy, op, *args, **kwargs):
    with torch._C._ExcludeDispatchKeyGuard(_KEYS):
        if policy == "lower":
            dtype = torch.get_autocast_dtype(STATE.device_type)
        elif policy == "float32":
            dtype = torch.float32
        else:
            dtype = _widest(args, kwargs)
        if dtype is not None:
            args = tuple(_cast(a, dtype) for a in args)
            kwargs = {k: _cast(v, dtype) for k, v in kwargs.items()}
        return op(*args, **kwargs)


def register(fallbacks: torch.library.Library, impls: torch.library.Library) -> int:
    """Fall through AutocastPrivateUse1 by default; register the cast policies. Returns the
    number of overloads given a policy."""
    fallbacks.fallback(torch.library.fallthrough_kernel, "AutocastPrivateUse1")
    count = 0
    for policy, names in (("lower", LOWER), ("float32", FLOAT32), ("promote", PROMOTE)):
        for name in names:
            packet = getattr(torch.ops.aten, name, None)
            if packet is None:
                continue
            for overload in packet.overloads():
                op = getattr(packet, overload)
                if any(a.alias_info is not None and a.alias_info.is_write
                       for a in op._schema.arguments):
                    continue  # out= and in-place variants are not autocast
                impls.impl(op, functools.partial(_kernel, policy, op), "AutocastPrivateUse1")
                count += 1
    return count
