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

    stand_ins.py   what is faked so the checkout imports beside the wheel
    loading.py     importing the checkout's test modules: the registered tests
    capture.py     running a test function on a recorder: its inputs
    conversion.py  each registered test as a Case
    census.py      what cannot be imported, by reason, for `conformance list`
"""

from __future__ import annotations

from pathlib import Path

from conformance.cases.registry import CaseSource, RegistryError
from conformance.cases.sources.torch_mlir_e2e.census import not_importable
from conformance.cases.sources.torch_mlir_e2e.conversion import DYNAMIC_SUITE, SUITE, cases
from conformance.cases.sources.torch_mlir_e2e.loading import PACKAGE, PYTHON_TREE


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
