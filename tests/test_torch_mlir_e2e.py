"""`--cases torch-mlir-e2e:PATH`: torch-mlir's e2e registry as cases, on a miniature checkout (tests/fixtures)."""

from __future__ import annotations

import importlib.util
import multiprocessing
import os
import re
import shutil
import subprocess
import sys

import pytest
import torch

from conformance.backends.protocol import CaseRun
from conformance.cases import registry as reg
from conformance.cases.inputs import make_inputs, make_module
from conformance.cases.spec import CaseUnavailable
from conformance.execution.engine import Engine
from conformance.settings import Settings
from conformance.toolchain.torch_mlir import dynamic_shapes
from tests.conftest import FIXTURES, fake

CHECKOUT = FIXTURES / "torch_mlir_e2e"
SPEC = f"torch-mlir-e2e:{CHECKOUT}"
TESTS = [
    "AddDynamic_basic", "AddSizeOne_basic", "ComplexMul_basic", "OneDnnOff_basic", "TwoCalls_basic", "TwoShapes_basic",
    "Keywords_basic", "PythonScalar_basic", "EagerFails_basic", "Spins_basic", "GlobalRng_basic",
    "Nms_basic", "NoVision_basic", "BeforeTheBreak_basic", "Later_basic",
]  # fmt: skip


def load(suites=("default",)):
    return reg.Registry.load(reg.discover([SPEC], default_dir=False, plugins=False), suites)


def test_each_registered_test_is_a_case_and_a_module_that_failed_to_import_is_one_too():
    registry = load()
    assert [c.id for c in registry] == [f"torch-mlir.{name}" for name in TESTS] + ["torch-mlir.broken.import"]
    add = registry["torch-mlir.AddDynamic_basic"]
    assert (add.suite, add.family, add.export_mode, add.rtol, add.atol) == ("torch-mlir-e2e", "basic", "strict", 1e-3, 1e-7)
    assert "torch-mlir" in add.all_tags and not add.is_dynamic
    assert add.defined_at.startswith("projects/pt1/python/torch_mlir_e2e_test/test_suite/basic.py:")
    # Only the variants' suite brings the dynamic variants.
    dynamic = load(("default", "torch-mlir-e2e-dynamic"))
    assert "torch-mlir.AddDynamic_basic.dynamic" in [c.id for c in dynamic] and len(dynamic) == 2 * len(registry)


def test_inputs_are_captured_from_the_test_function_seeded_as_torch_mlir_seeds_them():
    registry = load()
    torch.manual_seed(0)
    expected = [torch.empty(3, 4).uniform_(0, 1), torch.empty(3, 4).uniform_(0, 1)]
    assert all(torch.equal(a, b) for a, b in zip(make_inputs(registry["torch-mlir.AddDynamic_basic"])[0], expected))
    torch.manual_seed(0)
    assert torch.equal(make_inputs(registry["torch-mlir.GlobalRng_basic"])[0][0], torch.rand(3))
    assert len(make_inputs(registry["torch-mlir.TwoCalls_basic"])) == 2  # one input set per forward call
    assert make_inputs(registry["torch-mlir.ComplexMul_basic"])[0][0].dtype == torch.complex64
    assert make_module(registry["torch-mlir.GlobalRng_basic"]).training  # the factory's mode is kept


@pytest.mark.parametrize(
    "name, reason",
    [
        ("TwoShapes_basic", "calls forward 2 times on inputs of different shapes"),
        ("Keywords_basic", "passes keyword arguments to forward"),
        ("PythonScalar_basic", "passes int to forward"),
        ("Nms_basic", "needs torchvision, which is not installed"),
    ],
)
def test_what_a_case_cannot_express_is_skipped_with_the_reason(name, reason):
    with pytest.raises(CaseUnavailable, match=reason) as e:
        make_inputs(load()[f"torch-mlir.{name}"])
    assert e.value.skip


def test_a_missing_package_is_a_placeholder_only_while_the_test_modules_import():
    load()
    assert "torchvision" not in sys.modules and importlib.util.find_spec("torchvision") is None
    # framework.py imports `multiprocess` and sets its start method: the stand-in leaves the process's alone.
    assert sys.modules["multiprocess"].Pool is not None
    assert multiprocessing.get_start_method(allow_none=True) != "spawn"


def test_dynamic_variants_make_the_annotated_dims_dynamic_where_the_inputs_allow_it():
    registry = load(("default", "torch-mlir-e2e-dynamic"))

    def dims(name):
        case = registry[f"torch-mlir.{name}.dynamic"]
        inputs = make_inputs(case)
        run = CaseRun(case, make_module(case), inputs, [], workdir=CHECKOUT)
        return case.exact.dynamic_dims(), dynamic_shapes(run)

    assert dims("AddDynamic_basic") == ({0: (0, 1), 1: (0, 1)}, tuple({0: torch.export.Dim.AUTO, 1: torch.export.Dim.AUTO} for _ in range(2)))
    assert dims("AddSizeOne_basic")[0] == {0: (1,), 1: (1,)}  # size 1 stays static
    with pytest.raises(CaseUnavailable, match="nothing to export as dynamic") as e:
        make_inputs(registry["torch-mlir.ComplexMul_basic.dynamic"])
    assert e.value.skip


def test_a_path_that_is_no_checkout_and_an_unknown_kind_are_errors(tmp_path):
    with pytest.raises(reg.RegistryError, match=rf"{tmp_path} is not a torch-mlir checkout \(no projects/pt1/python"):
        reg.discover([f"torch-mlir-e2e:{tmp_path}"], default_dir=False, plugins=False)
    with pytest.raises(reg.RegistryError, match="no case source kind 'torch-mlir-e3e' \\(known: torch-mlir-e2e\\)"):
        reg.discover([f"torch-mlir-e3e:{CHECKOUT}"], default_dir=False, plugins=False)


def test_one_checkout_per_process(tmp_path):
    load()
    other = tmp_path / "other"
    shutil.copytree(CHECKOUT, other)
    sources = reg.discover([f"torch-mlir-e2e:{other}"], default_dir=False, plugins=False)
    with pytest.raises(reg.RegistryError, match="already loaded from .*torch_mlir_e2e: one checkout per process"):
        reg.Registry.load(sources)


@pytest.fixture(scope="module")
def results():
    settings = Settings(backends=["eager", fake("SCRIPTED")], case_paths=[SPEC], default_cases=False)
    engine = Engine(settings)
    try:
        found = list(engine.run([(f"torch-mlir.{name}", b) for name in TESTS + ["broken"] for b in ("eager", "scripted")][:-2]
                                + [("torch-mlir.broken.import", "eager")]))
    finally:
        engine.close()
    return {(r.case.removeprefix("torch-mlir."), r.backend): r for r in found}


def test_every_test_gets_a_verdict_and_none_is_dropped(results):
    verdicts = {case: (r.status, r.code) for (case, backend), r in results.items() if backend == "eager"}
    assert verdicts == {
        **{name: ("pass", None) for name in ["AddDynamic_basic", "AddSizeOne_basic", "ComplexMul_basic", "OneDnnOff_basic",
                                             "TwoCalls_basic", "GlobalRng_basic", "NoVision_basic", "BeforeTheBreak_basic", "Later_basic"]},
        **{name: ("skip", None) for name in ["TwoShapes_basic", "Keywords_basic", "PythonScalar_basic", "Nms_basic"]},
        "EagerFails_basic": ("fail", "CASE_ERROR"),
        "Spins_basic": ("fail", "CASE_ERROR"),
        "broken.import": ("fail", "CASE_ERROR"),
    }, verdicts
    assert results[("Nms_basic", "eager")].explanation == "needs torchvision, which is not installed"
    spins = results[("Spins_basic", "eager")]
    assert spins.stage == "eager" and "ran past its own timeout (1 s)" in spins.explanation
    assert "RuntimeError: no eager kernel for this on the CPU" in results[("EagerFails_basic", "eager")].explanation
    assert "broken failed to import (ImportError: this module breaks on purpose, half-way)" in results[("broken.import", "eager")].explanation


def test_the_tests_own_onednn_switch_holds_for_the_reference_and_eager(results):
    assert results[("OneDnnOff_basic", "eager")].passed
    assert results[("OneDnnOff_basic", "scripted")].code == "NUMERIC_MISMATCH"  # a backend is run as it is


def test_conformance_list_shows_the_suite_and_what_cannot_be_imported_by_reason(tmp_path):
    command = [sys.executable, "-m", "conformance.cli.main", "list", "--no-default-cases", "--cases", SPEC]
    env = {"CONFORMANCE_CACHE": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(command, capture_output=True, text=True, timeout=300, env={**os.environ, **env})
    assert out.returncode == 0, out.stderr
    assert re.search(r"^torch-mlir\.AddDynamic_basic +torch-mlir-e2e +op +basic +captured from the test function", out.stdout, re.M)
    assert f"torch-mlir-e2e ({CHECKOUT}): 15 tests registered from 4 modules; not importable: 7" in out.stdout
    for line in ["1  needs torchvision, which is not installed", "1  the test function passes keyword arguments to forward",
                 "1  the test's own eager run fails: RuntimeError", "1  test module broken failed to import"]:
        assert line in out.stdout, out.stdout
    again = subprocess.run(command, capture_output=True, text=True, timeout=300, env={**os.environ, **env})
    assert again.stdout == out.stdout and "capturing" not in again.stderr  # the census is kept


def test_pytest_collects_the_source(run_registry):
    run = run_registry("--backend=eager", f"--cases={SPEC}", "-k", "AddDynamic or Nms", cases=None)
    assert run.returncode == 0, run
    assert {name: r["status"] for name, r in run.results.items()} == {
        "torch-mlir.AddDynamic_basic[eager]": "pass", "torch-mlir.Nms_basic[eager]": "skip"}
