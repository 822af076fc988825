"""report.html: rendered by a real headless Chromium, then its DOM checked.

A small but real run (Result objects, the summary built by build_summary, the
changes by diff.changes) is rendered to a page; Chromium loads it from a file
with networking off, runs its script and dumps the DOM. The checks: the matrix
has the right cells of each outcome, the counts and pass rates shown are the
ones computed here from the results, the trend chart has one line per backend,
tool output with markup in it is shown as text and never runs, and the page
refers to nothing outside itself. A screenshot is taken too (for a human).
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from collections import Counter
from html.parser import HTMLParser
from urllib.parse import quote

import pytest

from conformance.report import html as report_html
from conformance.report.diff import changes
from conformance.report.html.style import CODE_STYLE
from conformance.report.summary import build_summary
from conformance.result import Result
from tests.browser import Browser, browser_command, chromium

BACKENDS = ["alpha", "beta", "gamma"]
PAYLOAD = (
    "<script>window.__pwned = 1</script> <b>bold</b> "
    '<img src=x onerror="document.documentElement.dataset.pwned=1">'
    "</script><script>document.documentElement.dataset.pwned=2</script>"
)
XSS_EXPLANATION = f"output 0 differs: {PAYLOAD}"
NON_ASCII = "killed by SIGSEGV \u2014 na\u00efve \u2713 \u2028 line"  # the page is ASCII, the text is not
ODD_CASE = 'shape.view"<i>odd</i>&amp;'  # markup and quotes in a case id, as an attribute and as text

CASES = {
    "math.add_f32": {"kind": "op", "family": "math", "ops": ["aten.add"], "tags": ["op"]},
    "math.mul_i32": {"kind": "op", "family": "math", "ops": ["aten.mul"], "tags": ["op"]},
    "math.cumsum": {"kind": "op", "family": "math", "ops": ["aten.cumsum"], "tags": ["op"]},
    "shape.permute": {"kind": "op", "family": "shape", "ops": ["aten.permute"], "tags": []},
    ODD_CASE: {"kind": "op", "family": "shape", "ops": ["aten.view"], "tags": []},
    "models.tiny_mlp": {"kind": "model", "family": "models", "ops": ["aten.addmm", "aten.relu"], "tags": ["model"]},
    # "orphan.case" has no entry: the page falls back to the "unknown" family.
}


def fail(case, backend, code, stage, op, explanation, verdict=None):
    return Result(case, backend, "fail", stage=stage, code=code, op=op, explanation=explanation,
                  details="a long tool output " * 50, timings={"export": 0.1, stage: 0.2}, verdict=verdict)


def ok(case, backend, verdict="PASS"):
    return Result(case, backend, "pass", timings={"export": 0.1, "compile": 0.5, "run": 0.05}, verdict=verdict)


def current_results() -> list[Result]:
    return [
        ok("math.add_f32", "alpha"), ok("math.add_f32", "beta"), ok("math.add_f32", "gamma"),
        ok("math.mul_i32", "alpha"),
        fail("math.mul_i32", "beta", "UNSUPPORTED_OP", "lower", "aten.mul", "failed to legalize 'torch.aten.mul'", "XFAIL"),
        ok("math.mul_i32", "gamma", "XPASS"),
        ok("math.cumsum", "alpha"),
        fail("math.cumsum", "beta", "NUMERIC_MISMATCH", "compare", "aten.cumsum", XSS_EXPLANATION, "FAIL"),
        fail("math.cumsum", "gamma", "UNSUPPORTED_OP", "lower", "aten.cumsum", "failed to legalize 'torch.aten.cumsum'", "CHANGED"),
        ok("shape.permute", "alpha"), ok("shape.permute", "beta"),
        Result("shape.permute", "gamma", "skip", explanation="not applicable: <dynamic> shapes", verdict="SKIP"),
        ok(ODD_CASE, "alpha"),
        fail(ODD_CASE, "beta", "COMPILER_ERROR", "compile", None, "iree-compile: error & <unknown>"),
        ok(ODD_CASE, "gamma"),
        ok("models.tiny_mlp", "alpha"),
        fail("models.tiny_mlp", "beta", "CRASH", "run", None, NON_ASCII),
        # gamma did not run models.tiny_mlp: a "not run" cell
        ok("orphan.case", "alpha"),
        Result("orphan.case", "beta", "skip", explanation="not applicable"),
        fail("orphan.case", "gamma", "UNKNOWN", "compile", None, "something nobody parses"),
    ]


def baseline_results() -> list[Result]:
    base = {r.key: r for r in current_results()}
    base[("math.cumsum", "beta")] = ok("math.cumsum", "beta")  # now fails: a regression carrying the payload
    base[("math.add_f32", "gamma")] = fail("math.add_f32", "gamma", "UNSUPPORTED_OP", "lower", "aten.add", "was failing")
    base[("math.cumsum", "gamma")] = fail("math.cumsum", "gamma", "COMPILER_ERROR", "compile", "aten.cumsum", "was different")
    return list(base.values())


HISTORY = [
    {"report": "2026-10-01", "started": "2026-10-01T02:00:00Z", "pass_rate": {"alpha": 0.9, "beta": 0.4, "gamma": None}},
    {"report": "2026-10-02", "started": "2026-10-02T02:00:00Z", "pass_rate": {"alpha": 0.95, "beta": 0.5, "gamma": 0.6}},
    {"report": "2026-10-03", "started": "2026-10-03T02:00:00Z", "pass_rate": {"alpha": 1.0, "beta": 0.45, "gamma": 0.7}},
]
RUN = {
    "started": "2026-10-04T02:00:00Z", "finished": "2026-10-04T02:10:00Z", "wall_seconds": 600.0,
    "backends": BACKENDS, "shards": [], "settings": {"jobs": 2},
    "toolchain": {"torch": "2.13.0", "iree-base-compiler": "3.13.0", "python": "3.11"},
    "machine": {"hostname": "ci", "platform": "Linux", "processor": "x86_64", "cpus": 2, "memory_gb": 8.0},
}


def make_page() -> tuple[dict, list[Result], str]:
    results = current_results()
    summary = build_summary(results, RUN, CASES, changes(results, baseline_results(), "2026-10-03"), [dict(h) for h in HISTORY])
    summary["history"].append(
        {"report": "2026-10-04", "started": RUN["started"], "pass_rate": {b: s["pass_rate"] for b, s in summary["backends"].items()}}
    )
    summary["sections"] = [{"title": "Custom-op audit", "markdown": "-", "html": '<p id="audit-body">2 ops audited</p>'}]
    summary = json.loads(json.dumps(summary))  # as build.py writes and reads it
    return summary, results, report_html.render(summary, results, CASES)


# ---------------------------------------------------------------- a small DOM from the dumped HTML

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Node:
    def __init__(self, tag, attrs, parent=None):
        self.tag, self.attrs, self.parent, self.children = tag, dict(attrs), parent, []

    @property
    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self):
        for c in self.children:
            if isinstance(c, Node):
                yield c
                yield from c.iter()

    def find_all(self, tag=None, cls=None, **attrs):
        return [
            n for n in self.iter()
            if (tag is None or n.tag == tag) and (cls is None or cls in n.classes)
            and all(n.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())
        ]

    def find(self, tag=None, cls=None, **attrs):
        found = self.find_all(tag, cls, **attrs)
        assert found, f"no <{tag} class={cls} {attrs}> in the page"
        return found[0]


class TreeBuilder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = self.current = Node("#document", {})

    def handle_starttag(self, tag, attrs):
        node = Node(tag, attrs, self.current)
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_startendtag(self, tag, attrs):
        self.current.children.append(Node(tag, attrs, self.current))

    def handle_endtag(self, tag):
        node = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.current = node.parent

    def handle_data(self, data):
        self.current.children.append(data)


def parse(text: str) -> Node:
    builder = TreeBuilder()
    builder.feed(text)
    return builder.root


# ---------------------------------------------------------------- Chromium

@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """The page, its DOM after scripts ran (plain and opened at the payload's cell), and a screenshot."""
    binary = chromium()
    if binary is None:
        pytest.skip(
            "Chromium is not installed: install it with `apt-get install -y chromium` (Debian/Ubuntu, as root) "
            "or run scripts/install-browser; set CONFORMANCE_CHROMIUM to use another Chromium binary"
        )
    out = tmp_path_factory.mktemp("report")
    summary, results, page = make_page()
    path = out / "report.html"
    path.write_text(page, encoding="utf-8")
    url = path.as_uri()
    anchored = f"{url}#backend=beta&outcome=f&cell={quote('math.cumsum', safe='')}|beta"
    jobs = {
        "dom": browser_command(binary, tempfile.mkdtemp(dir=out), "--dump-dom", url),
        "cell": browser_command(binary, tempfile.mkdtemp(dir=out), "--dump-dom", anchored),
        "shot": browser_command(binary, tempfile.mkdtemp(dir=out), f"--screenshot={out / 'report.png'}", "--window-size=1400,2000", url),
    }
    procs = {k: subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for k, cmd in jobs.items()}
    outputs = {}
    for name, proc in procs.items():
        try:
            stdout, stderr = proc.communicate(timeout=90)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
        assert proc.returncode == 0, f"chromium ({name}) failed: {stderr[-2000:]}"
        outputs[name] = stdout
    return {
        "summary": summary, "results": results, "page": page, "dir": out,
        "dom": outputs["dom"], "tree": parse(outputs["dom"]), "cell": parse(outputs["cell"]),
        "screenshot": out / "report.png",
    }


def expected_rate(results, backend) -> str:
    c = Counter(r.status for r in results if r.backend == backend)
    return f"{100 * c['pass'] / (c['pass'] + c['fail']):.1f}%"


def test_the_script_ran(rendered):
    root = rendered["tree"]
    assert root.find("html").attrs.get("data-ready") == "1"
    assert rendered["tree"].find(id="f-count").text() == "7 cases"


def test_matrix_has_one_cell_per_case_and_backend_coloured_by_outcome(rendered):
    results = rendered["results"]
    table = rendered["tree"].find("table", id="matrix-table")
    rows = [tr for tr in table.find_all("tr") if "data-i" in tr.attrs]
    cases = {r.case for r in results}
    assert len(rows) == len(cases)
    assert {tr.find("th").text() for tr in rows} == cases  # the odd case id shows as text
    cells = [td for tr in rows for td in tr.find_all("td")]
    assert len(cells) == len(cases) * len(BACKENDS)
    status = Counter(r.status for r in results)
    seen = Counter(next(c for c in ("p", "f", "s", "na") if c in td.classes) for td in cells)
    assert seen == {"p": status["pass"], "f": status["fail"], "s": status["skip"], "na": len(cases) * len(BACKENDS) - len(results)}

    # fail cells by code: each code's class and abbreviation; verdicts as classes
    by_code = Counter(r.code for r in results if r.failed)
    legend = {span.text(): span for span in table.parent.parent.find_all("span", cls="lg")}
    for code, n in by_code.items():
        abbr = CODE_STYLE[code][0]
        klass = (legend[abbr].classes - {"lg"}).pop()
        assert sum(klass in td.classes and td.text() == abbr for td in cells) == n, code
    verdicts = Counter(r.verdict for r in results)
    for verdict, klass in (("XFAIL", "vx"), ("FAIL", "vf"), ("CHANGED", "vc"), ("XPASS", "vp")):
        assert sum(klass in td.classes for td in cells) == verdicts[verdict], verdict
    # changes since the baseline are marked on their cells
    assert sum("nf" in td.classes for td in cells) == 1
    assert sum("np" in td.classes for td in cells) == 1
    assert sum("nc" in td.classes for td in cells) == 1
    # the family that is missing from the case snapshot falls back to "unknown"
    assert "unknown" in [tr.find("th").text().split()[0] for tr in table.find_all("tr", cls="fh")]


def test_counts_and_pass_rates_shown_are_right(rendered):
    results, root = rendered["results"], rendered["tree"]
    table = root.find("table", id="backend-table")
    for backend in BACKENDS:
        row = table.find("tr", data_backend=backend)
        status = Counter(r.status for r in results if r.backend == backend)
        shown = {td.attrs["data-k"]: td.text() for td in row.find_all("td") if "data-k" in td.attrs}
        assert shown["total"] == str(sum(status.values()))
        assert (shown["pass"], shown["fail"], shown["skip"]) == tuple(str(status[s]) for s in ("pass", "fail", "skip"))
        assert shown["pass_rate"] == expected_rate(results, backend)
        card = root.find("div", cls="card", data_backend=backend)
        assert card.find(cls="card-rate").text() == expected_rate(results, backend)
    # per family: pass/ran on each backend
    fam = root.find("table", id="family-table").find("tr", data_family="math")
    assert [td.text().split()[0] for td in fam.find_all("td")[1:]] == ["3", "3/3", "1/3", "2/3"]
    # changes since the baseline
    assert len(root.find("table", id="newly-failing").find("tbody").find_all("tr")) == 1
    assert len(root.find("table", id="newly-passing").find("tbody").find_all("tr")) == 1
    assert len(root.find("table", id="changed").find("tbody").find_all("tr")) == 1
    # root causes: one group per (backend, code, op), the total is every failure
    groups = root.find("table", id="root-cause-table").find("tbody").find_all("tr")
    assert len(groups) == len(rendered["summary"]["root_causes"]) == 6
    assert NON_ASCII in [td.text() for td in root.find("table", id="root-cause-table").find_all("td")]
    # extra sections are rendered as given, under their title
    assert root.find("p", id="audit-body").text() == "2 ops audited"


def test_tool_output_shows_as_text_and_never_runs(rendered):
    page, dom, root = rendered["page"], rendered["dom"], rendered["tree"]
    # the payload never reaches the page as markup, only escaped
    assert "<script>window.__pwned" not in page and "<b>bold</b>" not in page and "<img src=x" not in page
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in dom
    # nothing from it became an element, and nothing ran
    assert root.find("html").attrs.get("data-pwned") is None
    assert not [s for s in root.find_all("script") if "pwned" in s.text() and s.attrs.get("type") != "application/json"]
    assert not [b for b in root.find_all("b") if b.text() == "bold"]
    assert not root.find_all("img") and not root.find_all("i")
    # it is visible as text where explanations are shown (the regression and the root-cause group)
    texts = [td.text() for td in root.find("table", id="newly-failing").find_all("td")]
    assert XSS_EXPLANATION in texts
    assert XSS_EXPLANATION in [td.text() for td in root.find("table", id="root-cause-table").find_all("td")]
    # the JSON blob cannot close its <script> tag
    blob = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S).group(1)
    assert "<" not in blob and ">" not in blob and "&" not in blob
    assert {XSS_EXPLANATION, NON_ASCII} <= set(json.loads(blob)["strings"])


def test_each_failures_details_are_in_the_page_compressed_not_in_the_json_parsed_on_load(rendered):
    """Diagnostics and rerun commands travel in the details-N blocks (base64: nothing in them can close a tag)."""
    from conformance.report.html.data import DETAILS_EMBEDDED, read_page

    page = rendered["page"]
    blob = json.loads(re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S).group(1))
    assert not [s for s in blob["strings"] if "a long tool output" in s]  # not parsed on load
    blocks = re.findall(r'<script type="application/octet-stream" id="details-(\d+)">([^<]*)</script>', page)
    assert [int(n) for n, _ in blocks] == list(range(len(blocks))) and blocks
    assert all(re.fullmatch(r"[A-Za-z0-9+/=]*", text) for _, text in blocks)
    rows, cells = read_page(page)  # what report.js reads, blocks inflated
    for r in rendered["results"]:
        cell = cells[r.key]
        assert cell.get("details") == (r.details[:DETAILS_EMBEDDED] if r.failed else None), r.key
        assert ("reproduce" in cell) == r.failed and ("timings" in cell) == bool(r.timings), r.key
        assert cell.get("explanation") == (r.explanation or None) and cell.get("code") == (r.code if r.failed else None), r.key
    classes, text = cells[("math.cumsum", "beta")]["look"]  # a failure, FAIL verdict, newly failing, its code's abbreviation
    assert {"f", "vf", "nf"} < set(classes.split()) and text == CODE_STYLE["NUMERIC_MISMATCH"][0]
    assert rows["math.add_f32"]["ops"] == ["aten.add"] and rows["orphan.case"]["family"] == "unknown"


def test_a_cell_link_opens_its_details_as_text_and_filters_apply(rendered):
    root = rendered["cell"]
    panel = root.find("aside", id="panel")
    assert "hidden" not in panel.attrs
    assert (panel.attrs["data-case"], panel.attrs["data-backend"]) == ("math.cumsum", "beta")
    assert root.find("h3", id="panel-title").text() == "math.cumsum"
    facts = dict(zip([dt.text() for dt in panel.find_all("dt")], [dd.text() for dd in panel.find_all("dd")]))
    assert facts["explanation"] == XSS_EXPLANATION
    assert facts["code"] == "NUMERIC_MISMATCH" and facts["stage"] == "compare" and facts["op"] == "aten.cumsum"
    assert facts["outcome"] == "FAIL · xfail verdict FAIL"
    assert facts["since baseline"].startswith("newly failing")
    assert not panel.find_all("b") and not panel.find_all("script") and not panel.find_all("img")
    assert root.find("td", cls="sel").text() == "NUM"
    # #backend=beta&outcome=f: only the cases failing on beta are drawn
    rows = [tr for tr in root.find("table", id="matrix-table").find_all("tr") if "data-i" in tr.attrs]
    shown = {tr.find("th").text() for tr in rows}
    assert shown == {r.case for r in rendered["results"] if r.backend == "beta" and r.failed}
    assert root.find(id="f-count").text() == f"{len(shown)} of {len({r.case for r in rendered['results']})} cases"


def test_trend_chart_has_one_line_per_backend(rendered):
    svg = rendered["tree"].find("svg", id="trend")
    lines = svg.find_all("path", cls="trend-line")
    assert sorted(p.attrs["data-backend"] for p in lines) == BACKENDS
    history = rendered["summary"]["history"]
    for path in lines:
        points = re.findall(r"[ML][\d.]+ [\d.]+", path.attrs["d"])
        assert len(points) == sum(h["pass_rate"].get(path.attrs["data-backend"]) is not None for h in history)
    assert len(svg.find_all("circle")) == sum(v is not None for h in history for v in h["pass_rate"].values())
    # the other pictures
    assert rendered["tree"].find("svg", id="status-bars").find_all("rect", cls="bar-pass")
    assert rendered["tree"].find("svg", id="stage-bars").find_all("rect")


def test_the_page_is_self_contained(rendered):
    page = rendered["page"]
    assert not re.search(r"""(src|href|action)\s*=\s*["']?\s*(https?:|//)""", page, re.I)
    assert not re.search(r"url\(|@import|<link\b|<iframe\b", page, re.I)
    assert "default-src 'none'" in page  # the CSP forbids any fetch
    assert page.isascii()  # whatever encoding it is written in


def test_screenshot(rendered):
    png = rendered["screenshot"].read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000


@pytest.mark.parametrize("width", [400, 1280])
def test_nothing_sticks_out_sideways_at_phone_and_desktop_width(rendered, width):
    """Every table fits its box but the grids with a column per backend, which scroll in theirs (on a phone)."""
    browser = Browser(chromium(), rendered["dir"])
    try:
        page = browser.open((rendered["dir"] / "report.html").as_uri(), width, height=900, mobile=width < 700)
        grids = ("#matrix-table", "#family-table", "#op-table") if width < 700 else ()
        assert page.sideways_overflow(grids) == []
        shot = page.screenshot(rendered["dir"] / f"report-{width}.png", selector="main")  # the whole page, for a human
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert page.errors == []
    finally:
        browser.close()


def test_renders_without_baseline_history_or_case_snapshot():
    results = current_results()
    summary = build_summary(results, RUN, {}, changes(results, None, None), [])
    page = report_html.render(summary, results, {})
    assert "No baseline" in page and 'id="trend"' in page and page.rstrip().endswith("</html>")
    empty = build_summary([], RUN, {}, changes([], None, None), [])
    assert "<table" in report_html.render(empty, [], {})


def test_the_script_reads_only_fields_the_blob_names():
    """Field names live in html/data.py; the script must not spell one the blob lacks (it would read blanks)."""
    from conformance.report.html.data import KEYS
    from conformance.report.html.page import ASSETS

    script = (ASSETS / "report.js").read_text()
    used = set(re.findall(r"""\b(?:get|has|text|texts)\([^,()]+(?:\([^()]*\))?,\s*"(\w+)"\)""", script))
    assert {"case", "code", "explanation", "details", "reproduce", "history", "timings"} <= used
    assert used <= set(KEYS), used - set(KEYS)
    assert len(set(KEYS.values())) == len(KEYS)  # no two fields share a key
