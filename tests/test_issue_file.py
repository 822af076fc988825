"""`conformance issue GROUP --results DIR`: a root-cause group as an issue file for the failing tool's tracker.

A fake backend (tests/fake_backends.py: ISSUE_FILING) fails two ways with public-tool replays
(python -c scripts standing in for a compiler and a runtime) over tests/fixtures/issue_cases, and
prints this machine's temp dir, home and host name as real tools do; a real nightly run with
--artifacts writes its bundles, and the issue files are read against them.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conformance.cli.main import main
from conformance.report.issues.commands import iree_text
from tests.conftest import FIXTURES, PROJECT, fake

CASES = FIXTURES / "issue_cases"


def conformance(*args: str, cwd: Path = PROJECT) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(PROJECT)}
    return subprocess.run([sys.executable, "-m", "conformance.cli.main", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=600)


def nightly(output: Path, *args: str) -> Path:
    proc = conformance("nightly", "--backend", fake("ISSUE_FILING"), "--cases", str(CASES), "--no-default-cases", "--no-cache",
                       "--no-xfail", "-j", "1", "--output-dir", str(output), *args)
    assert proc.returncode in (0, 1), proc.stderr
    [directory] = [p for p in output.iterdir() if p.is_dir()]
    return directory


class Said:
    def __init__(self, returncode: int, stdout: str, stderr: str):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def cli(capsys, *args: str) -> Said:
    """A conformance command in this process (no torch import per call: the issue command runs nothing of torch)."""
    capsys.readouterr()
    try:
        code = main(list(args))
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return Said(code, out, err)


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("issues")
    return nightly(root / "reports", "--artifacts", str(root / "artifacts"))


def groups(results: Path) -> list[tuple[str, str, str]]:
    """(#, id, op) of each group as `conformance triage` prints them."""
    proc = conformance("triage", str(results))  # a process of its own: module fixtures have no capsys
    assert proc.returncode == 0, proc.stderr
    return re.findall(r"^\s*(\d+)\s+([0-9a-f]{8})\s+\d+\s+\S+(?: \([a-z ]+\))?\s+(\S+)", proc.stdout, re.M)


def written(run: Path, out: Path, *args: str) -> dict[str, str]:
    """op -> the text of its group's issue file, every group written with --all."""
    proc = conformance("issue", "--all", "--results", str(run), "-o", str(out), *args)
    assert proc.returncode == 0, proc.stderr
    by_id = {p.stem.removeprefix("issue-"): p.read_text() for p in out.glob("issue-*.md")}
    return {op: by_id[ident] for _, ident, op in groups(run)}


@pytest.fixture(scope="module")
def issues(run, tmp_path_factory) -> dict[str, str]:
    """The issue files, their commands replayed now (the default)."""
    return written(run, tmp_path_factory.mktemp("replayed"))


@pytest.fixture(scope="module")
def recorded(run, tmp_path_factory) -> dict[str, str]:
    """The issue files quoting what the tools printed during the run (--no-replay)."""
    return written(run, tmp_path_factory.mktemp("recorded"), "--no-replay")


def section(text: str, title: str) -> str:
    found = re.search(rf"^## {re.escape(title)}.*?\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert found, f"no section {title!r} in:\n{text}"
    return found.group(1).lstrip("\n")


def code_block(text: str, language: str) -> str:
    found = re.search(rf"^```{language}\n(.*?)\n```", text, re.M | re.S)
    assert found, f"no {language} block in:\n{text}"
    return found.group(1)


def bundle(run: Path, case: str) -> Path:
    return run.parent.parent / "artifacts" / case / "issue-filing"


def test_every_section_is_there_with_the_groups_smallest_case_and_the_others(issues):
    text = issues["fake.tanh"]
    assert text.startswith("# fake-compile rejects fake.tanh\n"), text[:200]
    for title in ("What happens", "The smallest failing case", "The IR handed to the tool", "To reproduce",
                  "What it printed", "Expected vs got", "Versions", "Other cases of this group"):
        section(text, title)
    # One ATen op and 6 elements beats one op and 64 (tanh.large), and two ops on 1 element (tanh.then_add).
    assert section(text, "The smallest failing case").startswith("`tanh.small` on `issue-filing`")
    others = section(text, "Other cases of this group")
    assert "`tanh.large`" in others and "`tanh.then_add`" in others and "tanh.small" not in others
    versions = section(text, "Versions")
    for tool in ("torch", "torch-mlir", "iree-base-compiler", "python"):
        assert re.search(rf"^\| {re.escape(tool)} \| \S+", versions, re.M), versions


def test_the_ir_and_the_command_are_the_bundles_and_the_command_reproduces(issues, run):
    text = issues["fake.tanh"]
    small = bundle(run, "tanh.small")
    assert code_block(text, "mlir") == (small / "input.mlir").read_text().rstrip("\n")
    [step] = [line for line in (small / "reproduce.sh").read_text().splitlines() if line.startswith("step ")]
    command = code_block(section(text, "To reproduce"), "sh")
    assert shlex.split(command) == shlex.split(step.removeprefix("step "))
    printed = section(text, "What it printed")
    assert "exited with status 1" in printed
    assert "input.mlir:2:8: error: 'fake.tanh' op is not supported by fake-compile" in printed


def test_a_wrong_answer_says_which_output_how_far_and_the_values_inline(issues, run):
    text = issues["aten.mul.Tensor"]
    assert re.match(r"# aten\.mul\.Tensor gives a wrong answer through fake-compile \+ fake-run: expected \S+, got \S+\n", text), text[:200]
    got = section(text, "Expected vs got")
    assert "- **Output:** `output`" in got and "rtol=" in got
    assert "**Precision or wrong answer:** wrong answer" in got
    expected = np.load(bundle(run, "double") / "expected" / "set0" / "0.npy")
    assert f"`{' '.join(str(v) for v in expected)}`" in got  # eager's values, read from the bundle
    # The small expected output is written into the command, as iree-run-module reads it.
    command = code_block(section(text, "To reproduce"), "sh")
    assert f"--expected_output={iree_text(bundle(run, 'double') / 'expected' / 'set0' / '0.npy')}" in shlex.split(command)
    assert "[FAILED] result[0] does not match" in section(text, "What it printed")


def test_nothing_of_this_machine_is_in_an_issue_file(issues, recorded, run):
    # The fake compiler printed its temp dir, home folder and host name: all are in the bundle, none in the issue.
    details = (bundle(run, "tanh.small") / "details.txt").read_text()
    home, host = str(Path.home()), socket.gethostname().split(".")[0]
    assert "/tmp/" in details and home in details and re.search(rf"\b{re.escape(host)}\b", details), details
    assert "'fake.tanh' op is not supported" in section(recorded["fake.tanh"], "What it printed")  # quoted, cleaned
    for text in [*issues.values(), *recorded.values()]:
        for machine in ("/tmp", home, str(run.parent.parent), str(PROJECT), sys.prefix):
            assert machine not in text, (machine, text)
        assert not re.search(rf"(?<![\w.-]){re.escape(host)}(?![\w.-])", text), text


def test_a_group_is_named_by_its_number_or_its_id_and_an_unknown_one_lists_them(run, tmp_path, capsys):
    (number, ident, _), *_ = groups(run)
    by_number = cli(capsys, "issue", number, "--results", str(run), "-o", str(tmp_path / "n"), "--no-replay")
    by_id = cli(capsys, "issue", ident[:5], "--results", str(run), "-o", str(tmp_path / "i"), "--no-replay")
    assert by_number.returncode == by_id.returncode == 0, by_number.stderr + by_id.stderr
    assert (tmp_path / "n" / f"issue-{ident}.md").read_text() == (tmp_path / "i" / f"issue-{ident}.md").read_text()
    unknown = cli(capsys, "issue", "deadbeef", "--results", str(run))
    assert unknown.returncode == 2
    assert "no root-cause group 'deadbeef'" in unknown.stderr
    for _, each, _ in groups(run):
        assert each in unknown.stderr


def test_results_without_bundles_say_what_is_missing(run, tmp_path, capsys):
    # The same run's results, as a run without --artifacts records them: no bundle anywhere.
    bare = tmp_path / "bare"
    bare.mkdir()
    lines = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    (bare / "results.jsonl").write_text("".join(json.dumps({**r, "artifacts": None}) + "\n" for r in lines))
    proc = cli(capsys, "issue", "1", "--results", str(bare))
    assert proc.returncode == 2
    assert "no reproducer bundle" in proc.stderr and "--artifacts" in proc.stderr, proc.stderr


def test_a_reduction_under_the_results_is_the_case_shown(run, tmp_path, capsys):
    reduced = conformance("reduce", "tanh.large", "--backend", fake("ISSUE_FILING"), "--cases", str(CASES), "--no-default-cases",
                          "--no-cache", "--results", str(run), "--output-dir", str(tmp_path / "reduced"), "--runs", "2")
    assert reduced.returncode == 0, reduced.stderr
    results = tmp_path / "results"
    results.mkdir()
    for name in ("results.jsonl", "run.json", "cases.json"):
        (results / name).write_bytes((run / name).read_bytes())
    (tmp_path / "reduced").rename(results / "reduced")
    proc = cli(capsys, "issue", "1", "--results", str(results), "-o", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    [written] = (tmp_path / "out").glob("issue-*.md")
    text = written.read_text()
    shown = section(text, "The smallest failing case")
    assert shown.startswith("`tanh.large.reduced` on `issue-filing`: `conformance reduce` shrank `tanh.large`"), shown
    assert "def program(" in shown  # the reduced case, as PyTorch
    assert "exited with status 1" in section(text, "What it printed")


def test_the_reports_name_each_group_and_the_command_that_files_it(run, tmp_path):
    from conformance.report.build import build_reports

    copy = tmp_path / run.name
    copy.mkdir()
    for name in ("results.jsonl", "run.json", "cases.json"):
        (copy / name).write_bytes((run / name).read_bytes())
    summary = build_reports(copy, None)
    ids = [g["id"] for g in summary["root_causes"]]
    assert ids == [ident for _, ident, _ in groups(run)]
    markdown = (copy / "report.md").read_text()
    page = (copy / "report.html").read_text()
    for n, ident in enumerate(ids, 1):
        assert re.search(rf"^\|\s+{n} \| `{ident}` \|", markdown, re.M), markdown
        assert f'<code title="conformance issue {ident} --results .">{ident}</code>' in page
    assert "`conformance issue ID --results .` in this directory" in markdown
