"""dtype names as the tool writes them everywhere (results, profiles, footprints)."""

from __future__ import annotations

from typing import Any

# the dtypes a check, a sweep or a prediction covers by default, in report order
DTYPE_NAMES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
               "float32", "float64", "complex64", "complex128")

# the tag of a scenario whose code never reads ``dtype`` (a code-block case of a
# device-module or service API): its rows answer for no dtype in particular. They are
# still run and recorded under one dtype (float32, the dtype of the tensors such code
# makes by default), and every report says "any dtype" for them, never that dtype
DTYPE_FREE = "dtype-free"


def dtype_name(dtype: Any) -> str:
    """``torch.float16`` -> ``"float16"``."""
    return str(dtype).replace("torch.", "")
