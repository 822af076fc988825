"""The pytest entry point: `pytest --backend=NAME` runs the case registry on NAME.

Without --backend pytest behaves as usual (it runs the framework's own
tests). With it, a ConformanceSession plugin is registered: collection is
the registry (one collector per case source, one item per (case, backend)),
each item is judged against its backend's xfail set, and the run ends with a
summary table per backend.
"""

from __future__ import annotations

import pytest
from tabulate import tabulate

from conformance.backends import loader
from conformance.cases import registry as reg
from conformance.pytest_plugin import options
from conformance.pytest_plugin.items import RUNNER_KEY, CaseSourceCollector, result_from_report
from conformance.pytest_plugin.runner import ItemRunner
from conformance.report.tables import backend_table
from conformance.report.triage import root_causes
from conformance.result import Result
from conformance.xfail.sets import XfailError, XfailSet
from conformance.xfail.update import update


ROOT_CAUSES_SHOWN = 10


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    specs = options.backend_specs(config)
    if not specs:
        return
    try:
        backends = [loader.resolve(spec) for spec in specs]
    except loader.BackendError as e:
        raise pytest.UsageError(str(e)) from None
    xfail_dir = None if config.getoption("no_xfail") else config.getoption("xfail_dir")
    for backend in backends if xfail_dir else ():
        try:  # a broken xfail file stops the run before any work is done
            XfailSet.load(xfail_dir, backend.name)
        except XfailError as e:
            raise pytest.UsageError(str(e)) from None
    runner = ItemRunner(options.settings_from(config), backends, xfail_dir)
    config.stash[RUNNER_KEY] = runner
    config.pluginmanager.register(ConformanceSession(config, runner), "conformance-session")


class ConformanceSession:
    def __init__(self, config: pytest.Config, runner: ItemRunner):
        self.config = config
        self.runner = runner
        self.results: list[Result] = []  # on the controller: every item's result
        self.update_lines: list[str] = []
        self.is_worker = hasattr(config, "workerinput")

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session: pytest.Session) -> bool:
        """Collect the registry instead of test files (mirrors Session.perform_collect)."""
        from _pytest.runner import collect_one_node

        hook = session.config.hook
        session.items = []
        try:
            sources = self.runner.settings.case_sources()
        except reg.RegistryError as e:
            raise pytest.UsageError(str(e)) from None
        seen: dict = {}
        for source in sources:
            collector = CaseSourceCollector.from_parent(
                session, name=source.label, nodeid=source.label, source=source, backends=self.runner.backends, seen=seen
            )
            report = collect_one_node(collector)
            hook.pytest_collectreport(report=report)
            if report.passed:
                for node in report.result:
                    session.items.extend(session.genitems(node))
        hook.pytest_collection_modifyitems(session=session, config=session.config, items=session.items)
        hook.pytest_collection_finish(session=session)
        session.testscollected = len(session.items)
        return True

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items) -> None:
        self.runner.plan(items)  # after -k and --deselect have had their say

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call":
            result = result_from_report(report)
            if result is not None:
                self.results.append(result)

    def pytest_sessionfinish(self) -> None:
        self.runner.close()
        if self.config.getoption("update_xfails") and not self.is_worker:
            self.update_lines = self._update_xfails()

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.is_worker or not self.results:
            return
        terminalreporter.section("conformance summary")
        for line in backend_table(self.results).splitlines():
            terminalreporter.write_line(line)
        groups = root_causes(self.results, {c.id: {"ops": list(c.ops)} for c in self.runner.cases.values()})
        if groups:
            shown = groups[:ROOT_CAUSES_SHOWN]
            terminalreporter.write_line(f"\nlargest root-cause groups ({len(shown)} of {len(groups)}; all: conformance triage):")
            rows = [[g.count, g.backend, g.code, g.op or "-", g.example.case, g.example.explanation[:110]] for g in shown]
            for line in tabulate(rows, headers=["count", "backend", "code", "op", "example", "explanation"]).splitlines():
                terminalreporter.write_line(line)
        for line in self.update_lines:
            terminalreporter.write_line(line)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log):
        if config.getoption("dist") != "load":
            return None
        from conformance.pytest_plugin.scheduling import GroupScheduling

        return GroupScheduling(config, log, batch_size=self.runner.settings.batch_size)

    def _update_xfails(self) -> list[str]:
        settings = self.runner.settings
        known = {c.id for c in reg.Registry.load(settings.case_sources(), settings.suites)}
        lines = ["xfail sets updated:"]
        for backend in self.runner.backends:
            xfails = XfailSet.load(self.config.getoption("xfail_dir"), backend.name)
            report = update(xfails, self.results, known)
            xfails.save()
            lines += report.lines()
        return lines
