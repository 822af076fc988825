"""How long a stage may stay silent, and how much memory it may take, pair by pair: --case-timeout and
--memory-limit, or less where the pair's history says so.

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
has none; so a pinned hang's case runs in a job of its own (Run.run_alone),
where its batched stages hold it alone. Budgets come from the run's front
end (Run.plan_budgets): a nightly plans them from the xfail sets and the
last report's timings, pytest from the xfail sets alone.

Memory has budgets of the same kind. A pair known to run away (its xfail
entry pins the memory watchdog's CRASH, or the last report's run of it
ended so) is killed once it passes RUNAWAY_MB instead of --memory-limit
(8 GB), and its case runs alone too (Run.run_alone: in a batch
its death is split and retried down to it, a climb each time). Climbing
to 8 GB takes a runaway tens of seconds, again for its re-run, and slows
the other lane while it takes the machine's memory; the 3 GB a child may
keep between jobs (Settings.memory_limit_mb) is more than any op case
needs, and is reached in seconds. The verdict is the same CRASH; its
explanation names the limit it passed.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from conformance.result import RUNAWAY

PINNED_HANG = 10.0  # seconds a pinned TIMEOUT waits before it is confirmed (an op's stage takes well under one)
FAST = 1.0  # a pair whose every stage took at most this long last time is fast
FAST_FLOOR = 60.0  # the least a fast pair waits for a silent stage
FACTOR = 20.0  # ... or this many times the slowest stage its last run finished
RUNAWAY_MB = 3072  # the memory a known runaway may take before it is confirmed (the recycling threshold's default)

Pair = tuple[str, str]  # (case id, backend name)


def key(case: str, backend: str) -> str:
    """Settings.budgets's key of a pair (plain JSON: the settings cross to the child)."""
    return f"{case}\t{backend}"


def cases_of(budgets: Mapping[str, float]) -> set[str]:
    """The cases of the pairs that have a budget."""
    return {pair_key.partition("\t")[0] for pair_key in budgets}


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


def pinned_runaway(code: str, explanation: str) -> bool:
    """An xfail entry pinning the memory watchdog's kill."""
    return code == "CRASH" and RUNAWAY in explanation


def plan_memory(pairs: Iterable[Pair], runaways: Iterable[Pair], memory_kill_mb: int) -> dict[str, int]:
    """The memory budget (MB) of each pair known to run away (Settings.memory_budgets)."""
    known = set(runaways)
    if RUNAWAY_MB >= memory_kill_mb:
        return {}
    return {key(*pair): RUNAWAY_MB for pair in pairs if pair in known}


def waiting_time(budgets: Mapping[str, float], pairs: Iterable[Pair], case_timeout: float) -> float:
    """How long the stage now running for `pairs` may stay silent: the largest of their budgets,
    --case-timeout when one has none."""
    found = [budgets.get(key(*pair)) for pair in pairs]
    if not found or None in found:
        return case_timeout
    return min(case_timeout, max(found))


def memory_allowed(budgets: Mapping[str, int], pairs: Iterable[Pair], memory_kill_mb: int) -> int:
    """How much memory the stage now running for `pairs` may take: the smallest of their budgets, --memory-limit
    when none has one. A batch holding a known runaway stops at its budget; the death is then split like any
    other (engine._blame), and only a pair alone is judged at its own budget, so the others keep the limit."""
    return min([memory_kill_mb, *(budgets[k] for pair in pairs if (k := key(*pair)) in budgets)])
