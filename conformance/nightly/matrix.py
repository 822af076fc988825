"""Which (case, backend) pairs a run covers: selection, sharding, resuming."""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from conformance.execution.planning import Pair, plan_jobs


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
        # A hash of the id, not its position: shards stay stable as the registry grows.
        return zlib.crc32(case_id.encode()) % self.count == self.index - 1

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def matrix_pairs(case_ids: list[str], backends: list[str], shard: Shard | None = None, done: set[Pair] = frozenset()) -> list[Pair]:
    """Case-major pairs (a case's backends stay together: one export serves them all)."""
    return [
        (case, backend)
        for case in case_ids
        if shard is None or shard.holds(case)
        for backend in backends
        if (case, backend) not in done
    ]


def plan(pairs: list[Pair], batch_size: int, heavy: set[str]) -> list[list[Pair]]:
    """Jobs with the heavy ones first, so the longest work does not end up last on one lane."""
    jobs = plan_jobs(pairs, batch_size, heavy)
    return sorted(jobs, key=lambda job: job[0][0] not in heavy)
