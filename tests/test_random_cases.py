"""Random cases that do not say so: eager calls random ops, so they are judged as samples.

A suite's random tests (torch-mlir's rng.py) and a user's model in training
mode never declare nondeterministic=True; two eager runs then differ. When
eager called an op PyTorch tags nondeterministic_seeded, the outputs are
judged as samples and the Result names the ops; when it called none, the
reference really is nondeterministic.
"""

from __future__ import annotations

import pytest

from conformance.cases import registry as reg
from conformance.execution.engine import Engine
from conformance.settings import Settings
from conformance.taxonomy import Code
from tests.conftest import FIXTURES

SOURCE = FIXTURES / "random_cases"


@pytest.fixture(scope="module")
def results():
    cases = reg.Registry.load(reg.discover([str(SOURCE)], default_dir=False, plugins=False))
    engine = Engine(Settings(backends=["eager", "eager-noisy"], case_paths=[str(SOURCE)], default_cases=False, cache_dir=None))
    try:
        return {r.key: r for r in engine.run([(c.id, b) for c in cases for b in ("eager", "eager-noisy")])}
    finally:
        engine.close()


@pytest.mark.parametrize("case, ops", [("undeclared.dropout", ["aten.bernoulli_.float"]), ("undeclared.rand_statistics", ["aten.rand"])])
def test_an_undeclared_random_case_is_judged_as_samples_naming_its_random_ops(results, case, ops):
    result = results[(case, "eager")]
    assert result.passed, result.explanation
    assert result.extras["random_ops"] == ops


def test_a_sample_judgement_still_fails_a_backend_that_breaks_the_distribution(results):
    # eager-noisy nudges every element, the dropped zeros too: a dropout mask without zeros is no sample of eager's.
    result = results[("undeclared.dropout", "eager-noisy")]
    assert result.code == Code.NUMERIC_MISMATCH and "share of zeros" in result.explanation, result


def test_outputs_that_differ_without_a_random_op_are_a_nondeterministic_reference(results):
    result = results[("python_state", "eager")]
    assert result.code == Code.NONDETERMINISTIC_REFERENCE, result
    assert "calls no random op" in result.explanation
