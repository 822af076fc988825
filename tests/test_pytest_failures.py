"""What `pytest --backend=...` says of a failure: one summary line with the facts, the diagnostics
once, how to reproduce it; and a report directory (--report-dir) that `conformance triage` reads."""

import json
import re
import subprocess
import sys

from tests.conftest import FIXTURES, fake

SCRIPT = {"FAKE_SCRIPT": json.dumps({"tanh": "raise"}), "CI": "1", "COLUMNS": "250"}  # CI: pytest's long summary
DIAGNOSTIC = "error: failed to legalize operation 'torch.aten.fake_op' that was explicitly marked illegal"


def failure_section(output: str, node: str) -> str:
    """The text pytest prints under `____ node ____` in its FAILURES section, up to the next rule."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("_") and f" {node} " in line) + 1
    end = next(i for i in range(start, len(lines)) if re.match(r"[=_-]{5}", lines[i]))
    return "\n".join(lines[start:end])


def test_a_failure_says_code_op_and_explanation_once_and_how_to_rerun_it(run_registry, tmp_path):
    spec = fake("SCRIPTED")
    report = tmp_path / "report"
    run = run_registry(f"--backend={spec}", "-n", "2", "--no-xfail", f"--report-dir={report}", env=SCRIPT)
    assert run.returncode == 1, run
    summary = next(line for line in run.output.splitlines() if line.startswith("FAILED tanh[scripted] - "))
    assert "FAIL UNSUPPORTED_OP (aten.fake_op) at lower: torch-mlir cannot lower aten.fake_op to tosa" in summary
    assert run.output.count(DIAGNOSTIC) == 1, run.output  # not again in the traceback, nor in the short summary
    section = failure_section(run.output, "tanh[scripted]").rstrip()
    rerun = f"pytest --backend={spec} --case=tanh --no-default-cases --cases={FIXTURES / 'cases'} --no-xfail"
    assert section.endswith(f"reproduce: {rerun}"), section
    # The hint names a directory that exists, and the command it names works on it.
    assert f"every group: conformance triage {report}" in run.output
    triage = subprocess.run([sys.executable, "-m", "conformance.cli.main", "triage", str(report)], capture_output=True, text=True)
    assert triage.returncode == 0 and "UNSUPPORTED_OP" in triage.stdout and "aten.fake_op" in triage.stdout, triage
    results = {(r["case"], r["backend"]): r for r in map(json.loads, (report / "results.jsonl").read_text().splitlines())}
    assert len(results) == 5 and DIAGNOSTIC in results[("tanh", "scripted")]["details"]
    assert (report / "report.html").exists() and json.loads((report / "run.json").read_text())["backends"] == ["scripted"]
    again = run_registry(f"--backend={spec}", f"--report-dir={report}")
    assert again.returncode == 4 and f"--report-dir {report}: it holds a report already" in again.output, again


def test_a_failure_with_a_bundle_is_reproduced_by_its_script(run_registry, tmp_path):
    run = run_registry(f"--backend={fake('SCRIPTED')}", "-k", "tanh", f"--artifacts={tmp_path / 'bundles'}", env=SCRIPT)
    assert run.returncode == 1, run
    section = failure_section(run.output, "tanh[scripted]").rstrip()
    assert section.endswith(f"reproduce: sh {tmp_path / 'bundles' / 'tanh' / 'scripted'}/reproduce.sh"), section
    assert "every group" not in run.output  # one group, all shown: no hint
