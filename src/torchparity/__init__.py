"""torchparity: does this PyTorch API behave on the device as on the CPU?

The Python API is what the CLI calls::

    import torchparity
    report = torchparity.check(["torch.autograd.gradcheck"], device="emu:ascend-a2")
"""

from .version import __version__

__all__ = ["__version__", "check"]


def check(apis, device="auto", **options):
    """Check APIs on a device against the CPU; returns a :class:`results.models.Report`.

    See :func:`torchparity.app.check.check` for the options.
    """
    from .app.check import check as _check

    return _check(apis, device=device, **options)
