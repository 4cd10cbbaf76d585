"""The Ascend vendor support-docs entry (docs/zh/api/native_api/pytorch_X_Y_Z/*.md).

Interim writer: the evidence branch owns parsing these docs and is to provide the
writer; once it lands, ``render_entry`` should delegate to it so only one implementation
remains. The format is the one in design/DELIVERABLES.md, byte for byte.
"""

from __future__ import annotations

from typing import Dict, Optional

DTYPE_SHORT = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64",
               "complex64": "complex64", "complex128": "complex128", "int8": "int8",
               "uint8": "uint8", "int16": "int16", "int32": "int32", "int64": "int64",
               "bool": "bool"}


def docs_url(name: str, torch_version: str) -> str:
    """The official docs page the entries link (https://pytorch.org/docs/X.Y/generated/NAME.html)."""
    major_minor = ".".join(torch_version.split("+")[0].split(".")[:2])
    return f"https://pytorch.org/docs/{major_minor}/generated/{name}.html"


def version_folder(torch_version: str) -> str:
    """pytorch_2-12-0 for 2.12.0+cpu."""
    return "pytorch_" + torch_version.split("+")[0].replace(".", "-")


def render_entry(name: str, url: str, support: Dict[str, bool], limits: Optional[str] = None) -> str:
    """One entry: ``support`` maps the docs' hardware term to ✔ (True) / ✘ (False)."""
    lines = [
        f"### {name}",
        "",
        '<div style="margin-left: 2em">',
        "",
        f"**原生文档**：[{name}]({url})",
        "",
        "**支持情况**：",
        "",
        "| 硬件 | 是否支持 |",
        "| ---- | :----: |",
    ]
    for term, ok in support.items():
        lines.append(f"| <term>{term}</term> | {'✔' if ok else '✘'} |")
    lines.append("")
    if limits:
        lines += [f"**限制与说明**：{limits}", ""]
    lines += ["</div>", ""]
    return "\n".join(lines)
