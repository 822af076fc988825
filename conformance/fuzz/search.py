"""Hypothesis drives the search: it draws the programs, and it shrinks a failing one.

Generating. `generate` asks Hypothesis (`find`, seeded) for programs
and hands each to `visit`, which never calls one a find: Hypothesis just
keeps drawing, the way it explores before any failure. The caller runs
them in batches (a compile costs ~0.3-1 s; the IREE backends compile a
batch together) and stops the search when its budget is spent (Spent).

Shrinking. Hypothesis shrinks only what it generated itself, from the
choices that made it. So `shrink` runs the very same search again (same
seed, same settings: Hypothesis then draws the same programs in the same
order), answering "not found" for every program until the failing one
comes round, and "found" for it: from there Hypothesis's shrinker takes
over, and every smaller program it tries is judged by `interesting`
(run on the backend: does it fail the same way?). Replaying costs no
compile, only drawing (milliseconds a program). Each judgement costs one,
so `interesting` answers from a cache for programs seen before and says
"no" once its budget is out, which ends the shrinking with the smallest
program found so far.
"""

from __future__ import annotations

import random
from typing import Callable

from hypothesis import HealthCheck, Phase, find, settings
from hypothesis.errors import NoSuchExample

from conformance.fuzz.strategies import Config, Stats, programs
from conformance.programs.program import Program

# Generating and replaying must use the same settings, or Hypothesis draws otherwise.
SETTINGS = settings(
    max_examples=10**9,  # the caller's budget ends the search, not Hypothesis
    database=None,
    deadline=None,
    phases=[Phase.generate, Phase.shrink],
    suppress_health_check=list(HealthCheck),
    report_multiple_bugs=False,
)
REPLAY_SLACK = 20  # programs drawn past the failing one's place before a replay gives up


class Spent(BaseException):
    """Ends a search (a BaseException: Hypothesis would take an Exception for a failure and shrink it)."""


def generate(config: Config, seed: int, visit: Callable[[Program], None], stats: Stats | None = None) -> None:
    """Draw programs for `visit` until it raises Spent (or Hypothesis has no new one to draw)."""

    def never(program: Program) -> bool:
        visit(program)
        return False

    try:
        find(programs(config, stats), never, settings=SETTINGS, random=random.Random(seed))
    except (Spent, NoSuchExample):
        pass


def shrink(config: Config, seed: int, target: Program, place: int, interesting: Callable[[Program], bool]) -> Program | None:
    """The smallest program Hypothesis finds failing as `target` does, `target` being the `place`-th program
    `generate` drew with `seed` (0-based); None when the replay does not meet it (then keep `target`)."""
    wanted = target.key()
    seen = {"count": 0, "met": False}

    def condition(program: Program) -> bool:
        if not seen["met"]:
            seen["count"] += 1
            if program.key() != wanted:
                if seen["count"] > place + REPLAY_SLACK:
                    raise Spent
                return False
            seen["met"] = True
            return True  # known to fail so: it is why we are here
        return interesting(program)

    try:
        return find(programs(config), condition, settings=SETTINGS, random=random.Random(seed))
    except (Spent, NoSuchExample):
        return None
