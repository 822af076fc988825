"""What a pair's result depends on, as digests of files and versions, read without importing torch.

At the grain of source trees: a case is its source's tree (the project's
cases/ directory, a --cases directory, a torch-mlir checkout's e2e package),
a backend the tree of the package that defines it (the shipped backends/
directory, a user's package) or its file, and conformance is its own
package. A change anywhere in a tree misses for every case of it: coarse,
never stale.
"""

from __future__ import annotations

import sys
from importlib.metadata import entry_points
from pathlib import Path

from conformance import content

def case_entry_points() -> list[str]:
    """The installed plugins that add cases: one installed later adds cases to every selection."""
    return sorted(f"{ep.name}={ep.value}" for ep in entry_points(group="conformance.cases"))


def defining_tree(obj: object) -> str | None:
    """The directory of the package that defines `obj`'s class, or its file; None when unknown.

    A directory the registry or the backend loader mounts (content.import_file: the shipped
    backends/, a --cases directory) counts as one package.
    """
    name = type(obj).__module__
    file = getattr(sys.modules.get(name), "__file__", None)
    if not file:
        return None
    parts = name.split(".")
    root = ".".join(parts[:2]) if parts[0] == content.PACKAGE_ROOT else parts[0]
    directories = list(getattr(sys.modules.get(root), "__path__", None) or [])
    if root != name and len(directories) == 1:
        return str(Path(directories[0]).resolve())
    return str(Path(file).resolve())
