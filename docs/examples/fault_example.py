"""An example fault module, written outside torchparity (docs/faults.md).

Plug it into the emulated device with

    TORCHPARITY_EMU_FAULT_MODULE=docs/examples/fault_example.py \
    TORCHPARITY_EMU_FAULT=scan-off-by-one torchparity check torch.cumsum --device emu:ascend-a2

or run the oracle with it: ``python benchmarks/oracle.py --faults docs/examples/fault_example.py``.
Nothing here imports torchparity: a fault module is plain Python over torch.
"""

import torch

FAULTS = {
    # a scan kernel whose last block forgets its carry: the last element of every scan
    # along the dim is only its own input
    "scan-off-by-one": "cumsum / cumprod: the last element along the dim is the input's own, not the running result",
    # a conversion kernel that truncates instead of rounding to nearest even
    "convert-truncate": "float32 -> bfloat16 / float16 conversions truncate the mantissa instead of rounding",
    # a collective that counts one rank twice
    "allreduce-extra-rank": "all_reduce results scaled by 1 + 1/world size (one rank's share counted twice)",
    # a memory counter off by one allocation granule
    "memory-granule": "memory_allocated answers 512 bytes more than it holds",
}

SCANS = ("cumsum", "cumprod")


def touches(fault, op_name):
    """Which ops (``aten.cumsum.default``, ``c10d.allreduce_``) each fault can change."""
    name = op_name.replace("::", ".")
    if fault == "scan-off-by-one":
        return name.split(".")[:2] in (["aten", s] for s in SCANS)
    if fault == "convert-truncate":
        return name.split(".")[:2] in (["aten", "_to_copy"], ["aten", "to"], ["aten", "copy_"])
    if fault == "allreduce-extra-rank":
        return name.startswith("c10d.allreduce")
    return False


def wrap(fault, op, call, fire=None):
    """A wrapper over ``call`` (the op's computation on the device's CPU copy), or None
    where ``fault`` leaves ``op`` alone. ``fire``: call it when the result really changed."""
    base = op._schema.name.split("::")[-1]
    if fault == "scan-off-by-one" and base in SCANS:
        def scan(x, dim, *a, **k):
            out = call(x, dim, *a, **k)
            if out.numel() and out.size(dim) > 1:
                last = out.narrow(dim, out.size(dim) - 1, 1)
                own = x.narrow(dim, x.size(dim) - 1, 1).to(out.dtype)
                if not torch.equal(last, own):
                    last.copy_(own)
                    if fire:
                        fire()
            return out
        return scan
    if fault == "convert-truncate" and base == "_to_copy":
        def convert(x, *a, **k):
            out = call(x, *a, **k)
            if x.dtype == torch.float32 and out.dtype in (torch.bfloat16, torch.float16):
                keep = 16 if out.dtype == torch.bfloat16 else 13  # mantissa bits dropped
                cut = (x.contiguous().view(torch.int32) >> keep << keep).view(torch.float32)
                truncated = cut.to(out.dtype)
                if not torch.equal(truncated, out):
                    out.copy_(truncated)
                    if fire:
                        fire()
            return out
        return convert
    return None


def collective(fault, name, outputs, inputs, rank, size):
    """After a collective finished: may change what it wrote (in place)."""
    if fault == "allreduce-extra-rank" and name == "allreduce":
        for t in outputs:
            t.mul_(1 + 1.0 / size)


def device(fault, name, value):
    """What a device-module query answers (``memory_allocated``, ``memory_stats``)."""
    if fault == "memory-granule" and name == "memory_allocated":
        return value + 512
    return value
