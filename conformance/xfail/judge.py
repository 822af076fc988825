"""Judging a Result against its backend's xfail entry."""

from __future__ import annotations

from conformance.result import Result
from conformance.taxonomy import Status, Verdict
from conformance.xfail.sets import Entry


def verdict(result: Result, entry: Entry | None) -> Verdict:
    """PASS, XFAIL, XPASS, CHANGED, FAIL or SKIP.

    A failure matches its entry when code and op agree: the explanation
    carries numbers (errors, sizes) that may move without the cause moving.
    """
    if result.status == Status.SKIP:
        return Verdict.SKIP
    if result.status == Status.PASS:
        return Verdict.XPASS if entry else Verdict.PASS
    if entry is None:
        return Verdict.FAIL
    if entry.code == result.code and (entry.op or None) == (result.op or None):
        return Verdict.XFAIL
    return Verdict.CHANGED


def describe_expected(entry: Entry) -> str:
    op = f" ({entry.op})" if entry.op else ""
    stage = f" at {entry.stage}" if entry.stage else ""
    return f"{entry.code}{op}{stage}: {entry.explanation}"
