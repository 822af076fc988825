"""Results for pytest items, computed a group at a time in a supervised child.

Each pytest process (or xdist worker) owns one Engine. When an item asks
for its result, the runner computes the whole job the item belongs to, so
the cases of a group share one export per case and one compile per backend;
the other items of the job then find their results waiting.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from conformance import content
from conformance.backends.protocol import Backend
from conformance.cases.spec import Case
from conformance.execution.engine import Engine
from conformance.execution.planning import Pair, group_indices, plan_jobs
from conformance.settings import Settings
from conformance.result import Result
from conformance.xfail.sets import Entry, XfailSet


class ItemRunner:
    def __init__(self, settings: Settings, backends: list[Backend], xfail_dir: str | None, localize_root: Path | None = None):
        self.settings = settings
        self.localize_root = localize_root  # --localize: failing model cases are localized, their workspaces here
        self.backends = backends
        self.xfail_dir = xfail_dir
        self.cases: dict[str, Case] = {}
        self.engine = Engine(settings)
        self.results: dict[Pair, Result] = {}
        self.job_of: dict[Pair, list[Pair]] = {}
        self._xfails: dict[str, XfailSet] = {}

    def plan(self, items) -> None:
        """Cut the session's items (in run order) into jobs, as xdist's scheduler groups them."""
        pairs = [(item.case.id, item.backend.name) for item in items]
        heavy = {c.id for c in self.cases.values() if c.kind == "model"}
        groups: dict[int, list[Pair]] = {}
        for pair, group in zip(pairs, group_indices([p[0] for p in pairs], self.settings.batch_size)):
            groups.setdefault(group, []).append(pair)
        for group_pairs in groups.values():
            for job in plan_jobs(group_pairs, self.settings.batch_size, heavy):
                for pair in job:
                    self.job_of[pair] = job

    def result_for(self, item) -> Result:
        pair = (item.case.id, item.backend.name)
        if pair not in self.results:
            job = [p for p in self.job_of.get(pair, [pair]) if p not in self.results]
            for result in self.engine.run(job):
                self.results[result.key] = result
        result = self.results.pop(pair)
        if self.localize_root is not None and result.failed and item.case.kind == "model":
            from conformance.rerun import backend_spec
            from conformance.localize.localizer import attach

            attach(result, backend_spec(self.settings, result.backend), self.settings, self.localize_root)
        return result

    def xfail_entry(self, backend: str, case_id: str) -> Entry | None:
        if self.xfail_dir is None:
            return None
        if backend not in self._xfails:
            self._xfails[backend] = XfailSet.load(self.xfail_dir, backend)
        return self._xfails[backend].get(case_id)

    def reproduce_command(self, result: Result) -> str:
        """How to reproduce a failing pair: its bundle's script when --artifacts wrote one,
        else the pytest command for that pair alone, judged as this run judged it."""
        from conformance.rerun import rerun_command

        if result.artifacts:
            return f"sh {shlex.quote(result.artifacts)}/reproduce.sh"
        custom = self.xfail_dir and str(Path(self.xfail_dir).resolve())
        if custom == str(content.DEFAULT_XFAIL_DIR.resolve()):
            custom = None
        return rerun_command(result.case, result.backend, self.settings, no_xfail=self.xfail_dir is None, xfail_dir=custom)

    def close(self) -> None:
        self.engine.close()
