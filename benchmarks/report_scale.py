"""The report page at scale: three nights of ~100,000 results each, built as the nightly builds them, timed in Chromium.

    .venv/bin/python benchmarks/report_scale.py [--results 100000] [--keep DIR] [--cases-json FILE] [--screenshots DIR] [--no-browser]

Prints the figures a reader of report.html feels: the size of the page (and
of anything beside it), the time build_reports takes for the last night,
and, in headless Chromium (tests/browser.py; Debian's chromium, or
$CONFORMANCE_CHROMIUM), the time from navigation until the page is usable
(the script's ready mark and the first frame after it), the time to open a
failure's details panel and to filter the matrix.

The results are synthetic, drawn from real material so that their sizes and
their repetition are a nightly's:

- case ids, families, ops and tags are the registry's (`conformance list
  --json --suite opinfo --suite onnx-node`: the default cases, PyTorch's OpInfo
  samples, ONNX's node tests), plus torch-mlir e2e ids (`torch-mlir.<Test>`,
  with `.dynamic` variants) made from the registry's ops to fill up to
  --results, since torch-mlir's registry needs a checkout;
- twelve backends, as shipped, with `tosa@cuda:sm_90` and `linalg@cuda:sm_90`
  compiling for a device this machine lacks (COMPILED where their CPU twin
  got through compile); the ONNX suite runs on the onnx-* backends only,
  torch-mlir's on torch, linalg, tosa and stablehlo;
- failures: a pair listed in its backend's shipped xfail set fails as listed
  (stage, code, op, explanation); any other fails at the backend's rate for its
  suite, with a (stage, code, explanation) of that backend's xfail set
  rewritten for the case's own op; diagnostics are tests/corpus's real tool
  output of that code (with the pair's job path and a real traceback), so
  each pair's text is its own, as in results.jsonl;
- timings, exported ops and IREE's compile figures per pair; a few skips,
  flaky pairs and bundles; earlier nights differ from the last by ~1% of
  pairs, so the page has a baseline, changes and history.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import statistics
import sys
import tempfile
import time
import tomllib
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conformance.report_dir import ResultsFile  # noqa: E402
from conformance.report.build import build_reports  # noqa: E402
from conformance.result import Result  # noqa: E402

NIGHTS = ["20261201T020000Z", "20261202T020000Z", "20261203T020000Z"]
CUDA = "cuda:sm_90"
TORCH_PATH = ["eager", "torch", "linalg", "tosa", "stablehlo", "tosa-ref", "tosa-custom"]
ONNX = ["onnx-linalg", "onnx-tosa", "onnx-stablehlo"]
ON_CUDA = {f"tosa@{CUDA}": "tosa", f"linalg@{CUDA}": "linalg"}  # compiled here, run where the GPU is
BACKENDS = [*TORCH_PATH, *ONNX, *ON_CUDA]
SUITE_BACKENDS = {
    "default": BACKENDS,
    "opinfo": BACKENDS,
    "onnx-node": ONNX,
    "torch-mlir-e2e": ["torch", "linalg", "tosa", "stablehlo"],
}
COVERED = {"default", "onnx-node"}  # the suites the shipped xfail sets cover whole: there a pair fails iff it is listed
OPINFO_HARDER = 1.3  # opinfo's samples reach corners the registry does not: more failures than the registry's rate
SKIP_RATE = {"onnx-node": 0.04, "opinfo": 0.01}
FLAKY_RATE = 0.0005
BUNDLE_RATE = 0.02  # failures with a reproducer bundle (a nightly with --artifacts on some shards)
FLIP_RATE = 0.01  # pairs whose outcome differs on an earlier night
STAGES = {
    "eager": ["eager", "run", "compare"],
    "onnx": ["eager", "export", "onnx2torch", "import", "contract", "lower", "cache", "compile", "run", "compare"],
    "iree": ["eager", "export", "import", "contract", "lower", "cache", "compile", "run", "compare"],
    "tosa-ref": ["eager", "export", "import", "contract", "lower", "compile", "run", "compare"],
}
TRACEBACK = """
Traceback (most recent call last):
  File "/work/main/conformance/execution/executor.py", line 266, in _batched_stage
    values = backend.stage_method(stage)([it.value for it in chunk], [it.run for it in chunk])
             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/work/main/conformance/toolchain/{module}.py", line {line}, in {stage}
    {call}
  File "/work/main/conformance/toolchain/tools.py", line 45, in run_tool
    raise ToolError(tool, proc.returncode, "\\n".join(p for p in (proc.stdout, proc.stderr) if p))
"""
TORCH_MLIR_MODULES = [
    "basic", "elementwise", "elementwise_comparison", "reduction", "conv", "matmul", "norm_like", "pooling", "index_select",
    "scatter", "slice_like", "squeeze", "stats", "threshold", "type_conversion", "type_promotion", "reshape_like", "rng",
    "scalar", "padding", "cast", "constant_alloc", "diagonal", "nll_loss", "backprop", "arange", "spectral", "quantized_models",
]  # fmt: skip
VARIANTS = ["basic", "basic", "basic", "static", "dynamic", "int", "float", "keepdim", "negative_dim", "broadcast", "outf32", "noncontiguous"]


# ---------------------------------------------------------------- the cases


def registry_cases(path: Path | None) -> list[dict]:
    """The registry as `conformance list --json --suite opinfo --suite onnx-node` lists it (read from `path` when given)."""
    if path:
        return json.loads(path.read_text())
    from conformance.cli.list_cases import describe
    from conformance.cases.registry import Registry, sources_of
    from conformance.settings import Settings

    settings = Settings(suites=["default", "opinfo", "onnx-node"])
    return [describe(c) for c in Registry.load(sources_of(settings), settings.suites).select()]


def camel(op: str) -> str:
    return "".join(w[:1].upper() + w[1:] for w in re.split(r"[._]", op.split(".", 1)[-1]) if w)


def torch_mlir_cases(ops: list[str], count: int, rng: random.Random) -> list[dict]:
    """Ids shaped as torch-mlir's registry names its tests (`torch-mlir.ElementwiseAddModule_basic`), a third `.dynamic`."""
    out, seen = [], set()
    while len(out) < count:
        op = rng.choice(ops)
        base = f"torch-mlir.{rng.choice(['', '', 'Elementwise', 'Aten'])}{camel(op)}Module_{rng.choice(VARIANTS)}"
        name = base if base not in seen else f"{base}{len(out)}"
        seen.add(name)
        family = rng.choice(TORCH_MLIR_MODULES)
        out.append({"id": name, "kind": "op", "family": family, "ops": [op], "tags": ["op", "torch-mlir-e2e"], "suite": "torch-mlir-e2e"})
        if len(out) < count and rng.random() < 0.34:
            out.append({**out[-1], "id": f"{name}.dynamic"})
    return out


def case_set(registry: list[dict], results: int, rng: random.Random) -> list[dict]:
    """Registry cases, then torch-mlir's, so that their pairs make about `results` (fewer: a sample of the registry)."""
    pairs = sum(len(SUITE_BACKENDS.get(c["suite"], BACKENDS)) for c in registry)
    if pairs >= results:
        keep = rng.sample(registry, max(1, round(len(registry) * results / pairs)))
        return sorted(keep, key=lambda c: c["id"])
    ops = sorted({op for c in registry if c["suite"] == "default" for op in c["ops"] if op.startswith("aten.")})
    extra = (results - pairs) // len(SUITE_BACKENDS["torch-mlir-e2e"])
    return registry + torch_mlir_cases(ops, extra, rng)


# ---------------------------------------------------------------- what each backend says when it fails


def xfail_sets() -> dict[str, dict[str, dict]]:
    return {p.stem: tomllib.loads(p.read_text()) for p in sorted((ROOT / "xfail_sets").glob("*.toml"))}


def corpus() -> dict[str, list[str]]:
    """Real captured tool output per failure code (tests/corpus)."""
    labels = tomllib.loads((ROOT / "tests/corpus/labels.toml").read_text())
    by_code = defaultdict(list)
    for name, label in labels.items():
        by_code[label["code"]].append((ROOT / "tests/corpus" / f"{name}.txt").read_text())
    return by_code


class Failures:
    """A backend's failures: as its xfail set lists them, or one of its kinds rewritten for another op."""

    def __init__(self, default_cases: set[str]):
        self.default = default_cases
        self._rates: dict[str, float] = {}
        self.sets = xfail_sets()
        self.texts = corpus()
        self.kinds = {b: list(entries.values()) for b, entries in self.sets.items()}

    def rate(self, backend: str) -> float:
        """The share of the default registry the backend's xfail set lists: its failure rate where no set says."""
        if backend not in self._rates:
            listed = sum(case in self.default for case in self.sets.get(backend, {}))
            self._rates[backend] = listed / max(1, len(self.default))
        return self._rates[backend]

    def listed(self, backend: str, case: str) -> dict | None:
        return self.sets.get(backend, {}).get(case)

    def drawn(self, backend: str, case: dict, rng: random.Random) -> dict:
        kinds = self.kinds.get(backend) or self.kinds["tosa"]
        entry = dict(rng.choice(kinds))
        op = next(iter(case["ops"]), None)
        if op and entry.get("op") and entry["op"].startswith(("aten.", "onnx.")) and op.split(".")[0] == entry["op"].split(".")[0]:
            entry["explanation"] = entry.get("explanation", "").replace(entry["op"], op)
            entry["op"] = op
        return entry

    def details(self, backend: str, case: str, entry: dict, rng: random.Random) -> str:
        """The tool's text (real output of this code), the pair's job path, a traceback: distinct per pair."""
        texts = self.texts.get(entry.get("code")) or [f"AssertionError: {entry.get('explanation', '')}"]
        job = f"/tmp/conformance-job-{rng.getrandbits(40):010x}/{case}/{backend}"
        text = rng.choice(texts).replace("/work/main/conformance/cases/spec.py", f"{job}/compile-input.mlir")
        stage = entry.get("stage") or "compile"
        tool = {"compile": ("iree", 147, 'run_tool("iree-compile", [*self.compile_command(str(source), str(output))])'),
                "lower": ("mlir", 88, "run_pipeline(module, self.pipeline)"),
                "import": ("importer", 61, "fx.export_and_import(program, func_name=name)")}.get(stage, ("stages", 30, "stage(case_run)"))
        return f"{job}/{stage}-input.mlir:\n{text}\n{TRACEBACK.format(module=tool[0], line=tool[1], stage=stage, call=tool[2])}"[:20_000]


# ---------------------------------------------------------------- one night


def timings(backend: str, stopped_at: str | None, rng: random.Random) -> dict[str, float]:
    kind = "eager" if backend == "eager" else "onnx" if backend.startswith("onnx") else "tosa-ref" if backend == "tosa-ref" else "iree"
    out = {}
    for stage in STAGES[kind]:
        out[stage] = round(rng.lognormvariate(math.log({"compile": 0.6, "export": 0.9, "import": 0.3}.get(stage, 0.01)), 0.9), 6)
        if stage == stopped_at:
            break
    return out


def pair(failures: Failures, case: dict, backend: str, rng: random.Random, flip: bool = False) -> Result:
    """Tonight's Result of (case, backend); `flip` gives the other outcome (an earlier night's)."""
    cid, suite = case["id"], case["suite"]
    twin = ON_CUDA.get(backend, backend)
    listed = failures.listed(twin, cid)
    if suite in COVERED:
        fails = listed is not None
    else:
        fails = rng.random() < min(0.6, failures.rate(twin) * (OPINFO_HARDER if suite == "opinfo" else 1))
    if flip:
        fails = not fails
    extras: dict = {}
    if backend != "eager":
        extras["aten_ops"] = [f"{op}.default" for op in case["ops"] if op.startswith("aten.")]
        extras["export_mode"] = "strict" if suite == "torch-mlir-e2e" else "non-strict"
    if rng.random() < SKIP_RATE.get(suite, 0.002):
        return Result(cid, backend, "skip", explanation=f"not applicable: {backend} takes no {rng.choice(['string', 'sequence', 'complex', 'fp8'])} inputs",
                      verdict="SKIP")
    if not fails and rng.random() < FLAKY_RATE:
        entry = failures.drawn(twin, case, rng)
        return Result(cid, backend, "flaky", explanation=f"its runs disagree: run 1 fail ({entry['code']}), run 2 pass",
                      details=failures.details(backend, cid, entry, rng), timings=timings(backend, None, rng), verdict="FLAKY",
                      extras=extras | {"attempts": [{"status": "fail", "code": entry["code"], "stage": entry.get("stage")}, {"status": "pass"}]})
    if fails:
        entry = listed if listed is not None and not flip else failures.drawn(twin, case, rng)
        stage = entry.get("stage") or "compile"
        if backend in ON_CUDA and stage in ("run", "compare"):
            return compiled_here(cid, backend, rng, extras)
        verdict = "XFAIL" if listed is not None or rng.random() < 0.95 else "FAIL"
        bundle = f"/work/reports/bundles/{cid}/{backend}" if rng.random() < BUNDLE_RATE else None
        return Result(cid, backend, "fail", stage=stage, code=entry["code"], op=entry.get("op"), explanation=entry.get("explanation", ""),
                      details=failures.details(backend, cid, entry, rng), timings=timings(backend, stage, rng), artifacts=bundle,
                      verdict=verdict, extras=extras)
    if backend in ON_CUDA:
        return compiled_here(cid, backend, rng, extras)
    if backend not in ("eager", "torch", "tosa-ref") and not backend.startswith("tosa-c"):
        extras["compile_stats"] = {"dispatches": rng.randint(1, 40), "module_cases": 16 if case["kind"] != "model" else 1,
                                   "seconds": round(rng.lognormvariate(-0.5, 0.6), 3), "vmfb_bytes": rng.randint(12_000, 900_000)}
    return Result(cid, backend, "pass", timings=timings(backend, None, rng), verdict="XPASS" if failures.listed(twin, cid) else "PASS",
                  extras=extras)


def compiled_here(case: str, backend: str, rng: random.Random, extras: dict) -> Result:
    return Result(case, backend, "compiled", timings=timings(backend, "compile", rng), verdict="COMPILED",
                  explanation=f"compiled for {CUDA}; not run: no cuda device (CUDA driver library 'libcuda.so' not available)",
                  extras=extras | {"compile_stats": {"dispatches": rng.randint(1, 40), "module_cases": 16, "seconds": 0.9, "vmfb_bytes": 80_000}})


def registry_default(cases: list[dict]) -> list[dict]:
    return [c for c in cases if c["suite"] == "default"]


def write_nights(output: Path, cases: list[dict], seed: int) -> tuple[Path, float, float, int]:
    """Three report directories under `output`, each built by build_reports; the last one's build time (wall, CPU)."""
    failures = Failures({c["id"] for c in registry_default(cases)})
    snapshot = {c["id"]: {k: c[k] for k in ("kind", "family", "ops", "tags", "suite")} for c in cases}
    suites = sorted({c["suite"] for c in cases} - {"torch-mlir-e2e"})
    settings = {"seed": 0, "suites": suites, "case_paths": ["torch-mlir-e2e:/src/torch-mlir"], "default_cases": True, "reruns": 1}
    pairs = [(c, b) for c in cases for b in SUITE_BACKENDS.get(c["suite"], BACKENDS)]
    built = (0.0, 0.0)
    for n, name in enumerate(NIGHTS):
        directory = output / name
        store = ResultsFile(directory)
        flips = random.Random(seed + 1000 + n)
        for c, b in pairs:
            # The same seed per pair every night: a pair changes only where it flips.
            rng = random.Random(f"{seed}/{c['id']}/{b}")
            store.append(pair(failures, c, b, rng, flip=n < len(NIGHTS) - 1 and flips.random() < FLIP_RATE))
        store.close()
        run = {"started": f"2026-12-0{n + 1}T02:00:00+00:00", "finished": f"2026-12-0{n + 1}T09:41:00+00:00", "wall_seconds": 27660.0,
               "backends": BACKENDS, "shards": [], "settings": settings, "toolchain": {"torch": "2.13.0", "torch-mlir": "20261001",
               "iree-base-compiler": "3.13.0", "iree-base-runtime": "3.13.0", "tosa-tools": "2026.8.0", "python": "3.11.7"},
               "machine": {"hostname": "ci", "platform": "Linux", "processor": "x86_64", "cpus": 2, "memory_gb": 23.5}}
        (directory / "run.json").write_text(json.dumps(run))
        (directory / "cases.json").write_text(json.dumps(snapshot))
        started, cpu = time.perf_counter(), time.process_time()
        build_reports(directory, output / NIGHTS[n - 1] if n else None)
        built = (time.perf_counter() - started, time.process_time() - cpu)
    return output / NIGHTS[-1], built[0], built[1], len(pairs)


# ---------------------------------------------------------------- Chromium


DEBOUNCE = 0.12  # s: report.js waits this long after the last keystroke before filtering


def time_in_chromium(report: Path, workdir: Path, width: int, repeats: int, shots: Path | None) -> dict:
    """Median seconds over `repeats` fresh tabs: navigation to the ready mark and a painted frame; opening a cell; a filter."""
    from tests.browser import Browser, Page, chromium

    binary = chromium()
    if binary is None:
        raise SystemExit("no Chromium: run scripts/install-browser, or set CONFORMANCE_CHROMIUM (or pass --no-browser)")
    browser = Browser(binary, workdir)
    figures = defaultdict(list)
    try:
        for n in range(repeats):
            target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            page = Page(browser, browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"])
            page.call("Runtime.enable")
            page.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 700})
            started = time.perf_counter()
            page.call("Page.navigate", {"url": report.as_uri()})
            page.wait_for("document.documentElement && document.documentElement.dataset.ready === '1'", timeout=120)
            page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
            figures["usable"].append(time.perf_counter() - started)
            if shots and n == 0:
                page.screenshot(shots / f"scale-{width}-top.png")
                page.screenshot(shots / f"scale-{width}-backends.png", selector="#backends")
            # a failure's details panel, from the click to its diagnostics shown: both instants taken in the page
            cell = page.evaluate(
                "(() => { const td = document.querySelector('#matrix-table td.f'); td.scrollIntoView({block: 'center'});"
                " addEventListener('click', () => { window.clickedAt = performance.now(); }, {capture: true, once: true});"
                " const seen = new MutationObserver(() => { if (document.querySelector('#panel-body dd[data-fact=diagnostics]')) {"
                "   seen.disconnect(); requestAnimationFrame(() => { window.shownAt = performance.now(); }); } });"
                " seen.observe(document.getElementById('panel-body'), {childList: true});"
                " const r = td.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"
            )
            for kind in ("mousePressed", "mouseReleased"):
                page.call("Input.dispatchMouseEvent", {"type": kind, "x": cell[0], "y": cell[1], "button": "left", "clickCount": 1})
            page.wait_for("window.shownAt")
            figures["open_cell"].append(page.evaluate("window.shownAt - window.clickedAt") / 1000)
            if shots and n == 0:
                page.screenshot(shots / f"scale-{width}-details.png")
            # the text filter over every row (its first use builds the search text), measured in the page
            took, shown = page.evaluate(
                "new Promise(done => { const f = document.getElementById('f-text'), count = document.getElementById('f-count');"
                " const t0 = performance.now(), seen = new MutationObserver(() => { seen.disconnect();"
                "   requestAnimationFrame(() => done([performance.now() - t0, count.textContent])); });"
                " seen.observe(count, {childList: true, characterData: true, subtree: true});"
                " f.value = 'tosa.cast'; f.dispatchEvent(new Event('input')); })"
            )
            figures["filter"].append(took / 1000 - DEBOUNCE)
            figures["filter_shown"] = [shown]
            if page.errors:
                raise SystemExit(f"script errors in the page: {page.errors}")
            browser.call("Target.closeTarget", {"targetId": target})
    finally:
        browser.close()
    return {k: statistics.median(v) if k != "filter_shown" else v[0] for k, v in figures.items()}


# ---------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=int, default=100_000, help="about this many (case, backend) pairs per night")
    parser.add_argument("--cases-json", type=Path, help="the output of `conformance list --json --suite opinfo --suite onnx-node`")
    parser.add_argument("--keep", type=Path, help="write the nights here (kept) instead of a temporary directory")
    parser.add_argument("--repeats", type=int, default=3, help="page loads timed in Chromium (the median is printed)")
    parser.add_argument("--widths", default="1280,400", help="viewport widths timed in Chromium (desktop, phone)")
    parser.add_argument("--screenshots", type=Path, help="keep screenshots of the page at each width here")
    parser.add_argument("--no-browser", action="store_true", help="build and measure the files only")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    started = time.perf_counter()
    cases = case_set(registry_cases(args.cases_json), args.results, rng)
    listed = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as tmp:
        output = args.keep or Path(tmp)
        output.mkdir(parents=True, exist_ok=True)
        report, wall, cpu, pairs = write_nights(output, cases, args.seed)
        statuses = Counter(json.loads(line)["status"] for line in (report / "results.jsonl").open())
        print(f"{pairs:,} results a night ({', '.join(f'{n:,} {s}' for s, n in statuses.most_common())}), "
              f"{len(cases):,} cases x {len(BACKENDS)} backends, 3 nights (registry listed in {listed:.0f} s)")
        print(f"results.jsonl {(report / 'results.jsonl').stat().st_size / 2**20:,.1f} MB")
        page_files = sorted(p for p in report.iterdir() if p.name.startswith("report") and p.suffix != ".md")
        for p in page_files:
            print(f"{p.name} {p.stat().st_size / 2**20:,.2f} MB")
        print(f"build_reports (last night, baseline and history read) {wall:.1f} s ({cpu:.1f} s CPU)")
        if not args.no_browser:
            if args.screenshots:
                args.screenshots.mkdir(parents=True, exist_ok=True)
            for width in (int(w) for w in args.widths.split(",")):
                t = time_in_chromium(report / "report.html", Path(tmp), width, args.repeats, args.screenshots)
                print(f"Chromium at {width} px, median of {args.repeats}: usable after {t['usable']:.2f} s; "
                      f"a failure's details shown {t['open_cell'] * 1000:.0f} ms after the click; "
                      f"text filter {t['filter'] * 1000:.0f} ms after its {DEBOUNCE * 1000:.0f} ms wait ({t['filter_shown']})")
            if args.screenshots:
                print(f"screenshots in {args.screenshots}")
        if args.keep:
            print(f"kept in {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
