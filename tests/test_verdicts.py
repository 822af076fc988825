"""Verdicts end to end, as a user gets them: nesting, order, random outputs, MLIR errors a backend lets out."""

import json

from tests.conftest import fake

SCRIPT = {"max.dim": "nest", "var_mean": "swap", "dropout.train": "nan", "randint_like": "double"}


def test_wrong_nesting_order_and_random_outputs_are_caught_and_correct_ones_pass(run_registry):
    run = run_registry(
        f"--backend=eager,{fake('SCRIPTED')}", "-n", "2", cases="verdicts", env={"FAKE_SCRIPT": json.dumps(SCRIPT)}
    )
    eager = {k: r for k, r in run.results.items() if k.endswith("[eager]")}
    assert len(eager) == 6 and all(r["verdict"] == "PASS" for r in eager.values()), eager
    found = {k.removesuffix("[scripted]"): r for k, r in run.results.items() if k.endswith("[scripted]")}
    # ((values, indices),) for eager's (values, indices)
    assert (found["max.dim"]["stage"], found["max.dim"]["code"]) == ("compare", "STRUCTURE_MISMATCH"), found["max.dim"]
    assert found["max.dim"]["explanation"] == (
        "output: eager gives max(float32[3], int64[3]), the backend (max(float32[3], int64[3]),) (the outputs are nested differently)"
    )
    assert found["var_mean"]["code"] == "STRUCTURE_MISMATCH"
    assert found["var_mean"]["explanation"] == (
        "the outputs come in another order: output[0] matches eager's output[1], "
        "output[1] matches eager's output[0] (outputs swapped?)"
    )
    assert found["dropout.train"]["code"] == "NAN_MISMATCH"
    assert found["dropout.train"]["explanation"].startswith("output: the backend gives NaN at 1 of 4096 places, eager at none")
    # An integer random output is compared: doubled, half its values lie beyond eager's range.
    assert found["randint_like"]["code"] == "NUMERIC_MISMATCH"
    assert "values lie above eager's largest, 9" in found["randint_like"]["explanation"]
    # A 0-d random output is not held to statistics of one value.
    assert found["rand_like.0d"]["verdict"] == "PASS"


def test_an_mlir_error_a_backend_lets_out_is_classified_as_the_shipped_backend_s(run_registry):
    # The shipped tosa backend runs the pipeline through the framework's run_pipeline; the fakes run
    # the same pipeline with torch-mlir's own PassManager and let its MLIRError escape as it is,
    # with the diagnostics kept in it, or wrapped in an error of their own.
    fakes = ["RAW_PASS_MANAGER_PRINTED", "RAW_PASS_MANAGER_COLLECTED", "RAW_PASS_MANAGER_WRAPPED"]
    run = run_registry(f"--backend=tosa,{','.join(fake(f) for f in fakes)}", "-k", "acos", cases="verdicts")
    shipped = run.results["acos[tosa]"]
    assert (shipped["stage"], shipped["code"], shipped["op"]) == ("lower", "UNSUPPORTED_OP", "aten.acos"), shipped
    for name in ("raw-pm-printed", "raw-pm-collected", "raw-pm-wrapped"):
        result = run.results[f"acos[{name}]"]
        assert (result["stage"], result["code"], result["op"]) == ("lower", "UNSUPPORTED_OP", "aten.acos"), result
        assert result["explanation"] == (
            "torch-mlir cannot lower aten.acos to the target dialect "
            "(failed to legalize operation 'torch.aten.acos' that was explicitly marked illegal)"
        )
