"""The command line: a thin typer shell. Parse, call one function, print.

Commands live in this package by concern (check.py: check, evidence, docs, devices,
profile; sweep.py: sweep, sweep-matrix, predict; deliver.py: gentest, scaffold, matrix, review);
each imports ``app`` from ``shared`` and registers itself.
"""

from __future__ import annotations

import gc
import os
import sys

# torch_npu, when installed, autoloads on `import torch` and breaks it where CANN is
# missing; torchparity imports it explicitly (and only) for --device npu.
os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")

from .width import PIPE_WIDTH, set_help_width  # noqa: E402,F401

set_help_width()

import typer  # noqa: E402

from ..errors import Terminated, TorchparityError  # noqa: E402
from ..version import __version__  # noqa: E402
from .shared import app, out_console  # noqa: E402


def _version(value: bool) -> None:
    if value:
        out_console.print(f"torchparity {__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """torchparity: evidence and deliverables for PyTorch API support on accelerators."""


FAIL_LINE_LIMIT = 1000


def _fail_line(message: str) -> None:
    """One line on stderr, unwrapped, whatever the terminal width."""
    line = " ".join(message.split())
    if len(line) > FAIL_LINE_LIMIT:  # a value no message cut (a huge name) is not echoed whole
        line = f"{line[:FAIL_LINE_LIMIT]}… ({len(line)} characters in all)"
    sys.stderr.write(f"torchparity: {line}\n")
    sys.stderr.flush()


def _interrupted(terminated: bool) -> None:
    """Ctrl-C (130) or SIGTERM (143): workers are gone, what was recorded is kept."""
    _fail_line(f"{'terminated' if terminated else 'interrupted'}; what was recorded so far is kept")
    sys.exit(143 if terminated else 130)


def main() -> None:
    try:
        _main()
    finally:
        # whatever ends the command, the interpreter's last collections skip the objects torch
        # and the op database made: walking them one by one took about a second at every exit
        gc.freeze()


def _main() -> None:
    try:
        code = app(standalone_mode=False)  # click returns the code of typer.Exit here
        if code == 130:  # typer's answer to a KeyboardInterrupt (Ctrl-C or Terminated)
            _interrupted(bool(Terminated.raised))
        sys.exit(code if isinstance(code, int) else 0)
    except TorchparityError as exc:
        _fail_line(str(exc))
        sys.exit(exc.exit_code)
    except KeyboardInterrupt as exc:
        _interrupted(isinstance(exc, Terminated))
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except SystemExit:
        raise
    except Exception as exc:  # click usage errors come here in non-standalone mode
        usage, click_error, abort = _click_types()
        if isinstance(exc, usage) and type(exc).__name__ == "NoArgsIsHelpError":
            exc.show()  # no arguments: the help text, as no_args_is_help promises
            sys.exit(exc.exit_code)
        if isinstance(exc, click_error):
            _fail_line(_usage_line(exc))
            sys.exit(exc.exit_code)
        if isinstance(exc, abort):
            _interrupted(isinstance(exc.__cause__ or exc.__context__, Terminated))
        if os.environ.get("TORCHPARITY_DEBUG"):
            raise
        _fail_line(f"internal error: {type(exc).__name__}: {exc} "
                   "(set TORCHPARITY_DEBUG=1 for the traceback)")
        sys.exit(1)


def _click_types():
    """(UsageError, ClickException, Abort) as tuples over every click that may raise them:
    typer ≥ 0.2x raises the exceptions of the click it bundles (``typer._click``), older
    typer those of the installed ``click`` package; both can be present at once."""
    modules = []
    for name in ("typer._click.exceptions", "click.exceptions", "typer.exceptions"):
        try:
            modules.append(__import__(name, fromlist=["_"]))
        except ImportError:
            continue

    def pick(attr):
        return tuple(t for t in (getattr(m, attr, None) for m in modules) if isinstance(t, type))

    return pick("UsageError"), pick("ClickException"), pick("Abort")


def _usage_line(exc) -> str:
    """One line for a click error: its message, and where the help is for a usage error."""
    message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    ctx = getattr(exc, "ctx", None)
    if ctx is not None and getattr(exc, "exit_code", 1) == 2:
        try:
            message += f" (see '{ctx.command_path} {ctx.help_option_names[0]}')"
        except (AttributeError, IndexError):
            pass
    return message


# the commands register themselves on `app`
from . import check, deliver, explain_skips, sweep  # noqa: E402,F401
