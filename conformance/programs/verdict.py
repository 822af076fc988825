"""Failing "the same way": the same stage, code and op (localize's rule, with the stage).

A reduction keeps a smaller program only if it fails as the original
did; a fuzz run groups failures the way reports do (backend, code, op).
Failures before any backend stage (the case, eager, torch.export) say
nothing about the backend: a program that fails there is invalid.
"""

from __future__ import annotations

from conformance.localize.search import same_failure
from conformance.result import Result
from conformance.taxonomy import Stage

BEFORE_BACKEND = {Stage.CASE, Stage.EAGER, Stage.EXPORT}


def fails_same_way(wanted: Result, got: Result) -> bool:
    return got.failed and got.stage == wanted.stage and same_failure(wanted, got)


def invalid(result: Result) -> bool:
    """The program never reached the backend: the case, eager or torch.export failed."""
    return result.failed and result.stage in BEFORE_BACKEND


def signature(result: Result) -> str:
    """`NUMERIC_MISMATCH at compare (aten.sum)`: how a failure is told apart, in one phrase."""
    return f"{result.code} at {result.stage}" + (f" ({result.op})" if result.op else "")
