"""The classifier against a labeled corpus of real failures (tests/corpus/)."""

import tomllib
from pathlib import Path

import pytest

from conformance.classify import classify_text
from conformance.toolchain.lowerings import LOWERINGS
from conformance.toolchain.mlir import PipelineError
from conformance.toolchain.torch_mlir import CONTRACT_PIPELINE

CORPUS = Path(__file__).parent / "corpus"
LABELS = tomllib.loads((CORPUS / "labels.toml").read_text())


def test_the_corpus_is_large_and_every_label_has_its_raw_text():
    assert len(LABELS) >= 25
    assert {p.stem for p in CORPUS.glob("*.txt")} == set(LABELS)
    backends = {name.split("--")[0] for name in LABELS}
    assert {"torch", "linalg", "tosa", "stablehlo", "tosa-ref"} <= backends


@pytest.mark.parametrize("name", sorted(LABELS))
def test_classification_matches_the_label(name):
    label = LABELS[name]
    found = classify_text(label["stage"], (CORPUS / f"{name}.txt").read_text())
    assert (found.code, found.op or "") == (label["code"], label["op"]), found.explanation
    # One sentence with the facts: never empty, never the UNKNOWN fallback, names the op.
    assert found.explanation and not found.explanation.startswith(f"{label['stage']} failed:")
    assert "/tmp/conformance-job" not in found.explanation  # temp paths vary run to run
    assert "callsite(" not in found.explanation  # a location (strict export's), not what failed
    if label["op"]:
        assert label["op"].split(".")[-1] in found.explanation


ATANH_ILLEGAL = "error: failed to legalize operation 'torch.aten.atanh' that was explicitly marked illegal"


@pytest.mark.parametrize("lowering", [l for l in LOWERINGS if l.pipeline], ids=lambda l: l.output_type)
def test_a_lowering_pipeline_failure_names_the_lowering_the_pipeline_runs(lowering):
    error = PipelineError(f"builtin.module({lowering.pipeline})", ATANH_ILLEGAL)
    found = classify_text("lower", f"conformance.toolchain.mlir.PipelineError: {error}")
    assert found.explanation.startswith(f"torch-mlir cannot lower aten.atanh to {lowering.output_type} ("), found.explanation


def test_a_contract_pipeline_failure_is_the_contracts_whatever_its_options_mention():
    # A backend-legal op named aten.linalg_* is no linalg lowering.
    pipeline = CONTRACT_PIPELINE.format(options=" backend-legal-ops=aten.linalg_vector_norm extra-library=")
    found = classify_text("contract", f"conformance.toolchain.mlir.PipelineError: {PipelineError(pipeline, ATANH_ILLEGAL)}")
    assert found.explanation.startswith("torch-mlir cannot lower aten.atanh to the torch backend contract ("), found.explanation


def test_an_unknown_failure_whose_first_line_only_announces_the_next_says_the_next():
    # The run of 2026-11-26 showed 44 UNKNOWN explanations ending "killed by signal SIGABRT (6):" and nothing
    # after it; the line it announced (what the tool threw) was in the details only.
    text = (
        "conformance.toolchain.tools.ToolError: some_runner killed by signal SIGABRT (6):\n"
        "terminate called after throwing an instance of 'std::length_error'\n"
        "  what():  cannot create std::vector larger than max_size()\n"
    )
    found = classify_text("run", text)
    assert found.code == "UNKNOWN"
    assert found.explanation.endswith("SIGABRT (6): terminate called after throwing an instance of 'std::length_error'")
    alone = classify_text("run", "conformance.toolchain.tools.ToolError: some_runner exited with status 3:\n")
    assert alone.explanation.endswith("status 3: (nothing more)")
