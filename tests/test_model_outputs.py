"""A model's own outputs: registered containers are opened, anything else is the case's error.

A transformers decoder returns a ModelOutput holding a DynamicCache; eager
is deterministic, so the pair must pass on eager and be compared tensor by
tensor on a real backend. An object no pytree opens is a CASE_ERROR that
names where it sits, never NONDETERMINISTIC_REFERENCE.
"""

from __future__ import annotations

import pytest
import torch
from torch.utils._pytree import tree_flatten_with_path

from conformance.cases import registry as reg
from conformance.cases.inputs import make_inputs, make_module
from conformance.cases.reference import reference_outputs
from conformance.execution.engine import Engine
from conformance.settings import Settings
from conformance.taxonomy import Code
from tests.conftest import FIXTURES

SOURCE = FIXTURES / "model_outputs"


@pytest.fixture(scope="module")
def results():
    settings = Settings(backends=["eager", "linalg"], case_paths=[str(SOURCE)], default_cases=False)
    cases = reg.Registry.load(reg.discover([str(SOURCE)], default_dir=False, plugins=False))
    engine = Engine(settings)
    try:
        return {r.key: r for r in engine.run([(c.id, b) for c in cases for b in ("eager", "linalg")])}
    finally:
        engine.close()


def test_a_decoder_returning_its_kv_cache_passes_on_eager(results):
    result = results[("llama.cache", "eager")]
    assert result.passed, result.explanation


def test_a_decoder_returning_its_kv_cache_passes_on_a_real_backend(results):
    result = results[("llama.cache", "linalg")]
    assert result.passed, result.explanation


def test_the_kv_cache_is_opened_into_its_tensors():
    case = reg.Registry.load(reg.discover([str(SOURCE)], default_dir=False, plugins=False))["llama.cache"]
    module = make_module(case)
    expected = reference_outputs(case, module, make_inputs(case)).expected[0]
    leaves = [leaf for _, leaf in tree_flatten_with_path(expected)[0]]
    # logits, then one key and one value per layer: compared one by one, not as an object
    assert [type(leaf) for leaf in leaves] == [torch.Tensor] * 3
    assert list(leaves[1].shape) == [1, 2, 8, 8]  # (batch, kv heads, sequence, head dim)


def test_an_output_no_pytree_opens_is_a_case_error_naming_its_path_and_type(results):
    for backend in ("eager", "linalg"):
        result = results[("opaque.output", backend)]
        assert result.code == Code.CASE_ERROR, result
        assert "output[1]['state'] is an object of type Opaque" in result.explanation
        assert "use_cache=False" in result.explanation
        assert "conformance_content" not in result.explanation  # nothing of this machine's paths
