"""report.html in a real headless Chromium at desktop (1280 px) and phone (420 px) width.

Three nights of an output directory are written by hand (results.jsonl,
run.json, cases.json) and each built by build_reports, as the nightly does,
so the last page has a baseline and a history. The page is then opened in
Chromium over the DevTools protocol (tests/browser.py): the checks click
and measure in the page as a reader would, and screenshots of both widths
are kept in the test's directory for a human to look at.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.report_dir import ResultsFile
from conformance.report.build import build_reports
from conformance.result import Result
from tests.browser import Browser, chromium

NIGHTS = ["20261001T020000Z", "20261002T020000Z", "20261003T020000Z"]
SETTINGS = {"seed": 7, "suites": ["default", "opinfo"], "case_paths": ["/src/more_cases"], "default_cases": True}
CASES = {
    "math.add": {"kind": "op", "family": "math", "ops": ["aten.add"], "tags": ["op"], "suite": "default"},
    "math.softmax": {"kind": "op", "family": "math", "ops": ["aten.softmax"], "tags": ["op"], "suite": "default"},
    "math.cumsum": {"kind": "op", "family": "math", "ops": ["aten.cumsum"], "tags": ["op"], "suite": "default"},
    "models.tiny_mlp": {"kind": "model", "family": "models", "ops": ["aten.addmm", "aten.relu"], "tags": ["model"], "suite": "default"},
}
LONG_EXPLANATION = (
    "output 0 differs from eager: max abs error 3.1e-02 at index [3, 17] (expected 0.4121, got 0.4433); "
    "1,024 of 4,096 elements (25.0%) outside atol=1e-05, rtol=1.3e-06; the first differing element is the "
    "cumulative sum's 18th, which suggests the scan is split into tiles summed in another order"
)
DIAGNOSTICS = "iree-compile: error: 'linalg.generic' op mismatched scan tile\n  at loc(\"cumsum\")\nTraceback (most recent call last): ..."
BUNDLE = "/tmp/bundles/math.add/tosa"

# (case, backend) -> outcome per night: "p" pass, or a failure (code, explanation)
PLAN = {
    ("math.add", "eager"): ["p", "p", "p"],
    ("math.add", "tosa"): ["p", "p", ("NUMERIC_MISMATCH", LONG_EXPLANATION)],  # a regression tonight
    ("math.softmax", "eager"): ["p", "p", "p"],
    ("math.softmax", "tosa"): ["p", *[("UNSUPPORTED_OP", "failed to legalize 'torch.aten.softmax.int'")] * 2],
    ("math.cumsum", "eager"): ["p", "p", "p"],
    ("math.cumsum", "tosa"): [("COMPILER_ERROR", "iree-compile failed"), "p", ("COMPILER_ERROR", "iree-compile failed")],
    ("models.tiny_mlp", "eager"): ["p", "p", "p"],
    ("models.tiny_mlp", "tosa"): ["p", "p", "p"],
}
# seconds per stage tonight: distinct totals, so a sort has one right order
TIMINGS = {
    ("math.add", "eager"): {"eager": 0.01, "run": 0.02},
    ("math.add", "tosa"): {"export": 0.3, "lower": 0.2, "run": 1.5},
    ("math.softmax", "eager"): {"eager": 0.02, "run": 0.03},
    ("math.softmax", "tosa"): {"export": 0.4, "lower": 0.1},
    ("math.cumsum", "eager"): {"eager": 0.05, "run": 0.01},
    ("math.cumsum", "tosa"): {"export": 0.2, "lower": 2.5, "compile": 4.0},
    ("models.tiny_mlp", "eager"): {"eager": 0.5, "run": 0.4},
    ("models.tiny_mlp", "tosa"): {"export": 3.0, "lower": 6.0, "compile": 9.5, "run": 0.7},
}


def result(case: str, backend: str, outcome, night: int) -> Result:
    timings = TIMINGS[(case, backend)]
    if outcome == "p":
        return Result(case, backend, "pass", timings=timings, extras={"aten_ops": ["aten.softmax.int"]} if case == "math.softmax" and backend == "tosa" else {})
    code, explanation = outcome
    tonight = night == len(NIGHTS) - 1
    return Result(
        case, backend, "fail", stage="lower", code=code, op=f"aten.{case.split('.')[1]}", explanation=explanation,
        details=f"{DIAGNOSTICS} ({case} on {backend})", timings=timings,
        artifacts=BUNDLE if tonight and (case, backend) == ("math.add", "tosa") else None,
    )


def write_nights(output: Path) -> Path:
    for n, name in enumerate(NIGHTS):
        directory = output / name
        store = ResultsFile(directory)
        for (case, backend), outcomes in PLAN.items():
            store.append(result(case, backend, outcomes[n], n))
        store.close()
        run = {"started": f"2026-10-0{n + 1}T02:00:00+00:00", "backends": ["eager", "tosa"], "shards": [], "settings": SETTINGS,
               "toolchain": {"torch": "2.13.0"}, "machine": {"cpus": 2, "memory_gb": 8.0}, "wall_seconds": 60.0}
        (directory / "run.json").write_text(json.dumps(run))
        (directory / "cases.json").write_text(json.dumps(CASES))
        build_reports(directory, output / NIGHTS[n - 1] if n else None)
    return output / NIGHTS[-1]


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    binary = chromium()
    if binary is None:
        pytest.skip("Chromium is not installed: `apt-get install -y chromium`, or set CONFORMANCE_CHROMIUM")
    workdir = tmp_path_factory.mktemp("browser")
    b = Browser(binary, workdir)
    yield b
    b.close()


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return write_nights(tmp_path_factory.mktemp("reports")) / "report.html"


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    return tmp_path_factory.mktemp("screenshots")


def panel_facts(page) -> dict[str, str]:
    return page.evaluate(
        "Object.fromEntries([...document.querySelectorAll('#panel-body dd')].map(dd => [dd.dataset.fact, dd.textContent]))"
    )


def open_cell(browser, report: Path, case: str, backend: str, width: int):
    page = browser.open(f"{report.as_uri()}#cell={case}|{backend}", width, height=900, mobile=width < 700)
    page.wait_for("!document.getElementById('panel').hidden")
    assert page.evaluate("document.getElementById('panel').dataset.case") == case
    return page


@pytest.mark.parametrize("width", [1280, 420])
def test_a_failures_panel_shows_its_diagnostics_reproduce_command_and_history(browser, report, shots, width):
    page = open_cell(browser, report, "math.softmax", "tosa", width)
    facts = panel_facts(page)
    assert facts["diagnostics"] == f"{DIAGNOSTICS} (math.softmax on tosa)"
    assert facts["reproduce"] == (
        "pytest --backend=tosa --case=math.softmax --cases=/src/more_cases --suite=default --suite=opinfo --seed=7"
    )
    assert "bundle" not in facts  # no bundle was written for this one
    # failing on the 2nd and 3rd nights, passing on the 1st: one flip
    assert facts["history"] == f" failing since {NIGHTS[1]}; 1 flip in 3 reports"
    marks = page.evaluate("[...document.querySelectorAll('#panel-body .hist i')].map(i => i.className + ' ' + i.title)")
    assert marks == [f"hp {NIGHTS[0]}: pass", f"hf {NIGHTS[1]}: fail", f"hf {NIGHTS[2]}: fail"]
    # the panel is on the screen, whole width included
    left, right = page.evaluate("(() => { const r = document.getElementById('panel').getBoundingClientRect(); return [r.left, r.right]; })()")
    assert 0 <= left and right <= width
    page.screenshot(shots / f"panel-{width}.png")
    assert page.errors == []


def test_a_failure_with_a_bundle_links_its_reproduce_script(browser, report):
    page = open_cell(browser, report, "math.add", "tosa", 1280)
    facts = panel_facts(page)
    assert facts["bundle"] == f"sh {BUNDLE}/reproduce.sh open"
    assert page.evaluate("document.querySelector('#panel-body dd[data-fact=bundle] a').href") == f"file://{BUNDLE}/reproduce.sh"
    assert facts["since baseline"].startswith("newly failing")
    assert facts["explanation"] == LONG_EXPLANATION
    # a pair that passes shows no reproduce command
    page = open_cell(browser, report, "math.add", "eager", 1280)
    assert {"reproduce", "diagnostics", "bundle"}.isdisjoint(panel_facts(page))


def test_clicking_a_duration_header_sorts_the_slowest_pairs(browser, report):
    page = browser.open(report.as_uri(), 1280)
    header = "#slowest-table thead th:nth-child(4)"  # total s
    assert page.evaluate(f"document.querySelector('{header}').textContent") == "total s"
    totals = {f"{c} {b}": round(sum(t.values()), 3) for (c, b), t in TIMINGS.items()}

    def shown():
        return page.evaluate(
            "[...document.querySelectorAll('#slowest-table tbody tr')].map(tr => tr.cells[0].textContent + ' ' + tr.cells[1].textContent)"
        )

    assert shown() == sorted(totals, key=lambda k: -totals[k])  # slowest first as rendered
    page.click(header)
    assert shown() == sorted(totals, key=lambda k: totals[k])
    assert page.evaluate(f"document.querySelector('{header}').getAttribute('aria-sort')") == "ascending"
    page.click(header)
    assert shown() == sorted(totals, key=lambda k: -totals[k])
    page.click("#slowest-table thead th:nth-child(1)")  # by case, alphabetically
    assert [s.split()[0] for s in shown()] == sorted(k.split()[0] for k in totals)
    assert page.errors == []


def test_flipping_pairs_and_op_coverage_compare_backends(browser, report):
    page = browser.open(report.as_uri(), 1280)
    flipping = page.evaluate("[...document.querySelectorAll('#flipping-table tbody tr')].map(tr => [...tr.cells].map(td => td.textContent))")
    assert flipping == [["math.cumsum", "tosa", "2", "", NIGHTS[2]]]
    ops = page.evaluate("[...document.querySelectorAll('#op-table tbody tr')].map(tr => [...tr.cells].map(td => td.textContent))")
    assert ["aten.softmax", "1/1", "0/1", "1/2"] in ops  # eager's declared op and tosa's aten.softmax.int: one row
    assert not [row for row in ops if row[0] == "aten.softmax.int"]


def test_at_phone_width_nothing_overflows_and_explanations_stay_readable(browser, report, shots):
    page = browser.open(report.as_uri(), 420, height=900, mobile=True)
    assert page.evaluate("window.innerWidth") == 420
    assert page.evaluate("document.documentElement.scrollWidth") <= 420
    # the regression's explanation: a full-width line of its card, not a sliver beside other columns
    width = page.evaluate("document.querySelector('#newly-failing td.expl').getBoundingClientRect().width")
    assert width >= 300, width
    # wide tables scroll inside their own box, the page does not
    for table in ("backend-table", "op-table", "stage-table", "slowest-table"):
        box = page.evaluate(f"document.getElementById('{table}').parentElement.getBoundingClientRect().right")
        assert box <= 420, table
    page.screenshot(shots / "phone-top.png")
    page.screenshot(shots / "phone-changes.png", selector="#changes")
    page.screenshot(shots / "phone-slowest.png", selector="#slowest")
    desktop = browser.open(report.as_uri(), 1280)
    assert desktop.evaluate("document.documentElement.scrollWidth") <= 1280
    desktop.screenshot(shots / "desktop-changes.png", selector="#changes")
    desktop.screenshot(shots / "desktop-slowest.png", selector="#slowest")
    for name in ("phone-top", "phone-changes", "phone-slowest", "desktop-changes", "desktop-slowest"):
        assert (shots / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert page.errors == [] and desktop.errors == []
