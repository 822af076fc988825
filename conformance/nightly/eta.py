"""The time a matrix run has left, planned from measured durations rather than read off the first minutes' rate.

A run starts with its heavy cases (models first, so the longest work does
not end up last on one lane): the rate of its first minutes says nothing of
the thousands of small pairs after them. So each pair is planned to take
what the last report measured for it (the sum of its stage timers; a pinned
hang its budget), a pair it did not measure the mean of its kind (op, model)
on its backend in that report, and with no report at all what a fresh
clone's first run measured (MEASURED_SECONDS, else KIND_SECONDS). The
last report also says how much lane time a run spends outside the stage
timers (process starts, re-runs: `overhead`, lane seconds per stage second).

    left = (planned seconds of the pairs not finished) x overhead / lanes

corrected, as pairs finish, by tonight's pace: each kind's measured stage
seconds against its plan, and the lane time they cost (Eta).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from conformance.result import ENDED_BY, RAN_AWAY

Pair = tuple[str, str]  # (case id, backend name)

# A pair's stage seconds when no report says (a fresh clone's first `make report`): the means
# per kind and backend of `make report` on a fresh clone, 2 cores, 2026-11-27 (14,990 pairs in
# 16 min; its pinned hangs left out: they get budgets), times its family's factor: how that family's
# pairs compared with the mean of their kind and backend in the same run (a random op compiles more
# than a cast). A backend it did not run: the kind's mean over all of them. Batched compiles and
# shared lowerings make an op pair cheap on average. Written by `python -m conformance.nightly.eta
# reports/<a fresh clone's report>` (fresh_clone_tables): run it again when a change moves the times.
MEASURED_SECONDS = {
    ("model", "eager"): 1.61, ("model", "linalg"): 6.03, ("model", "onnx-linalg"): 4.79,
    ("model", "onnx-stablehlo"): 3.57, ("model", "onnx-tosa"): 2.49, ("model", "stablehlo"): 4.3, ("model", "torch"): 3.81,
    ("model", "tosa"): 2.97, ("model", "tosa-custom"): 1.37, ("model", "tosa-ref"): 3.66,
    ("op", "eager"): 0.00597, ("op", "linalg"): 0.176, ("op", "onnx-linalg"): 0.132, ("op", "onnx-stablehlo"): 0.105,
    ("op", "onnx-tosa"): 0.104, ("op", "stablehlo"): 0.0683, ("op", "torch"): 0.134, ("op", "tosa"): 0.0479,
    ("op", "tosa-custom"): 0.0129, ("op", "tosa-ref"): 0.0182,
}  # fmt: skip
FAMILY_FACTORS = {
    "activations": 0.87, "basics": 1.13, "casts": 0.55, "comparison_logical": 0.78, "convolution": 0.97,
    "creation": 0.9, "edge_shapes": 0.86, "elementwise_binary": 0.8, "elementwise_unary": 0.8, "embedding_attention": 1.77,
    "indexing": 1.28, "inplace": 1.21, "layout": 0.91, "linear_algebra": 1.13, "normalization": 1.58,
    "pooling": 1.32, "random_ops": 1.66, "reductions": 0.9, "selection": 0.88, "shape_ops": 0.99,
    "softmax": 1.02, "sorting_scans": 1.07,
}  # fmt: skip
KIND_SECONDS = {"op": 0.0803, "model": 3.46}
OVERHEAD = 1.14  # lane seconds per stage second in that run (process starts, eager, re-runs), when no report says
CALIBRATE_AFTER = 0.1  # the share of the planned work done before tonight's pace corrects the plan
PACE_BOUNDS = (0.25, 4.0)  # tonight's stage seconds per planned one, as far as it may move the plan (a suite
# no report measured runs at 4-5x the registry's op mean: torch-mlir's tests on tosa)
OVERHEAD_BOUNDS = (1.0, 3.0)  # lane seconds per stage second


@dataclass
class History:
    """What the last report measured: each pair's stage timers and seconds, and the lane time beyond them."""

    timings: dict[Pair, dict[str, float]] = field(default_factory=dict)
    seconds: dict[Pair, float] = field(default_factory=dict)
    overhead: float = OVERHEAD
    source: str = "no earlier report"
    ran_away: set[Pair] = field(default_factory=set)  # pairs the memory watchdog killed (a memory budget: budgets.py)

    @classmethod
    def of_report(cls, directory: Path | None, timeout: float) -> History:
        """From a report directory (None, or one without results: nothing measured)."""
        from conformance.report_dir import RUN, has_results, latest, read_json, read_results

        if directory is None or not has_results(Path(directory)):
            return cls()
        results = latest(read_results(directory))
        timings = {r.key: dict(r.timings) for r in results}
        seconds = {r.key: sum(r.timings.values()) + _untimed_wait(r, timeout) for r in results}
        overhead = OVERHEAD
        info = read_json(Path(directory), RUN)
        if info:
            lanes, wall, spent = info.get("settings", {}).get("workers"), info.get("wall_seconds"), sum(seconds.values())
            if lanes and wall and spent and info.get("finished"):
                overhead = max(1.0, wall * lanes / spent)
        ran_away = {r.key for r in results if r.extras.get(ENDED_BY) == RAN_AWAY}
        return cls(timings, seconds, overhead, f"the report {Path(directory).name}", ran_away)


def _untimed_wait(result, timeout: float) -> float:
    """What a killed stage cost beyond its timers: a hang the engine killed has its wait in them; one a report
    before that kept none waited `timeout`; one killed for flooding its log was stopped early, a shared stage's
    outcome reused by the next backend cost nothing again."""
    if result.code != "TIMEOUT" or result.stage in result.timings or result.extras.get(ENDED_BY) not in (None, "silence"):
        return 0.0
    return timeout


def plan(
    pairs: Iterable[Pair], kinds: Mapping[str, str], history: History, budgets: Mapping[Pair, float] = {},
    families: Mapping[str, str] = {},
) -> dict[Pair, float]:
    """Each pair's planned stage seconds: its budget if it is a pinned hang (`budgets`), else measured, else its kind's
    (a fresh clone's: its kind's on its backend, times its family's factor)."""
    pairs = list(pairs)
    by_kind: dict[tuple[str, str], list[float]] = {}
    for (case, backend), spent in history.seconds.items():
        if case in kinds:
            by_kind.setdefault((kinds[case], backend), []).append(spent)
    planned = {}
    for case, backend in pairs:
        kind = kinds.get(case, "op")
        if (case, backend) in budgets:
            planned[case, backend] = budgets[case, backend]
        elif (case, backend) in history.seconds:
            planned[case, backend] = history.seconds[case, backend]
        elif (kind, backend) in by_kind:
            measured = by_kind[kind, backend]
            planned[case, backend] = sum(measured) / len(measured)
        elif not history.seconds and (kind, backend) in MEASURED_SECONDS:
            planned[case, backend] = MEASURED_SECONDS[kind, backend] * FAMILY_FACTORS.get(families.get(case, ""), 1.0)
        else:
            planned[case, backend] = KIND_SECONDS.get(kind, KIND_SECONDS["op"])
    return planned


class Eta:
    """Seconds left, as pairs finish: the planned work left, at tonight's pace once it is known.

    Tonight's pace is measured, not read off the clock alone: the stage
    seconds each finished pair spent against what it was planned to take,
    per kind (models run first, and their pace says nothing of the ops),
    and the lane time per stage second (`overhead`) from the wall clock.
    Each is used once a tenth of its planned work is done, within
    PACE_BOUNDS and OVERHEAD_BOUNDS.
    """

    def __init__(self, planned: Mapping[Pair, float], overhead: float, lanes: int, kinds: Mapping[str, str] = {}):
        self.planned = dict(planned)
        self.overhead = overhead
        self.lanes = max(1, lanes)
        self.kinds = kinds
        self.total: Counter[str] = Counter()  # planned seconds, by kind
        for pair, seconds in self.planned.items():
            self.total[self.kind(pair)] += seconds
        self.left = Counter(self.total)  # ... of the pairs not finished
        self.done: Counter[str] = Counter()  # ... of the finished pairs that said what they spent
        self.spent: Counter[str] = Counter()  # what those spent tonight

    def finished(self, pair: Pair, spent: float | None = None) -> None:
        """`pair` is over; `spent`: its stage seconds tonight (None: nothing known of them)."""
        if pair not in self.planned:
            return
        planned, kind = self.planned.pop(pair), self.kind(pair)
        self.left[kind] -= planned
        if spent is not None:
            self.done[kind] += planned
            self.spent[kind] += spent

    def kind(self, pair: Pair) -> str:
        return self.kinds.get(pair[0], "op")

    def pace(self, kind: str) -> float:
        """Tonight's stage seconds per planned one, for the pairs of `kind`."""
        if not self.done[kind] or self.done[kind] < CALIBRATE_AFTER * self.total[kind]:
            return 1.0
        low, high = PACE_BOUNDS
        return min(high, max(low, self.spent[kind] / self.done[kind]))

    def overhead_now(self, elapsed: float) -> float:
        """Lane seconds per stage second: tonight's, or the plan's until a tenth of the work is done."""
        spent, done = sum(self.spent.values()), sum(self.done.values())
        if spent <= 0 or done < CALIBRATE_AFTER * sum(self.total.values()):
            return self.overhead
        low, high = OVERHEAD_BOUNDS
        return min(high, max(low, elapsed * self.lanes / spent))

    def seconds_left(self, elapsed: float) -> float:
        work = sum(max(0.0, left) * self.pace(kind) for kind, left in self.left.items())
        return work * self.overhead_now(elapsed) / self.lanes


def fresh_clone_tables(directory: Path, timeout: float = 300.0) -> dict[str, Any]:
    """MEASURED_SECONDS, FAMILY_FACTORS, KIND_SECONDS and OVERHEAD from a report directory (a fresh clone's
    `make report`): each pair's seconds as History reads them, a pinned hang's left out (it is planned at its
    budget, not at what it cost)."""
    from conformance.report_dir import CASES, latest, read_json, read_results

    history = History.of_report(directory, timeout)
    cases = read_json(Path(directory), CASES, {})
    hangs = {r.key for r in latest(read_results(directory)) if r.code == "TIMEOUT"}
    spent = {pair: seconds for pair, seconds in history.seconds.items() if pair not in hangs and pair[0] in cases}
    by_backend: dict[tuple[str, str], list[float]] = defaultdict(list)
    by_kind: dict[str, list[float]] = defaultdict(list)
    for (case, backend), seconds in spent.items():
        by_backend[cases[case]["kind"], backend].append(seconds)
        by_kind[cases[case]["kind"]].append(seconds)
    means = {key: sum(values) / len(values) for key, values in by_backend.items()}
    measured: Counter[str] = Counter()
    expected: Counter[str] = Counter()
    for (case, backend), seconds in spent.items():
        if cases[case]["kind"] == "op" and cases[case].get("family"):
            measured[cases[case]["family"]] += seconds
            expected[cases[case]["family"]] += means["op", backend]
    return {
        "MEASURED_SECONDS": {key: float(f"{mean:.3g}") for key, mean in sorted(means.items())},
        "FAMILY_FACTORS": {family: round(measured[family] / expected[family], 2) for family in sorted(measured) if expected[family]},
        "KIND_SECONDS": {kind: float(f"{sum(values) / len(values):.3g}") for kind, values in sorted(by_kind.items())},
        "OVERHEAD": round(history.overhead, 2),
    }


if __name__ == "__main__":
    import sys

    for name, value in fresh_clone_tables(Path(sys.argv[1])).items():
        print(f"{name} = {value!r}")
