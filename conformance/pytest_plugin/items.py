"""pytest collectors and items: one collector per case source, one item per (case, backend).

Item node ids are exactly `<case-id>[<backend>]`, so `-k`, `--deselect`,
junitxml and xdist see the ids users read in reports and xfail sets.
"""

from __future__ import annotations

import json

import pytest

from conformance.backends.protocol import Backend
from conformance.cases.registry import CaseSource, RegistryError
from conformance.cases.spec import Case
from conformance.result import Result
from conformance.taxonomy import Verdict
from conformance.xfail.judge import describe_expected, verdict
from conformance.xfail.sets import Entry

PROPERTY = "conformance.result"


class CaseSourceCollector(pytest.Collector):
    """The cases of one source (a file of cases/, a module, an entry point)."""

    def __init__(self, *, source: CaseSource, backends: list[Backend], seen: dict[str, Case], **kw):
        super().__init__(**kw)
        self.source = source
        self.backends = backends
        self.seen = seen  # every case collected so far, to report duplicate ids

    def collect(self):
        runner = self.config.stash[RUNNER_KEY]
        wanted = set(self.config.getoption("case"))
        for case in self.source.load(runner.settings.suites):
            if wanted and case.id not in wanted:
                continue
            other = self.seen.setdefault(case.id, case)
            if other is not case:
                raise RegistryError(f"duplicate case id {case.id!r}: defined at {other.defined_at} and at {case.defined_at}")
            runner.cases[case.id] = case
            for backend in self.backends:
                item = CaseItem.from_parent(self, name=f"{case.id}[{backend.name}]", nodeid=f"{case.id}[{backend.name}]")
                item.case, item.backend = case, backend
                item.extra_keyword_matches.update(case.all_tags)
                item.extra_keyword_matches.add(backend.name)
                yield item

    def repr_failure(self, excinfo):
        if excinfo.errisinstance(RegistryError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class ConformanceFailure(Exception):
    """A case failed a strict run; it carries what a reader needs to act."""

    def __init__(self, result: Result, verdict: Verdict, entry: Entry | None, case: Case):
        super().__init__(result.explanation)
        self.result, self.verdict, self.entry, self.case = result, verdict, entry, case


class CaseItem(pytest.Item):
    case: Case
    backend: Backend

    def runtest(self) -> None:
        runner = self.config.stash[RUNNER_KEY]
        result = runner.result_for(self)
        entry = runner.xfail_entry(self.backend.name, self.case.id)
        judged = verdict(result, entry)
        result.verdict = judged
        self.user_properties.append((PROPERTY, _summary_json(result)))
        if judged == Verdict.SKIP:
            pytest.skip(result.explanation)
        if judged == Verdict.XFAIL:
            pytest.xfail(f"{result.code}{f' ({result.op})' if result.op else ''}: {result.explanation}")
        if judged.is_failure:
            raise ConformanceFailure(result, judged, entry, self.case)

    def repr_failure(self, excinfo, style=None):
        if not excinfo.errisinstance(ConformanceFailure):
            return super().repr_failure(excinfo)
        f: ConformanceFailure = excinfo.value
        r = f.result
        lines = [f"{r.case}[{r.backend}]: {f.verdict}"]
        if f.verdict == Verdict.XPASS:
            lines.append(f"  passed, but the xfail set expects {describe_expected(f.entry)}")
            lines.append("  the case works now: drop its entry (conformance xfail update, or --update-xfails)")
        else:
            op = f" ({r.op})" if r.op else ""
            lines.append(f"  stage {r.stage}: {r.code}{op}")
            lines.append(f"  {r.explanation}")
            if f.verdict == Verdict.CHANGED:
                lines.append(f"  the xfail set expected {describe_expected(f.entry)}")
        lines.append(f"  case defined at {f.case.defined_at}; inputs {f.case.describe_inputs() or '(none)'}")
        if r.artifacts:
            lines.append(f"  reproducer bundle: {r.artifacts}")
        if r.details:
            lines += ["", "captured diagnostics:", r.details]
        return "\n".join(lines)

    def reportinfo(self):
        path, _, line = self.case.defined_at.rpartition(":")
        return (path or self.path, int(line) - 1 if line.isdigit() else None, self.name)


def _summary_json(result: Result) -> str:
    # Details can be long; reports and junitxml need the verdict, not the dump.
    data = result.to_dict()
    data.pop("details", None)
    return json.dumps(data, sort_keys=True)


def result_from_report(report) -> Result | None:
    for name, value in getattr(report, "user_properties", ()):
        if name == PROPERTY:
            return Result.from_json(value)
    return None


RUNNER_KEY = pytest.StashKey["object"]()
