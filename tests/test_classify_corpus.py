"""The classifier against a labeled corpus of real failures (tests/corpus/)."""

import tomllib
from pathlib import Path

import pytest

from conformance.classify import classify_text

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
