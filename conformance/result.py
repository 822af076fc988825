"""The Result of one case on one backend: a plain record that travels as JSON.

Results cross process boundaries (the supervised child, xdist workers) and
land in results.jsonl, so everything here is JSON-native.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from conformance.taxonomy import Status

# Diagnostics can be megabytes (a whole IR dump); a Result keeps the start,
# where the first error is, and the end, where a crash backtrace is.
MAX_DETAILS = 20_000
# extras key: what ran the stage a pair failed at (Backend.tool), so reports group one tool's failure across backends.
TOOL = "tool"
# extras key: how a numeric mismatch measures against float64 (compare/precision.py): precision or a wrong answer.
NUMERIC = "numeric"
# extras key: what ended a child that hung or died (execution/engine.py): "flood" (it printed without end),
# "silence" (no progress within its budget), "memory" (the watchdog), "killed" (SIGKILL: perhaps the kernel's
# OOM killer) or "died" (any other signal or exit status). Only "flood" and "died" say nothing of the machine.
ENDED_BY = "ended_by"
# How a death by the memory watchdog reads (execution/supervisor.py's Died.how, then the CRASH's explanation
# and the xfail entry that pins it).
RUNAWAY = "killed for using more memory than"
RAN_AWAY = "memory"  # the watchdog killed it for its memory (execution/budgets.py confirms a known one sooner)
TOOL_DIED = "tool died"  # a tool the stage ran (iree-compile) died by a signal of its own, the child lived
MACHINE_FREE_ENDINGS = ("flood", "died", TOOL_DIED)
# extras key: true on a result a run answered from the verdict store (conformance/warm/): its timings are those
# of the run that computed it, and nothing ran this time.
FROM_VERDICT_STORE = "from_verdict_store"


@dataclass
class Result:
    case: str
    backend: str
    status: str  # a Status value
    stage: str | None = None  # where it failed; None when it passed
    code: str | None = None  # a Code value; None when it passed
    op: str | None = None  # the op to blame, e.g. "aten.cumsum", when known
    explanation: str = ""  # one sentence with the facts
    details: str = ""  # captured diagnostics, tool output, tracebacks
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage
    artifacts: str | None = None  # reproducer bundle directory, when written
    verdict: str | None = None  # set when judged against an xfail set
    extras: dict[str, Any] = field(default_factory=dict)  # backend data, e.g. {"aten_ops": [...]}

    @property
    def passed(self) -> bool:
        return self.status == Status.PASS

    @property
    def failed(self) -> bool:
        return self.status == Status.FAIL

    @property
    def key(self) -> tuple[str, str]:
        return (self.case, self.backend)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Result:
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    @classmethod
    def from_json(cls, text: str) -> Result:
        return cls.from_dict(json.loads(text))


def clip(text: str, limit: int = MAX_DETAILS) -> str:
    """Keep the head and the tail of a long diagnostic."""
    if len(text) <= limit:
        return text
    half = limit // 2
    skipped = len(text) - 2 * half
    return f"{text[:half]}\n... [{skipped} characters omitted] ...\n{text[-half:]}"


def passed(case: str, backend: str, timings: dict[str, float]) -> Result:
    return Result(case=case, backend=backend, status=Status.PASS, timings=timings)


def skipped(case: str, backend: str, reason: str) -> Result:
    return Result(case=case, backend=backend, status=Status.SKIP, explanation=reason)


def compiled(case: str, backend: str, explanation: str, timings: dict[str, float]) -> Result:
    """Compiled for the backend's target and not run, for lack of a device (explanation says which)."""
    return Result(case=case, backend=backend, status=Status.COMPILED, explanation=explanation, timings=timings)


def failed(
    case: str,
    backend: str,
    *,
    stage: str,
    code: str,
    explanation: str,
    op: str | None = None,
    details: str = "",
    timings: dict[str, float] | None = None,
) -> Result:
    return Result(
        case=case,
        backend=backend,
        status=Status.FAIL,
        stage=stage,
        code=code,
        op=op,
        explanation=explanation,
        details=clip(details),
        timings=timings or {},
    )
