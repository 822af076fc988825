"""What a `pytest --backend=...` run adds to pytest (imported only when --backend is given).

Collection is the registry (items.Registry, through pytest's own collection
machinery), each item is judged against its backend's xfail set, and the run
ends with a summary table per backend. The run itself (backends, judging,
--localize, the report directory) is the run layer's (run/), as for
`conformance nightly`: this is pytest's front end over it.
"""

from __future__ import annotations

import functools
import shlex
import time
from pathlib import Path

import pytest
from tabulate import tabulate

from conformance import run_options
from conformance.cases import registry as reg
from conformance.gates import judge as gates
from conformance.pytest_plugin.items import FULL_RESULT, RUNNER_KEY, CaseItem, Registry, result_from_report
from conformance.pytest_plugin.runner import ItemRunner
from conformance.report.tables import backend_table
from conformance.report.triage import root_causes
from conformance.report_dir import LOCALIZED, REPORT_HTML, RESULTS, has_results
from conformance.result import Result
from conformance.run import RunError
from conformance.run.record import case_snapshot, run_record
from conformance.run.session import Run
from conformance.run.writer import ReportWriter
from conformance.taxonomy import Status
from conformance.xfail.judge import expected_flaky
from conformance.xfail.sets import XfailSet
from conformance.xfail.update import update

ROOT_CAUSES_SHOWN = 10


def start(config: pytest.Config, specs: list[str]) -> None:
    """Check everything the run needs before it starts (a broken xfail file included), then register the session."""
    try:
        run = Run.from_options(config.option, specs)
    except RunError as e:
        raise pytest.UsageError(str(e)) from None
    run.settings.lanes = getattr(config, "workerinput", {}).get("workercount", 1)  # each xdist worker is a lane
    report_dir = run_options.REPORT_DIR.value(config.option)
    if report_dir and has_results(Path(report_dir)):
        raise pytest.UsageError(f"--report-dir {report_dir}: it holds a report already ({RESULTS}); choose another directory")
    try:
        sources = reg.sources_of(run.settings)
    except reg.RegistryError as e:
        raise pytest.UsageError(str(e)) from None
    # A failure's text starts with its one-line summary; on CI (or with -vv) pytest would
    # append the whole text, diagnostics included, to the short summary: print them once.
    if hasattr(config.option, "force_short_summary"):
        config.option.force_short_summary = True
    localize_root = None
    if run_options.LOCALIZE.value(config.option):
        localize_root = Path(report_dir or "reports").resolve() / LOCALIZED
    runner = ItemRunner(run, localize_root)
    config.stash[RUNNER_KEY] = runner
    config.pluginmanager.register(ConformanceSession(config, runner, sources), "conformance-session")


class ConformanceSession:
    def __init__(self, config: pytest.Config, runner: ItemRunner, sources: list[reg.CaseSource]):
        self.config = config
        self.runner = runner
        self.sources = sources
        self.results: list[Result] = []  # on the controller: every item's result
        self.update_lines: list[str] = []
        self.is_worker = hasattr(config, "workerinput")
        self.report_dir = run_options.REPORT_DIR.value(config.option)
        self.started = time.monotonic()
        if self.report_dir and not self.is_worker:
            self.record = run_record(runner.run.names, runner.run.settings, keyword=config.option.keyword or None)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session: pytest.Session) -> bool | None:
        """Collect the rootdir, which pytest_collect_directory turns into the registry."""
        if session.config.pluginmanager.hasplugin("dsession"):
            return None  # an xdist controller: its workers collect
        session.perform_collect([str(session.config.rootpath)])
        return True

    @pytest.hookimpl(tryfirst=True)
    def pytest_collect_directory(self, path, parent):
        if path == self.config.rootpath:
            suites = self.runner.run.settings.suites
            wanted = run_options.CASE.value(self.config.option)
            return Registry.from_parent(parent, path=path, sources=self.sources, suites=suites, wanted=wanted)
        return None

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items) -> None:
        self.runner.plan(items)  # after -k and --deselect have had their say

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        report = yield
        if self.report_dir and call.when == "call" and isinstance(item, CaseItem) and item.result is not None:
            setattr(report, FULL_RESULT, item.result.to_json())  # the report's diagnostics need the details
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call":
            result = result_from_report(report)
            if result is not None:
                self.results.append(result)

    def pytest_sessionfinish(self) -> None:
        self.runner.close()
        if run_options.UPDATE_XFAILS.value(self.config.option) and not self.is_worker:
            self.update_lines = self._update_xfails()
        if self.report_dir and not self.is_worker and self.results:
            self._write_report(Path(self.report_dir))

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.is_worker or not self.results:
            return
        terminalreporter.section("conformance summary")
        for line in backend_table(self.results).splitlines():
            terminalreporter.write_line(line)
        # cases.json's content: a failure naming no op of its own is grouped under its case's one op
        groups = root_causes(self.results, case_snapshot(self._cases())) if any(r.failed for r in self.results) else []
        if groups:
            shown = groups[:ROOT_CAUSES_SHOWN]
            terminalreporter.write_line(f"\nlargest root-cause groups ({len(shown)} of {len(groups)}):")
            rows = [[g.count, g.backends_label(), g.code_label, g.op or "-", g.example.case, g.example.explanation[:110]] for g in shown]
            for line in tabulate(rows, headers=["count", "backends", "code", "op", "example", "explanation"]).splitlines():
                terminalreporter.write_line(line)
            if self.report_dir:
                terminalreporter.write_line(f"every group: conformance triage {shlex.quote(self.report_dir)}")
            elif len(groups) > len(shown):
                terminalreporter.write_line("every group: run again with --report-dir DIR, then conformance triage DIR")
        flaky = [r for r in self.results if r.status == Status.FLAKY]
        if flaky:
            terminalreporter.write_line(f"\nflaky pairs ({len(flaky)}): their runs disagree, each in a fresh process")
            for r in sorted(flaky, key=lambda r: r.key):
                known = expected_flaky(r, self.runner.run.xfail_entry(r.backend, r.case))
                how = "xfail entry expects a failure seen" if known else "fails the run"
                terminalreporter.write_line(f"  {r.case}[{r.backend}] ({how}): {r.explanation[:300]}")
        beyond = [r for r in self.results if gates.beyond(r)]
        if beyond:
            terminalreporter.write_line(f"\nbeyond their gates ({len(beyond)}): passed, but slower or bigger than golden beyond tolerance")
            for r in sorted(beyond, key=lambda r: r.key):
                terminalreporter.write_line(f"  {r.case}[{r.backend}]: {'; '.join(gates.describe(f) for f in gates.beyond(r))}")
        if self.report_dir:
            terminalreporter.write_line(f"report: {Path(self.report_dir) / REPORT_HTML} (and {RESULTS}, report.md, summary.json)")
        for line in self.update_lines:
            terminalreporter.write_line(line)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log):
        if config.getoption("dist") != "load":
            return None
        from conformance.pytest_plugin.scheduling import GroupScheduling

        return GroupScheduling(config, log, batch_size=self.runner.run.settings.batch_size)

    @functools.cached_property
    def _known_cases(self) -> dict:
        """The run's cases by id; an xdist controller collects none itself: it reads the registry."""
        if self.runner.cases:
            return self.runner.cases
        try:
            return {c.id: c for c in reg.Registry.load(self.sources, self.runner.run.settings.suites)}
        except reg.RegistryError:  # the workers have reported it
            return {}

    def _cases(self) -> list:
        """The cases of the run's results, in the order they finished."""
        return [self._known_cases[i] for i in dict.fromkeys(r.case for r in self.results) if i in self._known_cases]

    def _write_report(self, directory: Path) -> None:
        """The run's report directory, as a nightly run writes one (--report-dir)."""
        writer = ReportWriter(directory, self.record)
        writer.start(self._cases())
        for result in self.results:
            writer.add(result)
        writer.stop(time.monotonic() - self.started, finished=True)
        writer.build(baseline=None)

    def _update_xfails(self) -> list[str]:
        known = {c.id for c in reg.Registry.load(self.sources, self.runner.run.settings.suites)}
        lines = ["xfail sets updated:"]
        for backend in self.runner.run.backends:
            xfails = XfailSet.load(run_options.xfail_sets_dir(self.config.option), backend.name)
            report = update(xfails, self.results, known)
            xfails.save()
            lines += report.lines()
        return lines
