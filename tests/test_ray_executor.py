"""`conformance nightly --executor ray` on a real Ray cluster of two nodes on this machine.

The cluster is Ray's own (ray.cluster_utils.Cluster starts a head and a
second raylet as separate processes); the nightly joins it with --address as
a user would join theirs. The verdicts must be those of a run on lanes, with
a node killed mid-run, with nothing lost and nothing written twice.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import fake
from tests.test_nightly import nightly, nightly_command, report_dir

ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'conformance[ray]' (make install does)")
from ray.cluster_utils import Cluster  # noqa: E402

CASES = ["tanh", "add.broadcast", "double", "mul.dynamic", "sum.int"]
# A crash (SIGSEGV at lower) and a hang (at run) must come out as on one machine; SLOW keeps the actors busy
# long enough for the node to die under them.
BACKENDS = f"eager,{fake('SEGFAULT')},{fake('HANG')},{fake('SLOW')}"
OPTIONS = ("--backend", BACKENDS, "--case-timeout", "10", "--batch-size", "1")


def lines_of(directory: Path) -> list[dict]:
    return [json.loads(line) for line in (directory / "results.jsonl").read_text().splitlines()]


def verdicts(directory: Path) -> dict:
    """(case, backend) -> what a user reads of it; a pair written twice is a failure of its own."""
    rows = lines_of(directory)
    keys = [(r["case"], r["backend"]) for r in rows]
    assert len(keys) == len(set(keys)), f"a result written twice in {directory}"
    return {(r["case"], r["backend"]): (r["status"], r["stage"], r["code"], r["op"], r["explanation"]) for r in rows}


def wait_for_results(output: Path, count: int, proc: subprocess.Popen, timeout: float = 240, cases: int = 1) -> Path:
    """The report directory once it holds `count` results, of at least `cases` cases (each job is one case's:
    two cases' results mean both actors are running jobs, however slowly one of them started)."""
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        for path in output.glob("*/results.jsonl"):
            rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            if len(rows) >= count and len({r["case"] for r in rows}) >= cases:
                return path.parent
        time.sleep(0.2)
    raise AssertionError(f"no {count} results of {cases} cases in {output} (exit status {proc.poll()})")


@pytest.fixture
def two_nodes():
    """A head node and a worker node, one CPU each: one actor each."""
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        worker = cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        yield cluster, worker
    finally:
        cluster.shutdown()


def test_a_node_killed_mid_run_loses_nothing_and_the_verdicts_are_the_lanes_ones(tmp_path, two_nodes):
    cluster, worker = two_nodes
    lanes = nightly(*OPTIONS, "-j", "2", "--output-dir", str(tmp_path / "lanes"))
    assert lanes.returncode == 0, lanes.stderr

    too_many = nightly(*OPTIONS, "--executor", "ray", "--address", cluster.address, "-j", "3", "--output-dir", str(tmp_path / "x"))
    assert too_many.returncode == 2 and "-j 3: the Ray cluster has 2 CPUs" in too_many.stderr
    assert not (tmp_path / "x").exists() or not any((tmp_path / "x").iterdir())  # refused before any report directory

    output = tmp_path / "ray"
    proc = subprocess.Popen(nightly_command(*OPTIONS, "--executor", "ray", "--address", cluster.address, "--output-dir", str(output)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        # Both actors busy, each with a job that hangs 10 s: the worker node dies with a job in flight. Killed after
        # the first results alone, it could die before its actor (slower to start on a loaded machine) had a job.
        directory = wait_for_results(output, 2, proc, cases=2)
        cluster.remove_node(worker, allow_graceful=False)  # the raylet, its actor and the actor's child: SIGKILL
        _, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    assert "on 2 Ray actors on the Ray cluster at" in stderr
    assert "unfinished pairs are re-queued" in stderr  # the node died with a job: the fault was exercised
    assert "reported as CRASH" not in stderr
    assert verdicts(directory) == verdicts(report_dir(tmp_path / "lanes"))
    assert len(verdicts(directory)) == len(CASES) * 4
    codes = {k: v[2] for k, v in verdicts(directory).items() if v[0] == "fail"}
    assert codes == {("tanh", "segfault"): "CRASH", ("tanh", "hang"): "TIMEOUT"}


def test_an_actor_lost_twice_has_its_pairs_reported_naming_the_node(tmp_path):
    """A case that kills the actor running it: re-queued once, then a CRASH naming the node; the rest pass."""
    proc = nightly("--backend", f"eager,{fake('KILL_PARENT')}", "--executor", "ray", "-j", "2", "--output-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "on 2 Ray actors on a Ray instance on this machine" in proc.stderr
    results = verdicts(report_dir(tmp_path))
    assert len(results) == len(CASES) * 2
    failed = {k: v for k, v in results.items() if v[0] != "pass"}
    assert list(failed) == [("tanh", "kill-parent")]  # the other pairs of its job were re-run, one job per pair
    _, stage, code, _, explanation = failed[("tanh", "kill-parent")]
    assert (stage, code) == ("case", "CRASH")
    assert re.match(r"the Ray actor running this pair was lost twice, on node [0-9a-f]{8} \(\S+\) then on node [0-9a-f]{8} \(\S+\)", explanation)


def test_a_killed_ray_driver_resumes_and_writes_each_result_once(tmp_path):
    options = ("--backend", fake("SLOW"), "--executor", "ray", "-j", "1", "--batch-size", "1", "--output-dir", str(tmp_path))
    proc = subprocess.Popen(nightly_command(*options), stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        directory = wait_for_results(tmp_path, 2, proc)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the driver and the Ray instance it started: no chance to clean up
        proc.wait()
    kept = (directory / "results.jsonl").read_text().splitlines()
    assert 2 <= len(kept) < len(CASES)
    resumed = nightly(*options, "--resume", str(directory))
    assert resumed.returncode == 0, resumed.stderr
    lines = (directory / "results.jsonl").read_text().splitlines()
    assert lines[: len(kept)] == kept
    assert sorted(verdicts(directory)) == sorted((case, "slow") for case in CASES)
