"""The ``quant`` source's cases for observers and qconfig helpers (see ``quant.table``):
observers fed device tensors (``calculate_qparams``, state dicts); a qconfig's activation
and weight observers on the device, and an eager prepare of a tiny model with it."""

from __future__ import annotations

from typing import Dict, Tuple

from .table import F32, FLOATS, OB, QC
from .table import observer as _observer
from .table import qconfig as _qconfig

_OBS_BASE = '''\
class AbsMax(Q.ObserverBase):
    """a user observer built on ObserverBase: symmetric qparams from the largest |value|"""
    def __init__(self, dtype=torch.quint8, **kwargs):
        super().__init__(dtype=dtype, **kwargs)
        self.register_buffer("amax", torch.tensor(0.0))

    def forward(self, t):
        self.amax = torch.maximum(self.amax, t.detach().abs().amax().to(self.amax.dtype))
        return t

    def calculate_qparams(self):
        return self.amax / 127.5, torch.zeros((), dtype=torch.int64, device=self.amax.device) + 128
'''

CASES: Dict[str, Tuple[str, Tuple[str, ...]]] = {
    OB + "HistogramObserver": (_observer("Q.HistogramObserver(bins=64)"), FLOATS),
    OB + "MinMaxObserver": (_observer("Q.MinMaxObserver()"), FLOATS),
    OB + "MinMaxObserver.calculate_qparams": (
        "obs = observe(Q.MinMaxObserver(qscheme=torch.per_tensor_symmetric, dtype=torch.qint8))\n"
        "out = qparams(obs)", FLOATS),
    OB + "MinMaxObserver.forward": (
        "obs = Q.MinMaxObserver().to(device)\nout = [obs.forward(x), obs.forward(x * 2), obs.min_val, obs.max_val]",
        FLOATS),
    OB + "MinMaxObserver.reset_min_max_vals": (
        "obs = observe(Q.MinMaxObserver(), x * 10)\nobs.reset_min_max_vals()\nobs(x)\n"
        "out = {'qparams': qparams(obs), 'min': obs.min_val, 'max': obs.max_val}", FLOATS),
    OB + "MovingAverageMinMaxObserver": (_observer("Q.MovingAverageMinMaxObserver(averaging_constant=0.5)"),
                                         FLOATS),
    OB + "MovingAveragePerChannelMinMaxObserver": (
        _observer("Q.MovingAveragePerChannelMinMaxObserver(averaging_constant=0.5, ch_axis=1)"), FLOATS),
    OB + "NoopObserver": (
        "obs = Q.NoopObserver(dtype=torch.float16).to(device)\nout = [obs(x), str(obs.dtype)]", FLOATS),
    OB + "ObserverBase": (
        _OBS_BASE + "obs = observe(AbsMax(), x, x * 2)\n"
        "p, res = eager_prepare(Q.QConfig(activation=AbsMax, weight=Q.default_weight_observer))\n"
        "out = {'qparams': qparams(obs), **res}", F32),
    OB + "ObserverBase.with_args": (
        "make = Q.MinMaxObserver.with_args(quant_min=0, quant_max=127)\nobs = observe(make())\n"
        "out = {'qparams': qparams(obs), 'range': [obs.quant_min, obs.quant_max]}", FLOATS),
    OB + "ObserverBase.with_callable_args": (
        "made = []\n"
        "def eps():\n    made.append(1)\n    return 0.25\n"
        "make = Q.MinMaxObserver.with_callable_args(eps=eps)\nobs = observe(make(), x * 1e-3)\n"
        "out = {'qparams': qparams(obs), 'calls': len(made)}", FLOATS),
    OB + "PerChannelMinMaxObserver": (_observer("Q.PerChannelMinMaxObserver(ch_axis=0)"), FLOATS),
    OB + "PerChannelMinMaxObserver.reset_min_max_vals": (
        "obs = observe(Q.PerChannelMinMaxObserver(ch_axis=1), x * 10)\nobs.reset_min_max_vals()\nobs(x)\n"
        "out = {'qparams': qparams(obs), 'min': obs.min_val, 'max': obs.max_val}", FLOATS),
    OB + "PlaceholderObserver": (
        "obs = Q.PlaceholderObserver(dtype=torch.float16).to(device)\nout = [obs(x), str(obs.dtype)]", FLOATS),
    OB + "RecordingObserver": (
        "obs = observe(Q.RecordingObserver(), x, x * 2)\nout = obs.get_tensor_value()", FLOATS),
    OB + "default_debug_observer": (
        "obs = observe(Q.default_debug_observer(), x, w)\nout = obs.get_tensor_value()", F32),
    OB + "default_dynamic_quant_observer": (
        "obs = Q.default_dynamic_quant_observer().to(device)\nout = [obs(x), str(obs.dtype), obs.is_dynamic]", F32),
    OB + "default_float_qparams_observer": (_observer("Q.default_float_qparams_observer()", feed="w"), F32),
    OB + "default_histogram_observer": (_observer("Q.default_histogram_observer()"), F32),
    OB + "default_observer": (_observer("Q.default_observer()"), F32),
    OB + "default_per_channel_weight_observer": (
        _observer("Q.default_per_channel_weight_observer()", feed="w"), F32),
    OB + "default_placeholder_observer": (
        "obs = Q.default_placeholder_observer().to(device)\nout = [obs(x), str(obs.dtype)]", F32),
    OB + "default_weight_observer": (_observer("Q.default_weight_observer()", feed="w"), F32),
    OB + "get_observer_state_dict": (
        "p, res = eager_prepare(Q.default_qconfig)\nsd = Q.observer.get_observer_state_dict(p)\n"
        "out = {'state': dict(sd), **res}", F32),
    OB + "load_observer_state_dict": (
        "p, res = eager_prepare(Q.default_qconfig)\nsd = Q.observer.get_observer_state_dict(p)\n"
        "fresh = Tiny().to(device).eval()\nfresh.qconfig = Q.default_qconfig\nfresh = Q.prepare(fresh)\n"
        "Q.observer.load_observer_state_dict(fresh, sd)\n"
        "out = {'loaded': observers(fresh), 'source': res['observers']}", F32),

    # qconfig helpers
    QC + "QConfig": (_qconfig("Q.QConfig(activation=Q.MinMaxObserver.with_args(reduce_range=True),"
                              " weight=Q.default_per_channel_weight_observer)"), F32),
    QC + "default_activation_only_qconfig": (_qconfig("Q.default_activation_only_qconfig"), F32),
    QC + "default_debug_qconfig": (_qconfig("Q.default_debug_qconfig"), F32),
    QC + "default_dynamic_qconfig": (_qconfig("Q.default_dynamic_qconfig"), F32),
    QC + "default_per_channel_qconfig": (_qconfig("Q.default_per_channel_qconfig"), F32),
    QC + "default_qat_qconfig": (_qconfig("Q.default_qat_qconfig"), F32),
    QC + "default_qat_qconfig_v2": (_qconfig("Q.qconfig.default_qat_qconfig_v2"), F32),
    QC + "default_qconfig": (_qconfig("Q.default_qconfig"), F32),
    QC + "default_weight_only_qconfig": (_qconfig("Q.default_weight_only_qconfig"), F32),
    QC + "float16_dynamic_qconfig": (_qconfig("Q.float16_dynamic_qconfig"), F32),
    QC + "float16_static_qconfig": (_qconfig("Q.float16_static_qconfig"), F32),
    QC + "float_qparams_weight_only_qconfig": (_qconfig("Q.float_qparams_weight_only_qconfig"), F32),
    QC + "per_channel_dynamic_qconfig": (_qconfig("Q.per_channel_dynamic_qconfig"), F32),
}
