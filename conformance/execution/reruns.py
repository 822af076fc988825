"""Re-running what may be flaky, and the one verdict all the attempts give.

A pair's first run is attempt 1. A failure is run again, up to `--reruns`
times (default 1), each time in a fresh child process and compiled alone,
never in a batch; with `--check-determinism` a pass is run once more and its
outputs are compared bit for bit with attempt 1's (determinism.py). When an
attempt disagrees with the first (pass against fail, another code or op,
other output bits) the pair is FLAKY and no more attempts are made; when all
agree, the first attempt's Result stands, as without re-runs.

Not re-run:
- TIMEOUT: one more attempt costs one more full `--case-timeout`, and a hang
  that comes and goes shows up as another verdict of a re-run failure anyway;
- TOOL_MISSING: the machine's state, not the pair's;
- a failure replayed from the compile cache: with re-runs on, a failure is
  stored only once a re-run has reproduced it exactly, so a replay was seen
  twice, deterministic by construction. A re-run itself never reads a
  stored artifact or failure (nothing stored may decide it), so a flaky
  compiler is re-run too;
- a refusal of the frontend (a parsed failure in a stage before the
  backend's compiler: export, import, contract, lower; before `run` for a
  backend with no compiler, tosa-custom's convert and verify): a
  translation of the case by torch and torch-mlir, which the compile cache
  keys by those alone (its lowered key, compile_cache_use.frontend_failure);
- a refusal of the compiler (its diagnostic, read by a parser, at the
  backend's cache stage): the case was compiled alone by then (a failing
  batch is split), and what the compiler says of those IR bytes depends on
  them, its flags and its version, as the IR key does
  (compile_cache_use.compiler_refusal).
What may differ from one process to the next is the runtime (threads,
memory, the device) and a crash or hang of any tool: a wrong answer, a
runtime error and a crash anywhere are re-run.

Every attempt of a re-run pair is kept in the Result's extras["attempts"]:
[{"status": "fail", "stage": ..., "code": ..., "op": ..., "explanation": ...}, {"status": "pass"}],
so a report shows what flipped.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from conformance.result import Result, clip
from conformance.taxonomy import Code, Status

NOT_RERUN = {Code.TIMEOUT, Code.TOOL_MISSING}
# Keys a child sets in a Result's extras for the parent's eyes.
REPLAYED = "replayed_from_cache"  # the failure came out of the compile cache
TRANSLATION = "refused_by_frontend"  # the frontend's translation failed (before the compiler): not re-run
REFUSAL = "refused_by_compiler"  # the compiler diagnosed the IR it was given: not re-run
DIFFERS = "differs_from_first_run"  # --check-determinism: how this pass's outputs differ from attempt 1's
ATTEMPTS = "attempts"


@dataclass
class Attempt:
    """Which run of its pairs a job is, and so what the child does differently (sent with each RunJob)."""

    number: int = 1
    outputs_dir: str | None = None  # --check-determinism: attempt 1 keeps passing outputs here, a re-run compares
    # Failures (case, backend, code, op) the compile cache may store if this attempt reproduces them exactly:
    # on a pair's last re-run, what every attempt before it saw.
    confirm: list[list] = field(default_factory=list)

    @property
    def is_rerun(self) -> bool:
        return self.number > 1

    def records_failure(self, case: str, backend: str, code: str, op: str | None, reruns: int) -> bool:
        """May the compile cache store this failure? Only once it is known to be deterministic."""
        if not self.is_rerun:
            return reruns == 0
        return [case, backend, str(code), op] in self.confirm

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Attempt:
        return cls(**data)


def wants_rerun(result: Result, attempts: int, reruns: int, check_determinism: bool) -> bool:
    """Should a pair whose latest of `attempts` runs gave `result` run again?"""
    if result.failed:
        return (
            attempts <= reruns
            and result.code not in NOT_RERUN
            and not result.extras.get(REPLAYED)
            and not result.extras.get(TRANSLATION)
            and not result.extras.get(REFUSAL)
        )
    return result.passed and check_determinism and attempts == 1


def record(result: Result) -> dict[str, Any]:
    """What one attempt saw: its status, and how it failed or differed."""
    seen: dict[str, Any] = {"status": result.status}
    if result.failed:
        seen.update(stage=result.stage, code=result.code, op=result.op, explanation=result.explanation)
    if result.extras.get(DIFFERS):
        seen["differs"] = result.extras[DIFFERS]
    return seen


def agree(first: dict, later: dict) -> bool:
    """The same verdict: both pass with the same bits, or both fail with one code and op."""
    key = lambda seen: (seen["status"], seen.get("code"), seen.get("op"), seen.get("differs"))
    return key(first) == key(later)


def settle(attempts: list[Result]) -> Result:
    """The pair's Result from its attempts, oldest first: the first one's when all agree, else FLAKY."""
    first = attempts[0]
    seen = [record(r) for r in attempts]
    if all(agree(seen[0], s) for s in seen[1:]):
        first.extras[ATTEMPTS] = seen
        return first
    failing = [(number, r) for number, r in enumerate(attempts, 1) if r.failed]
    extras = {k: v for k, v in first.extras.items() if k != DIFFERS}
    return Result(
        case=first.case,
        backend=first.backend,
        status=Status.FLAKY,
        explanation=explain(seen),
        details=clip("\n\n".join(f"--- run {number}: {r.code} at {r.stage} ---\n{r.details}" for number, r in failing if r.details)),
        timings=first.timings,
        artifacts=next((r.artifacts for _, r in failing if r.artifacts), None),
        extras={**extras, ATTEMPTS: seen},
    )


def describe(number: int, seen: dict) -> str:
    """What run `number` saw, in words: "run 2 passed", "run 1 failed at compare with NUMERIC_MISMATCH: ..."."""
    if seen["status"] == Status.PASS:
        return f"run {number} passed" + (f", but its {seen['differs']}" if seen.get("differs") else "")
    if seen["status"] != Status.FAIL:
        return f"run {number}: {seen['status']}"
    op = f" ({seen['op']})" if seen.get("op") else ""
    return f"run {number} failed at {seen['stage']} with {seen['code']}{op}: {seen['explanation'][:200]}"


def in_a_word(seen: dict) -> str:
    """One run of a flaky pair in a word or two, for tables: pass, pass (other bits), CODE (op)."""
    if seen.get("code"):
        return seen["code"] + (f" ({seen['op']})" if seen.get("op") else "")
    return seen["status"] + (" (other bits)" if seen.get("differs") else "")


def explain(seen: list[dict]) -> str:
    """One sentence naming what each attempt saw."""
    return "the runs disagree (each in a fresh process): " + "; ".join(
        describe(number, s) for number, s in enumerate(seen, 1)
    )
