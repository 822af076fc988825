"""Find import cycles in a package: `python tests/import_cycles.py [PACKAGE_DIR]`.

Every `import` statement counts, at module level or inside a function: a
deferred import only hides a cycle until the function runs. The package is
read with `ast`, never imported, so any checkout can be checked (default:
this checkout's conformance/). Prints one cycle and exits 1 if there is one.

A module that imports from a layer above it (the Backend protocol calling up
into the bundle writer, say) closes a cycle sooner or later; keeping the
graph acyclic keeps every layer below the ones that use it.
"""

from __future__ import annotations

import ast
import sys
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

DEFAULT_PACKAGE = Path(__file__).resolve().parent.parent / "conformance"


def modules(package: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file of the package (a package by its __init__)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> dict[str, int]:
    """The package's own modules that `name` imports, each with the line of its first import
    (`from pkg import sub` counts as importing pkg.sub)."""
    is_package = path.name == "__init__.py"
    targets: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the module's own package upwards
                base = name if is_package else name.rpartition(".")[0]
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            found = [f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module for alias in node.names]
        else:
            continue
        for target in found:
            if target in known and target != name:
                targets[target] = min(targets.get(target, node.lineno), node.lineno)
    return targets


def imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's own modules that `name` imports."""
    return set(imports(name, path, known))


def import_graph(package: Path) -> dict[str, set[str]]:
    known = modules(package)
    return {name: imported(name, path, known) for name, path in known.items()}


def find_cycle(package: Path) -> list[str] | None:
    """One import cycle as [a, b, ..., a], or None when the graph has none."""
    try:
        TopologicalSorter(import_graph(package)).prepare()
    except CycleError as error:
        return list(reversed(error.args[1]))  # graphlib lists it against the import direction
    return None


def package_given(argv: list[str]) -> Path | None:
    """The package a script is to read (its argument, else this checkout's); None, having said why, when it is none."""
    package = Path(argv[0]) if argv else DEFAULT_PACKAGE
    if not (package / "__init__.py").is_file():
        print(f"{package} is not a Python package (no __init__.py): give the package's folder, e.g. conformance/")
        return None
    return package


def main(argv: list[str]) -> int:
    package = package_given(argv)
    if package is None:
        return 2
    cycle = find_cycle(package)
    if cycle:
        print(f"import cycle in {package}:\n  " + "\n  -> ".join(cycle))
        return 1
    print(f"no import cycles in {package} ({len(modules(package))} modules)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
