"""pytest collectors and items: the registry, one collector per case source, one item per (case, backend).

pytest collects the registry with its own machinery: the session asks it to
collect the rootdir, and `pytest_collect_directory` answers with a Registry
(see session.py). Item node ids are exactly `<case-id>[<backend>]`, so `-k`,
`--deselect`, junitxml and xdist see the ids users read in reports and
xfail sets.
"""

from __future__ import annotations

import difflib
import json

import pytest

from conformance.backends.protocol import Backend
from conformance.cases.registry import CaseSource, RegistryError
from conformance.cases.spec import Case
from conformance.localize.record import localization, summary
from conformance.result import Result
from conformance.taxonomy import Verdict
from conformance.execution.reruns import ATTEMPTS, describe
from conformance.gates import judge as gates
from conformance.xfail.judge import describe_expected, fails_strict_run
from conformance.xfail.sets import Entry

PROPERTY = "conformance.result"
# The whole Result (details included) as an attribute of the item's report: it travels to the
# xdist controller with the report, and junitxml does not write it.
FULL_RESULT = "conformance_result"


class ExplainsRegistryErrors:
    def repr_failure(self, excinfo, style=None):
        if excinfo.errisinstance(RegistryError):  # its message names the source and the problem
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class Registry(ExplainsRegistryErrors, pytest.Directory):
    """The case registry in place of the rootdir's files: one CaseSourceCollector per case source.

    It loads every source first, so an unknown `--case` id is known before
    anything runs (an error naming close matches, not a silently smaller run).
    A root Directory's name is not a -k keyword, so `-k` sees only case ids,
    tags and backends.
    """

    def __init__(self, *, sources: list[CaseSource], suites: list[str], wanted: list[str], **kw):
        super().__init__(**kw)
        self.sources, self.suites, self.wanted = sources, suites, wanted

    def collect(self):
        loaded = []
        for source in self.sources:
            try:
                loaded.append((source, source.load(self.suites), None))
            except RegistryError as e:  # reported by the source's own collector
                loaded.append((source, [], e))
        if self.wanted and not any(error for _, _, error in loaded):
            known = [case.id for _, cases, _ in loaded for case in cases]
            if unknown := [case_id for case_id in self.wanted if case_id not in set(known)]:
                raise RegistryError("; ".join(unknown_case(case_id, known) for case_id in unknown))
        seen: dict[str, Case] = {}
        for source, cases, error in loaded:
            if self.wanted:
                cases = [case for case in cases if case.id in self.wanted]
            yield CaseSourceCollector.from_parent(self, name=source.label, nodeid=source.label, cases=cases, error=error, seen=seen)


def unknown_case(case_id: str, known: list[str]) -> str:
    close = difflib.get_close_matches(case_id, known, n=3)
    return f"--case {case_id}: no such case" + (f" (did you mean {', '.join(close)}?)" if close else "")


class CaseSourceCollector(ExplainsRegistryErrors, pytest.Collector):
    """The cases of one source (a file of cases/, a module, an entry point)."""

    def __init__(self, *, cases: list[Case], error: RegistryError | None, seen: dict[str, Case], **kw):
        super().__init__(**kw)
        self.cases = cases
        self.error = error  # loading the source failed: this collector reports it
        self.seen = seen  # every case collected so far, to report duplicate ids

    def collect(self):
        if self.error is not None:
            raise self.error
        runner = self.config.stash[RUNNER_KEY]
        for case in self.cases:
            other = self.seen.setdefault(case.id, case)
            if other is not case:
                raise RegistryError(f"duplicate case id {case.id!r}: defined at {other.defined_at} and at {case.defined_at}")
            runner.cases[case.id] = case
            for backend in runner.run.backends:
                node_id = f"{case.id}[{backend.name}]"
                yield CaseItem.from_parent(self, name=node_id, nodeid=node_id, case=case, backend=backend)


class ConformanceFailure(Exception):
    """A case failed a strict run; it carries what a reader needs to act."""

    def __init__(self, result: Result, verdict: Verdict, entry: Entry | None, case: Case):
        super().__init__(result.explanation)
        self.result, self.verdict, self.entry, self.case = result, verdict, entry, case


class GateFailure(Exception):
    """--gates: a pair that passed, with figures beyond its golden ones (gates/judge.py)."""

    def __init__(self, result: Result, case: Case):
        super().__init__(gates.message(result))
        self.result, self.case = result, case


class CaseItem(pytest.Item):
    def __init__(self, *, case: Case, backend: Backend, **kw):
        super().__init__(**kw)
        self.case = case
        self.backend = backend
        self.result: Result | None = None  # set by runtest
        self.extra_keyword_matches.update(case.all_tags)
        self.extra_keyword_matches.add(backend.name)

    def runtest(self) -> None:
        runner = self.config.stash[RUNNER_KEY]
        result = runner.result_for(self)
        judged, entry = runner.run.judge(result)
        runner.run.gate(result)  # --gates: extras["gates"]; the verdict stays what it is
        self.result = result
        self.user_properties.append((PROPERTY, _summary_json(result)))
        if judged in (Verdict.PASS, Verdict.COMPILED) and gates.beyond(result):
            raise GateFailure(result, self.case)
        if judged == Verdict.SKIP:
            pytest.skip(result.explanation)
        if judged == Verdict.COMPILED:
            # pytest's word for "cannot run here" (as for a test needing hardware the machine lacks); never a pass.
            # The conformance summary counts it in a column of its own.
            pytest.skip(result.explanation)
        if judged == Verdict.XFAIL:
            pytest.xfail(f"{result.code}{f' ({result.op})' if result.op else ''}: {result.explanation}")
        if fails_strict_run(result, judged, entry):
            raise ConformanceFailure(result, judged, entry, self.case)
        if judged == Verdict.FLAKY:  # its entry expects a failure one of its runs showed: known, and intermittent
            pytest.xfail(f"FLAKY, showing the xfail set's {describe_expected(entry)} in some runs: {result.explanation}")

    def repr_failure(self, excinfo, style=None):
        if excinfo.errisinstance(GateFailure):
            return gate_failure_text(excinfo.value)
        if not excinfo.errisinstance(ConformanceFailure):
            return super().repr_failure(excinfo)
        runner = self.config.stash[RUNNER_KEY]
        return failure_text(excinfo.value, runner.run.reproduce_command(excinfo.value.result))

    def reportinfo(self):
        path, _, line = self.case.defined_at.rpartition(":")
        return (path or self.path, int(line) - 1 if line.isdigit() else None, self.name)


def _flaky_lines(result: Result, entry: Entry | None) -> list[str]:
    lines = ["  the runs disagree (each in a fresh process, compiled alone):"]
    lines += [f"    {describe(number, seen)}" for number, seen in enumerate(result.extras.get(ATTEMPTS) or [], 1)]
    if entry is not None:
        lines.append(f"  the xfail set expects {describe_expected(entry)}, which no run showed")
    lines.append(
        "  runs that disagree are a bug to fix (a race, memory read before it is written); "
        "while it is known, an xfail entry expecting one of the failures above keeps the run green "
        "(write it by hand, with a note: updates never write a flaky pair; add `flaky = true` if it also passes outright)"
    )
    return lines
def failure_text(f: ConformanceFailure, reproduce: str) -> str:
    """What pytest shows of a failure. Its first line is the short summary's
    (`FAILED case[backend] - <first line>`): verdict, code, op, stage and
    explanation; then the facts, the diagnostics once, and how to reproduce it."""
    r = f.result
    if f.verdict == Verdict.FLAKY:
        lines = [f"FLAKY: {r.explanation.splitlines()[0] if r.explanation else 'the runs disagree'}", *_flaky_lines(r, f.entry)]
    elif f.verdict == Verdict.XPASS:
        lines = [
            f"XPASS: passed, but the xfail set expects {describe_expected(f.entry)}",
            "  the case works now: drop its entry (conformance xfail update, or --update-xfails)",
        ]
    else:
        op = f" ({r.op})" if r.op else ""
        explanation, *more = r.explanation.splitlines() or [""]
        lines = [f"{f.verdict} {r.code}{op} at {r.stage}: {explanation}", *(f"  {line}" for line in more)]
        if f.verdict == Verdict.CHANGED:
            lines.append(f"  the xfail set expected {describe_expected(f.entry)}")
    lines.append(f"  case defined at {f.case.defined_at}; inputs {f.case.describe_inputs() or '(none)'}")
    if localization(r):  # --localize
        lines.append(f"  {summary(localization(r))}")
    if r.details:
        lines += ["", "captured diagnostics:", r.details.rstrip()]
    lines += ["", f"reproduce: {reproduce}"]
    return "\n".join(lines)


def gate_failure_text(f: GateFailure) -> str:
    """What pytest shows of a pair beyond its gates: the first line names each figure beyond, golden,
    measured and tolerance; then every figure judged, and what to do about it."""
    r, found = f.result, gates.outcome(f.result)
    lines = [gates.message(r), f"  the pair passed ({r.verdict or r.status}); its figures against {found['file']}:"]
    lines += [f"    {f_['state']:>6}: {gates.describe(f_)}" for f_ in found["figures"]]
    if found["unmeasured"]:
        lines.append(f"    not measured in this run: {', '.join(found['unmeasured'])}")
    lines += [
        f"  case defined at {f.case.defined_at}",
        "  a real change (a new lowering, a new IREE): rewrite the golden figures with "
        f"conformance gates update --backend {r.backend} -k {r.case}; noise: widen the figure's tolerance in the file",
    ]
    return "\n".join(lines)


def _summary_json(result: Result) -> str:
    # Details can be long; reports and junitxml need the verdict, not the dump.
    data = result.to_dict()
    data.pop("details", None)
    return json.dumps(data, sort_keys=True)


def result_from_report(report) -> Result | None:
    """The item's Result: whole when the session asked for it (FULL_RESULT), else without details."""
    if (full := getattr(report, FULL_RESULT, None)) is not None:
        return Result.from_json(full)
    for name, value in getattr(report, "user_properties", ()):
        if name == PROPERTY:
            return Result.from_json(value)
    return None


RUNNER_KEY = pytest.StashKey["object"]()
