"""A Run: what both front ends hold while pairs run, and what they do with each Result.

pytest's session (pytest_plugin/) and `conformance nightly` (cli/nightly.py)
each build one from their command line: the backends resolved from their
specs, the Settings, and where the xfail sets are (none with --no-xfail).
Each Result that comes back is judged against its backend's set, a failing
model is localized (--localize), and a failure says how to rerun it, the
same way in both. What stops a run before it starts is a RunError, whose
message each front end shows as its usage error.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from conformance import content, rerun
from conformance import run_options as ro
from conformance.result import Result
from conformance.run import RunError
from conformance.settings import Settings
from conformance.gates import judge as gate_judge
from conformance.gates.selection import chosen_by_default
from conformance.gates.sets import GatesError, GateSet
from conformance.taxonomy import Verdict
from conformance.xfail.judge import verdict
from conformance.xfail.sets import Entry, XfailError, XfailSet


def resolve_backends(specs: list[str]) -> list:
    """The Backend each --backend spec names, in order (RunError naming a spec that names none)."""
    from conformance.backends import loader

    try:
        return [loader.resolve(spec) for spec in specs]
    except loader.BackendError as e:
        raise RunError(str(e)) from None


def needs_localizing(result: Result, case) -> bool:
    """--localize takes every failing PyTorch case with more than one op to blame, each once.

    A model always (its graph is only known once exported); an op case when the
    graph it exported computes several ops (a cast or a view around the op under
    test may be the one that fails). An op case of one op is its own
    localization; an ONNX case has no exported graph to cut.
    """
    from conformance.classify.op_under_test import computing_ops
    from conformance.localize.record import EXTRAS_KEY

    if not result.failed or case is None or case.format != "torch" or EXTRAS_KEY in result.extras:
        return False
    return case.kind == "model" or len(computing_ops(result.extras.get("aten_ops") or ())) > 1


@dataclass
class Run:
    settings: Settings
    backends: list  # resolved from settings.backends, in that order
    xfail_dir: str | None  # None: --no-xfail, every failure is a FAIL
    gates_dir: str | None = None  # --gates: where the gates files are; None: no gates
    _sets: dict[str, XfailSet] = field(default_factory=dict, repr=False)
    _gates: dict[str, GateSet] = field(default_factory=dict, repr=False)
    _hangs: set[str] = field(default_factory=set, repr=False)  # cases with a pair pinned TIMEOUT (plan_budgets)

    @classmethod
    def from_options(cls, namespace, specs: list[str]) -> Run:
        """The run a command line asks for: its backends resolved, their options read, its xfail and gates files checked."""
        backends = resolve_backends(specs)
        settings = ro.settings_from(namespace, specs, ro.backend_options(backends))
        run = cls(settings, backends, ro.xfail_dir(namespace), ro.gates_dir(namespace))
        run.check_xfails()
        run.check_gates()
        return run

    @property
    def names(self) -> list[str]:
        return [backend.name for backend in self.backends]

    # -- judging ---------------------------------------------------------------

    def check_xfails(self, names: list[str] | None = None) -> None:
        """Load every backend's xfail set now (or those of `names`): a broken file stops the run before any work,
        naming file and line."""
        for name in (self.names if names is None else names) if self.xfail_dir else ():
            self._set(name)

    def _set(self, backend: str) -> XfailSet:
        if backend not in self._sets:
            try:
                self._sets[backend] = XfailSet.load(self.xfail_dir, backend)
            except XfailError as e:
                raise RunError(str(e)) from None
        return self._sets[backend]

    def xfail_entry(self, backend: str, case_id: str) -> Entry | None:
        """The failure the pair's xfail set expects; None when it expects none, or with --no-xfail."""
        return None if self.xfail_dir is None else self._set(backend).get(case_id)

    def plan_budgets(self, pairs: list[tuple[str, str]], history: dict | None = None, ran_away: Iterable = ()) -> dict[tuple[str, str], str]:
        """Settings.budgets and .memory_budgets for `pairs` (execution/budgets.py): a pinned hang is confirmed in
        seconds, and with a last report's stage timings (`history`) a fast pair waits less; a pinned runaway, or
        one the last report saw (`ran_away`), is confirmed at less memory. Returns the pinned codes."""
        from conformance.execution import budgets

        entries = {pair: entry for pair in pairs if (entry := self.xfail_entry(pair[1], pair[0])) is not None}
        pinned = {pair: entry.code for pair, entry in entries.items()}
        self._hangs = {case for (case, _), code in pinned.items() if code == "TIMEOUT"}
        runaways = {pair for pair, entry in entries.items() if budgets.pinned_runaway(entry.code, entry.explanation)}
        settings = self.settings
        settings.budgets = budgets.plan(pairs, pinned, history or {}, settings.case_timeout)
        settings.memory_budgets = budgets.plan_memory(pairs, runaways | set(ran_away), settings.memory_kill_mb)
        return pinned

    def judge(self, result: Result) -> tuple[Verdict, Entry | None]:
        """Set the result's verdict from its xfail entry (xfail/judge.py); return both."""
        entry = self.xfail_entry(result.backend, result.case)
        result.verdict = verdict(result, entry)
        return result.verdict, entry

    # -- gates -----------------------------------------------------------------

    def check_gates(self) -> None:
        """--gates: load every backend's gates file now (a broken one stops the run, naming file, line and key),
        and have the cases they name timed as gated cases are."""
        if self.gates_dir is None:
            return
        named = set(self.settings.timed_cases)
        for name in self.names:
            named.update(self._gate_set(name).entries)
        self.settings.timed_cases = sorted(named)

    def _gate_set(self, backend: str) -> GateSet:
        if backend not in self._gates:
            try:
                self._gates[backend] = GateSet.load(self.gates_dir, backend)
            except GatesError as e:
                raise RunError(str(e)) from None
        return self._gates[backend]

    def gate(self, result: Result) -> dict | None:
        """--gates: the pair's figures against its golden ones, recorded in extras["gates"] (gates/judge.py);
        None without --gates or for a pair not gated. It never changes the verdict."""
        return None if self.gates_dir is None else gate_judge.attach(result, self._gate_set(result.backend))

    def run_alone(self, cases) -> set[str]:
        """The cases given a job of their own, and so compiled (and put through every batched stage) alone:
        models (batching saves them nothing); a pinned hang or a known runaway (budgets planned first by
        plan_budgets: in a batch, a hang waits for its batch's largest budget and a runaway's death is split
        and retried down to it, a climb to its budget each time); and under --gates the gated cases too,
        whose module size and compile time are then their own."""
        from conformance.execution.budgets import cases_of

        alone = {c.id for c in cases if c.kind == "model"} | cases_of(self.settings.memory_budgets) | self._hangs
        if self.gates_dir is not None:
            timed = set(self.settings.timed_cases)
            alone |= {c.id for c in cases if chosen_by_default(c.kind, c.all_tags) or c.id in timed}
        return alone

    # -- after a pair ----------------------------------------------------------

    def localize(self, result: Result, case, root: Path, log: Callable[[str], None] = lambda line: None) -> dict | None:
        """--localize: a failing model's op to blame, recorded in its extras (workspaces under `root`);
        None, and nothing done, for a result that needs none."""
        if not needs_localizing(result, case):
            return None
        from conformance.localize.localizer import attach

        return attach(result, rerun.backend_spec(self.settings, result.backend), self.settings, root, log)

    def reproduce_command(self, result: Result) -> str:
        """How to reproduce a failing pair: its bundle's script when --artifacts wrote one, else the
        pytest command for that pair alone, judged as this run judged it."""
        if result.artifacts:
            return f"sh {shlex.quote(result.artifacts)}/reproduce.sh"
        custom = self.xfail_dir and str(Path(self.xfail_dir).resolve())
        if custom == str(content.DEFAULT_XFAIL_DIR.resolve()):
            custom = None
        return rerun.rerun_command(result.case, result.backend, self.settings, no_xfail=self.xfail_dir is None, xfail_dir=custom)
