"""A case kind that does nothing (``{"kind": "empty"}``): what is left of a case's cost is
the executor's own (hand-out, protocol, result). Loaded into workers as a scenario module
by ``benchmarks/ray_vs_pool.py``."""

from torchparity.run.handlers import register


@register("empty")
def empty(ctx, case):
    return {"status": "pass"}
