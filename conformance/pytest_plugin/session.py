"""What a `pytest --backend=...` run adds to pytest (imported only when --backend is given).

Collection is the registry (items.Registry, through pytest's own collection
machinery), each item is judged against its backend's xfail set, and the run
ends with a summary table per backend.
"""

from __future__ import annotations

import pytest
from tabulate import tabulate

from conformance import run_options
from conformance.backends import loader
from conformance.cases import registry as reg
from conformance.pytest_plugin.items import RUNNER_KEY, Registry, result_from_report
from conformance.pytest_plugin.runner import ItemRunner
from conformance.report.tables import backend_table
from conformance.report.triage import root_causes
from conformance.result import Result
from conformance.taxonomy import Status
from conformance.xfail.judge import expected_flaky
from conformance.xfail.sets import XfailError, XfailSet
from conformance.xfail.update import update

ROOT_CAUSES_SHOWN = 10


def resolve_backends(specs: list[str]) -> list:
    try:
        return [loader.resolve(spec) for spec in specs]
    except loader.BackendError as e:
        raise pytest.UsageError(str(e)) from None


def start(config: pytest.Config, specs: list[str]) -> None:
    """Check everything the run needs before it starts, then register the session."""
    backends = resolve_backends(specs)
    xfail_dir = run_options.xfail_dir(config.option)
    for backend in backends if xfail_dir else ():
        try:  # a broken xfail file stops the run before any work is done
            XfailSet.load(xfail_dir, backend.name)
        except XfailError as e:
            raise pytest.UsageError(str(e)) from None
    settings = run_options.settings_from(config.option, specs, run_options.backend_options(backends))
    try:
        sources = settings.case_sources()
    except reg.RegistryError as e:
        raise pytest.UsageError(str(e)) from None
    runner = ItemRunner(settings, backends, xfail_dir)
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
            suites = self.runner.settings.suites
            wanted = run_options.CASE.value(self.config.option)
            return Registry.from_parent(parent, path=path, sources=self.sources, suites=suites, wanted=wanted)
        return None

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
        if run_options.UPDATE_XFAILS.value(self.config.option) and not self.is_worker:
            self.update_lines = self._update_xfails()

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.is_worker or not self.results:
            return
        terminalreporter.section("conformance summary")
        for line in backend_table(self.results).splitlines():
            terminalreporter.write_line(line)
        groups = root_causes(self.results, self._case_ops()) if any(r.failed for r in self.results) else []
        if groups:
            shown = groups[:ROOT_CAUSES_SHOWN]
            terminalreporter.write_line(f"\nlargest root-cause groups ({len(shown)} of {len(groups)}; all: conformance triage):")
            rows = [[g.count, g.backend, g.code, g.op or "-", g.example.case, g.example.explanation[:110]] for g in shown]
            for line in tabulate(rows, headers=["count", "backend", "code", "op", "example", "explanation"]).splitlines():
                terminalreporter.write_line(line)
        flaky = [r for r in self.results if r.status == Status.FLAKY]
        if flaky:
            terminalreporter.write_line(f"\nflaky pairs ({len(flaky)}): their runs disagree, each in a fresh process")
            for r in sorted(flaky, key=lambda r: r.key):
                known = expected_flaky(r, self.runner.xfail_entry(r.backend, r.case))
                how = "xfail entry expects a failure seen" if known else "fails the run"
                terminalreporter.write_line(f"  {r.case}[{r.backend}] ({how}): {r.explanation[:300]}")
        for line in self.update_lines:
            terminalreporter.write_line(line)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log):
        if config.getoption("dist") != "load":
            return None
        from conformance.pytest_plugin.scheduling import GroupScheduling

        return GroupScheduling(config, log, batch_size=self.runner.settings.batch_size)

    def _case_ops(self) -> dict[str, dict]:
        """Each case's declared ops, to group failures that name no op of their own."""
        cases = list(self.runner.cases.values())
        if not cases:  # an xdist controller collects nothing: read the registry
            try:
                cases = list(reg.Registry.load(self.sources, self.runner.settings.suites))
            except reg.RegistryError:  # the workers have reported it
                pass
        return {c.id: {"ops": list(c.ops)} for c in cases}

    def _update_xfails(self) -> list[str]:
        known = {c.id for c in reg.Registry.load(self.sources, self.runner.settings.suites)}
        lines = ["xfail sets updated:"]
        for backend in self.runner.backends:
            xfails = XfailSet.load(run_options.xfail_sets_dir(self.config.option), backend.name)
            report = update(xfails, self.results, known)
            xfails.save()
            lines += report.lines()
        return lines
