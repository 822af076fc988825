"""The first cut that fails the way the whole model fails: a binary search over op prefixes.

Cut 0 (no op) passes and cut N (every op) fails; every cut tried costs one
run of the backend's stages (about log2(N) of them), so the search asks as
few as it can. "The same way" is the same code, and the same op when both
failures name one: a prefix that fails otherwise (another code, another op)
counts as not failing, and is kept in the trail, so the report can say what
else went wrong on the way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from conformance.result import Result


def same_failure(wanted: Result, got: Result) -> bool:
    """Whether `got` fails as `wanted` does: same code, and the same op where both name one.

    Some codes name the first of several ops ("f64 in tosa.const (also in
    tosa.cast ...)"): a prefix whose first such op is another one of them
    still fails the same way, so an op named in the other's explanation counts.
    """
    if not got.failed or got.code != wanted.code:
        return False
    if not wanted.op or not got.op or wanted.op == got.op:
        return True
    return wanted.op in got.explanation or got.op in wanted.explanation


def at(op: str | None) -> str:
    """` (op)`, to follow a failure's code where it names an op."""
    return f" ({op})" if op else ""


@dataclass
class Search:
    """The outcome: the first failing cut, and every cut tried with its Result."""

    first: int
    tried: dict[int, Result] = field(default_factory=dict)
    named: bool = False  # found where the failure named its node (two cuts), not by bisection

    def otherwise(self, wanted: Result) -> dict[int, Result]:
        """The cuts that failed, but not as the model does."""
        return {k: r for k, r in self.tried.items() if r.failed and not same_failure(wanted, r)}


def first_failing_cut(count: int, run_cut: Callable[[int], Result], wanted: Result, tried: dict[int, Result] | None = None) -> Search:
    """The smallest k in 1..count whose cut fails as `wanted`, assuming cuts past it fail too.

    Cut `count` is run last, and only if the search ends there: a whole
    graph that does not fail as the model did is then found out. `tried`:
    cuts already run (not run again).
    """
    tried = dict(tried or {})
    low, high = 0, count  # low passes (or fails otherwise), high fails as wanted
    while high - low > 1:
        middle = (low + high) // 2
        if middle not in tried:
            tried[middle] = run_cut(middle)
        if same_failure(wanted, tried[middle]):
            high = middle
        else:
            low = middle
    if high not in tried:
        tried[high] = run_cut(high)
    return Search(high, tried)


def at_named(index: int, run_cut: Callable[[int], Result], wanted: Result) -> tuple[Search | None, dict[int, Result]]:
    """Cut `index`, the op the failure named, confirmed the first to fail: it fails as `wanted`, the cut before does not.

    Two runs instead of a search. Unconfirmed: (None, the cuts run), for the search to go on from.
    """
    tried = {index: run_cut(index)}
    if not same_failure(wanted, tried[index]):
        return None, tried
    if index > 1:
        tried[index - 1] = run_cut(index - 1)
        if same_failure(wanted, tried[index - 1]):
            return None, tried
    return Search(index, tried, named=True), tried
