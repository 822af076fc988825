"""Finding the content the framework runs: case and backend directories.

`cases/` and `backends/` are not part of the installed package; they are
content, discovered at run time. A directory is mounted as a synthetic
package (`conformance_content.<name>`) so its files can import each other
with relative imports, and two directories never clash in sys.modules.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
import types
from pathlib import Path

# The checkout this package lives in: its cases/ and backends/ are the defaults.
PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CASES_DIR = PROJECT_ROOT / "cases"
DEFAULT_BACKENDS_DIR = PROJECT_ROOT / "backends"
DEFAULT_XFAIL_DIR = PROJECT_ROOT / "xfail_sets"
DEFAULT_GATES_DIR = PROJECT_ROOT / "gate_sets"

PACKAGE_ROOT = "conformance_content"


def _ensure_namespace(name: str, path: list[str]) -> types.ModuleType:
    module = sys.modules.get(name)
    if module is None:
        module = types.ModuleType(name)
        module.__path__ = path
        module.__package__ = name
        sys.modules[name] = module
    return module


def mount(directory: Path) -> str:
    """Make `directory` importable as a package; return the package name."""
    directory = directory.resolve()
    digest = hashlib.sha1(str(directory).encode()).hexdigest()[:8]
    name = f"{PACKAGE_ROOT}.{directory.name.replace('-', '_')}_{digest}"
    _ensure_namespace(PACKAGE_ROOT, [])
    _ensure_namespace(name, [str(directory)])
    return name


def module_files(directory: Path) -> list[Path]:
    """The content modules under `directory`, sorted; `_private.py` files are helpers."""
    found = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        for f in sorted(files):
            if f.endswith(".py") and not f.startswith("_"):
                found.append(Path(root) / f)
    return found


def import_file(directory: Path, path: Path) -> types.ModuleType:
    """Import `path`, a file under the mounted `directory`."""
    package = mount(directory)
    relative = path.resolve().relative_to(directory.resolve()).with_suffix("")
    return importlib.import_module(".".join((package, *relative.parts)))
