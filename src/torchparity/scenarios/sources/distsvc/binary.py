"""The binary the ``distsvc`` subprocess case launches (``python -m`` this module): one
rank of ``start_processes`` with an executable entry point; ``child.binary_step`` is
what it runs."""

from __future__ import annotations

import sys

from .child import binary_step

if __name__ == "__main__":
    sys.exit(binary_step(sys.argv[1:]))
