"""Which (case, backend) pairs a run covers: selection, sharding, resuming."""

from __future__ import annotations

import hashlib
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from conformance.execution.planning import Pair, plan_jobs
from conformance.settings import DEFAULT_CASE_TIMEOUT
from conformance.report_dir import RESULTS, RUN, latest, read_json, read_results
from conformance.result import Result

HASH = "hash"  # how shards are dealt without --durations (run.json's "sharding")


@dataclass(frozen=True)
class Shard:
    """Shard I of N (1-based): a deterministic share of the cases, all backends of a case together."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        try:
            index, count = (int(part) for part in text.split("/"))
        except ValueError:
            raise ValueError(f"--shard takes I/N, e.g. 2/4; got {text!r}") from None
        if not 1 <= index <= count:
            raise ValueError(f"--shard {text}: I must be between 1 and N")
        return cls(index, count)

    def holds(self, case_id: str) -> bool:
        return hash_shard(case_id, self.count) == self.index

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def hash_shard(case_id: str, count: int) -> int:
    # A hash of the id, not its position: shards stay stable as the registry grows.
    return zlib.crc32(case_id.encode()) % count + 1


def deal(case_ids: Iterable[str], count: int, seconds: Mapping[str, float]) -> dict[str, int]:
    """Each case's shard (1-based): the cases `seconds` knows are dealt longest first, each to the
    shard with the least time so far (as PyTorch's CI shards its tests); the others go by the hash.

    A pure function of its arguments: every shard of a night computes the same deal.
    """
    case_ids = list(case_ids)
    loads = [0.0] * count
    shard_of: dict[str, int] = {}
    for case in sorted((c for c in case_ids if c in seconds), key=lambda c: (-seconds[c], c)):
        lightest = min(range(count), key=lambda i: (loads[i], i))
        loads[lightest] += seconds[case]
        shard_of[case] = lightest + 1
    return {case: shard_of.get(case) or hash_shard(case, count) for case in case_ids}


@dataclass(frozen=True)
class Durations:
    """Seconds per case, measured by an earlier report: what `--shard I/N --durations REPORT` balances."""

    seconds: dict[str, float]
    digest: str  # of the results file: shards dealt from the same measurements agree on it

    @classmethod
    def load(cls, source: str | Path, backends: Iterable[str]) -> Durations:
        """From a report directory or its results.jsonl, counting only `backends` (the ones this run runs)."""
        path = Path(source)
        path = path / RESULTS if path.is_dir() else path
        timeout = (read_json(path.parent, RUN) or {}).get("settings", {}).get("case_timeout")
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        return cls(case_seconds(latest(read_results(path)), backends, timeout or DEFAULT_CASE_TIMEOUT), digest)

    def __str__(self) -> str:
        return f"durations {self.digest}"


def case_seconds(results: Iterable[Result], backends: Iterable[str], case_timeout: float) -> dict[str, float]:
    """Per case, the seconds its pairs on `backends` took: their stage timers, plus the timeout a TIMEOUT waited out.

    A stage shared by several backends (one export) is timed on the first
    pair only, so the sum counts it once.
    """
    wanted = set(backends)
    seconds: dict[str, float] = {}
    for r in results:
        if r.backend in wanted:
            spent = sum(r.timings.values()) + (case_timeout if r.code == "TIMEOUT" else 0.0)
            seconds[r.case] = seconds.get(r.case, 0.0) + spent
    return seconds


def shard_cases(case_ids: list[str], shard: Shard, durations: Durations | None = None) -> list[str]:
    """The case ids (in their order) that shard `shard` runs: dealt by `durations` when given, else by hash."""
    if durations is None:
        return [c for c in case_ids if shard.holds(c)]
    dealt = deal(case_ids, shard.count, durations.seconds)
    return [c for c in case_ids if dealt[c] == shard.index]


def matrix_pairs(case_ids: list[str], backends: list[str], shard: Shard | None = None, done: set[Pair] = frozenset(),
                 durations: Durations | None = None) -> list[Pair]:  # fmt: skip
    """Case-major pairs (a case's backends stay together: one export serves them all)."""
    cases = shard_cases(case_ids, shard, durations) if shard else case_ids
    return [(case, backend) for case in cases for backend in backends if (case, backend) not in done]


def plan(pairs: list[Pair], batch_size: int, heavy: set[str]) -> list[list[Pair]]:
    """Jobs with the heavy ones first, so the longest work does not end up last on one lane."""
    jobs = plan_jobs(pairs, batch_size, heavy)
    return sorted(jobs, key=lambda job: job[0][0] not in heavy)
