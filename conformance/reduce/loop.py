"""The reduction loop: greedy, one batch a round, the smallest program that still fails the same way kept.

Why not Hypothesis's shrinker here (fuzz uses it)? It shrinks the choices
a strategy made, and a case from the registry, OpInfo or a localized
model op was made by no strategy: its reductions would have to be
written as one, and found failing again by random draws, one compile at a
time. The steps of a case are few and known (steps.py), so each round
runs all of them at once, as one job: the IREE backends compile the batch
together (16 at a time) and a crash or hang costs only its own step. Of
the steps that fail the same way the smallest (Program.size: calls,
then elements, inputs, rank, dims, values, dtype width) is kept, and the
next round starts from it; a round in which no step of any kind fails the
same way ends the loop. Kinds are tried in order (ops, structure, shapes,
dtypes, values), the next only when the one before found nothing, so
cheap big cuts come first.

A step reaches the backend only if eager runs it, with finite outputs
where the original's were, and, for a wrong-numbers failure, well
conditioned (programs/eager.py): a reduction must not make a false
failure out of rounding.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from conformance.programs import eager
from conformance.programs.program import Program
from conformance.programs.verdict import fails_same_way
from conformance.reduce import steps as kinds
from conformance.result import Result
from conformance.taxonomy import WRONG_VALUES


Judge = Callable[[list[Program]], list[Result]]  # runs programs on the backend, one Result each


@dataclass
class Outcome:
    program: Program
    kept: list[str] = field(default_factory=list)  # the steps taken, in order
    rounds: int = 0
    runs: int = 0  # programs run on the backend
    seconds: float = 0.0
    out_of_budget: bool = False


def reduce(program: Program, wanted: Result, judge: Judge, *, seconds: float = 600.0, runs: int = 1000,
           log: Callable[[str], None] = lambda line: None) -> Outcome:
    """The smallest program found from `program` (which fails as `wanted`) whose every step fails as `wanted` too."""
    started = time.monotonic()
    outcome = Outcome(program)
    finite = eager.evaluate(program).finite
    tried: set[str] = {program.key()}
    while True:
        for kind in kinds.KINDS:
            if time.monotonic() - started >= seconds or outcome.runs >= runs:
                outcome.out_of_budget = True
                outcome.seconds = round(time.monotonic() - started, 1)
                return outcome
            candidates = []
            for step in kind(outcome.program):
                key = step.program.key()
                if key in tried or not step.program.calls or step.program.size() >= outcome.program.size():
                    continue
                tried.add(key)
                if acceptable(step.program, wanted, finite):
                    candidates.append(step)
            candidates = candidates[: max(0, runs - outcome.runs)]
            if not candidates:
                continue
            results = judge([s.program for s in candidates])
            outcome.runs += len(candidates)
            outcome.rounds += 1
            better = [s for s, r in zip(candidates, results) if fails_same_way(wanted, r)]
            if better:
                best = min(better, key=lambda s: s.program.size())
                outcome.program = best.program
                outcome.kept.append(best.what)
                log(f"{best.what}: {best.program.describe()} ({len(better)} of {len(candidates)} {kind.__name__} steps fail the same way)")
                break
        else:
            outcome.seconds = round(time.monotonic() - started, 1)
            return outcome


def acceptable(program: Program, wanted: Result, finite: bool) -> bool:
    """Eager runs `program` (finite where the original was), well conditioned for a wrong-numbers failure."""
    try:
        evaluation = eager.evaluate(program)
    except Exception:
        return False
    if evaluation.error is not None or (finite and not evaluation.finite):
        return False
    if wanted.code in WRONG_VALUES:
        return eager.conditioning(evaluation) <= eager.CONDITIONING
    return True
