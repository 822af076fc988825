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

corrected, once a tenth of the planned work is done, by how tonight's pace
compares with the plan (at most by half or double: one slow model must not
swing it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

from conformance.result import ENDED_BY

Pair = tuple[str, str]  # (case id, backend name)

# A pair's stage seconds when no report says (a fresh clone's first `make report`): the means
# per kind and backend of `make report` on a fresh clone, 2 cores, 2026-11-27 (14,990 pairs in
# 28 min; its pinned hangs left out: they get budgets). A backend it did not run: the kind's
# mean over all of them. Batched compiles and shared lowerings make an op pair cheap on average.
MEASURED_SECONDS = {
    ("model", "eager"): 1.52, ("model", "linalg"): 11.3, ("model", "onnx-linalg"): 7.95, ("model", "onnx-stablehlo"): 5.42,
    ("model", "onnx-tosa"): 3.73, ("model", "stablehlo"): 6.53, ("model", "torch"): 5.74, ("model", "tosa"): 3.97,
    ("model", "tosa-custom"): 3.52, ("model", "tosa-ref"): 4.79,
    ("op", "eager"): 0.0076, ("op", "linalg"): 0.215, ("op", "onnx-linalg"): 0.298, ("op", "onnx-stablehlo"): 0.228,
    ("op", "onnx-tosa"): 0.132, ("op", "stablehlo"): 0.104, ("op", "torch"): 0.182, ("op", "tosa"): 0.0655,
    ("op", "tosa-custom"): 0.0172, ("op", "tosa-ref"): 0.0213,
}  # fmt: skip
KIND_SECONDS = {"op": 0.127, "model": 5.45}
OVERHEAD = 1.26  # lane seconds per stage second in that run (process starts, eager, re-runs), when no report says
CALIBRATE_AFTER = 0.1  # the share of the planned work done before tonight's pace corrects the plan
PACE_BOUNDS = (0.5, 2.0)


@dataclass
class History:
    """What the last report measured: each pair's stage timers and seconds, and the lane time beyond them."""

    timings: dict[Pair, dict[str, float]] = field(default_factory=dict)
    seconds: dict[Pair, float] = field(default_factory=dict)
    overhead: float = OVERHEAD
    source: str = "no earlier report"

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
        return cls(timings, seconds, overhead, f"the report {Path(directory).name}")


def _untimed_wait(result, timeout: float) -> float:
    """What a killed stage cost beyond its timers: a hang the engine killed has its wait in them; one a report
    before that kept none waited `timeout`; one killed for flooding its log was stopped early, a shared stage's
    outcome reused by the next backend cost nothing again."""
    if result.code != "TIMEOUT" or result.stage in result.timings or result.extras.get(ENDED_BY) not in (None, "silence"):
        return 0.0
    return timeout


def plan(pairs: Iterable[Pair], kinds: Mapping[str, str], history: History, budgets: Mapping[Pair, float] = {}) -> dict[Pair, float]:
    """Each pair's planned stage seconds: its budget if it is a pinned hang (`budgets`), else measured, else its kind's."""
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
            planned[case, backend] = MEASURED_SECONDS[kind, backend]
        else:
            planned[case, backend] = KIND_SECONDS.get(kind, KIND_SECONDS["op"])
    return planned


class Eta:
    """Seconds left, as pairs finish: the planned work left at the planned (then tonight's) pace."""

    def __init__(self, planned: Mapping[Pair, float], overhead: float, lanes: int):
        self.planned = dict(planned)
        self.overhead = overhead
        self.lanes = max(1, lanes)
        self.total = sum(self.planned.values())
        self.done = 0.0

    def finished(self, pair: Pair) -> None:
        self.done += self.planned.pop(pair, 0.0)

    def seconds_left(self, elapsed: float) -> float:
        left = (self.total - self.done) * self.overhead / self.lanes
        if self.total and self.done >= CALIBRATE_AFTER * self.total:
            expected = self.done * self.overhead / self.lanes  # the wall the plan gave the work done
            low, high = PACE_BOUNDS
            left *= min(high, max(low, elapsed / expected))
        return left
