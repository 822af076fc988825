"""Verdicts end to end, as a user gets them: nesting, order, random outputs."""

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

