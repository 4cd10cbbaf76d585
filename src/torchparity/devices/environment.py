"""Environment capture: what a result was measured on."""

from __future__ import annotations

import platform
import socket
import sys

from ..results.models import Environment
from .base import DeviceAdapter


def _os_name() -> str:
    try:
        info = platform.freedesktop_os_release()
        return f"{info.get('PRETTY_NAME', info.get('NAME', 'Linux'))} ({platform.machine()})"
    except (OSError, AttributeError):
        return f"{platform.system()} {platform.release()} ({platform.machine()})"


def capture(adapter: DeviceAdapter) -> Environment:
    import torch

    extra = dict(adapter.environment_extra())
    cann = extra.pop("cann", None)
    return Environment(
        os=_os_name(),
        arch=platform.machine(),
        python=sys.version.split()[0],
        torch=torch.__version__,
        backend=adapter.backend_versions(),
        device_name=adapter.device_name(),
        cann=cann,
        hostname=socket.gethostname(),
        extra=extra,
    )
