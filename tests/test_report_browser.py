"""report.html in a real headless Chromium at desktop (1280 px) and phone (400 and 420 px) width.

Three nights of an output directory are written by hand (results.jsonl,
run.json, cases.json) and each built by build_reports, as the nightly does,
so the last page has a baseline and a history. A second, wide output
directory has what makes a page wide and long: twelve backends with long
names (`linalg@cuda:sm_90`), every failure code, every verdict, compiled,
flaky and skipped pairs, 600 cases. The pages are opened in Chromium over
the DevTools protocol (tests/browser.py): the checks click, scroll and
measure in the page as a reader would, and screenshots of both widths are
kept in the test's directory for a human to look at.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.report_dir import ResultsFile
from conformance.report.build import build_reports
from conformance.result import Result
from conformance.taxonomy import Code
from tests.browser import Browser, chromium

NIGHTS = ["20261001T020000Z", "20261002T020000Z", "20261003T020000Z"]
SETTINGS = {"seed": 7, "suites": ["default", "opinfo"], "case_paths": ["/src/more_cases"], "default_cases": True}
CASES = {
    "math.add": {"kind": "op", "family": "math", "ops": ["aten.add"], "tags": ["op"], "suite": "default"},
    "math.softmax": {"kind": "op", "family": "math", "ops": ["aten.softmax"], "dtypes": ["float32"], "tags": ["op"], "suite": "default"},
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


# The wide output directory: twelve backends, every failure code, 600 cases in 12 families.
WIDE_BACKENDS = ["eager", "torch", "linalg", "tosa", "stablehlo", "tosa-ref", "tosa-custom", "onnx-linalg", "onnx-tosa",
                 "onnx-stablehlo", "tosa@cuda:sm_90", "linalg@cuda:sm_90"]  # fmt: skip
WIDE_FAMILIES = ["activations", "casts", "convolution", "elementwise_binary", "indexing", "linear_algebra", "normalization",
                 "opinfo", "onnx-node", "pooling", "reductions", "torch-mlir.elementwise"]  # fmt: skip
WIDE_STAGES = ["eager", "export", "import", "contract", "lower", "cache", "compile", "run", "compare"]
CODES = list(Code)
VERDICTS = ["XFAIL", "FAIL", "CHANGED", "XFAIL", "XFAIL"]


def wide_case(f: int, n: int) -> str:
    long = n % 17 == 3  # some ids as long as opinfo's and torch-mlir's
    return f"{WIDE_FAMILIES[f]}.{'nn.functional.scaled_dot_product_attention_' if long else ''}case_{n:03d}"


def wide_result(f: int, n: int, b: int, night: int) -> Result:
    case, backend = wide_case(f, n), WIDE_BACKENDS[b]
    timings = {s: 0.01 * ((n + b + i) % 50 + 1) for i, s in enumerate(WIDE_STAGES)}
    k = n * 7 + b * 3 + f + (night if n % 13 == 0 else 0)  # one case in 13 differs between the nights
    if backend == "eager" or k % 4:
        status = "compiled" if "@cuda" in backend else "pass"
        return Result(case, backend, status, timings=timings, verdict=status.upper(),
                      extras={"compile_stats": {"dispatches": k % 30, "module_cases": 1, "seconds": 0.5, "vmfb_bytes": 40_000 + k}})
    if k % 23 == 1:
        return Result(case, backend, "skip", explanation="not applicable: no string inputs", verdict="SKIP")
    if k % 29 == 2:
        return Result(case, backend, "flaky", explanation="its runs disagree: fail, pass", timings=timings, verdict="FLAKY")
    code = CODES[k % len(CODES)]
    return Result(case, backend, "fail", stage="lower", code=code, op=f"aten.op_{k % 40}", explanation=f"{code} on {case} ({backend})",
                  details=f"{DIAGNOSTICS} ({case} on {backend})", timings=timings, verdict=VERDICTS[k % len(VERDICTS)])


def write_wide_nights(output: Path) -> Path:
    cases = {wide_case(f, n): {"kind": "op", "family": WIDE_FAMILIES[f], "ops": [f"aten.op_{n % 40}"], "tags": ["op"], "suite": "default"}
             for f in range(len(WIDE_FAMILIES)) for n in range(50)}
    for night, name in enumerate(NIGHTS[:2]):
        directory = output / name
        store = ResultsFile(directory)
        for f in range(len(WIDE_FAMILIES)):
            for n in range(50):
                for b in range(len(WIDE_BACKENDS)):
                    store.append(wide_result(f, n, b, night))
        store.close()
        run = {"started": f"2026-10-0{night + 1}T02:00:00+00:00", "backends": WIDE_BACKENDS, "shards": [], "settings": SETTINGS,
               "toolchain": {"torch": "2.13.0"}, "machine": {"cpus": 2, "memory_gb": 8.0}, "wall_seconds": 600.0}
        (directory / "run.json").write_text(json.dumps(run))
        (directory / "cases.json").write_text(json.dumps(cases))
        build_reports(directory, output / NIGHTS[0] if night else None)
    return output / NIGHTS[1]


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
def wide(tmp_path_factory):
    return write_wide_nights(tmp_path_factory.mktemp("wide")) / "report.html"


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    return tmp_path_factory.mktemp("screenshots")


GRIDS = ("#matrix-table", "#family-table", "#op-table")  # a column per backend: they scroll sideways in their box


def panel_facts(page) -> dict[str, str]:
    return page.evaluate(
        "Object.fromEntries([...document.querySelectorAll('#panel-body dd')].map(dd => [dd.dataset.fact, dd.textContent]))"
    )


def open_cell(browser, report: Path, case: str, backend: str, width: int):
    page = browser.open(f"{report.as_uri()}#cell={case}|{backend}", width, height=900, mobile=width < 700)
    page.wait_for("!document.getElementById('panel').hidden")
    assert page.evaluate("document.getElementById('panel').dataset.case") == case
    page.wait_for("document.getElementById('panel').dataset.loaded === '1'")  # its details, inflated on demand
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


def test_a_browser_that_cannot_inflate_still_shows_what_the_page_parsed_on_load(browser, report):
    page = browser.open(f"{report.as_uri()}#cell=math.softmax|tosa", 1280, before="delete window.DecompressionStream;")
    page.wait_for("document.getElementById('panel').dataset.loaded === '1'")
    facts = panel_facts(page)
    assert facts["code"] == "UNSUPPORTED_OP" and facts["history"].startswith(" failing since")
    assert facts["details"].startswith("not shown: this browser has no DecompressionStream") and "diagnostics" not in facts
    assert page.errors == []


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
    assert ["aten.softmax", "float32", "1/1", "0/1", "1/2"] in ops  # eager's declared op and tosa's aten.softmax.int: one row
    assert ["aten.cumsum", "-", "1/1", "0/1", "1/2"] in ops  # a case whose cases.json entry names no dtypes
    assert not [row for row in ops if row[0] == "aten.softmax.int"]


def test_at_phone_width_nothing_overflows_and_explanations_stay_readable(browser, report, shots):
    page = browser.open(report.as_uri(), 420, height=900, mobile=True)
    assert page.evaluate("window.innerWidth") == 420
    assert page.evaluate("document.documentElement.scrollWidth") <= 420
    assert page.sideways_overflow(GRIDS) == []
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
    assert desktop.sideways_overflow() == []  # two backends: even the grids fit
    desktop.screenshot(shots / "desktop-changes.png", selector="#changes")
    desktop.screenshot(shots / "desktop-slowest.png", selector="#slowest")
    for name in ("phone-top", "phone-changes", "phone-slowest", "desktop-changes", "desktop-slowest"):
        assert (shots / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert page.errors == [] and desktop.errors == []


@pytest.mark.parametrize("width", [400, 1280])
def test_nothing_sticks_out_sideways_with_twelve_backends(browser, wide, shots, width):
    page = browser.open(wide.as_uri(), width, height=900, mobile=width < 700)
    assert page.evaluate("document.querySelectorAll('#backend-table tbody tr').length") == len(WIDE_BACKENDS)
    assert page.evaluate("document.querySelectorAll('#code-table thead th').length") == 1 + len(CODES)
    assert page.sideways_overflow(GRIDS) == []
    # the grids scroll in their own box, and their first column (case, family, op) stays in view
    for grid in GRIDS:
        box = f"document.querySelector('{grid}').closest('.scroll, .mwrap')"
        if page.evaluate(f"{box}.scrollWidth > {box}.clientWidth"):
            page.evaluate(f"{box}.scrollLeft = {box}.scrollWidth")
            first = page.evaluate(f"document.querySelector('{grid} tbody tr:not(.gap):not(.fh) > :first-child').getBoundingClientRect().left")
            assert abs(first - page.evaluate(f"{box}.getBoundingClientRect().left")) <= 1.5, grid
            page.evaluate(f"{box}.scrollLeft = 0")
    # on a phone the backends' counts are cards: one per backend, its numbers in a grid under its name
    if width < 700:
        card = page.evaluate("(() => { const r = document.querySelector('#backend-table tbody tr').getBoundingClientRect(); return [r.width, r.height]; })()")
        assert card[0] <= width and card[1] < 300, card
    for section in ("backends", "families", "matrix", "slowest"):
        page.screenshot(shots / f"wide-{width}-{section}.png", selector=f"#{section}")
    assert page.errors == []


def drawn(page) -> list[str]:
    return page.evaluate("[...document.querySelectorAll('#matrix-table tbody tr[data-i] th .cid:first-child')].map(e => e.textContent)")


def test_the_matrix_draws_only_the_rows_in_view_and_scrolls_through_all(browser, wide):
    page = browser.open(wide.as_uri(), 1280)
    cases = [wide_case(f, n) for f in range(len(WIDE_FAMILIES)) for n in range(50)]  # matrix order: family, then id
    rows = drawn(page)
    assert 20 < len(rows) < 150 and rows == sorted(cases)[: len(rows)]
    # each drawn row is as high as the script counted it (else the gaps would misplace the rows below)
    heights = page.evaluate("[...document.querySelectorAll('#matrix-table tbody tr:not(.gap)')].map(tr => [tr.className, tr.getBoundingClientRect().height, tr.style.height])")
    assert {(cls, h, f"{h:g}px") for cls, h, _ in heights} == {(cls, h, styled) for cls, h, styled in heights}
    # scrolled to the end, the last case is drawn, at the bottom of the box
    page.evaluate("new Promise(r => { const box = document.querySelector('.mwrap'); box.scrollTop = box.scrollHeight;"
                  " requestAnimationFrame(() => requestAnimationFrame(r)); })")
    rows = drawn(page)
    assert rows[-1] == sorted(cases)[-1] and len(rows) < 150
    bottom = page.evaluate("document.querySelector('#matrix-table tbody tr[data-i]:last-of-type').getBoundingClientRect().bottom")
    assert abs(bottom - page.evaluate("document.querySelector('.mwrap').getBoundingClientRect().bottom")) <= 2
    # a filter draws only what it lets through, and says how many of all
    page.evaluate("(() => { const f = document.getElementById('f-text'); f.value = 'case_013'; f.dispatchEvent(new Event('input')); })()")
    page.wait_for(f"document.getElementById('f-count').textContent === '{len(WIDE_FAMILIES)} of {len(cases)} cases'")
    assert sorted(drawn(page)) == sorted(c for c in cases if "case_013" in c)
    assert page.errors == []


def test_a_link_to_a_cell_far_down_the_matrix_draws_it_in_view_and_opens_it(browser, wide):
    case = wide_case(len(WIDE_FAMILIES) - 1, 47)
    page = open_cell(browser, wide, case, "linalg@cuda:sm_90", 1280)
    facts = panel_facts(page)
    assert facts["outcome"].startswith("COMPILED") and "time" in facts
    cell = page.evaluate("(() => { const td = document.querySelector('#matrix-table td.sel'); const r = td.getBoundingClientRect();"
                         " return [td.parentNode.querySelector('.cid').textContent, td.cellIndex, r.top, r.bottom]; })()")
    box = page.evaluate("(() => { const r = document.querySelector('.mwrap').getBoundingClientRect(); return [r.top, r.bottom]; })()")
    assert cell[:2] == [case, 1 + WIDE_BACKENDS.index("linalg@cuda:sm_90")]
    assert box[0] <= cell[2] and cell[3] <= min(box[1], 900)
    assert page.errors == []
