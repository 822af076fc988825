"""Writing a report directory from results.jsonl files, as the nightly does after a run.

Report directories are made here by hand (a results.jsonl, a run.json, a
cases.json), each a night of an output directory, and build_reports writes
their summary.json, report.md and report.html.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from conformance.report_dir import ResultsFile
from conformance.report.build import build_reports
from conformance.report.history import pair_histories
from conformance.report.summary import SCHEMA_PATH
from conformance.result import Result

CASES = {
    "math.add": {"kind": "op", "family": "math", "ops": ["aten.add"], "tags": [], "suite": "default"},
    "math.softmax": {"kind": "op", "family": "math", "ops": ["aten.softmax"], "tags": [], "suite": "default"},
}


def night(output: Path, name: str, results: list[Result], settings: dict | None = None) -> Path:
    """A report directory `output/name` holding these results, as a finished run leaves it."""
    directory = output / name
    store = ResultsFile(directory)
    for r in results:
        store.append(r)
    store.close()
    run = {"started": f"{name}T02:00:00+00:00", "backends": sorted({r.backend for r in results}),
           "shards": [], "settings": settings or {}, "toolchain": {"torch": "2.13.0"},
           "machine": {"cpus": 2, "memory_gb": 8.0}, "wall_seconds": 60.0}
    (directory / "run.json").write_text(json.dumps(run))
    (directory / "cases.json").write_text(json.dumps(CASES))
    return directory


def passing(case: str, backend: str) -> Result:
    return Result(case, backend, "pass", timings={"export": 0.1, "run": 0.2})


def failing(case: str, backend: str, code: str, op: str | None = None) -> Result:
    return Result(case, backend, "fail", stage="lower", code=code, op=op, explanation=f"{code} on {case}",
                  details=f"diagnostics of {case}", timings={"export": 0.1, "lower": 0.3})


def test_the_night_the_last_failure_of_a_code_is_fixed_still_writes_every_report(tmp_path):
    # The baseline has the only DTYPE_MISMATCH; tonight it passes, so that code is in no result of this run.
    before = night(tmp_path, "2026-10-01", [
        passing("math.add", "eager"), failing("math.add", "tosa", "DTYPE_MISMATCH", "aten.add"),
        passing("math.softmax", "eager"), failing("math.softmax", "tosa", "UNSUPPORTED_OP", "aten.softmax"),
    ])
    now = night(tmp_path, "2026-10-02", [
        passing("math.add", "eager"), passing("math.add", "tosa"),
        passing("math.softmax", "eager"), failing("math.softmax", "tosa", "UNSUPPORTED_OP", "aten.softmax"),
    ])
    summary = build_reports(now, before)
    assert [i["was"]["code"] for i in summary["changes"]["newly_passing"]] == ["DTYPE_MISMATCH"]
    page = (now / "report.html").read_text()
    assert page.rstrip().endswith("</html>")
    assert "DTYPE_MISMATCH" in page  # the fixed failure is named in "newly passing"
    assert "DTYPE_MISMATCH" in (now / "report.md").read_text()
    jsonschema.validate(json.loads((now / "summary.json").read_text()), json.loads(SCHEMA_PATH.read_text()))


def test_op_coverage_groups_overloads_so_backends_compare(tmp_path):
    # eager never exports (its ops are the case's declared ones); tosa and linalg export softmax as
    # aten.softmax.int and add as aten.add.Tensor: all of them are counted under one op packet.
    exported = {"math.softmax": ["aten.softmax.int"], "math.add": ["aten.add.Tensor", "aten.add.Scalar"]}

    def on(backend, r):
        if backend != "eager":
            r.extras["aten_ops"] = exported[r.case]
        return r

    directory = night(tmp_path, "2026-10-01", [
        on("eager", passing("math.softmax", "eager")), on("eager", passing("math.add", "eager")),
        on("tosa", failing("math.softmax", "tosa", "UNSUPPORTED_OP", "aten.softmax")), on("tosa", passing("math.add", "tosa")),
        on("linalg", passing("math.softmax", "linalg")), on("linalg", passing("math.add", "linalg")),
    ])
    cover = build_reports(directory, None)["op_coverage"]
    assert cover == {
        "aten.add": {b: {"cases": 1, "pass": 1} for b in ("eager", "linalg", "tosa")},
        "aten.softmax": {"eager": {"cases": 1, "pass": 1}, "linalg": {"cases": 1, "pass": 1}, "tosa": {"cases": 1, "pass": 0}},
    }
    # report.md tells the same: the op failing somewhere, per backend in summary order (eager, linalg, tosa)
    markdown = (directory / "report.md").read_text()
    assert "| aten.softmax | -        | 1/1     | 1/1      | 0/1    |" in markdown  # CASES name no dtypes: "-"
    assert "aten.softmax.int" not in markdown and "| aten.add " not in markdown


def test_op_coverage_has_a_dtype_axis_from_the_cases_input_dtypes(tmp_path):
    # Two cases of aten.add, one on float32 inputs and one on int64 ones; tosa fails only the int64 one.
    cases = {
        "math.add": {**CASES["math.add"], "dtypes": ["float32"]},
        "math.add_i64": {**CASES["math.add"], "dtypes": ["int64"]},
        "math.index": {"kind": "op", "family": "math", "ops": ["aten.index_select"], "dtypes": ["float32", "int64"], "tags": [], "suite": "default"},
        "math.arange": {"kind": "op", "family": "math", "ops": ["aten.arange"], "dtypes": [], "tags": [], "suite": "default"},
    }
    directory = night(tmp_path, "2026-10-01", [
        passing("math.add", "tosa"), failing("math.add_i64", "tosa", "ILLEGAL_TYPE", "aten.add"),
        passing("math.index", "tosa"), passing("math.arange", "tosa"), Result("math.arange", "linalg", "skip"),
    ])
    (directory / "cases.json").write_text(json.dumps(cases))
    summary = build_reports(directory, None)
    assert summary["op_dtype_coverage"] == {
        "aten.add": {"float32": {"tosa": {"cases": 1, "pass": 1}}, "int64": {"tosa": {"cases": 1, "pass": 0}}},
        "aten.arange": {"no inputs": {"tosa": {"cases": 1, "pass": 1}}},  # a skip is not judged
        "aten.index_select": {"float32+int64": {"tosa": {"cases": 1, "pass": 1}}},
    }
    assert summary["op_coverage"]["aten.add"] == {"tosa": {"cases": 2, "pass": 1}}  # the op axis alone still sums them
    jsonschema.validate(json.loads((directory / "summary.json").read_text()), json.loads(SCHEMA_PATH.read_text()))
    markdown = (directory / "report.md").read_text()
    assert "| aten.add | int64    | -        | 0/1    |" in markdown  # the failing (op, dtypes) row, and only that one
    assert "| aten.add | float32" not in markdown
    page = (directory / "report.html").read_text()
    assert "float32+int64" in page and "no inputs" in page


def test_a_pairs_history_says_since_when_it_fails_and_how_often_it_flipped(tmp_path):
    plan = {  # outcome of ("math.add", "tosa") per night, oldest first
        "2026-10-01": "fail", "2026-10-02": "pass", "2026-10-03": "fail", "2026-10-04": None, "2026-10-05": "skip", "2026-10-06": "fail",
    }
    for name, status in plan.items():
        results = [passing("math.add", "eager")]
        if status == "fail":
            results.append(failing("math.add", "tosa", "UNSUPPORTED_OP"))
        elif status:
            results.append(Result("math.add", "tosa", status))
        night(tmp_path, name, results)
    last = tmp_path / "2026-10-06"
    results = [passing("math.add", "eager"), failing("math.add", "tosa", "UNSUPPORTED_OP")]
    histories = pair_histories(last, results)
    assert histories.reports == list(plan)
    tosa = histories.pairs[("math.add", "tosa")]
    assert tosa.outcomes == "fpf.sf"  # not run on the 4th night, skipped on the 5th
    assert histories.reports[tosa.failing_since()] == "2026-10-03"  # absences and skips do not break a run of failures
    assert tosa.flips() == 2
    eager = histories.pairs[("math.add", "eager")]
    assert (eager.outcomes, eager.failing_since(), eager.flips()) == ("pppppp", None, 0)
    # bounded: only the last `limit` reports are read, this one included
    short = pair_histories(last, results, limit=3)
    assert short.reports == ["2026-10-04", "2026-10-05", "2026-10-06"]
    assert short.pairs[("math.add", "tosa")].outcomes == ".sf"
    # a later report in the same directory is not history
    night(tmp_path, "2026-10-07", results)
    assert pair_histories(last, results).reports == list(plan)
