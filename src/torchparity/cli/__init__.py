"""The command line: a thin typer shell. Parse, call one function, print.

Commands live in this package by concern (check.py: check, evidence, docs, devices,
profile; sweep.py: sweep, sweep-matrix, predict; deliver.py: gentest, scaffold, matrix, review);
each imports ``app`` from here and registers itself.
"""

from __future__ import annotations

import os
import sys

# torch_npu, when installed, autoloads on `import torch` and breaks it where CANN is
# missing; torchparity imports it explicitly (and only) for --device npu.
os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")

# not a terminal (CI logs, `| tee`, a file): tables and --help at a fixed wide width instead
# of rich's 80 columns, which cut option names and API names
PIPE_WIDTH = 160
_PIPED = not sys.stdout.isatty()
if _PIPED:
    os.environ.setdefault("TERMINAL_WIDTH", str(PIPE_WIDTH))  # typer's help, read at import

import typer  # noqa: E402
from rich.console import Console  # noqa: E402

from .. import __version__  # noqa: E402
from ..errors import Terminated, TorchparityError  # noqa: E402

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Does this PyTorch API behave on the device as on the CPU — for which "
                       "dtypes, and if not, why?")
profile_app = typer.Typer(no_args_is_help=True, help="Capability profiles of emulated devices.")
app.add_typer(profile_app, name="profile")

out_console = Console(width=PIPE_WIDTH if _PIPED else None)
err_console = Console(stderr=True, width=PIPE_WIDTH if not sys.stderr.isatty() else None)

TESTS_HELP = ("A test tree (PyTorch's test/ or a backend's port) for the upstream test census; "
              "check also runs each API's tests there on the device and on the CPU.")
DOCS_HELP = "PyTorch docs sources (docs/ or docs/source) for the official docs check."
VENDOR_HELP = "Vendor support docs: Ascend's native_api folder (pytorch_X-Y-Z/ inside)."
CONFIG_HELP = ("YAML file with defaults for device, tests, docs, vendor_docs, torch_version, chips, "
               "timeout, jobs; flags override it.")
EXECUTOR_HELP = ("Where cases run: local (worker processes here) or ray (one actor per device slot "
                 "of a Ray cluster; needs torchparity's 'ray' extra).")
RAY_ADDRESS_HELP = ("With --executor ray: the cluster to join (auto, HOST:PORT, ray://HOST:PORT) "
                    "(default: a private local Ray).")
DEVICE_HELP = ("cpu, cuda[:N], npu[:N], xpu, mps, auto (first available accelerator), or "
               "emu:<profile> for the emulated accelerator (e.g. emu:ascend-a2)")


def _version(value: bool) -> None:
    if value:
        out_console.print(f"torchparity {__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """torchparity: evidence and deliverables for PyTorch API support on accelerators."""


def _fail_line(message: str) -> None:
    """One line on stderr, unwrapped, whatever the terminal width."""
    line = " ".join(message.split())
    sys.stderr.write(f"torchparity: {line}\n")
    sys.stderr.flush()


def _interrupted(terminated: bool) -> None:
    """Ctrl-C (130) or SIGTERM (143): workers are gone, what was recorded is kept."""
    _fail_line(f"{'terminated' if terminated else 'interrupted'}; what was recorded so far is kept")
    sys.exit(143 if terminated else 130)


def main() -> None:
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


def _say(text: str) -> None:
    """A plain line: API names with brackets are not rich markup."""
    out_console.print(text, markup=False, highlight=False, soft_wrap=True)


# the commands register themselves on `app`
from . import check, deliver, sweep  # noqa: E402,F401
