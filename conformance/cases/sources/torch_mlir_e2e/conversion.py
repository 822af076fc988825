"""Each registered torch-mlir e2e test as a Case, and each test module that failed to import as one too.

A case's inputs are captured when it runs (capture.py), not here: loading
the registry's cases reads no inputs. Its id, suite, tag, tolerances and
export mode are torch-mlir's own (see the package's docstring).
"""

from __future__ import annotations

from pathlib import Path

from conformance.cases.sources.torch_mlir_e2e.capture import E2eTest
from conformance.cases.sources.torch_mlir_e2e.loading import load
from conformance.cases.spec import Case, CaseUnavailable, Exact

SUITE = "torch-mlir-e2e"
DYNAMIC_SUITE = "torch-mlir-e2e-dynamic"
PREFIX = "torch-mlir."
TAG = "torch-mlir"
RTOL, ATOL = 1e-3, 1e-7  # torch-mlir's own comparison: allclose(rtol=1e-3, atol=1e-7) for every float dtype


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
