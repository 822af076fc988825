"""Importing a torch-mlir checkout's e2e test modules: the tests they register, and the modules that fail.

The test modules are imported one by one in the order the checkout's own
register_all_tests() names them (read from its source, not run), so a
module that fails to import loses no other module's tests. Only one
checkout per process: the registry is a module global of the checkout's
code.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.cases.registry import RegistryError
from conformance.cases.sources.torch_mlir_e2e.stand_ins import multiprocess_stand_in, placeholders_for_missing_packages

PYTHON_TREE = Path("projects/pt1/python")
PACKAGE = "torch_mlir_e2e_test"


def suite_modules(checkout: Path) -> list[str]:
    """The test modules test_suite's register_all_tests() imports, in its order (read, not run)."""
    init = checkout / PYTHON_TREE / PACKAGE / "test_suite" / "__init__.py"
    tree = ast.parse(init.read_text(), str(init))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "register_all_tests":
            return [
                alias.name
                for statement in ast.walk(node)
                if isinstance(statement, ast.ImportFrom) and statement.level == 1 and not statement.module
                for alias in statement.names
            ]
    raise RegistryError(f"{init}: no register_all_tests() naming the test modules")


@dataclass
class Registered:
    """A checkout's registry as loaded: each test with its module, and the modules that failed to import."""

    checkout: Path
    tests: list[tuple[Any, str]]  # (the registry's Test, the test module's name)
    failed: dict[str, str]  # module name -> its import error
    test_utils: type  # the checkout's TestUtils (its constructor seeds as torch-mlir's runner does)


_LOADED: dict[Path, Registered] = {}


def load(checkout: Path) -> Registered:
    """Import the checkout's test modules one by one (once per process); a failing one loses no other."""
    if checkout in _LOADED:
        return _LOADED[checkout]
    if _LOADED:
        raise RegistryError(f"torch-mlir's e2e registry is already loaded from {next(iter(_LOADED))}: one checkout per process")
    python_tree = str(checkout / PYTHON_TREE)
    if python_tree not in sys.path:
        sys.path.insert(0, python_tree)
    if importlib.util.find_spec("multiprocess") is None:
        sys.modules["multiprocess"] = multiprocess_stand_in()
    from importlib import import_module

    package = import_module(PACKAGE)
    where = Path(package.__file__).resolve().parent
    if where != checkout / PYTHON_TREE / PACKAGE:
        raise RegistryError(
            f"{PACKAGE} is imported from {where}, not from the checkout {checkout} (another torch-mlir tree on sys.path?)"
        )
    registry = import_module(f"{PACKAGE}.registry")
    framework = import_module(f"{PACKAGE}.framework")
    tests: list[tuple[Any, str]] = []
    failed: dict[str, str] = {}
    with placeholders_for_missing_packages():
        for name in suite_modules(checkout):
            before = len(registry.GLOBAL_TEST_REGISTRY)
            try:
                import_module(f"{PACKAGE}.test_suite.{name}")
            except Exception as e:  # the tests it registered before failing are kept
                failed[name] = f"{type(e).__name__}: {first_line(str(e))}"
            tests += [(test, name) for test in registry.GLOBAL_TEST_REGISTRY[before:]]
    _LOADED[checkout] = Registered(checkout, tests, failed, framework.TestUtils)
    return _LOADED[checkout]


def first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")
