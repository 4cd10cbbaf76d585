"""Reading and writing result bundles (report.json)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from pydantic import ValidationError

from ..errors import InputError, first_problem, shown
from .models import Report


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_text_atomic(path: Path, text: str) -> None:
    """Write via a temporary file and rename, so a crash never leaves half a file. The file
    gets the permissions a plain ``open`` would give (0666 less the umask), not mkstemp's 0600."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=str(path.parent))
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def prepare_out(out: Path, flag: str = "--out") -> Path:
    """Make sure ``out`` is a folder we can write to, before anything runs: created if
    missing; a file in the way, a read-only or full filesystem is one line (exit 2) now,
    not an error after every case has run."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"{flag} {shown(out)}: exists and is not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{flag} {shown(out)}: cannot create folder: {exc.strerror or exc}") from None
    try:
        fd, probe = tempfile.mkstemp(prefix=".torchparity-probe-", dir=str(out))
        try:
            os.write(fd, b"probe\n")
        finally:
            os.close(fd)
            os.unlink(probe)
    except OSError as exc:
        raise InputError(f"{flag} {shown(out)}: cannot write there: {exc.strerror or exc}") from None
    return out


def save_report(report: Report, path: Path) -> None:
    text = json.dumps(report.model_dump(mode="json", by_alias=True), ensure_ascii=False, indent=2)
    write_text_atomic(path, text + "\n")


def load_report(path: Path) -> Report:
    path = Path(path)
    if path.is_dir():
        path = path / "report.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"{path}: cannot read report: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not a torchparity report: not UTF-8 text (byte {exc.start})") from None
    except RecursionError:
        raise InputError(f"{path}: not a torchparity report: nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not JSON ({exc.msg}, line {exc.lineno})") from None
    except ValueError as exc:  # an integer of over 4,300 digits (Python's int-string limit)
        raise InputError(f"{path}: not a torchparity report: {shown(exc, 120)}") from None
    try:
        return Report.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"{path}: not a torchparity report: {first_problem(exc)}") from None
