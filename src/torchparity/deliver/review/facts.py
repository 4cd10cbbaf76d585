"""What torchparity itself knows of each API the text names (given by the caller)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass
class Facts:
    """torchparity's own reading of one API (from api/ analysis and the category rules)."""

    api: str
    resolved: bool = True
    category: Optional[str] = None  # None: our analysis cannot decide
    rule: Optional[str] = None
    involvement: Optional[str] = None  # none | indirect | direct
    implementation: Optional[str] = None
    harness: bool = False
    summary: Optional[str] = None  # first docstring paragraph (English)
    note: Optional[str] = None

    def why(self, lang: str) -> str:
        if self.category is None:
            return self.note or ("undecided" if lang == "en" else "无法判定")
        if lang == "en":
            bits = [f"implementation {self.implementation}", f"device involvement {self.involvement or 'unknown'}"]
            if self.harness:
                bits.append("wraps user code (harness)")
            return f"{self.category} by rule '{self.rule}' ({', '.join(bits)})"
        from ..vocab import term

        inv = {"direct": "直接涉及设备算子", "indirect": "间接涉及设备算子", "none": "不涉及设备算子"}
        bits = [f"实现方式：{term('implementation', self.implementation, 'zh')}",
                inv.get(self.involvement or "", "设备算子情况未知")]
        if self.harness:
            bits.append("包裹用户代码（harness）")
        return f"{self.category}（规则「{self.rule}」：{'，'.join(bits)}）"
