"""The legacy typed storage classes of the device module (``torch.npu.FloatStorage``, ...).

``Tensor.storage_type()`` and ``TypedStorage.type()`` look the class up as
``getattr(torch.<device>, "<Name>Storage")``: without these classes the emulated device
answered ``None`` / ``torch.storage.TypedStorage`` where a real device backend names its
own class. torch_npu defines these ten in ``torch_npu/npu/__init__.py`` (no complex or
quantized ones, so those answer ``None`` there as here); each is a ``_LegacyStorage`` whose
``__module__`` is the device module, which is how torch tells the class's device.
"""

from __future__ import annotations

from typing import Dict

import torch
from torch._utils import classproperty
from torch.storage import _LegacyStorage, _warn_typed_storage_removal

from .storage import feature_error

# class name -> dtype, as torch_npu's device module defines them
NAMES: Dict[str, torch.dtype] = {
    "ByteStorage": torch.uint8, "DoubleStorage": torch.double, "FloatStorage": torch.float,
    "HalfStorage": torch.half, "LongStorage": torch.long, "IntStorage": torch.int,
    "ShortStorage": torch.short, "CharStorage": torch.int8, "BoolStorage": torch.bool,
    "BFloat16Storage": torch.bfloat16,
}


def _refuse(what: str):
    @classmethod
    def method(cls, *args, **kwargs):
        raise feature_error(f"{what} on a {cls.__name__}")
    return method


def make_classes(module_name: str) -> Dict[str, type]:
    """The classes, each with ``__module__`` = ``module_name`` (e.g. ``torch.npu``)."""
    base = type("_DeviceLegacyStorage", (_LegacyStorage,), {
        "__module__": module_name,
        # host-memory constructors CUDA refuses as well
        "from_buffer": _refuse("from_buffer"),
        "_new_with_weak_ptr": _refuse("_new_with_weak_ptr"),
        "_new_shared_filename": _refuse("_new_shared_filename"),
    })
    out: Dict[str, type] = {}
    for name, dt in NAMES.items():
        def dtype(cls, _d=dt):
            _warn_typed_storage_removal()
            return _d
        out[name] = type(name, (base,), {
            "__module__": module_name,
            "dtype": classproperty(dtype),
            "_dtype": classproperty(lambda cls, _d=dt: _d),
        })
    return out
