"""Groups that are one bug seen downstream: merged under the first result that goes wrong.

A root-cause group is (backend, stage, code, op), and an op that goes wrong
can fail a program later, at the op that uses its result: torch-mlir folding
`where(c, a, a)` to `a` without its broadcast leaves IR that fails to verify
at whichever op reads it next, so one bug made eleven groups of one fuzz run.
So each shrunk program is cut after each of its calls (that call's result
returned, what it does not need pruned: reduce/edit.only_output) and the
cuts run on the backend; the smallest that fails is where the program first
goes wrong, its root. Only a cut failing with the program's own code is
its root: a cut can fail for a reason of its own (returning an int64
intermediate that the backend cannot return), and that is another bug.
Groups with the same root (naming an op) are one: the program of the group
that fails at its root itself, else the root's own, stands for them; the
others are listed under it as `downstream`.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from conformance.programs import eager
from conformance.programs.program import Program
from conformance.programs.verdict import invalid, signature
from conformance.reduce.edit import only_output
from conformance.reduce.loop import acceptable
from conformance.result import Result

Judge = Callable[[str, list[Program]], list[Result]]  # (backend, programs) -> one Result each


def root(program: Program, wanted: Result, judge: Callable[[list[Program]], list[Result]]) -> tuple[Program, Result] | None:
    """The smallest cut of `program` failing on the backend with `wanted`'s code, with its Result; None: none does.

    A cut runs only where eager runs it as the reduction loop asks of a step
    (finite, well conditioned for a wrong number): else rounding could make it fail.
    """
    n = len(program.inputs)
    cuts = {}
    for k in range(len(program.calls)):
        if n + k not in program.outputs:
            cut = only_output(program, n + k)
            cuts.setdefault(cut.key(), cut)
    if not cuts:
        return None
    finite = eager.evaluate(program).finite
    candidates = [cut for cut in cuts.values() if acceptable(cut, wanted, finite)]
    if not candidates:
        return None
    failing = [(cut, r) for cut, r in zip(candidates, judge(candidates)) if r.failed and not invalid(r) and r.code == wanted.code]
    return min(failing, key=lambda pair: pair[0].size()) if failing else None


def merge(found: list[dict], judge: Judge, log: Callable[[str], None] = lambda line: None) -> list[dict]:
    """`found` (campaign items: backend's group, wanted Result, program, count, op) with the groups of one root as one."""
    by_root: dict[tuple, list[dict]] = {}
    for item in found:
        wanted = item["wanted"]
        found_root = root(item["program"], wanted, lambda programs: judge(wanted.backend, programs))
        if found_root is not None:
            item["root"] = found_root
        result = found_root[1] if found_root else wanted
        key = (wanted.backend, result.stage, result.code, result.op)
        # A failure naming no op (a crash, a wrong number) says too little to join another: a group of its own.
        by_root.setdefault(key if result.op is not None else (*key, id(item)), []).append(item)
    return [items[0] if len(items) == 1 and "root" not in items[0] else _one(items, log) for items in by_root.values()]


def _one(items: list[dict], log: Callable[[str], None]) -> dict:
    """One group for items that share a root: an item failing at the root itself stands for them, else the root's cut."""
    at_root = [i for i in items if "root" not in i]
    if at_root:
        first = kept = min(at_root, key=lambda i: i["program"].size())
    else:  # the group whose root is smallest stands for them, its program cut to the root
        first = min(items, key=lambda i: i["root"][0].size())
        program, result = first["root"]
        kept = {**first, "program": program, "wanted": dataclasses.replace(result, case=first["wanted"].case), "op": result.op}
        del kept["root"]
    others = [i for i in items if i is not first]
    kept["count"] = first["count"] + sum(i["count"] for i in others)
    kept["downstream"] = [
        {"signature": signature(i["wanted"]), "count": i["count"], "program": i["program"].describe()} for i in others
    ]
    if others:
        log(f"{kept['wanted'].backend} {signature(kept['wanted'])}: also seen downstream as "
            + "; ".join(d["signature"] for d in kept["downstream"]))
    return kept
