"""Rebuild the shipped census index (``evidence/census_index.json.gz``) from a checkout::

    python -m torchparity.app.census_index --tests ASCEND_PYTORCH/test \\
        --source Ascend/pytorch --commit <sha> [API ...]

The commit is recorded as given. Without APIs it indexes every API with registered
scenarios and the public functions and classes of ``torch.autograd`` and its submodules.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import List, Optional, Sequence

from ..evidence.census_index import INDEX_FILE, build
from ..scenarios.registry import load_suites, registered_apis


def default_apis() -> List[str]:
    import inspect
    import pkgutil

    import torch.autograd

    load_suites()
    names = list(registered_apis())
    mods = [torch.autograd] + [__import__(f"torch.autograd.{m.name}", fromlist=["_"])
                               for m in pkgutil.iter_modules(torch.autograd.__path__)
                               if not m.name.startswith("_")]
    for mod in mods:
        for name, obj in vars(mod).items():
            if name.startswith("_") or not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            if getattr(obj, "__module__", "") == mod.__name__:
                names.append(f"{mod.__name__}.{name}")
    return list(dict.fromkeys(names))



def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description="Rebuild the shipped census index.")
    parser.add_argument("--tests", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--commit", required=True)
    parser.add_argument("--out", default=str(INDEX_FILE))
    parser.add_argument("apis", nargs="*")
    args = parser.parse_args(argv)
    apis = args.apis or default_apis()
    n = build(args.tests, args.source, args.commit, apis, Path(args.out))
    print(f"indexed {n} of {len(apis)} APIs -> {args.out}")


if __name__ == "__main__":
    main()
