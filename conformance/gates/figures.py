"""The gated figures: where each is read from a Result, and its default tolerance.

Compile figures come from `extras["compile_stats"]` (toolchain/iree.py
records them at every compile); the run time from `extras["run_stats"]`,
which a run asked for gates records (timing.py). A module's size and its
compile time belong to one case only when it was compiled alone
(`module_cases` 1: models always, gated op cases under --gates); a batch's
are shared, and are not a figure of the case.

A tolerance allows the larger of `relative` x golden and `absolute`. The
defaults come from runs of the models on a shared, loaded 2-core machine
(docs/gates.md has the figures): counts and sizes were identical between
identical compiles (dispatches exact; a module's size 1% or 256 bytes, for
metadata); times moved a lot under load. The same compile took up to 2.6
times as long on a loaded night as on a quieter one; a run's median of small
models jumped between two modes (0.3 ms and 4 ms: IREE's worker threads
woken late on a busy machine), ResNet-18's between 1.4 s and 3.0 s. So a
compile trips when it more than triples, a run when it more than doubles,
and neither for less than a floor (5 s, 25 ms) under which this machine
cannot tell a regression from noise: 0 trips in 1,840 judgements of
identical runs, where 50% or 2 ms on run times gave 59.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

COMPILE_STATS = "compile_stats"  # extras key written by toolchain/iree.py
RUN_STATS = "run_stats"  # extras key written by timing.py


@dataclass(frozen=True)
class Tolerance:
    relative: float = 0.0  # a share of the golden figure
    absolute: float = 0.0  # in the figure's unit

    def allowed(self, golden: float) -> float:
        """How far from `golden` a measurement may be."""
        return max(self.relative * abs(golden), self.absolute)

    def to_toml(self) -> dict:
        return {k: v for k, v in (("relative", self.relative), ("absolute", self.absolute)) if v}

    def describe(self, unit: str) -> str:
        parts = [f"{self.relative:.0%}" if self.relative else "", f"{self.absolute:g} {unit}" if self.absolute else ""]
        return " or ".join(p for p in parts if p) or "exact"


@dataclass(frozen=True)
class Figure:
    name: str
    unit: str
    integral: bool
    default: Tolerance
    help: str

    def measured(self, extras: dict[str, Any]) -> float | None:
        """This figure of a Result's extras, or None when the run did not measure it for the case alone."""
        compile_stats = extras.get(COMPILE_STATS) or {}
        alone = compile_stats.get("module_cases") == 1
        if self.name == "dispatches":
            return compile_stats.get("dispatches")
        if self.name == "vmfb_bytes":
            return compile_stats.get("vmfb_bytes") if alone else None
        if self.name == "compile_seconds":
            return compile_stats.get("seconds") if alone else None
        if self.name == "run_seconds":
            return (extras.get(RUN_STATS) or {}).get("median_seconds")
        raise AssertionError(self.name)

    def format(self, value: float) -> str:
        return f"{int(value)}" if self.integral else f"{value:.4g} {self.unit}"


FIGURES = {
    f.name: f
    for f in (
        Figure("dispatches", "dispatches", True, Tolerance(), "dispatches in the case's function (IREE's statistics)"),
        Figure("vmfb_bytes", "bytes", True, Tolerance(relative=0.01, absolute=256), "size of the compiled module (.vmfb)"),
        Figure("compile_seconds", "s", False, Tolerance(relative=2.0, absolute=5.0), "iree-compile's wall time"),
        Figure("run_seconds", "s", False, Tolerance(relative=1.0, absolute=0.025), "median wall time of the run stage's call"),
    )
}
