"""The package's folders and the direction of their imports: `python tests/layers.py [PACKAGE_DIR]`.

A folder here is what sits directly in a package: a subpackage with all
below it (report/ holds report/html/), or a module (run_options.py). No two
folders may import each other, directly or through others, at any depth
(in report/, html/ and report's own modules neither): then the folders
stand in floors, each importing only from floors below its own, and a
newcomer can read the package from the bottom up. Every import counts,
inside a function too: a deferred import still ties two folders together.

import_cycles.py checks modules; this checks folders, which a module-level
check misses: report/build.py -> nightly/store.py and nightly/record.py ->
report/summary.py is no module cycle, but report/ and nightly/ would each
stand above the other. The script prints the floors, top first, and exits 0;
or, where folders import each other, every import on the loop (file:line)
and exits 1.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

if __package__ in (None, ""):  # run as a script: import_cycles.py sits beside it
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from import_cycles import DEFAULT_PACKAGE, imports, modules, package_given
else:
    from tests.import_cycles import DEFAULT_PACKAGE, imports, modules, package_given


class Import:
    """One import statement: `module` (at `path`:`line`) imports `target`."""

    def __init__(self, module: str, path: Path, line: int, target: str):
        self.module, self.path, self.line, self.target = module, path, line, target

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.module} imports {self.target}"


def all_imports(package: Path) -> list[Import]:
    known = modules(package)
    return [Import(name, path, line, target) for name, path in known.items() for target, line in imports(name, path, known).items()]


def child(package: str, module: str) -> str | None:
    """The folder directly in `package` that holds `module` (None when `module` is outside it, or is `package` itself)."""
    if not module.startswith(package + "."):
        return None
    return f"{package}.{module[len(package) + 1:].split('.')[0]}"


def folder_imports(package: str, found: list[Import]) -> dict[tuple[str, str], list[Import]]:
    """(folder, folder it imports) -> the imports that make the arrow, for the folders directly in `package`."""
    arrows: dict[tuple[str, str], list[Import]] = defaultdict(list)
    for i in found:
        a, b = child(package, i.module), child(package, i.target)
        if a and b and a != b:
            arrows[(a, b)].append(i)
    return arrows


def loop_in(arrows: dict[tuple[str, str], list[Import]]) -> list[str] | None:
    """One loop of folders as [a, b, ..., a] (a imports b ...), or None."""
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in arrows:
        graph[a].add(b)
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as error:
        return list(reversed(error.args[1]))  # graphlib lists it against the import direction
    return None


def packages(package: Path) -> list[str]:
    """The dotted names of `package` and every subpackage in it."""
    base = package.name
    return [base] + sorted(f"{base}.{'.'.join(p.parent.relative_to(package).parts)}" for p in package.rglob("*/__init__.py"))


def loops(package: Path) -> list[list[Import]]:
    """For each package level with folders importing each other: the imports along one such loop."""
    found = all_imports(package)
    out = []
    for name in packages(package):
        arrows = folder_imports(name, found)
        loop = loop_in(arrows)
        if loop:
            out.append([i for a, b in zip(loop, loop[1:]) for i in arrows[(a, b)]])
    return out


def floors(package: Path) -> list[list[str]]:
    """The folders directly in `package`, by floor, top first: each imports only from floors below (its longest path down)."""
    arrows = folder_imports(package.name, all_imports(package))
    below: dict[str, set[str]] = defaultdict(set)
    for a, b in arrows:
        below[a].add(b)
    names = {child(package.name, m) for m in modules(package)} - {None}
    floor: dict[str, int] = {}
    for name in TopologicalSorter({n: below[n] for n in names}).static_order():  # lower folders first
        floor[name] = 1 + max((floor[b] for b in below[name]), default=0)
    top = max(floor.values(), default=0)
    return [sorted(n.split(".", 1)[1] for n in names if floor[n] == f) for f in range(top, 0, -1)]


def picture(levels: list[list[str]]) -> str:
    """The floors as the script prints them (and README.md shows them): number, then names, top first."""
    return "\n".join(f"  {number:2}  {'  '.join(names)}" for number, names in zip(range(len(levels), 0, -1), levels))


def main(argv: list[str]) -> int:
    package = package_given(argv)
    if package is None:
        return 2
    found = loops(package)
    for loop in found:
        print(f"folders of {package} import each other; the imports along the loop:\n  " + "\n  ".join(str(i) for i in loop))
    if found:
        return 1
    levels = floors(package)
    print(f"the folders of {package}, top floor first (each imports only from floors below it):")
    print(picture(levels))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
