"""Shards balanced by measured time, merging only a whole set of shards, and a shard's default baseline."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from conformance.cli.nightly import pick_baseline
from conformance.nightly.matrix import Durations, Shard, deal, hash_shard, matrix_pairs
from conformance.result import Result, failed, passed
from tests.test_cli import cli
from tests.test_nightly import nightly, report_dir, results_of

FIXTURE_CASES = ["tanh", "add.broadcast", "double", "mul.dynamic", "sum.int"]


def write_report(directory: Path, results: list[Result], **run) -> Path:
    """A report directory as a nightly leaves it (run.json, results.jsonl), made by hand."""
    directory.mkdir(parents=True)
    info = {"started": "2026-11-01T00:00:00+00:00", "finished": "2026-11-01T01:00:00+00:00", "backends": sorted({r.backend for r in results}), "shards": []}
    (directory / "run.json").write_text(json.dumps({**info, **run}))
    (directory / "results.jsonl").write_text("".join(r.to_json() + "\n" for r in results))
    (directory / "cases.json").write_text(json.dumps({r.case: {"kind": "op", "family": "small", "ops": [], "tags": [], "suite": "default"} for r in results}))
    return directory


def timed(case: str, backend: str, seconds: float) -> Result:
    return passed(case, backend, {"run": seconds})


# -- dealing cases to shards ----------------------------------------------------------


def test_known_cases_go_longest_first_to_the_lightest_shard_and_the_rest_by_hash():
    seconds = {"a": 10.0, "b": 6.0, "c": 5.0, "d": 4.0}
    dealt = deal(["d", "c", "b", "a", "new"], 2, seconds)
    # a (10) -> 1; b (6) -> 2; c (5) -> 2, now 11; d (4) -> 1, now 14.
    assert {case: dealt[case] for case in "abcd"} == {"a": 1, "b": 2, "c": 2, "d": 1}
    assert dealt["new"] == hash_shard("new", 2)
    assert deal(["a", "b", "c", "d", "new"], 2, seconds) == dealt  # order of the registry does not matter


def test_dealing_by_time_evens_out_what_the_hash_leaves_uneven():
    # One heavy case per ten light ones, as models among ops.
    cases = [f"case{i}" for i in range(200)]
    seconds = {c: 60.0 if i % 10 == 0 else 1.0 for i, c in enumerate(cases)}

    def loads(shard_of: dict[str, int]) -> list[float]:
        out = [0.0] * 4
        for case, shard in shard_of.items():
            out[shard - 1] += seconds[case]
        return out

    by_hash, by_time = loads({c: hash_shard(c, 4) for c in cases}), loads(deal(cases, 4, seconds))
    assert sum(by_time) == sum(by_hash)
    assert max(by_time) - min(by_time) <= max(seconds.values())  # greedy: within one case of even
    assert max(by_time) < max(by_hash)


def test_a_timeout_costs_its_timeout_and_only_the_runs_backends_count(tmp_path):
    hung = failed("tanh", "tosa", stage="run", code="TIMEOUT", explanation="stage run gave no sign of progress for 30 s")
    report = write_report(tmp_path / "r", [timed("tanh", "eager", 1.0), hung, timed("double", "eager", 2.0), timed("double", "linalg", 50.0)],
                          settings={"case_timeout": 30.0})  # fmt: skip
    durations = Durations.load(report, ["eager", "tosa"])
    assert durations.seconds == {"tanh": 31.0, "double": 2.0}
    assert Durations.load(report / "results.jsonl", ["eager", "tosa"]) == durations  # the file or its directory


def test_each_pair_is_in_exactly_one_shard_and_a_cases_backends_stay_together(tmp_path):
    durations = Durations({"tanh": 3.0, "double": 9.0}, "x")
    shards = [matrix_pairs(FIXTURE_CASES, ["eager", "tosa"], Shard(i, 3), durations=durations) for i in (1, 2, 3)]
    everything = [p for shard in shards for p in shard]
    assert sorted(everything) == sorted((c, b) for c in FIXTURE_CASES for b in ("eager", "tosa"))
    for shard in shards:
        cases = {c for c, _ in shard}
        assert all((c, b) in shard for c in cases for b in ("eager", "tosa"))


def test_nightly_shards_dealt_by_an_earlier_reports_times_merge_into_the_whole_matrix(tmp_path):
    # sum.int (9 s) -> 1; tanh (5) -> 2; double (4) -> 2, now 9; add.broadcast (3) -> 1, now 12; mul.dynamic unknown: hash.
    earlier = write_report(tmp_path / "earlier", [timed("sum.int", "eager", 9), timed("tanh", "eager", 5), timed("double", "eager", 4),
                                                  timed("add.broadcast", "eager", 3)])  # fmt: skip
    directories = []
    for index in (1, 2):
        proc = nightly("--backend", "eager", "--shard", f"{index}/2", "--durations", str(earlier), "--output-dir", str(tmp_path / f"s{index}"))
        assert proc.returncode == 0, proc.stderr
        directories.append(report_dir(tmp_path / f"s{index}"))
    expected = {1: {"sum.int", "add.broadcast"}, 2: {"tanh", "double"}}
    expected[hash_shard("mul.dynamic", 2)].add("mul.dynamic")
    for index, directory in enumerate(directories, 1):
        assert {case for case, _ in results_of(directory)} == expected[index]
        assert json.loads((directory / "run.json").read_text())["sharding"] == str(Durations.load(earlier, ["eager"]))
    merged = cli("merge", *map(str, directories), "-o", str(tmp_path / "merged"))
    assert merged.returncode == 0, merged.stderr
    assert sorted(results_of(tmp_path / "merged")) == sorted((c, "eager") for c in FIXTURE_CASES)


def test_durations_without_shard_is_refused_before_anything_runs(tmp_path):
    earlier = write_report(tmp_path / "earlier", [timed("tanh", "eager", 1)])
    proc = nightly("--backend", "eager", "--durations", str(earlier), "--output-dir", str(tmp_path / "out"))
    assert proc.returncode == 2 and "--durations balances shards: give it with --shard I/N" in proc.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    proc = nightly("--backend", "eager", "--address", "localhost:6379", "--output-dir", str(tmp_path / "out"))
    assert proc.returncode == 2 and "--address is the Ray cluster's: give it with --executor ray" in proc.stderr


# -- merging only a whole set --------------------------------------------------------


def shard_report(root: Path, label: str, cases: list[str], **run) -> Path:
    return write_report(root / label.replace("/", "-of-"), [timed(c, "eager", 1) for c in cases], shards=[label], **run)


@pytest.mark.parametrize(
    "shards, message",
    [
        ([("1/3", ["tanh"]), ("3/3", ["double"])], "not merging: shard 2/3 is missing (have 1/3, 3/3)"),
        ([("1/2", ["tanh"]), ("2/2", ["double"]), ("2/2", ["sum.int"])], "given twice"),
        ([("1/2", ["tanh"]), ("2/3", ["double"])], "not merging: the shards come from different splits"),
        ([("1/2", ["tanh"]), ("2/2", ["tanh"])], "not merging: 1 pairs have results in two directories, e.g. tanh[eager]"),
    ],
)
def test_merge_refuses_an_incomplete_or_doubled_set_of_shards_and_says_which(tmp_path, shards, message):
    directories = [shard_report(tmp_path / f"d{i}", label, cases) for i, (label, cases) in enumerate(shards)]
    proc = cli("merge", *map(str, directories), "-o", str(tmp_path / "merged"))
    assert proc.returncode == 2, proc.stdout
    assert message in proc.stderr
    assert not (tmp_path / "merged").exists()


def test_merge_refuses_shards_dealt_differently_or_unfinished(tmp_path):
    one = shard_report(tmp_path, "1/2", ["tanh"], sharding="hash")
    two = shard_report(tmp_path / "b", "2/2", ["double"], sharding="durations 0123456789abcdef")
    proc = cli("merge", str(one), str(two), "-o", str(tmp_path / "merged"))
    assert proc.returncode == 2 and "not merging: the shards were dealt differently (--durations)" in proc.stderr
    unfinished = shard_report(tmp_path / "c", "2/2", ["double"], sharding="hash", finished=None)
    proc = cli("merge", str(one), str(unfinished), "-o", str(tmp_path / "merged"))
    assert proc.returncode == 2 and f"not merging: shard 2/2 ({unfinished}) did not finish" in proc.stderr


# -- a shard's baseline -----------------------------------------------------------------


def test_a_shards_default_baseline_is_the_latest_whole_report_never_another_shard(tmp_path):
    reports = tmp_path / "reports"
    whole = write_report(reports / "20261101T000000Z", [timed("tanh", "eager", 1)])
    merged = write_report(reports / "20261102T000000Z-merged", [timed("tanh", "eager", 1)], shards=["1/2", "2/2"])
    shard_report(reports, "1/2", ["tanh"]).rename(reports / "20261103T000000Z")
    shard_report(reports, "2/2", ["tanh"]).rename(reports / "20261103T000001Z")
    now = reports / "20261103T000002Z"
    args = argparse.Namespace(baseline=None)
    assert pick_baseline(args, now) == merged
    (merged / "results.jsonl").unlink()  # not a report any more
    assert pick_baseline(args, now) == whole
