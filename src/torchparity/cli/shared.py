"""What the command modules share: the typer apps, the consoles, the option help texts.

Imported by ``cli/__init__.py`` (after it has set the environment up) and by every
command module; it imports none of them.
"""

from __future__ import annotations

import sys

import typer
from rich.console import Console

from .width import help_settings, width_for

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  context_settings=help_settings(),
                  help="Does this PyTorch API behave on the device as on the CPU — for which "
                       "dtypes, and if not, why?")
profile_app = typer.Typer(no_args_is_help=True, context_settings=help_settings(), help="Capability profiles of emulated devices.")
app.add_typer(profile_app, name="profile")

out_console = Console(width=width_for(sys.stdout))
err_console = Console(stderr=True, width=width_for(sys.stderr))

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


def say(text: str) -> None:
    """A plain line: API names with brackets are not rich markup."""
    out_console.print(text, markup=False, highlight=False, soft_wrap=True)
