"""Write a missing vendor support-docs entry, in the vendor's own Markdown format.

The block matches what vendor_docs.parse_vendor_file reads (a round trip is tested):
heading, the indented div, the official-docs link, the ✔/✘ table per chip and, when
given, the limits ("限制与说明"). Verdicts come from the caller; nothing is decided here.
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence, Union

YES, NO = "✔", "✘"


def _limits_block(limits: Union[str, Sequence[str], None]) -> Optional[str]:
    if limits is None:
        return None
    items = [limits] if isinstance(limits, str) else list(limits)
    items = [i.strip() for i in items if i and i.strip()]
    if not items:
        return None
    if len(items) == 1 and "\n" not in items[0]:
        return f"**限制与说明**： {items[0]}"
    lines = []
    for item in items:
        for part in item.splitlines():
            part = part.strip()
            if part:
                lines.append(part if part.startswith("- ") else f"- {part}")
    return "**限制与说明**：\n\n" + "\n".join(lines)


def write_vendor_entry(api: str, chips: Mapping[str, bool],
                       limits: Union[str, Sequence[str], None] = None,
                       official_url: Optional[str] = None) -> str:
    """One vendor docs block for ``api``.

    ``chips``: chip name as the vendor writes it (e.g. "Atlas A2 训练系列产品") -> supported;
    order is kept. ``limits``: one sentence, or several (written as a "- " list).
    ``official_url``: the official docs page; without it the link line is left out.
    """
    if not chips:
        raise ValueError("write_vendor_entry needs at least one chip verdict")
    out = [f"### {api}", "", '<div style="margin-left: 2em">', ""]
    if official_url:
        out += [f"**原生文档**：[{api}]({official_url})", ""]
    out += ["**支持情况**：", "", "| 硬件 | 是否支持 |", "| ---- | :----: |"]
    for chip, ok in chips.items():
        out.append(f"| <term>{chip}</term> | {YES if ok else NO} |")
    out.append("")
    block = _limits_block(limits)
    if block:
        out += [block, ""]
    out += ["</div>", ""]
    return "\n".join(out)
