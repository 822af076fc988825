"""The `conformance` command: list, triage, xfail check, and its error messages."""

import json
import subprocess
import sys

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
    assert "tosa: 3 failures in 2 groups" in out.stdout
    lines = [l for l in out.stdout.splitlines() if "UNSUPPORTED_OP" in l or "ILLEGAL_TYPE" in l]
    assert lines[0].split()[:3] == ["2", "UNSUPPORTED_OP", "aten.cumsum"] and lines[1].split()[:3] == ["1", "ILLEGAL_TYPE", "tosa.cast"]
    as_json = json.loads(cli("triage", str(tmp_path), "--json").stdout)
    assert [(g["count"], g["code"]) for g in as_json] == [(2, "UNSUPPORTED_OP"), (1, "ILLEGAL_TYPE")]


def test_xfail_check_reports_stale_entries(tmp_path):
    (tmp_path / "eager.toml").write_text('["gone.case"]\ncode = "CRASH"\n')
    out = cli("xfail", "check", "--xfail-dir", str(tmp_path), "--no-default-cases", "--cases", str(FIXTURES / "cases"))
    assert out.returncode == 1
    assert "1 entries, 1 stale" in out.stdout and "stale (no such case in the registry): gone.case" in out.stdout


def test_an_unknown_backend_is_named_with_the_known_ones(tmp_path):
    out = cli("nightly", "--backend", "nope", "--output-dir", str(tmp_path))
    assert out.returncode == 2
    assert "unknown backend 'nope'; known backends:" in out.stderr and "tosa" in out.stderr
