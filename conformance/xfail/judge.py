"""Judging a Result against its backend's xfail entry."""

from __future__ import annotations

from conformance.result import Result
from conformance.taxonomy import WRONG_VALUES, Stage, Status, Verdict
from conformance.xfail.sets import Entry

# Stages a COMPILED pair (compiled, no device to run it) never reached.
UNREACHED_WITHOUT_DEVICE = (Stage.RUN, Stage.COMPARE)


def verdict(result: Result, entry: Entry | None) -> Verdict:
    """PASS, XFAIL, XPASS, CHANGED, FAIL, SKIP, FLAKY or COMPILED.

    A failure matches its entry when code and op agree (an entry naming no
    op accepts any): the explanation carries numbers (errors, sizes) that
    may move without the cause moving.
    A pair whose attempts disagreed is FLAKY whatever its entry says; a pass
    whose entry is marked flaky (it fails only sometimes) or CPU-dependent
    (it passes compiled for another CPU) is a PASS.
    A COMPILED pair stays COMPILED unless its entry expects a failure it
    has got past (at compile or before): that entry is stale, XPASS.
    """
    if result.status == Status.SKIP:
        return Verdict.SKIP
    if result.status == Status.FLAKY:
        return Verdict.FLAKY
    if result.status == Status.COMPILED:
        return Verdict.XPASS if entry and not expects_run(entry) else Verdict.COMPILED
    if result.status == Status.PASS:
        return Verdict.XPASS if entry and not entry.may_pass else Verdict.PASS
    if entry is None:
        return Verdict.FAIL
    if _expects(entry, result.code, result.op):
        return Verdict.XFAIL
    return Verdict.CHANGED


def _expects(entry: Entry, code: str | None, op: str | None) -> bool:
    """Same code, and the same op when the entry names one. An entry without an op was written
    before the failure named it (or by hand): it still holds when the run now names the op, so
    upgrading the framework does not turn a user's pinned failures into CHANGED; `xfail update`
    adds the op. An entry marked garbage_output takes any wrong-values code for its own."""
    same_code = entry.code == code or (bool(entry.garbage_output) and code in WRONG_VALUES)
    return same_code and (not entry.op or entry.op == op)


def expected_flaky(result: Result, entry: Entry | None) -> bool:
    """Whether the xfail set expects one of the failures a FLAKY pair's attempts saw.

    Then the known bug is still there, only not every time: an entry written
    on a night it failed (or by hand, with a note) accepts the pair's flips.
    """
    attempts = result.extras.get("attempts") or []
    return entry is not None and any(_expects(entry, seen.get("code"), seen.get("op")) for seen in attempts)


def fails_strict_run(result: Result, judged: Verdict, entry: Entry | None) -> bool:
    """XPASS, CHANGED and FAIL fail a strict run; FLAKY does too, unless its entry expects a failure it showed.

    A pair that passes one run and fails the next is a bug (a race, memory
    read before it is written) a strict run must not wave through; but a user
    who knows it flips needs a way to keep the run green meanwhile, and
    updates never write FLAKY pairs: the entry expecting one of its failures is that way.
    """
    if judged == Verdict.FLAKY:
        return not expected_flaky(result, entry)
    return judged.is_failure
def expects_run(entry: Entry) -> bool:
    """Whether the entry's failure lies in running or comparing: a pair not run can neither confirm nor refute it."""
    return entry.stage in UNREACHED_WITHOUT_DEVICE


def describe_expected(entry: Entry) -> str:
    op = f" ({entry.op})" if entry.op else ""
    stage = f" at {entry.stage}" if entry.stage else ""
    return f"{entry.code}{op}{stage}: {entry.explanation}"
