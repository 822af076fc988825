"""Explanations are pinned in xfail sets: the same failure must explain itself the same way on every run.

Paths of this checkout and of temp dirs, sizes measured at the time of a
kill, addresses and pids differ from run to run; they go to the details,
never into the explanation (else every xfail update reports CHANGED).
"""

import re
import tomllib
from pathlib import Path

import pytest

from conformance import content
from conformance.classify import classify_crash, classify_flood, classify_text, classify_timeout, text
from conformance.content import PROJECT_ROOT

CORPUS = Path(__file__).parent / "corpus"
LABELS = tomllib.loads((CORPUS / "labels.toml").read_text())
# The corpus was captured in a checkout at /work/main, with the job's temp dirs of that night.
CAPTURED_ROOT = "/work/main"
TEMP_DIR = re.compile(r"/tmp/conformance-job-\w+")
RUN_DEPENDENT = re.compile(r"/tmp/|/work/|0x[0-9a-f]{6,}|\b\d+(?:\.\d+)? [MG]B\b(?! limit)|<tmp>/conformance-job")


def as_if_run(text: str, root: str, job: str) -> str:
    """`text` as another run would print it: another checkout, another temp dir."""
    return TEMP_DIR.sub(f"/tmp/conformance-job-{job}", text.replace(CAPTURED_ROOT, root))


ELSEWHERE = "/home/someone/src/conformance"


@pytest.fixture
def elsewhere(monkeypatch):
    """Run code as if this checkout were at ELSEWHERE."""

    def checkout_at(root: str):
        monkeypatch.setattr(content, "PROJECT_ROOT", Path(root))
        text._machine_roots.cache_clear()

    yield checkout_at
    text._machine_roots.cache_clear()


def assert_stable(explain, checkout_at):
    """`explain(root, job)` gives the same explanation in this checkout and another, whatever the temp dir."""
    here = explain(str(PROJECT_ROOT), "a1b2c3d4")
    checkout_at(ELSEWHERE)
    elsewhere = explain(ELSEWHERE, "zz99yy88")
    assert here == elsewhere
    assert not RUN_DEPENDENT.search(here), here
    assert str(PROJECT_ROOT) not in here, here
    return here


def _with_run_paths(name: str) -> bool:
    raw = (CORPUS / f"{name}.txt").read_text()
    return "/tmp/conformance-job" in raw or CAPTURED_ROOT in raw


# Only the failures whose text holds a path of the run: the others have nothing to move.
@pytest.mark.parametrize("name", [name for name in sorted(LABELS) if _with_run_paths(name)])
def test_every_corpus_failure_explains_itself_the_same_in_any_checkout_and_temp_dir(name, elsewhere):
    label, raw = LABELS[name], (CORPUS / f"{name}.txt").read_text()
    assert_stable(lambda root, job: classify_text(label["stage"], as_if_run(raw, root, job)).explanation, elsewhere)


# Failures whose first error line carries a path or an address in the middle of the
# message, where stripping a leading location does not reach it.
EXAMPLES = {
    "iree-compile cannot open its input": (
        "compile",
        "ToolError: iree-compile exited with status 1:\n"
        "error: cannot open input file '/tmp/conformance-job-{job}/tanh/tosa/input.mlir': No such file or directory",
    ),
    "an exception no parser knows, naming a file of the checkout": (
        "lower",
        "FileNotFoundError: [Errno 2] No such file or directory: '{root}/backends/data/table.json'",
    ),
    "a pass naming the case's source line": (
        "contract",
        "PipelineError: torch-mlir pipeline builtin.module(torch-backend-to-tosa-backend-pipeline) failed:\n"
        'error: "{root}/conformance/cases/spec.py":133:0: failed to get softmax result in module at 0x7f3a2b4c5d60 (pid 48213)',
    ),
}


@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_paths_addresses_and_pids_in_tool_output_stay_out_of_the_explanation(example, elsewhere):
    stage, template = EXAMPLES[example]
    explanation = assert_stable(lambda root, job: classify_text(stage, template.format(root=root, job=job)).explanation, elsewhere)
    assert explanation  # and the message itself survives
    assert re.sub(r"[^a-z ]", "", explanation) != ""


def test_a_flood_explains_itself_without_its_size_or_the_case_path(elsewhere):
    # The shipped sets held "stage contract printed 43 MB ... error: \"/work/main/conformance/cases/spec.py\":133:0: ..."
    # (50 MB on the next night): a CHANGED entry every update.
    def flood(root, job, size):
        line = f'error: "{root}/conformance/cases/spec.py":133:0: failed to get softmax result\n'
        return classify_flood("contract", size, line * 3 + "[the line above repeated 999 more times]")

    first = flood(str(PROJECT_ROOT), "a", 43 * 2**20)
    elsewhere(ELSEWHERE)
    again = flood(ELSEWHERE, "b", 50 * 2**20)
    assert first.explanation == again.explanation == (
        "stage contract kept printing without finishing and was killed (a rewrite going round in circles); "
        "it kept printing: failed to get softmax result"
    )
    assert first.details.startswith("stage contract printed 43 MB of output before it was killed")


def test_a_memory_kill_explains_itself_without_the_memory_it_had_reached():
    kills = [
        classify_crash("lower", "killed for using more memory than the 8 GB limit", "", f"the process used {gb} GB when it was killed")
        for gb in ("8.1", "8.3")
    ]
    assert kills[0].explanation == kills[1].explanation == "the process was killed for using more memory than the 8 GB limit in stage lower"
    assert "8.3 GB" in kills[1].details


def test_crash_and_timeout_quote_the_dying_words_without_their_location():
    output = f"{PROJECT_ROOT}/x.mlir:3:7: error: 'tosa.add' op operands don't broadcast at 0x55d0c0ffee00\n"
    crash = classify_crash("compile", "killed by signal SIGSEGV (11)", output)
    assert crash.explanation == "the process crashed in stage compile (killed by signal SIGSEGV (11)): 'tosa.add' op operands don't broadcast at 0x…"
    timeout = classify_timeout("run", 300, output)
    assert timeout.explanation.endswith("last output: 'tosa.add' op operands don't broadcast at 0x…")
    assert str(PROJECT_ROOT) in crash.details  # the full facts stay in the details


def test_terminal_colour_codes_stay_out_of_the_explanation():
    # torch.onnx's exporter colours its messages; its first line, quoted, must not carry the escapes.
    raw = ("torch.onnx._internal.exporter._errors.ConversionError: Failed to convert the exported program to an "
           "ONNX model. \x1b[96mThis is step 3/3\x1b[0m of exporting the model to ONNX.")
    explanation = classify_text("export", raw).explanation
    assert "\x1b" not in explanation and "[96m" not in explanation, explanation
    assert "This is step 3/3 of exporting the model to ONNX" in explanation
