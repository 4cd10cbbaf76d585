"""Helpers shared by the emulator tests."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parents[3]


def run_python(code: str, tmp_path: Path, profile_yaml: Optional[str] = None,
               timeout: float = 120) -> str:
    """Run ``code`` in a fresh interpreter and return its stdout; fail on a non-zero exit.

    With ``profile_yaml`` the snippet is preceded by activating that profile (written to
    ``tmp_path/profile.yaml``) and ``PROFILE`` holds the loaded profile.
    """
    prelude = "import warnings\nwarnings.filterwarnings('ignore')\n"
    if profile_yaml is not None:
        path = tmp_path / "profile.yaml"
        path.write_text(textwrap.dedent(profile_yaml), encoding="utf-8")
        prelude += textwrap.dedent(f"""\
            import torch
            from torchparity.devices.emulator import activate
            from torchparity.devices.profiles import load_profile
            PROFILE = load_profile({str(path)!r})
            activate(PROFILE)
            """)
    script = tmp_path / "snippet.py"
    script.write_text(prelude + textwrap.dedent(code), encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=timeout, cwd=str(tmp_path), env=env)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr[-4000:]}"
    return proc.stdout
