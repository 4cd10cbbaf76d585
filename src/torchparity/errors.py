"""Errors that reach the user as one line and a non-zero exit (never a traceback).

Every module may raise these; the CLI prints ``str(err)`` and exits with ``err.exit_code``.
"""

from __future__ import annotations


class TorchparityError(Exception):
    exit_code = 2


class UnknownApiError(TorchparityError):
    """A dotted name that does not resolve; the message carries close matches."""


class DeviceUnavailableError(TorchparityError):
    """The requested device cannot be used here (backend missing, no hardware, ...)."""


class ProfileError(TorchparityError):
    """A capability profile that cannot be loaded; the message names file, key and problem."""


class InputError(TorchparityError):
    """Any other bad input: a missing folder, an unreadable file, a bad option value."""


class OutputError(TorchparityError):
    """Results could not be written where asked; the message says where they were kept."""


class Terminated(KeyboardInterrupt):
    """SIGTERM reached the main process: handled like Ctrl-C (workers ended, what was
    recorded kept), exit status 143."""

    raised = 0  # how often, in this process: typer turns any KeyboardInterrupt into exit
    # code 130 before the CLI sees the exception, so the CLI asks here

    def __init__(self, *args) -> None:
        super().__init__(*args)
        Terminated.raised += 1


def first_problem(exc) -> str:
    """The first problem of a pydantic ValidationError as one line: "key 'a.b': message"."""
    err = exc.errors()[0]
    key = ".".join(str(p) for p in err["loc"]) or "(top level)"
    return f"key '{key}': {err['msg']}"


SHOWN_LIMIT = 80  # characters of a user's value a one-line message echoes


def shown(value, limit: int = SHOWN_LIMIT) -> str:
    """A user's value as a message may echo it: on one line (control characters as
    ``\\xNN``-style escapes) and cut to ``limit`` characters, saying how long it was
    (a 120 KB API name is not echoed whole)."""
    text = str(value)
    if len(text) > limit:
        text = f"{text[:limit]}… ({len(str(value))} characters)"
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
