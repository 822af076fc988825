"""What a job tells its parent: the stage it is about to run, and each pair's Result.

Every message a job sends goes through here. Before each stage a
StageStarted names the (cases, backend) about to run, so the supervisor can
blame the right pairs if the process dies or hangs; when a pair is done a
ResultMessage carries its Result, with its bundle finalized under
--artifacts. A failure is also counted for the re-run rounds (reruns.py)
and, once deterministic, stored in the compile cache.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from conformance import bundles
from conformance import result as results
from conformance.backends.protocol import Backend
from conformance.classify import Classification
from conformance.execution.capture import OutputCapture
from conformance.execution.compile_cache_use import CacheUse, compiler_refusal, frontend_failure
from conformance.execution.item import Item
from conformance.execution.messages import Message, ResultMessage, StageStarted
from conformance.execution.reruns import REFUSAL, TRANSLATION, Attempt
from conformance.result import ENDED_BY, TOOL, TOOL_DIED
from conformance.settings import Settings
from conformance.taxonomy import Code

Report = Callable[[Message], None]  # sends a message to the parent


class Emitter:
    """A job's messages to the supervisor (messages.py): announcements and Results."""

    def __init__(self, report: Report, capture: OutputCapture, settings: Settings, attempt: Attempt, cache: CacheUse | None):
        self.report = report
        self.capture = capture
        self.settings = settings
        self.attempt = attempt
        self.cache = cache

    def announce(self, stage: str, backend: str, case_ids: list[str], also: list[str] = ()) -> None:
        """Tell the supervisor what runs now; `also`: backends that will reuse this (shared) stage's outcome."""
        self.report(StageStarted(str(stage), backend, case_ids, self.capture.mark(), list(also)))

    def fail(self, backend: Backend, it: Item, stage: str, failure: Classification) -> None:
        """The pair failed at `stage`: done, counted for re-runs, cached when deterministic, reported."""
        it.done = True
        deterministic = self.attempt.records_failure(it.case_id, backend.name, failure.code, failure.op, self.settings.reruns)
        if frontend_failure(backend, stage, failure.code):
            it.run.extras[TRANSLATION] = deterministic = True
        elif compiler_refusal(backend, stage, failure.code):
            it.run.extras[REFUSAL] = deterministic = True
        if failure.code == Code.CRASH and failure.parsed and "SIGKILL" not in failure.explanation:
            # Read from the tool's own stack dump: its bug, like a child's SIGSEGV, not the machine's (a SIGKILL may be).
            it.run.extras[ENDED_BY] = TOOL_DIED
        if self.cache and backend.cache_stage and deterministic:
            self.cache.record_failure(backend, it, stage, failure)
        it.run.extras[TOOL] = backend.tool(str(stage))
        self.emit_failure(it.case_id, backend.name, stage, failure, it.timings, it.run.extras)

    def emit_failure(self, case_id, backend_name, stage, failure: Classification, timings, extras=None) -> None:
        self.emit(
            results.failed(
                case_id,
                backend_name,
                stage=str(stage),
                code=str(failure.code),
                op=failure.op,
                explanation=failure.explanation,
                details=failure.details,
                timings=timings,
            ),
            extras,
        )

    def staging(self, case_id: str, backend: str) -> Path | None:
        """With --artifacts, the directory the pair's bundle is staged in; else None."""
        if not self.settings.artifacts:
            return None
        staging = bundles.staging_dir(self.settings.artifacts, case_id, backend)
        staging.mkdir(parents=True, exist_ok=True)
        return staging

    def emit(self, result: results.Result, extras: dict | None = None) -> None:
        result.extras = dict(extras or {})
        if self.settings.artifacts:
            bundle = bundles.finalize(self.settings, result)
            result.artifacts = str(bundle) if bundle else None
        self.report(ResultMessage(result))
