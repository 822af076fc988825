"""The run stage timed again and again, its median kept: a run time a gate can judge on a noisy machine.

One run of a case says little on a shared machine (another process's
compile takes a core away for a moment); the median of several says how
long the call takes. The pair's first run (the one compared with eager)
loads the module and warms the caches; the timed calls come after it, on
the first input set, each on fresh copies of the inputs (copied outside
the clock). Only when gates are asked for (Settings.time_runs), and only
for gated cases: a normal run costs nothing extra.
"""

from __future__ import annotations

import statistics
import time
from typing import Callable

from conformance.gates.selection import chosen_by_default
from conformance.settings import Settings

REPEATS = 9  # timed calls per gated pair under --gates (an odd count: the median is one of them)


def timed(case, settings: Settings) -> bool:
    """Whether this run times `case`'s run stage: gates asked for, and the case gated."""
    return settings.time_runs > 0 and (chosen_by_default(case.kind, case.all_tags) or case.id in settings.timed_cases)


def time_calls(call: Callable[[], object], prepare: Callable[[], object], repeats: int) -> dict:
    """`call(prepare())` timed `repeats` times: the median, the spread, the samples (seconds)."""
    samples = []
    for _ in range(repeats):
        argument = prepare()
        start = time.perf_counter()
        call(argument)
        samples.append(time.perf_counter() - start)
    return {
        "median_seconds": round(statistics.median(samples), 6),
        "min_seconds": round(min(samples), 6),
        "max_seconds": round(max(samples), 6),
        "repeats": repeats,
    }
