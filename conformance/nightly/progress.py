"""Progress of a matrix run: one refreshed line on a terminal, plain lines otherwise (CI logs).

Results are counted by outcome (tables.outcome: the xfail verdict when the run
judges, else the status), so an expected failure (XFAIL) is not counted with
the failures a reader must look at, nor a FLAKY pair (its runs disagreed).
The ETA is planned (eta.py) when the run has a plan, else the rate so far.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from typing import TextIO

from conformance.nightly.eta import Eta
from conformance.report.tables import VERDICTS, outcome
from conformance.result import Result

PLAIN_EVERY_SECONDS = 30.0


class Progress:
    def __init__(self, total: int, stream: TextIO = sys.stderr, interactive: bool | None = None, eta: Eta | None = None):
        self.total = total
        self.eta = eta
        self.done = 0
        self.outcomes: Counter[str] = Counter()
        self.stream = stream
        self.interactive = stream.isatty() if interactive is None else interactive
        self.started = time.monotonic()
        self.last_plain = 0.0

    def announce(self, source: str) -> None:
        """Say the plan before the first result (heavy cases run first: it may be minutes away)."""
        if self.eta:
            self.stream.write(f"conformance nightly: planned {_clock(self.eta.seconds_left(0.0))} (durations from {source})\n")
            self.stream.flush()

    def update(self, result: Result) -> None:
        self.done += 1
        self.outcomes[outcome(result)] += 1
        if self.eta:
            # A pair killed with its stage (a flood, a crash) has no timings: it says nothing of tonight's pace.
            self.eta.finished(result.key, sum(result.timings.values()) if result.timings else None)
        now = time.monotonic()
        if self.interactive:
            self.stream.write("\r" + self.line(now) + "\x1b[K")
            self.stream.flush()
        elif now - self.last_plain >= PLAIN_EVERY_SECONDS or self.done == self.total:
            self.last_plain = now
            self.stream.write(self.line(now) + "\n")
            self.stream.flush()

    def line(self, now: float) -> str:
        elapsed = now - self.started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        if self.eta:
            eta = self.eta.seconds_left(elapsed) if self.done < self.total else 0.0
        else:
            eta = (self.total - self.done) / rate if rate > 0 else float("inf")
        eta_text = "--:--" if eta == float("inf") else _clock(eta)
        counts = " ".join(f"{name.lower()} {self.outcomes[name]}" for name in VERDICTS if self.outcomes[name])
        return (
            f"[{self.done}/{self.total}] {100 * self.done / max(self.total, 1):5.1f}%  "
            f"{counts or 'none done'}  {rate * 60:6.0f} cases/min  elapsed {_clock(elapsed)}  ETA {eta_text}"
        )

    def finish(self) -> None:
        if self.interactive:
            self.stream.write("\n")
            self.stream.flush()


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
