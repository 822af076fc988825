"""torch-mlir's e2e registry as cases: `--cases torch-mlir-e2e:PATH`, PATH a torch-mlir checkout.

The registry is the suite torch-mlir's own CI runs: test modules under
projects/pt1/python/torch_mlir_e2e_test/test_suite, each test registered
with a module factory and a test function that calls `forward` on inputs it
makes. The torch-mlir wheel does not ship it, so it is read from the
user's checkout, which is never modified. Each test becomes a case:

    id             torch-mlir.<test name> (suite torch-mlir-e2e, tag torch-mlir)
    module         the test's factory
    inputs         exact: what the test function passes to `forward`, captured
                   by running it against a recording stand-in for the module,
                   seeded as torch-mlir seeds it (factory, then its TestUtils,
                   which seeds 0). Captured in the worker when the case runs:
                   the registry's inputs total 2.8 GB.
    export         strict and static, as torch-mlir's FX configs export
    tolerances     theirs: rtol 1e-3, atol 1e-7
    eager context  mkldnn off where the test function turns it off around forward

A test the importer cannot express is SKIP with the reason (a package not
installed, keyword or non-tensor arguments, forward called on inputs of
different shapes); one whose own eager run fails or runs past its own
timeout is CASE_ERROR; a test module that fails to import is a CASE_ERROR
case of its own. `conformance list` counts them by reason.

`--suite torch-mlir-e2e-dynamic` adds a variant of each test with the -1
dims of its `@annotate_args` exported as dynamic (id suffix `.dynamic`),
where the real inputs allow it (a -1 dim of size 0 or 1 stays static:
torch.export specialises those). It is not the default: torch-mlir's own
FX configs ignore the annotations and export static shapes, so the static
cases are the ones whose verdicts compare with torch-mlir's CI.

Loading the checkout beside the wheel takes three stand-ins, none of which
touches the checkout: its python tree goes first on sys.path (the wheel's
and the checkout's `torch_mlir` are both namespace packages, so they merge);
`multiprocess`, which framework.py imports for a pool this never uses, is a
module of its own when it is not installed (aliasing the standard library's
would let framework.py switch the whole process's start method); and while
the test modules are imported, an optional package that is missing
(torchvision) is a placeholder, so a module importing it at the top still
registers its other tests. Only one checkout per process: the registry is
a module global of the checkout's code.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import multiprocessing
import signal
import sys
import threading
import types
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from conformance.cases.registry import CaseSource, RegistryError
from conformance.cases.spec import Case, CaseUnavailable, Exact

SUITE = "torch-mlir-e2e"
DYNAMIC_SUITE = "torch-mlir-e2e-dynamic"
PREFIX = "torch-mlir."
TAG = "torch-mlir"
PYTHON_TREE = Path("projects/pt1/python")
PACKAGE = "torch_mlir_e2e_test"
OPTIONAL_PACKAGES = ("torchvision",)
ANNOTATIONS = "_torch_mlir_arg_annotations"  # what the checkout's annotate_args sets on forward
RTOL, ATOL = 1e-3, 1e-7  # torch-mlir's own comparison: allclose(rtol=1e-3, atol=1e-7) for every float dtype


def sources(location: str, spec: str) -> list[CaseSource]:
    """The static cases (loaded whenever the source is named) and the dynamic variants (with --suite)."""
    checkout = Path(location).expanduser()
    if not (checkout / PYTHON_TREE / PACKAGE / "registry.py").is_file():
        raise RegistryError(
            f"--cases {spec}: {checkout} is not a torch-mlir checkout (no {PYTHON_TREE / PACKAGE / 'registry.py'} in it)"
        )
    checkout = checkout.resolve()
    return [
        CaseSource(
            label=spec, load_module=lambda: cases(checkout, dynamic=False), suite=SUITE,
            origin=str(checkout / PYTHON_TREE / PACKAGE), report=lambda: not_importable(checkout),
        ),
        CaseSource(
            label=f"{spec} (dynamic)", load_module=lambda: cases(checkout, dynamic=True), suite=DYNAMIC_SUITE,
            opt_in=True, origin=str(checkout / PYTHON_TREE / PACKAGE),
        ),
    ]


# -- loading the registry ----------------------------------------------------------


class MissingPackage(ImportError):
    """A test uses an optional package that is not installed."""

    def __init__(self, package: str):
        super().__init__(f"needs {package}, which is not installed")
        self.package = package


class _Placeholder:
    """Anything of a missing package a test module names at import; using it raises MissingPackage."""

    def __init__(self, path: str):
        self._path = path

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Placeholder(f"{self._path}.{name}")

    def __call__(self, *args, **kwargs):
        raise MissingPackage(self._path.split(".")[0])

    def __mro_entries__(self, bases):  # `class M(torchvision.SomeModule)` at import time
        raise MissingPackage(self._path.split(".")[0])


class _PlaceholderModule(types.ModuleType):
    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Placeholder(f"{self.__name__}.{name}")


class _MissingPackages(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports placeholders for the packages named (and their submodules)."""

    def __init__(self, packages: list[str]):
        self.packages = set(packages)

    def find_spec(self, fullname, path, target=None):
        if fullname.split(".")[0] not in self.packages:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        module = _PlaceholderModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


def _installed(name: str) -> bool:
    try:
        importlib.import_module(name)
        return True
    except Exception:  # a broken install (a CUDA build of torchvision beside a CPU torch) is as good as missing
        for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
            del sys.modules[key]
        return False


@contextlib.contextmanager
def _placeholders_for_missing_packages():
    """Missing optional packages import as placeholders here, and only here.

    Afterwards they are gone from sys.modules again: other code asking whether
    torchvision is installed (transformers does) must still hear no.
    """
    finder = _MissingPackages([name for name in OPTIONAL_PACKAGES if not _installed(name)])
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for key in [k for k in sys.modules if k.split(".")[0] in finder.packages]:
            del sys.modules[key]


def _multiprocess_stand_in() -> types.ModuleType:
    module = types.ModuleType("multiprocess")
    context = multiprocessing.get_context("spawn")
    module.Pool, module.cpu_count = context.Pool, context.cpu_count
    module.set_start_method = lambda method, force=False: None  # the process's start method is not the suite's to set
    return module


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
        sys.modules["multiprocess"] = _multiprocess_stand_in()
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
    with _placeholders_for_missing_packages():
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


# -- the cases ------------------------------------------------------------------------


def cases(checkout: Path, dynamic: bool) -> list[Case]:
    registered = load(checkout)
    found = [_case(E2eTest(test, name, registered.test_utils, dynamic), checkout) for test, name in registered.tests]
    found += [_import_failure(name, error, dynamic) for name, error in registered.failed.items()]
    return found


def _case(entry: E2eTest, checkout: Path) -> Case:
    code = entry.test.program_invoker.__code__
    path = Path(code.co_filename)
    shown = path.relative_to(checkout) if checkout in path.parents else path
    return Case(
        id=f"{PREFIX}{entry.test.unique_name}{'.dynamic' if entry.dynamic else ''}",
        build=entry.test.program_factory,
        inputs=(),
        exact=Exact(entry.load, "captured from the test function", dynamic=entry.dynamic_dims if entry.dynamic else None),
        family=entry.module,
        tags=frozenset({TAG}),
        rtol=RTOL,
        atol=ATOL,
        defined_at=f"{shown}:{code.co_firstlineno}",
        origin=str(path),
        eager_context=entry.eager_context,
        export_mode="strict",
    )


def _import_failure(module: str, error: str, dynamic: bool) -> Case:
    """A test module that failed to import: a case of its own, so no report misses it."""

    def build():
        raise CaseUnavailable(f"test module {module} failed to import ({error}); the tests it would register are missing")

    return Case(
        id=f"{PREFIX}{module}.import{'.dynamic' if dynamic else ''}",
        build=build,
        inputs=(),
        exact=Exact(lambda: [[]], "none: the module did not import"),
        family=module,
        tags=frozenset({TAG}),
    )


@dataclass
class Call:
    method: str
    args: tuple
    kwargs: dict
    mkldnn: bool  # whether oneDNN was on when the call was made


class _Recorder:
    """Stands for the module in a test function: records each method call, then makes it.

    Arguments are copied before the call (forward may update them in place);
    attributes that are not methods are handed through.
    """

    def __init__(self, module: torch.nn.Module, calls: list[Call]):
        self._module, self._calls = module, calls

    def __getattr__(self, name: str):
        target = getattr(self._module, name)
        if not callable(target):
            return target

        def record(*args, **kwargs):
            copied = [a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args]
            self._calls.append(Call(name, tuple(copied), dict(kwargs), bool(torch.backends.mkldnn.enabled)))
            return target(*args, **kwargs)

        return record


class _TimeLimit(Exception):
    pass


@contextlib.contextmanager
def _time_limit(seconds: float):
    """Stop a Python loop after `seconds` (SIGALRM, main thread only; elsewhere the run's own timeout applies)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise _TimeLimit()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class E2eTest:
    """One registered test, as a case loads it: capture its inputs, say its eager context and dynamic dims."""

    test: Any
    module: str
    test_utils: type
    dynamic: bool
    mkldnn: bool | None = None  # as the last capture found it
    dims: dict[int, tuple[int, ...]] = field(default_factory=dict)

    def load(self) -> list[list[torch.Tensor]]:
        calls, annotations = self._run_test_function()
        sets = _input_sets(calls)
        self.mkldnn = calls[0].mkldnn
        if self.dynamic:
            self.dims = _dynamic_dims(annotations, sets)
            if not self.dims:
                raise CaseUnavailable(
                    "no -1 dim of its @annotate_args is 2 or more in the real inputs: nothing to export as dynamic "
                    "(the static case covers it)",
                    skip=True,
                )
        return sets

    def eager_context(self):
        if self.mkldnn is None:
            self.load()  # the flags are known from a capture only
        return torch.backends.mkldnn.flags(enabled=False) if self.mkldnn is False else contextlib.nullcontext()

    def dynamic_dims(self) -> dict[int, tuple[int, ...]]:
        return self.dims

    def _run_test_function(self) -> tuple[list[Call], list]:
        """Run the test function on a recorder, in torch-mlir's order: factory, TestUtils() (seeds 0), test."""
        calls: list[Call] = []
        timeout = self.test.timeout_seconds
        try:
            with torch.random.fork_rng(devices=[]), _time_limit(timeout):
                module = self.test.program_factory()
                self.test.program_invoker(_Recorder(module, calls), self.test_utils())
        except MissingPackage as e:
            raise CaseUnavailable(str(e), skip=True) from None
        except ModuleNotFoundError as e:  # imported inside a factory or forward, after registration
            if (e.name or "").split(".")[0] in OPTIONAL_PACKAGES:
                raise CaseUnavailable(str(MissingPackage(e.name.split(".")[0])), skip=True) from None
            raise CaseUnavailable(f"the test's own eager run fails: ModuleNotFoundError: {e}", stage="eager") from None
        except _TimeLimit:
            raise CaseUnavailable(
                f"the test function ran past its own timeout ({timeout} s) while its inputs were captured", stage="eager"
            ) from None
        except Exception as e:
            raise CaseUnavailable(f"the test's own eager run fails: {type(e).__name__}: {first_line(str(e))}", stage="eager") from None
        return calls, list(getattr(module.forward, ANNOTATIONS, None) or [])


def _input_sets(calls: list[Call]) -> list[list[torch.Tensor]]:
    """Each forward call's arguments as an input set; what a case cannot express is a CaseUnavailable (SKIP)."""
    others = sorted({c.method for c in calls if c.method != "forward"})
    if others:
        raise CaseUnavailable(f"the test function calls {', '.join(others)}, not only forward", skip=True)
    if not calls:
        raise CaseUnavailable("the test function never calls forward", skip=True)
    if any(c.kwargs for c in calls):
        raise CaseUnavailable("the test function passes keyword arguments to forward", skip=True)
    kinds = sorted({type(a).__name__ for c in calls for a in c.args if not isinstance(a, torch.Tensor)})
    if kinds:
        raise CaseUnavailable(f"the test function passes {', '.join(kinds)} to forward (a case's inputs are tensors)", skip=True)
    if len({c.mkldnn for c in calls}) > 1:
        raise CaseUnavailable("the test function calls forward with oneDNN on and off", skip=True)
    signatures = {tuple((a.dtype, tuple(a.shape)) for a in c.args) for c in calls}
    if len(signatures) > 1:
        raise CaseUnavailable(
            f"the test function calls forward {len(calls)} times on inputs of different shapes (one static program runs every set)",
            skip=True,
        )
    return [list(c.args) for c in calls]


def _dynamic_dims(annotations: list, sets: list[list[torch.Tensor]]) -> dict[int, tuple[int, ...]]:
    """The -1 dims of @annotate_args (whose first entry is `self`) that are 2 or more in every input set.

    The real inputs win where the annotation disagrees with them (a rank that
    differs makes no dim of that input dynamic).
    """
    found = {}
    for index, annotation in enumerate(annotations[1:]):
        if annotation is None or index >= len(sets[0]):
            continue
        shape = list(annotation[0])
        if len(shape) != sets[0][index].dim():
            continue
        dims = tuple(d for d, size in enumerate(shape) if size == -1 and all(s[index].shape[d] >= 2 for s in sets))
        if dims:
            found[index] = dims
    return found


# -- what cannot be imported, for `conformance list` --------------------------------------

CENSUS_FORMAT = 1


def not_importable(checkout: Path) -> list[str]:
    """Lines for `conformance list`: how many tests registered, and which cannot be imported, by reason.

    Knowing which tests import means running every test function once (about
    a minute of CPU: a few tests carry hundreds of MB of inputs), so the
    census is kept beside the compile cache, keyed by the checkout's test
    sources, torch and the optional packages installed.
    """
    from conformance.digests import digest
    from conformance.run_options import default_cache_dir

    registered = load(checkout)
    missing = [name for name in OPTIONAL_PACKAGES if not _installed(name)]
    package = checkout / PYTHON_TREE / PACKAGE
    files = sorted(package.rglob("*.py"))
    key = digest(CENSUS_FORMAT, torch.__version__, missing, [str(f.relative_to(package)) for f in files], *files)
    path = Path(default_cache_dir()) / "sources" / f"torch-mlir-e2e-{key[:16]}.json"
    try:
        reasons = json.loads(path.read_text())
    except (OSError, ValueError):
        reasons = _census(registered)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(reasons, indent=0, sort_keys=True))
    counts = Counter(_reason_group(reason) for reason in reasons.values())
    lines = [
        f"{SUITE} ({checkout}): {len(registered.tests)} tests registered from "
        f"{len(suite_modules(checkout))} modules; not importable: {len(reasons) + len(registered.failed)}"
    ]
    lines += [f"  {count:5d}  {group}" for group, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]
    lines += [f"      1  test module {name} failed to import: {error}" for name, error in registered.failed.items()]
    return lines


def _reason_group(reason: str) -> str:
    """A reason without its particulars (the error's message), so equal causes count together."""
    if reason.startswith("the test's own eager run fails: "):
        return "the test's own eager run fails: " + reason.split(": ")[1]
    return reason


def _census(registered: Registered) -> dict[str, str]:
    """Test name -> why it cannot be imported, for every test that cannot; each captured once and let go."""
    print(f"conformance: capturing the inputs of {len(registered.tests)} torch-mlir e2e tests once, to see which import "
          "(kept for the next `conformance list`)", file=sys.stderr)
    reasons = {}
    for test, module in registered.tests:
        try:
            E2eTest(test, module, registered.test_utils, dynamic=False).load()
        except CaseUnavailable as e:
            reasons[test.unique_name] = e.reason
    return reasons
