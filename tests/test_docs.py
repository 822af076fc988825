"""The README and docs/ name only what exists: paths, modules, commands, options, links, the layout.

Prose drifts from code quietly (a file moves, an option is renamed, a module
is added and never listed). These tests read README.md and docs/*.md as a
newcomer would follow them and check each name against the tree, the
`conformance` command's parser, pytest's `--help` (the plugin's options
included), the shipped backends' own options and the external tools' own
help. A name that is only an example carries a placeholder: `<backend>`,
`DIR`, `PATH`.
"""

from __future__ import annotations

import argparse
import ast
import glob
import re
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Iterator

import pytest

from tests.layers import DEFAULT_PACKAGE, floors, picture

PROJECT = DEFAULT_PACKAGE.parent
README = PROJECT / "README.md"
DOCS = [README, *sorted((PROJECT / "docs").glob("*.md"))]

# Docs that other branches are adding: linked from the README before they land. Remove a name once its file is in.
ARRIVING: set[str] = set()

# The project's top-level folders a path in the docs may start with (reports/ is generated: not checked).
FOLDERS = ("conformance", "cases", "backends", "xfail_sets", "benchmarks", "tests", "docs", "scripts")
PATH = re.compile(r"(?<![\w./@-])(?:%s)/[\w./<>*@-]*" % "|".join(FOLDERS))
MODULE = re.compile(r"(?<![\w./-])conformance(?:\.[A-Za-z_]\w*)+")
OPTION = re.compile(r"(?<![\w-])--[a-z][\w-]*")
COMMAND = re.compile(r"^\s*conformance ([a-z][\w-]*)", flags=re.M)  # as typed: at the start of a code span or a line
LINK = re.compile(r"\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`([^`\n]+)`")


def text(doc: Path) -> str:
    return doc.read_text()


def code(doc: Path) -> str:
    """What a reader would type: inline code spans and the lines of fenced blocks."""
    content = text(doc)
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", content, flags=re.S | re.M)
    return "\n".join([*CODE_SPAN.findall(re.sub(r"^```.*?^```", "", content, flags=re.S | re.M)), *blocks])


def where(doc: Path) -> str:
    return str(doc.relative_to(PROJECT))


# -- paths -------------------------------------------------------------------


def path_exists(name: str) -> bool:
    """A path in the tree; `*` must match something, `<placeholder>` only needs the folder before it."""
    name = name.rstrip(".,:;")
    if name in ARRIVING:
        return True
    if "<" in name:
        return (PROJECT / name.split("<", 1)[0]).parent.exists() if "/" in name.split("<", 1)[0] else True
    if "*" in name:
        return bool(glob.glob(str(PROJECT / name)))
    return (PROJECT / name).exists()


@pytest.mark.parametrize("doc", DOCS, ids=where)
def test_every_path_named_exists(doc):
    missing = sorted({p for p in PATH.findall(text(doc)) if not path_exists(p)})
    assert not missing, f"{where(doc)} names paths that are not in the tree: {missing}"


# -- modules: conformance.x.y[.Name] ---------------------------------------------


def defines(module_file: Path, name: str) -> bool:
    tree = ast.parse(module_file.read_text())
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return True
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any((a.asname or a.name) == name for a in node.names):
            return True
    return False


def module_exists(dotted: str) -> bool:
    """`conformance.a.b` is a module or package; `conformance.a.b.Name` a name defined at the top of one."""
    parts = dotted.rstrip(".").split(".")
    for cut in range(len(parts), 0, -1):
        base = PROJECT.joinpath(*parts[:cut])
        for file in (base.with_suffix(".py"), base / "__init__.py"):
            if file.is_file():
                rest = parts[cut:]
                return not rest or (len(rest) == 1 and defines(file, rest[0]))
    return False


@pytest.mark.parametrize("doc", DOCS, ids=where)
def test_every_module_named_exists(doc):
    missing = sorted({m for m in MODULE.findall(text(doc)) if not module_exists(m)})
    assert not missing, f"{where(doc)} names modules or names that do not exist: {missing}"


# -- commands and options ------------------------------------------------------


def _options_of(parser: argparse.ArgumentParser) -> set[str]:
    found = {flag for flag in parser._option_string_actions if flag.startswith("--")}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= _options_of(sub)
    return found


@cache
def commands() -> set[str]:
    from conformance.cli.main import build_parser

    parser = build_parser()
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return set(sub.choices)


def help_flags(command: list[str]) -> set[str]:
    """The options a program's --help names."""
    proc = subprocess.run(command, capture_output=True, text=True, cwd=PROJECT, timeout=120)
    assert proc.returncode == 0, f"{command}: {proc.stdout}{proc.stderr}"
    return set(OPTION.findall(proc.stdout + proc.stderr))


def venv_tool(name: str) -> str:
    found = Path(sys.executable).parent / name
    return str(found) if found.exists() else name


@cache
def known_options() -> frozenset[str]:
    """Ours (the commands, pytest with the plugin, the shipped backends' own), the external tools' and the benchmarks'."""
    from conformance.backends.loader import shipped
    from conformance.cli.main import build_parser
    from conformance.toolchain.tools import tosa_tools_prefixes

    ours = _options_of(build_parser())
    ours |= help_flags([sys.executable, "-m", "pytest", "--help"])
    ours |= {flag for backend in shipped().values() for option in backend.options for flag in option.flags}
    tosa_opt = next((str(p / "bin" / "tosa-opt") for p in tosa_tools_prefixes() if (p / "bin" / "tosa-opt").exists()), "tosa-opt")
    tools = help_flags([venv_tool("iree-compile"), "--help-hidden"])
    tools |= help_flags([venv_tool("iree-run-module"), "--help"])
    tools |= help_flags([venv_tool("torch-mlir-opt"), "--help"])
    tools |= help_flags([tosa_opt, "--help"])
    tools |= help_flags([venv_tool("ray"), "start", "--help"])
    tools |= help_flags([sys.executable, "-m", "pip", "install", "--help"])
    scripts = {flag for script in (PROJECT / "benchmarks").glob("*.py") for flag in OPTION.findall(script.read_text())}
    return frozenset(ours | tools | scripts)


@pytest.mark.parametrize("doc", DOCS, ids=where)
def test_every_option_named_exists(doc):
    """An option in the docs is one of ours, or one of the external tool's it is shown with (iree-compile, tosa-opt, ...)."""
    named = {o for o in OPTION.findall(text(doc)) if not o.endswith("-")}  # `--iree-<target>-target`: a pattern
    unknown = sorted(named - known_options())
    assert not unknown, f"{where(doc)} names options that no command, backend or tool takes: {unknown}"


@pytest.mark.parametrize("doc", DOCS, ids=where)
def test_every_conformance_command_named_exists(doc):
    unknown = sorted(set(COMMAND.findall(code(doc))) - commands())
    assert not unknown, f"{where(doc)} names `conformance` commands that do not exist: {unknown} (known: {sorted(commands())})"


# -- links -------------------------------------------------------------------


def anchors(doc: Path) -> set[str]:
    """GitHub's anchors for a file's headings."""
    found = set()
    for heading in re.findall(r"^#+ (.*)$", text(doc), flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower()).replace(" ", "-")
        found.add(slug)
    return found


@pytest.mark.parametrize("doc", DOCS, ids=where)
def test_every_link_leads_somewhere(doc):
    broken = []
    for target in LINK.findall(text(doc)):
        if re.match(r"[a-z]+:", target):
            continue  # a URL
        file, _, anchor = target.partition("#")
        path = (doc.parent / file).resolve() if file else doc
        if str(path.relative_to(PROJECT)) in ARRIVING and not path.exists():
            continue
        if not path.exists():
            broken.append(target)
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target} (no such heading)")
    assert not broken, f"{where(doc)} links to what is not there: {broken}"


def test_the_arriving_docs_are_still_arriving():
    """A name stays in ARRIVING only until its file is in; then the link is checked like the others."""
    arrived = sorted(name for name in ARRIVING if (PROJECT / name).exists())
    assert not arrived, f"remove {arrived} from ARRIVING in tests/test_docs.py: they are in docs/ now"


# -- the layout --------------------------------------------------------------


def test_the_readme_draws_the_floors_the_package_has():
    """The picture is what `python tests/layers.py` prints; when the floors change, paste its output."""
    drawn = picture(floors(DEFAULT_PACKAGE))
    assert f"```\n{drawn}\n```" in text(README), f"README.md's picture of the floors is not the package's; it is now:\n{drawn}"


def test_the_readme_has_a_line_for_every_folder_of_the_package():
    listed = set(re.findall(r"^\| `conformance/([\w/]+)/` \|", text(README), flags=re.M))
    folders = {p.parent.name for p in DEFAULT_PACKAGE.glob("*/*.py")}
    assert listed == folders, f"README.md's folder table: missing {sorted(folders - listed)}, not folders {sorted(listed - folders)}"


def module_tree() -> Iterator[str]:
    """docs/architecture.md's tree of every module: each entry's path, under the folder above it (two spaces a level)."""
    content = (PROJECT / "docs" / "architecture.md").read_text()
    block = re.search(r"^```\n(.*?)^```", content[content.index("## Every module") :], flags=re.S | re.M).group(1)
    stack: list[str] = []
    for line in block.splitlines():
        name = line.split()[0]
        assert name.endswith(("/", ".py")), f"docs/architecture.md, module tree: {line!r} names no folder or module"
        depth = (len(line) - len(line.lstrip())) // 2
        stack[depth:] = [name.rstrip("/")]
        yield "/".join(stack)


def test_every_module_of_the_package_is_in_the_architecture_doc_and_nothing_else():
    listed = set(module_tree())
    not_there = sorted(path for path in listed if not (PROJECT / path).exists())
    modules = {str(p.relative_to(PROJECT)) for p in DEFAULT_PACKAGE.rglob("*.py") if p.name != "__init__.py"}
    assert not not_there, f"docs/architecture.md lists what is not in the tree: {not_there}"
    assert not modules - listed, f"docs/architecture.md's module tree lacks: {sorted(modules - listed)}"


def test_the_readme_stays_a_front_page():
    """About 15 KB: what the tool is, the two commands, a quick start, the layout, links. Topics go to docs/."""
    assert README.stat().st_size <= 15_500, f"README.md is {README.stat().st_size} bytes: move a topic to docs/"


def test_the_readme_keeps_the_two_commands_ci_runs():
    """`make report` and `make test` (the Makefile, .ci/run) are the README's two commands."""
    readme = text(README)
    assert "make report" in readme and "make test" in readme
    makefile = (PROJECT / "Makefile").read_text()
    assert re.search(r"^report:", makefile, flags=re.M) and re.search(r"^test:", makefile, flags=re.M)
    assert "make test" in (PROJECT / ".ci" / "run").read_text()


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, *sys.argv[1:]]))
