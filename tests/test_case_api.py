"""The case API: exact inputs, every dtype, stored references, eager contexts, a model's own mode."""

from __future__ import annotations

import pytest
import torch

from conformance.cases import registry as reg
from conformance.cases.inputs import make_inputs, make_module
from conformance.cases.reference import reference_outputs
from conformance.cases.spec import CaseError, Exact, Stored, T, model, op
from conformance.execution.engine import Engine
from conformance.settings import Settings
from tests.conftest import FIXTURES, fake

SOURCE = FIXTURES / "case_api"


def load():
    return reg.Registry.load(reg.discover([str(SOURCE)], default_dir=False, plugins=False))


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Every fixture case on eager, a recording eager and a backend that ignores eager contexts."""
    record = tmp_path_factory.mktemp("record")
    artifacts = tmp_path_factory.mktemp("artifacts")
    mp = pytest.MonkeyPatch()
    mp.setenv("FAKE_RECORD_DIR", str(record))
    specs = ["eager", fake("RECORDING"), fake("SCRIPTED")]
    settings = Settings(backends=specs, case_paths=[str(SOURCE)], default_cases=False, artifacts=str(artifacts))
    engine = Engine(settings)
    try:
        found = list(engine.run([(c.id, b) for c in load() for b in ("eager", "recording", "scripted")]))
    finally:
        engine.close()
        mp.undo()
    return {r.key: r for r in found}, record, artifacts


def test_exact_inputs_reach_the_backend_byte_for_byte_one_run_per_set(results):
    by_pair, record, _ = results
    assert by_pair[("exact.sets", "recording")].passed, by_pair[("exact.sets", "recording")]
    sets = load()["exact.sets"].exact.load()
    received = [torch.load(record / f"exact.sets.{i}.pt") for i in range(2)]
    assert not (record / "exact.sets.2.pt").exists()
    for given, got in zip(sets, received):
        for a, b in zip(given, got):
            assert a.dtype == b.dtype == torch.complex64
            assert a.view(torch.uint8).numpy().tobytes() == b.view(torch.uint8).numpy().tobytes()


def test_exact_inputs_are_loaded_when_the_case_runs_not_when_the_registry_loads(monkeypatch):
    monkeypatch.setenv("FAKE_NO_LOAD", "1")
    case = load()["exact.sets"]  # building the registry calls no loader
    with pytest.raises(AssertionError, match="exact inputs loaded"):
        make_inputs(case)


def test_an_exact_input_of_an_unsupported_dtype_is_a_case_error_naming_the_case(results):
    result = results[0][("exact.bad_dtype", "eager")]
    assert (result.status, result.code, result.stage) == ("fail", "CASE_ERROR", "case"), result
    assert result.explanation.startswith("case 'exact.bad_dtype', input set 1, input 0: input dtype torch.bits8 is not supported")


def test_a_drawn_input_of_an_unsupported_dtype_is_an_error_naming_the_case():
    with pytest.raises(CaseError, match=r"case 'four.bits', input 1 .*input dtype torch.int4 is not supported"):
        op("four.bits", torch.add, T(2), T(2, dtype=torch.int4))


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128, torch.uint16, torch.uint64, torch.float8_e5m2, torch.float8_e8m0fnu, torch.quint8])
def test_every_dtype_of_the_table_is_drawn(dtype):
    drawn = make_inputs(op("any.dtype", torch.clone, T(2, 3, dtype=dtype)))[0][0]
    assert (drawn.dtype, tuple(drawn.shape)) == (dtype, (2, 3))


def test_complex_and_fp8_inputs_run(results):
    for case in ("drawn.complex", "drawn.fp8"):
        assert results[0][(case, "eager")].passed, results[0][(case, "eager")]


def test_exact_input_sets_must_agree_on_static_dims():
    mixed = op("mixed.sets", torch.neg, Exact(lambda: [[torch.ones(2, 3)], [torch.ones(2, 4)]]))
    with pytest.raises(CaseError, match=r"input set 2, input 0: float32\[2, 4\] where set 1 has float32\[2, 3\]"):
        make_inputs(mixed)
    dynamic = op("dynamic.sets", torch.neg, Exact(lambda: [[torch.ones(2, 3)], [torch.ones(2, 4)]], dynamic={0: [1]}))
    assert [s[0].shape[1] for s in make_inputs(dynamic)] == [3, 4] and dynamic.is_dynamic


def test_a_stored_reference_is_named_in_explanations_as_the_suite_names_its_data(results):
    result = results[0][("stored.shape", "eager")]
    assert (result.code, result.stage) == ("SHAPE_MISMATCH", "compare"), result
    assert result.explanation == "output: expected (ONNX test data) gives float32[4], the backend float32[3]"


def test_a_stored_reference_brings_its_tolerances_and_runs_no_eager(results):
    assert results[0][("stored.tolerance", "eager")].passed, results[0][("stored.tolerance", "eager")]
    case = load()["stored.tolerance"]
    assert (case.rtol, case.atol) == (0.0, 0.2)
    calls = []

    class Counting(torch.nn.Module):
        def forward(self, x):
            calls.append(x)
            return -x

    reference = reference_outputs(case, Counting(), make_inputs(case))
    assert calls == [] and torch.equal(reference.expected[0], torch.full((3,), -0.9))
    with pytest.raises(CaseError, match="tolerances are given twice"):
        op("twice", torch.neg, T(3), rtol=0.1, atol=0.1, reference=Stored(lambda: [], rtol=0.2, atol=0.2))


def test_the_eager_context_holds_for_the_reference_and_the_eager_backend_only(results):
    by_pair = results[0]
    assert by_pair[("context.flag", "eager")].passed, by_pair[("context.flag", "eager")]
    ignored = by_pair[("context.flag", "scripted")]  # runs the module outside the context
    assert ignored.code == "NUMERIC_MISMATCH", ignored


def test_a_model_may_keep_the_mode_its_factory_left_it_in(results):
    assert make_module(load()["model.train"]).training
    assert not make_module(model("evaluated", torch.nn.Identity, T(2))).training
    assert results[0][("model.train", "eager")].passed


def test_a_bundle_for_a_case_from_elsewhere_reruns_it_with_its_source(results):
    by_pair, _, artifacts = results
    assert by_pair[("stored.shape", "scripted")].artifacts
    script = (artifacts / "stored.shape" / "scripted" / "reproduce.sh").read_text()
    # The backend as the run named it (a plugged-in one by its file:ATTR spec), the case with its source.
    assert f"--cases={SOURCE}" in script and "fake_backends.py:SCRIPTED" in script and "--case=stored.shape" in script
    assert (artifacts / "stored.shape" / "scripted" / "expected" / "set0" / "0.npy").exists()
