"""Each case of a job made once: its module, its inputs and eager's reference outputs.

A job runs a case on several backends. The case is built and its eager
reference computed for the first backend that needs it; every later backend
reuses the outcome, a failure too (a case that cannot be built fails alike
on every backend). The first pair to need the reference pays its eager time.

From a prepared case each backend gets an Item of its own, with a workdir
and, under --artifacts, a staging directory for its bundle. A pair that does
not apply, or whose case failed, gets its Result here and goes no further.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path

from conformance import bundles
from conformance import result as results
from conformance.backends.protocol import Backend, CaseRun
from conformance.cases.inputs import make_inputs, make_module
from conformance.cases.reference import NondeterministicReference, reference_outputs
from conformance.cases.registry import Registry
from conformance.cases.spec import CaseError, CaseUnavailable
from conformance.classify import Classification, classify_error
from conformance.execution.capture import OutputCapture
from conformance.execution.emitter import Emitter
from conformance.execution.item import Item
from conformance.paths import pair_dir
from conformance.result import TOOL
from conformance.settings import Settings
from conformance.taxonomy import Code, Stage


@dataclass
class CaseFailure:
    """The case itself failed (building it, or in eager) before any backend stage; or cannot run here (skip)."""

    stage: str
    failure: Classification
    skip: bool = False


class PreparedCases:
    """A job's cases, each prepared once, and the Items its backends take from them."""

    def __init__(self, registry: Registry, settings: Settings, capture: OutputCapture, emitter: Emitter, scratch: Path):
        self.registry = registry
        self.settings = settings
        self.capture = capture
        self.emitter = emitter
        self.scratch = scratch
        self.prepared: dict[str, CaseRun | CaseFailure] = {}
        self.eager_time: dict[str, float] = {}

    def items(self, backend: Backend, case_ids: list[str]) -> list[Item]:
        """A pair per case that applies and whose eager reference exists; the others get their Result now."""
        items = [self._item(backend, case_id) for case_id in case_ids]
        return [it for it in items if it is not None]

    def _item(self, backend: Backend, case_id: str) -> Item | None:
        case = self.registry[case_id]
        reason = case.skip.get(backend.name) or backend.not_applicable(case)
        if reason:
            self.emitter.emit(results.skipped(case_id, backend.name, reason))
            return None
        prepared = self.prepare(case_id, backend.name)
        if isinstance(prepared, CaseFailure) and prepared.skip:
            self.emitter.emit(results.skipped(case_id, backend.name, prepared.failure.explanation))
            return None
        if isinstance(prepared, CaseFailure):
            tool = {TOOL: backend.tool(str(prepared.stage))}
            self.emitter.emit_failure(case_id, backend.name, prepared.stage, prepared.failure, self._eager_timings(case_id), tool)
            return None
        workdir = pair_dir(self.scratch, case_id, backend.name)
        workdir.mkdir(parents=True, exist_ok=True)
        staging = self.emitter.staging(case_id, backend.name)
        run = dataclasses.replace(prepared, workdir=workdir, notes={}, extras={}, staging=staging)
        if run.random_ops:  # said in the Result: judged as samples though the case did not declare it
            run.extras["random_ops"] = list(run.random_ops)
        if run.staging is not None:
            bundles.stage_case_data(run.staging, run)
        return Item(case_id, run, timings=self._eager_timings(case_id))

    def prepare(self, case_id: str, backend_name: str) -> CaseRun | CaseFailure:
        """The case's module, inputs and reference (made once per job), or how making them failed."""
        if case_id in self.prepared:
            return self.prepared[case_id]
        start = time.perf_counter()
        outcome = self._make(case_id, backend_name)
        self.eager_time[case_id] = time.perf_counter() - start
        self.prepared[case_id] = outcome
        return outcome

    def _make(self, case_id: str, backend_name: str) -> CaseRun | CaseFailure:
        case = self.registry[case_id]
        seed = self.settings.seed
        stage = Stage.CASE
        mark = self.capture.mark()
        try:
            self.emitter.announce(stage, backend_name, [case_id])
            module = make_module(case, seed)
            inputs = make_inputs(case, seed)
            stage = Stage.EAGER
            self.emitter.announce(stage, backend_name, [case_id])
            reference = reference_outputs(case, module, inputs)
            return CaseRun(
                case, module, inputs, reference.expected, workdir=self.scratch, options=self.settings.options,
                inputs_after=reference.inputs_after, export_mode=case.export_mode or self.settings.export_mode,
                random_ops=reference.random_ops,
            )
        except CaseUnavailable as e:
            return CaseFailure(e.stage, Classification(Code.CASE_ERROR, e.reason, details=self.capture.since(mark)), skip=e.skip)
        except CaseError as e:  # exact inputs or stored outputs that break the case's own rules; the message names it
            return CaseFailure(stage, Classification(Code.CASE_ERROR, str(e), details=self.capture.since(mark)))
        except NondeterministicReference as e:
            return CaseFailure(
                stage,
                Classification(
                    Code.NONDETERMINISTIC_REFERENCE,
                    f"eager gives different results on two runs of the same inputs ({e}), and calls no random op; "
                    "declare the case nondeterministic=True if that is intended",
                ),
            )
        except Exception as e:
            return CaseFailure(stage, classify_error(stage, e, self.capture.since(mark)))

    def _eager_timings(self, case_id: str) -> dict[str, float]:
        # The reference is computed once per job; the first pair to need it pays.
        spent = self.eager_time.pop(case_id, 0.0)
        return {Stage.EAGER: spent} if spent else {}
