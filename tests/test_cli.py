"""The `conformance` command: list, triage, xfail check, and its error messages."""

import json
import subprocess
import sys

import pytest

from conformance.result import Result
from tests.conftest import FIXTURES


def cli(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance.cli.main", *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_list_json_is_identical_in_two_processes_and_describes_each_case():
    first, second = (cli("list", "--json") for _ in range(2))
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    cases = json.loads(first.stdout)
    by_id = {c["id"]: c for c in cases}
    assert by_id["tanh"]["kind"] == "op" and by_id["tanh"]["ops"] == ["aten.tanh"]
    assert by_id["resnet50"]["kind"] == "model" and "heavy" in by_id["resnet50"]["tags"]
    assert {"id", "kind", "family", "tags", "ops", "inputs", "dynamic", "defined_at", "suite"} <= set(cases[0])
    assert not any(c["kind"] == "opinfo" for c in cases)  # opt-in suite


def test_list_counts_per_family_and_selects_like_pytest():
    out = cli("list", "--no-default-cases", "--cases", str(FIXTURES / "cases"), "-k", "binary and not dynamic")
    assert out.returncode == 0, out.stderr
    assert "add.broadcast" in out.stdout and "mul.dynamic" not in out.stdout
    assert out.stdout.rstrip().endswith("1 cases: 1 op")
    assert "small" in out.stdout  # the family table


def test_a_broken_case_source_is_a_clear_error():
    out = cli("list", "--no-default-cases", "--cases", str(FIXTURES / "duplicates"))
    assert out.returncode == 2
    assert "conformance: error: duplicate case id 'twice'" in out.stderr


def test_triage_groups_failures_largest_first(tmp_path):
    rows = [
        Result("a", "tosa", "fail", stage="lower", code="UNSUPPORTED_OP", op="aten.cumsum", explanation="cannot lower cumsum"),
        Result("b", "tosa", "fail", stage="lower", code="UNSUPPORTED_OP", op="aten.cumsum", explanation="cannot lower cumsum"),
        Result("c", "tosa", "fail", stage="compile", code="ILLEGAL_TYPE", op="tosa.cast", explanation="f64"),
        Result("c", "linalg", "pass"),
    ]
    (tmp_path / "results.jsonl").write_text("".join(r.to_json() + "\n" for r in rows))
    out = cli("triage", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "3 failures in 2 root-cause groups" in out.stdout
    lines = [l for l in out.stdout.splitlines() if "UNSUPPORTED_OP" in l or "ILLEGAL_TYPE" in l]
    as_json = json.loads(cli("triage", str(tmp_path), "--json").stdout)
    assert [(g["count"], g["code"]) for g in as_json] == [(2, "UNSUPPORTED_OP"), (1, "ILLEGAL_TYPE")]
    # Each row: its # and id (what `conformance issue` takes), count, code, op.
    ids = [g["id"] for g in as_json]
    assert lines[0].split()[:5] == ["1", ids[0], "2", "UNSUPPORTED_OP", "aten.cumsum"]
    assert lines[1].split()[:5] == ["2", ids[1], "1", "ILLEGAL_TYPE", "tosa.cast"]


def test_xfail_check_reports_stale_entries(tmp_path):
    (tmp_path / "eager.toml").write_text('["gone.case"]\ncode = "CRASH"\n')
    out = cli("xfail", "check", "--xfail-dir", str(tmp_path), "--no-default-cases", "--cases", str(FIXTURES / "cases"))
    assert out.returncode == 1
    assert "1 entries, 1 stale" in out.stdout and "stale (no such case in the registry): gone.case" in out.stdout


def test_an_unknown_backend_is_named_with_the_known_ones(tmp_path):
    out = cli("nightly", "--backend", "nope", "--output-dir", str(tmp_path))
    assert out.returncode == 2
    assert "unknown backend 'nope'; known backends:" in out.stderr and "tosa" in out.stderr


# -- options: checked before anything runs, each error on one line --


@pytest.mark.parametrize(
    "option, value, message",
    [
        ("--case-timeout", "0", "argument --case-timeout: must be more than 0 and at most 86400 seconds (a day), got 0"),
        ("--case-timeout", "-1", "argument --case-timeout: must be more than 0"),
        ("-j", "0", "argument -j/--workers: must be at least 1, got 0"),
        ("--batch-size", "0", "argument --batch-size: must be at least 1, got 0"),
        ("--reruns", "-1", "argument --reruns: must be at least 0, got -1"),
        ("--reruns", "once", "argument --reruns: expected a whole number, got 'once'"),
        ("--memory-limit", "-5", "argument --memory-limit: -5 MB is less than a case process needs"),
        ("--memory-limit", "99999999", "more than this machine's memory"),
        ("--shard", "3/2", "argument --shard: I must be between 1 and N"),
        ("--durations", "/no/such/report", "argument --durations: /no/such/report: no such file or directory"),
        ("--executor", "spark", "argument --executor: expected lanes or ray, got 'spark'"),
        ("--xfail-dir", "/no/such/dir", "argument --xfail-dir: /no/such/dir: no such directory"),
        ("--baseline", "/no/such/report", "argument --baseline: /no/such/report: not a report directory (no results.jsonl there)"),
    ],
)
def test_nightly_refuses_a_bad_option_on_one_line_before_making_anything(tmp_path, option, value, message):
    out = cli("nightly", "--output-dir", str(tmp_path / "reports"), option, value)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and message in out.stderr, out.stderr
    assert not (tmp_path / "reports").exists()


def test_nightly_with_a_selection_matching_nothing_says_so_and_makes_nothing(tmp_path):
    out = cli("nightly", "--no-default-cases", "--cases", str(FIXTURES / "cases"), "-k", "no_such_case", "--output-dir", str(tmp_path / "reports"))
    assert out.returncode == 2
    assert "conformance: error: no case matches -k 'no_such_case' (5 cases in the registry); nothing was run" in out.stderr
    assert not (tmp_path / "reports").exists()


def test_an_unwritable_report_directory_is_refused_before_the_run(tmp_path, read_only_dir):
    out = cli("nightly", "--output-dir", str(read_only_dir / "reports"))
    assert out.returncode == 2
    assert f"argument --output-dir: {read_only_dir / 'reports'}: cannot write in {read_only_dir}" in out.stderr
    (tmp_path / "file").write_text("")
    out = cli("nightly", "--artifacts", str(tmp_path / "file" / "bundles"))
    assert out.returncode == 2 and f"argument --artifacts: {tmp_path / 'file' / 'bundles'}: {tmp_path / 'file'} is not a directory" in out.stderr


def test_xfail_check_of_a_missing_directory_is_an_error():
    out = cli("xfail", "check", "--xfail-dir", "/no/such/dir")
    assert out.returncode == 2 and "argument --xfail-dir: /no/such/dir: no such directory" in out.stderr


def test_a_suite_is_added_to_the_default_one(tmp_path):
    (tmp_path / "usual.py").write_text("import torch\nfrom conformance import T, op\nCASES = [op('relu.usual', torch.relu, T(2))]\n")
    (tmp_path / "extra.py").write_text("import torch\nfrom conformance import T, op\nSUITE = 'extra'\nCASES = [op('relu.extra', torch.relu, T(2))]\n")
    listed = cli("list", "--json", "--no-default-cases", "--cases", str(tmp_path), "--suite", "extra")
    assert listed.returncode == 0, listed.stderr
    assert sorted(c["id"] for c in json.loads(listed.stdout)) == ["relu.extra", "relu.usual"]


def test_list_into_a_pipe_closed_early_ends_quietly():
    proc = subprocess.Popen([sys.executable, "-m", "conformance.cli.main", "list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()  # as `| head -1` does
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 1
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr


def test_a_backend_that_raises_on_import_is_named_with_the_users_traceback(tmp_path):
    broken = tmp_path / "broken_backend.py"
    broken.write_text("raise ValueError('no such device')\n")
    out = cli("nightly", "--backend", f"{broken}:BACKEND", "--output-dir", str(tmp_path / "reports"))
    assert out.returncode == 2
    assert f"importing {broken} failed" in out.stderr and f'File "{broken}", line 1, in <module>' in out.stderr
    assert "ValueError: no such device" in out.stderr and "importlib" not in out.stderr


def test_merge_checks_its_baseline_before_writing_anything(tmp_path):
    out = cli("merge", str(tmp_path / "a"), "-o", str(tmp_path / "merged"), "--baseline", str(tmp_path / "nope"))
    assert out.returncode == 2 and "argument --baseline" in out.stderr and "not a report directory" in out.stderr
    assert not (tmp_path / "merged").exists()
