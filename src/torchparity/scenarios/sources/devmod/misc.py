"""Blocks of the ``devmod`` source for ``torch.accelerator.*``, ``torch.backends.*``,
``torch.random.*``, ``torch.Generator`` and ``torch.default_generator`` (format: see
``devmod.cuda``). ``acc_here`` is True when the device under test is torch's current
accelerator; on the CPU, which is no accelerator, the block answers with the promise."""

from __future__ import annotations

SAME = "the same code run on the CPU"

ACC = "the promise: the accelerator API agrees with the device module of the device"
ACC_MEM = "the promise (as for the device module's counterpart)"

_MEM = """
if not acc_here:
    out = REF
else:
    import torch.accelerator.memory as am
    BODY
"""


def _mem(ref: str, body: str) -> str:
    lines = body.strip("\n").splitlines()
    return _MEM.replace("REF", ref).replace("    BODY", "\n".join("    " + ln for ln in lines))


ACCELERATOR = {
    "current_device_index": ("""
if not acc_here:
    out = {"matches_module": True}
else:
    out = {"matches_module": torch.accelerator.current_device_index() == c.m("current_device")()}
""", ACC),
    "current_device_idx": ("""
if not acc_here:
    out = {"matches_module": True}
else:
    out = {"matches_module": torch.accelerator.current_device_idx() == c.m("current_device")()}
""", ACC),
    "device_count": ("""
if not acc_here:
    out = {"matches_module": True}
else:
    out = {"matches_module": torch.accelerator.device_count() == c.m("device_count")()}
""", ACC),
    "is_available": ("""
y = (x * 2)
out = {"y": y, "available": True if not acc_here else torch.accelerator.is_available()}
""", ACC),
    "current_stream": ("""
if not acc_here:
    out = {"on_device": True, "y": (x * 2)}
else:
    s = torch.accelerator.current_stream()
    with s:
        y = x * 2
    out = {"on_device": s.device.type == c.type, "y": y}
""", ACC),
    "set_device_index": ("""
if not acc_here:
    out = {"current": True}
else:
    torch.accelerator.set_device_index(c.index)
    out = {"current": c.m("current_device")() == c.index}
""", ACC),
    "set_device_idx": ("""
if not acc_here:
    out = {"current": True}
else:
    torch.accelerator.set_device_idx(c.index)
    out = {"current": c.m("current_device")() == c.index}
""", ACC),
    "set_stream": ("""
if not acc_here:
    out = {"switched": True, "restored": True, "y": (x * 2)}
else:
    s0 = torch.accelerator.current_stream()
    s = torch.Stream(c.type)
    torch.accelerator.set_stream(s)
    switched = torch.accelerator.current_stream() == s
    y = x * 2
    torch.accelerator.set_stream(s0)
    out = {"switched": switched, "restored": torch.accelerator.current_stream() == s0, "y": y}
""", ACC),
    "synchronize": ("""
y = x.matmul(x.T)
if acc_here:
    torch.accelerator.synchronize()
out = y
""", "the same computation on the CPU"),
    "device_index": ("""
if not acc_here:
    out = {"current_inside": True, "y": x * 2}
else:
    with torch.accelerator.device_index(c.index):
        inside = torch.accelerator.current_device_index() == c.index
        y = x * 2
    out = {"current_inside": inside, "y": y}
""", ACC),
    "get_device_capability": ("""
if not acc_here:
    out = {"dict": True}
else:
    out = {"dict": isinstance(torch.accelerator.get_device_capability(c.index), dict)}
""", "the promise: a dict of capabilities"),
    "memory.memory_allocated": (_mem('{"grows_by_nbytes": True}', """
gc.collect()
before = am.memory_allocated()
t = c.big()
out = {"grows_by_nbytes": am.memory_allocated() - before >= NBYTES}
"""), ACC_MEM),
    "memory.max_memory_allocated": (_mem('{"peak_covers_current": True}', """
t = c.big()
out = {"peak_covers_current": am.max_memory_allocated() >= am.memory_allocated() >= NBYTES}
"""), ACC_MEM),
    "memory.memory_reserved": (_mem('{"covers_allocated": True}', """
t = c.big()
out = {"covers_allocated": am.memory_reserved() >= am.memory_allocated() >= NBYTES}
"""), ACC_MEM),
    "memory.max_memory_reserved": (_mem('{"peak_covers_reserved": True}', """
t = c.big()
out = {"peak_covers_reserved": am.max_memory_reserved() >= am.memory_reserved() >= NBYTES}
"""), ACC_MEM),
    "memory.memory_stats": (_mem('{"current_matches": True}', """
t = c.big()
st = am.memory_stats()
out = {"current_matches": st.get("allocated_bytes.all.current") == am.memory_allocated()}
"""), ACC_MEM),
    "memory.reset_peak_memory_stats": (_mem('{"peak_back_to_current": True}', """
t = c.big()
del t
gc.collect()
am.reset_peak_memory_stats()
out = {"peak_back_to_current": am.max_memory_allocated() == am.memory_allocated()}
"""), ACC_MEM),
    "memory.reset_accumulated_memory_stats": (_mem('{"dropped": True}', """
t = c.big()
before = am.memory_stats().get("allocated_bytes.all.allocated", 0)
am.reset_accumulated_memory_stats()
out = {"dropped": before >= NBYTES and am.memory_stats().get("allocated_bytes.all.allocated", 0) < before}
"""), ACC_MEM),
    "memory.empty_cache": (_mem('{"reserved_covers_allocated": True}', """
t = c.big()
del t
am.empty_cache()
out = {"reserved_covers_allocated": am.memory_reserved() >= am.memory_allocated()}
"""), ACC_MEM),
    "memory.empty_host_cache": (_mem('{"y": (x + 1)}', """
am.empty_host_cache()
out = {"y": (x + 1)}
"""), "the promise: it returns and the device keeps computing"),
    "memory.get_memory_info": (_mem('{"0<free<=total": True}', """
free, total = am.get_memory_info()
out = {"0<free<=total": 0 < free <= total}
"""), ACC_MEM),
}

_CONV = """
torch.manual_seed(0)
w = torch.randn(3, 2, 3, 3).to(c.device)
inp = torch.randn(1, 2, 6, 6).to(c.device)
"""


def _flag(setter: str, value: str, reader: str, work: str) -> str:
    """Set a flag around device work; return the work's result and the read-back value."""
    return (f"old = {reader}\n{setter.format(v=value)}\ntry:\n    seen = {reader}\n"
            + "".join("    " + ln + "\n" for ln in work.strip("\n").splitlines())
            + f"finally:\n    {setter.format(v='old')}\nout = {{'flag': seen, 'y': y}}\n")


_CONV_WORK = "y = torch.nn.functional.conv2d(inp, w, padding=1)"
_CUDNN_FLAGS = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")


def _cudnn(flag: str, value: str) -> str:
    """One cuDNN flag set, the others kept, through ``torch.backends.cudnn.flags()`` (the
    test harness forbids plain assignment once it has frozen the global flags), around a
    device convolution; the flag read back inside."""
    keep = ", ".join(f"{f}=cudnn.{f}" for f in _CUDNN_FLAGS if f != flag)
    # the convolution only where the build has cuDNN (it reads the flag there); elsewhere a
    # device convolution beside the flag would be decorative: the flag is host-only there
    return (f"cudnn = torch.backends.cudnn\nold = cudnn.{flag}\nwith cudnn.flags({flag}={value}, {keep}):\n"
            f"    seen = cudnn.{flag}\n    y = None\n    if cudnn.is_available():\n        {_CONV_WORK}\n"
            f"out = {{'flag': seen, 'y': y, 'restored': cudnn.{flag} == old}}\n")
_MM_WORK = "y = x.matmul(x.T)"
_SDPA = """
torch.manual_seed(0)
q, k, v = (torch.randn(1, 2, 4, 8).to(c.device) for _ in range(3))
"""
_SDPA_WORK = "y = torch.nn.functional.scaled_dot_product_attention(q, k, v)"
_EINSUM = """
torch.manual_seed(0)
a, b, d = torch.randn(3, 4).to(c.device), torch.randn(4, 5).to(c.device), torch.randn(5, 2).to(c.device)
"""
_EINSUM_WORK = "y = torch.einsum('ij,jk,kl->il', a, b, d)"
_BC = "torch.backends.cudnn"
_BK = "torch.backends.cuda"
FLAG = "the same flag set around the same computation on the CPU"

BACKENDS = {
    "cudnn.allow_tf32": (_CONV + _cudnn("allow_tf32", "False"), FLAG),
    "cudnn.benchmark": (_CONV + _cudnn("benchmark", "True"), FLAG),
    "cudnn.benchmark_limit": (_CONV + _cudnn("benchmark_limit", "4"), FLAG),
    "cudnn.deterministic": (_CONV + _cudnn("deterministic", "True"), FLAG),
    "cudnn.enabled": (_CONV + _cudnn("enabled", "False"), FLAG),
    "cudnn.is_available": ("out = {'available': torch.backends.cudnn.is_available()}\n",
                           "the same build answers on the CPU (a build query: host-only)"),
    "cuda.matmul.allow_tf32": (_flag(_BK + ".matmul.allow_tf32 = {v}", "False", _BK + ".matmul.allow_tf32", _MM_WORK), FLAG),
    "cuda.is_built": ("out = {'built': torch.backends.cuda.is_built()}\n",
                      "the same build answers on the CPU"),
    "cuda.enable_flash_sdp": (_SDPA + _flag(_BK + ".enable_flash_sdp({v})", "False", _BK + ".flash_sdp_enabled()", _SDPA_WORK), FLAG),
    "cuda.flash_sdp_enabled": (_SDPA + _flag(_BK + ".enable_flash_sdp({v})", "False", _BK + ".flash_sdp_enabled()", _SDPA_WORK), FLAG),
    "cuda.enable_math_sdp": (_SDPA + _flag(_BK + ".enable_math_sdp({v})", "True", _BK + ".math_sdp_enabled()", _SDPA_WORK), FLAG),
    "cuda.math_sdp_enabled": (_SDPA + _flag(_BK + ".enable_math_sdp({v})", "True", _BK + ".math_sdp_enabled()", _SDPA_WORK), FLAG),
    "cuda.enable_mem_efficient_sdp": (_SDPA + _flag(_BK + ".enable_mem_efficient_sdp({v})", "False", _BK + ".mem_efficient_sdp_enabled()", _SDPA_WORK), FLAG),
    "cuda.mem_efficient_sdp_enabled": (_SDPA + _flag(_BK + ".enable_mem_efficient_sdp({v})", "False", _BK + ".mem_efficient_sdp_enabled()", _SDPA_WORK), FLAG),
    "cuda.sdp_kernel": (_SDPA + """
import warnings
with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)
    with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=True, enable_mem_efficient=False):
        seen = (torch.backends.cuda.flash_sdp_enabled(), torch.backends.cuda.math_sdp_enabled())
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v)
out = {"flags_inside": seen, "y": y}
""", FLAG),
    "cuda.preferred_linalg_library": ("""
a = (torch.eye(3) * 2 + torch.ones(3, 3)).to(c.device)
old = torch.backends.cuda.preferred_linalg_library()
torch.backends.cuda.preferred_linalg_library("default")
try:
    seen = str(torch.backends.cuda.preferred_linalg_library())
    y = torch.linalg.inv(a)
finally:
    torch.backends.cuda.preferred_linalg_library(old)
out = {"flag": seen, "y": y}
""", FLAG),
    "cuda.cufft_plan_cache": ("""
cache = c.only("torch.backends.cuda", "cufft_plan_cache")
y = torch.fft.fft(x.reshape(-1)).abs()
out = {"y": y, "plans_cached": True if cache is None else cache[c.index].size >= 1}
""", "the promise: after an FFT the device's plan cache holds a plan"),
    "cuda.cufft_plan_cache.size": ("""
cache = c.only("torch.backends.cuda", "cufft_plan_cache")
y = torch.fft.fft(x.reshape(-1)).abs()
out = {"y": y, "int_positive": True if cache is None else cache[c.index].size >= 1}
""", "the promise: after an FFT, size >= 1"),
    "cuda.cufft_plan_cache.max_size": ("""
cache = c.only("torch.backends.cuda", "cufft_plan_cache")
if cache is None:
    out = {"reads_back": True, "y": torch.fft.fft(x.reshape(-1)).abs()}
else:
    pc = cache[c.index]
    old = pc.max_size
    pc.max_size = 3
    seen = pc.max_size == 3
    y = torch.fft.fft(x.reshape(-1)).abs()
    pc.max_size = old
    out = {"reads_back": seen, "y": y}
""", "the promise: a max_size set reads back"),
    "cuda.cufft_plan_cache.clear": ("""
cache = c.only("torch.backends.cuda", "cufft_plan_cache")
y = torch.fft.fft(x.reshape(-1)).abs()
if cache is None:
    out = {"empty_after_clear": True, "y": y}
else:
    cache[c.index].clear()
    out = {"empty_after_clear": cache[c.index].size == 0, "y": y}
""", "the promise: size 0 after clear()"),
    "cpu.get_cpu_capability": ("cap = torch.backends.cpu.get_cpu_capability()\nout = {'str': isinstance(cap, str)}\n",
                               "the same build answers on the CPU"),
    "mkl.is_available": ("out = {'available': torch.backends.mkl.is_available()}\n",
                         "the same build answers on the CPU"),
    "mkldnn.is_available": ("out = {'available': torch.backends.mkldnn.is_available()}\n",
                            "the same build answers on the CPU"),
    "openmp.is_available": ("out = {'available': torch.backends.openmp.is_available()}\n",
                            "the same build answers on the CPU"),
    "mps.is_available": ("out = {'available': torch.backends.mps.is_available()}\n",
                         "the same build answers on the CPU"),
    "mps.is_built": ("out = {'built': torch.backends.mps.is_built()}\n",
                     "the same build answers on the CPU"),
    "mkl.verbose": ("with torch.backends.mkl.verbose(torch.backends.mkl.VERBOSE_OFF):\n    y = x.matmul(x.T)\nout = y\n", FLAG),
    "mkldnn.verbose": ("with torch.backends.mkldnn.verbose(torch.backends.mkldnn.VERBOSE_OFF):\n    y = x.matmul(x.T)\nout = y\n", FLAG),
    "opt_einsum.enabled": (_EINSUM + _flag("torch.backends.opt_einsum.enabled = {v}", "False", "torch.backends.opt_einsum.enabled", _EINSUM_WORK), FLAG),
    "opt_einsum.strategy": (_EINSUM + """
if torch.backends.opt_einsum.is_available():
    old = torch.backends.opt_einsum.strategy
    torch.backends.opt_einsum.strategy = "greedy"
    try:
        seen = torch.backends.opt_einsum.strategy
        y = torch.einsum('ij,jk,kl->il', a, b, d)
    finally:
        torch.backends.opt_einsum.strategy = old
else:
    seen, y = None, torch.einsum('ij,jk,kl->il', a, b, d)
out = {"flag": seen, "y": y}
""", FLAG),
    "opt_einsum.is_available": ("out = {'available': torch.backends.opt_einsum.is_available()}\n",
                                "the same build answers on the CPU"),
    "opt_einsum.get_opt_einsum": ("out = {'module': torch.backends.opt_einsum.get_opt_einsum() is not None}\n",
                                  "the same build answers on the CPU"),
}

RANDOM = {
    "torch.random.fork_rng": ("""
forked = {"devices": []} if c.is_cpu else {"device_type": c.type}
torch.manual_seed(5)
with torch.random.fork_rng(**forked):
    torch.rand(7, device=c.device)
after = torch.rand(4, device=c.device)
torch.manual_seed(5)
again = torch.rand(4, device=c.device)
out = {"state_restored": torch.equal(after, again)}
""", "the CPU generator forked the same way (devices=[])"),
    "torch.random.manual_seed": ("""
torch.random.manual_seed(9)
a = torch.rand(5, device=c.device)
torch.random.manual_seed(9)
b = torch.rand(5, device=c.device)
out = {"same_draws": torch.equal(a, b)}
""", SAME),
    "torch.random.seed": ("""
s = torch.random.seed()
a = torch.rand(5, device=c.device)
torch.random.manual_seed(s)
b = torch.rand(5, device=c.device)
out = {"int": isinstance(s, int), "seed_replays": torch.equal(a, b)}
""", SAME),
    "torch.random.initial_seed": ("""
torch.random.manual_seed(13)
y = torch.rand(3, device=c.device)
out = {"initial_seed": torch.random.initial_seed() == 13}
""", SAME),
    "torch.random.get_rng_state": ("""
st = torch.random.get_rng_state()
a = (torch.rand(5).to(c.device) * 2)
torch.random.set_rng_state(st)
b = (torch.rand(5).to(c.device) * 2)
out = {"byte_state": st.dtype == torch.uint8, "same": torch.equal(a, b)}
""", SAME),
    "torch.random.set_rng_state": ("""
st = torch.random.get_rng_state()
a = torch.randn(5).to(c.device).exp()
torch.random.set_rng_state(st)
b = torch.randn(5).to(c.device).exp()
out = {"same": torch.equal(a, b)}
""", SAME),
    "torch.Generator": ("""
g = torch.Generator(device=c.device)
g.manual_seed(17)
a = torch.rand(5, generator=g, device=c.device)
g.manual_seed(17)
b = torch.rand(5, generator=g, device=c.device)
out = {"device_type_matches": g.device.type == c.type, "same_draws": torch.equal(a, b)}
""", SAME),
    "torch.Generator.seed": ("""
g = torch.Generator(device=c.device)
s = g.seed()
a = torch.rand(5, generator=g, device=c.device)
g.manual_seed(s)
b = torch.rand(5, generator=g, device=c.device)
out = {"int": isinstance(s, int), "initial_seed": g.initial_seed() == s, "seed_replays": torch.equal(a, b)}
""", SAME),
    "torch.default_generator": ("""
g = c.m("default_generators")[c.index]
g.manual_seed(11)
a = torch.rand(5, device=c.device)
g.manual_seed(11)
b = torch.rand(5, device=c.device)
out = {"same_draws": torch.equal(a, b), "initial_seed": g.initial_seed() == 11}
""", "torch.default_generator on the CPU; the device's default generator (torch.<device>.default_generators) on the device"),
}
