"""Judging a Result against its backend's xfail entry."""

from __future__ import annotations

from conformance.result import Result
from conformance.taxonomy import Stage, Status, Verdict
from conformance.xfail.sets import Entry

# Stages a COMPILED pair (compiled, no device to run it) never reached.
UNREACHED_WITHOUT_DEVICE = (Stage.RUN, Stage.COMPARE)


def verdict(result: Result, entry: Entry | None) -> Verdict:
    """PASS, XFAIL, XPASS, CHANGED, FAIL, SKIP or COMPILED.

    A failure matches its entry when code and op agree: the explanation
    carries numbers (errors, sizes) that may move without the cause moving.
    A COMPILED pair stays COMPILED unless its entry expects a failure it
    has got past (at compile or before): that entry is stale, XPASS.
    """
    if result.status == Status.SKIP:
        return Verdict.SKIP
    if result.status == Status.COMPILED:
        return Verdict.XPASS if entry and not expects_run(entry) else Verdict.COMPILED
    if result.status == Status.PASS:
        return Verdict.XPASS if entry else Verdict.PASS
    if entry is None:
        return Verdict.FAIL
    if entry.code == result.code and (entry.op or None) == (result.op or None):
        return Verdict.XFAIL
    return Verdict.CHANGED


def expects_run(entry: Entry) -> bool:
    """Whether the entry's failure lies in running or comparing: a pair not run can neither confirm nor refute it."""
    return entry.stage in UNREACHED_WITHOUT_DEVICE


def describe_expected(entry: Entry) -> str:
    op = f" ({entry.op})" if entry.op else ""
    stage = f" at {entry.stage}" if entry.stage else ""
    return f"{entry.code}{op}{stage}: {entry.explanation}"
