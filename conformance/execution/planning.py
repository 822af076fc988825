"""How a list of (case, backend) pairs is cut into jobs and batches.

Pairs of the same cases travel together so one child exports each case once
and compiles the cases of one backend as a batch. Heavy cases (models) go
alone: their IR is large and batching them saves nothing.

The grouping is a pure function of the order of pairs, so an xdist
controller (which sees only node ids) and its workers (which see cases)
agree on it without talking.
"""

from __future__ import annotations

from typing import Iterable

Pair = tuple[str, str]  # (case id, backend name)


def pair_of(nodeid: str) -> Pair:
    """`tanh[tosa]` -> ("tanh", "tosa"); case ids never contain '['."""
    case, _, backend = nodeid.partition("[")
    return case, backend.removesuffix("]")


def group_indices(case_ids: Iterable[str], batch_size: int) -> list[int]:
    """For each position, the index of its group: runs of `batch_size` distinct consecutive cases."""
    indices, group, seen, previous = [], 0, 0, None
    for case in case_ids:
        if case != previous:
            if seen == batch_size:
                group, seen = group + 1, 0
            seen += 1
            previous = case
        indices.append(group)
    return indices


def plan_jobs(pairs: list[Pair], batch_size: int, heavy: set[str] = frozenset()) -> list[list[Pair]]:
    """Cut `pairs` into jobs of at most `batch_size` cases; heavy cases alone."""
    by_case: dict[str, list[Pair]] = {}
    for pair in pairs:
        by_case.setdefault(pair[0], []).append(pair)
    jobs: list[list[Pair]] = []
    light: list[Pair] = []
    count = 0
    for case, case_pairs in by_case.items():
        if case in heavy:
            jobs.append(case_pairs)
            continue
        light += case_pairs
        count += 1
        if count == batch_size:
            jobs.append(light)
            light, count = [], 0
    if light:
        jobs.append(light)
    return jobs
