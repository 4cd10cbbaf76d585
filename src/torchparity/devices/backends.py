"""Adapters for real backends: cpu, cuda, npu (torch_npu), xpu, mps."""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Dict, List, Optional, Tuple

from .base import DeviceAdapter


class CpuAdapter(DeviceAdapter):
    type = "cpu"
    collective = "gloo"

    @property
    def torch_device(self) -> str:
        return "cpu"

    def device_name(self) -> Optional[str]:
        import platform

        return platform.processor() or platform.machine()


class CudaAdapter(DeviceAdapter):
    type = "cuda"
    collective = "nccl"

    def unavailable_reason(self) -> Optional[str]:
        import torch

        if not torch.cuda.is_available():
            build = torch.version.cuda
            if build is None:
                return "cuda: this torch is a CPU-only build (torch.version.cuda is None)"
            return f"cuda: torch is built for CUDA {build} but no CUDA device is visible"
        if self.index is not None and self.index >= torch.cuda.device_count():
            return f"cuda:{self.index}: only {torch.cuda.device_count()} CUDA device(s) visible"
        return None

    def device_name(self) -> Optional[str]:
        import torch

        try:
            return torch.cuda.get_device_name(self.index or 0)
        except Exception:
            return None

    def backend_versions(self) -> Dict[str, str]:
        import torch

        out = {"cuda": str(torch.version.cuda)}
        if getattr(torch.version, "hip", None):
            out["hip"] = str(torch.version.hip)
        try:
            out["cudnn"] = str(torch.backends.cudnn.version())
        except Exception:
            pass
        return out

    def synchronize(self) -> None:
        import torch

        torch.cuda.synchronize()

    def error_patterns(self) -> List[Tuple[str, str, str]]:
        return [(r"CUDA error: no kernel image is available", "unsupported", "no_kernel")]


class NpuAdapter(DeviceAdapter):
    """Ascend NPU through torch_npu.

    torch_npu registers itself through torch's backend autoload when installed, which breaks
    ``import torch`` where CANN is missing; torchparity sets TORCH_DEVICE_BACKEND_AUTOLOAD=0
    and imports torch_npu here, explicitly, so its failure is one clear line.
    """

    type = "npu"
    collective = "hccl"
    _import_error: Optional[str] = None

    def unavailable_reason(self) -> Optional[str]:
        if importlib.util.find_spec("torch_npu") is None:
            return ("npu: torch_npu is not installed (pip install torch-npu==<your torch version>, "
                    "with Ascend CANN set up: source /usr/local/Ascend/ascend-toolkit/set_env.sh)")
        try:
            self.setup()
        except Exception as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return (f"npu: torch_npu is installed but failed to import ({first}); is CANN set up "
                    "(source /usr/local/Ascend/ascend-toolkit/set_env.sh)?")
        import torch

        if not torch.npu.is_available():  # type: ignore[attr-defined]
            return "npu: torch_npu imported but no NPU is visible (npu-smi info)"
        return None

    def setup(self) -> None:
        import torch  # noqa: F401
        import torch_npu  # noqa: F401  (registers torch.npu)

    def device_name(self) -> Optional[str]:
        import torch

        try:
            return torch.npu.get_device_name(self.index or 0)  # type: ignore[attr-defined]
        except Exception:
            return None

    def backend_versions(self) -> Dict[str, str]:
        out = {}
        mod = sys.modules.get("torch_npu")
        if mod is not None:
            out["torch_npu"] = str(getattr(mod, "__version__", "unknown"))
        return out

    def environment_extra(self) -> Dict[str, str]:
        cann = cann_version()
        return {"cann": cann} if cann else {}

    def synchronize(self) -> None:
        import torch

        torch.npu.synchronize()  # type: ignore[attr-defined]

    def worker_env(self) -> Dict[str, str]:
        return {"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}


def cann_version() -> Optional[str]:
    """The CANN toolkit version from its install info, when present."""
    roots = [os.environ.get(k) for k in ("ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH")]
    roots += ["/usr/local/Ascend/ascend-toolkit/latest", "/usr/local/Ascend/cann"]
    for root in filter(None, roots):
        for name in ("version.cfg", "ascend_toolkit_install.info", "compiler/version.info"):
            path = os.path.join(root, name)
            try:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    for line in fh:
                        key, _, value = line.partition("=")
                        if key.strip().lower() in ("version", "toolkit_version", "runtime_running_version"):
                            return value.strip().strip("[]\"'").split(":")[0]
            except OSError:
                continue
    return None


class XpuAdapter(DeviceAdapter):
    type = "xpu"
    collective = "xccl"

    def unavailable_reason(self) -> Optional[str]:
        import torch

        if not hasattr(torch, "xpu") or not torch.xpu.is_available():
            return "xpu: no Intel XPU visible to this torch build (torch.xpu.is_available() is False)"
        return None

    def device_name(self) -> Optional[str]:
        import torch

        try:
            return torch.xpu.get_device_name(self.index or 0)
        except Exception:
            return None

    def synchronize(self) -> None:
        import torch

        torch.xpu.synchronize()


class MpsAdapter(DeviceAdapter):
    type = "mps"

    def unavailable_reason(self) -> Optional[str]:
        import torch

        mps = getattr(torch.backends, "mps", None)
        if mps is None or not mps.is_available():
            return "mps: Apple Metal (MPS) is not available on this machine"
        return None

    def device_name(self) -> Optional[str]:
        return "Apple MPS"

    def synchronize(self) -> None:
        import torch

        torch.mps.synchronize()

    def error_patterns(self) -> List[Tuple[str, str, str]]:
        return [(r"MPS framework doesn't support float64", "unsupported", "dtype_limit")]
