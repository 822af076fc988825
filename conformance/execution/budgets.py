"""How long a stage may stay silent, pair by pair: --case-timeout, or less where the pair's history says so.

A stage silent for --case-timeout seconds (300 by default) is killed:
TIMEOUT. That wait is right for a pair nothing is known of; for two kinds
of pairs it only burns lane time:

- a pair whose xfail entry pins TIMEOUT: it hung on every night the set was
  written from, and confirming the hang must cost seconds, not minutes
  (PINNED_HANG seconds, or FACTOR times the slowest stage its last run
  finished, when that is more);
- a pair whose last run finished every stage within FAST seconds: should it
  hang tonight, it is killed after FAST_FLOOR seconds of silence (or
  FACTOR times its slowest stage, when that is more) instead of 300.

A budget only shortens the wait: a pair that now finishes within it keeps
its verdict (a pinned hang that now passes is an XPASS, as without
budgets). It is a silence limit like --case-timeout: each stage announced
starts it again. A stage several pairs share (a batch, a shared export)
waits for the largest budget among them, or --case-timeout when one of them
has none. Budgets come from the run's front end (Run.plan_budgets): a
nightly plans them from the xfail sets and the last report's timings,
pytest from the xfail sets alone.
"""

from __future__ import annotations

from typing import Iterable, Mapping

PINNED_HANG = 30.0  # seconds a pinned TIMEOUT waits before it is confirmed
FAST = 1.0  # a pair whose every stage took at most this long last time is fast
FAST_FLOOR = 60.0  # the least a fast pair waits for a silent stage
FACTOR = 20.0  # ... or this many times the slowest stage its last run finished

Pair = tuple[str, str]  # (case id, backend name)


def key(case: str, backend: str) -> str:
    """Settings.budgets's key of a pair (plain JSON: the settings cross to the child)."""
    return f"{case}\t{backend}"


def plan(
    pairs: Iterable[Pair],
    pinned: Mapping[Pair, str],
    history: Mapping[Pair, Mapping[str, float]],
    case_timeout: float,
) -> dict[str, float]:
    """The budget of each pair that gets one (Settings.budgets): `pinned` holds each pair's expected
    failure code (its xfail entry), `history` its stage timings in the last report."""
    budgets = {}
    for pair in pairs:
        stages = history.get(pair) or {}
        slowest = max(stages.values(), default=0.0)
        if pinned.get(pair) == "TIMEOUT":
            budget = max(PINNED_HANG, FACTOR * slowest)
        elif stages and slowest <= FAST:
            budget = max(FAST_FLOOR, FACTOR * slowest)
        else:
            continue
        if budget < case_timeout:
            budgets[key(*pair)] = budget
    return budgets


def waiting_time(budgets: Mapping[str, float], pairs: Iterable[Pair], case_timeout: float) -> float:
    """How long the stage now running for `pairs` may stay silent: the largest of their budgets,
    --case-timeout when one has none."""
    found = [budgets.get(key(*pair)) for pair in pairs]
    if not found or None in found:
        return case_timeout
    return min(case_timeout, max(found))
