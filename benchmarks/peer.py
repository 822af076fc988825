"""The same cases through conformance and through torch-mlir's own e2e runner, timed as a user waits for them, per backend.

    .venv/bin/python benchmarks/peer.py [--checkout /work/ext/torch-mlir] [--sample 150] [--seed 0]
        [--backend tosa,linalg,stablehlo] [--repeat 3] [--verdicts FILE] [--json FILE] [--before TREE]
    .venv/bin/python benchmarks/peer.py --cases DIR|MODULE ...   # any case source (the peer runs torch-mlir's only)

The case set: `--sample` tests of the checkout's e2e registry, chosen at
random with `--seed` among those no chosen backend's CRASHING set holds (the
peer does not run those), or `--tests FILE` (one test name a line), or every
case of `--cases` (then `--sample` of them, chosen alike).

Per repeat and backend, one after the other so all meet the same load (who
goes first alternates between repeats):

  peer        benchmarks/torch_mlir_runner.py: the checkout's own harness (strict
              export, torch-mlir's FX import and lowering, its refbackend JIT),
              one process, from its start (torch import, registry) to its end;
  cold        the whole command a user types, from its start to its exit:
              `conformance nightly --backend B --cases SRC --no-default-cases
              -k IDS -j 1 --no-xfail --cache-dir EMPTY` (the cache starts empty);
  warm        the same command again, on the cache the cold run filled (nothing
              changed: every pair is answered from the verdict store, conformance/warm/,
              whose results count no stage time);
  night:TOOL  the same command on a copy of that cache, as the next night
              with a new release of TOOL (torch-mlir, or IREE's compiler and
              runtime) would run it: $CONFORMANCE_PRETEND_VERSIONS claims the
              new version (toolchain/versions.py), so every key that names the
              tool changes, while the tools that run are the installed ones.
              What a real release costs on top is the work on what it changed
              (IR it lowers differently is compiled again).

Printed, medians over the repeats: wall and CPU seconds (user + sys of the
whole process tree, compilers included: less sensitive to other users of
the machine than wall time) of each kind and their ratio to the peer (above
1: conformance is faster), warm/cold, pass counts, peak RSS (the peer's
process; our lane's child, without the compilers it runs), our stage split
(each stage's share of the wall, and `outside`: wall outside every stage
timer: process starts, planning, re-runs, reports), the peer's split, and
the load average before and after each run. The machine may be shared:
read every figure with the load beside it.
A target (`tosa@vmvx`) is compared with the peer's run of its backend.
`--verdicts FILE` writes each pair's verdict (status, stage, code, op) of the
first cold run, sorted, for diffing two versions of conformance; every
other run's verdicts are checked against it (a difference is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tabulate import tabulate  # noqa: E402

from conformance.cases.registry import Registry, discover  # noqa: E402
from conformance.result import FROM_VERDICT_STORE  # noqa: E402
from conformance.settings import DEFAULT_BATCH, DEFAULT_RERUNS  # noqa: E402

RUNNER = Path(__file__).resolve().parent / "torch_mlir_runner.py"
CONFORMANCE = Path(sys.executable).parent / "conformance"  # the console script of this interpreter's environment
THIS_TREE = Path(__file__).resolve().parent.parent
PEER_BACKENDS = ("tosa", "linalg", "stablehlo")  # the backends torch-mlir's FX configs have
STAGES = ["case", "eager", "export", "import", "contract", "lower", "compile", "run", "compare", "cache"]
# The next nights measured: a new release of one tool, as $CONFORMANCE_PRETEND_VERSIONS claims it.
NIGHTS = {
    "night:torch-mlir": "torch-mlir=next",
    "night:iree": "iree-base-compiler=next,iree-base-runtime=next",
}
PEER_STAGES = ["eager", "export", "decompose", "import+lower", "compile", "load (JIT)"]
# Both sides run as on a user's machine, where Python keeps the bytecode it compiles: a sandbox that sets
# PYTHONDONTWRITEBYTECODE makes every process compile torch-mlir's e2e test modules (and ours) again, ~1 CPU-s.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
PREFIX = "torch-mlir."  # the torch-mlir-e2e source's case ids: PREFIX + test name


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def choose(args) -> tuple[list[str], list[str]]:
    """(case ids, the peer's test names: empty when the cases are not torch-mlir's)."""
    if args.cases:
        ids = sorted(c.id for c in Registry.load(discover(args.cases, default_dir=False)))
        if args.sample and len(ids) > args.sample:
            ids = sorted(random.Random(args.seed).sample(ids, args.sample))
        names = [i.removeprefix(PREFIX) for i in ids if i.startswith(PREFIX)]
        return ids, names if len(names) == len(ids) else []
    if args.tests:
        names = [line.strip() for line in args.tests.read_text().splitlines() if line.strip()]
    else:
        from conformance.cases.sources.torch_mlir_e2e.loading import load as load_registry

        sys.path.insert(0, str(RUNNER.parent))
        from torch_mlir_runner import CONFIGS, expected_sets

        # Every config's, whatever --backend says: one seed is one case set for any subset of backends.
        registered = sorted(t.unique_name for t, _ in load_registry(args.checkout).tests)
        crashing = set().union(*(expected_sets(args.checkout, config)[1] for config, *_ in CONFIGS.values()))
        names = sorted(random.Random(args.seed).sample([n for n in registered if n not in crashing], args.sample))
    return [PREFIX + n for n in names], names


def keyword_for(ids: list[str], case_paths: list[str]) -> str:
    """A -k expression selecting exactly `ids` (-k matches substrings: ids that contain a chosen one are excluded by name)."""
    from conformance.settings import Settings
    from conformance.cases.registry import sources_of

    registry = Registry.load(sources_of(Settings(backends=[], case_paths=case_paths, default_cases=False)))
    expression = " or ".join(ids)
    extra = sorted({c.id for c in registry.select(keyword=expression)} - set(ids))
    if extra:
        expression = f"({expression}) and not ({' or '.join(extra)})"
    chosen = sorted(c.id for c in registry.select(keyword=expression))
    if chosen != sorted(ids):
        raise SystemExit(f"no -k expression selects exactly the {len(ids)} cases: it selects {len(chosen)}")
    return expression


def run_measured(command: list[str], out: Path, failed: str, env: dict | None = None) -> tuple[dict, float, resource.struct_rusage]:
    """Run `command` in a process of its own: the JSON report it writes to `out`, its wall seconds and its
    resource usage (its whole process tree, compilers included); a failure ends the benchmark, quoting its stderr.

    stderr goes to a file, not a pipe: a child that writes more than a pipe holds would block while it is waited for.
    """
    start = time.monotonic()
    with tempfile.TemporaryFile(mode="w+") as stderr:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, text=True, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.monotonic() - start
        if status != 0:
            stderr.seek(0)
            raise SystemExit(f"{failed} (status {status}):\n{stderr.read()[-3000:]}")
    return json.loads(out.read_text()), wall, usage


def run_peer(checkout: Path, backend: str, names_file: Path, scratch: Path) -> dict:
    """torch-mlir's harness in a process of its own: wall from start to end, its peak RSS, per-test outcomes."""
    out = scratch / f"peer-{backend}.json"
    command = [sys.executable, str(RUNNER), "--checkout", str(checkout), "--backend", backend, "--tests", str(names_file), "--json", str(out)]
    report, wall, usage = run_measured(command, out, f"torch-mlir's runner failed on {backend}", env=ENV)
    outcomes = Counter(t["outcome"] for t in report["tests"])
    stages = Counter()
    for t in report["tests"]:
        stages.update(t["stages"])
    return {
        "wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "n": len(report["tests"]), "pass": outcomes["PASS"] + outcomes["XPASS"], "outcomes": dict(outcomes),
        "peak_rss_mb": usage.ru_maxrss / 1024, "setup": report["setup_s"], "stages": dict(stages),
    }  # fmt: skip


def run_ours(tree: Path, case_paths: list[str], keyword: str, backend: str, cache: Path, batch: int, reruns: int, scratch: Path,
             pretend: str | None = None) -> dict:  # fmt: skip
    """`conformance nightly` (imported from `tree`) as a user runs it, in a process of its own, from its start to its exit."""
    reports = Path(tempfile.mkdtemp(prefix="reports-", dir=scratch))
    command = [str(CONFORMANCE), "nightly", "--backend", backend, *(f"--cases={c}" for c in case_paths), "--no-default-cases",
               "-k", keyword, "-j", "1", "--no-xfail", f"--cache-dir={cache}", "--batch-size", str(batch), "--reruns", str(reruns),
               f"--output-dir={reports}", "--baseline", "none"]  # fmt: skip
    env = {**ENV, "PYTHONPATH": str(tree)}
    env.pop("CONFORMANCE_PRETEND_VERSIONS", None)
    if pretend:
        env["CONFORMANCE_PRETEND_VERSIONS"] = pretend
    start = time.monotonic()
    with tempfile.TemporaryFile(mode="w+") as stderr:
        # In the tree's own folder: a conformance before 2026-11-27 started its children with `python -m`, which
        # imports the `conformance` of the working directory, whatever PYTHONPATH says.
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, text=True, env=env, cwd=tree)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.monotonic() - start
        if status != 0:
            stderr.seek(0)
            raise SystemExit(f"conformance ({tree}) failed on {backend} (status {status}):\n{stderr.read()[-3000:]}")
    (report_dir,) = [d for d in reports.iterdir() if d.is_dir()]
    results = [json.loads(line) for line in (report_dir / "results.jsonl").read_text().splitlines() if line.strip()]
    latest = {(r["case"], r["backend"]): r for r in results}  # a pair written twice (localize) counts once
    results = list(latest.values())
    run = json.loads((report_dir / "run.json").read_text())
    shutil.rmtree(reports, ignore_errors=True)
    stored = [bool((r.get("extras") or {}).get(FROM_VERDICT_STORE)) for r in results]
    stages = Counter()
    for r, from_store in zip(results, stored):
        if not from_store:  # answered from the store: its timings are another run's
            stages.update(r.get("timings") or {})
    return {
        "wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "n": len(results), "pass": sum(r["status"] == "pass" for r in results),
        "peak_rss_mb": run.get("peak_rss_mb", 0.0), "stages": dict(stages), "outside": max(0.0, wall - sum(stages.values())),
        "from_store": sum(stored),
        "verdicts": sorted("\t".join(str(r.get(k)) for k in ("case", "status", "stage", "code", "op")) for r in results),
    }  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", type=Path, default=Path("/work/ext/torch-mlir"), help="a torch-mlir checkout (the peer and the default cases)")
    parser.add_argument("--sample", type=int, default=150, help="tests chosen at random (default 150)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tests", type=Path, help="a file of torch-mlir test names, one a line, instead of --sample")
    parser.add_argument("--cases", action="append", help="any case source instead (repeatable); the peer runs only torch-mlir's")
    parser.add_argument("--backend", default=",".join(PEER_BACKENDS), help="comma-separated (default tosa,linalg,stablehlo)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH)
    parser.add_argument("--reruns", type=int, default=DEFAULT_RERUNS, help=f"as nightly's --reruns (default {DEFAULT_RERUNS})")
    parser.add_argument("--before", type=Path, help="another conformance tree (e.g. a checkout of main) run beside this one, as 'before'")
    parser.add_argument("--before-cold-only", action="store_true", help="run --before's tree cold only (its verdicts and cold figures)")
    parser.add_argument("--no-peer", action="store_true", help="conformance only")
    parser.add_argument("--no-warm", action="store_true", help="cold runs only (no warm run, no next night)")
    parser.add_argument("--nights", default="torch-mlir,iree", help="the next nights measured (comma-separated; '' for none)")
    parser.add_argument("--verdicts", type=Path, help="write each pair's verdict of each version's first cold run here (FILE.before too with --before)")
    parser.add_argument("--json", type=Path, help="write every run's figures here")
    args = parser.parse_args()
    args.checkout = args.checkout.resolve()
    args.backends = [b for b in args.backend.split(",") if b]
    before = load()
    print(f"load average before: {before} (a shared machine with {os.cpu_count()} cores: read the figures with it)", file=sys.stderr)

    case_ids, names = choose(args)
    case_paths = [str(c) for c in args.cases] if args.cases else [f"torch-mlir-e2e:{args.checkout}"]
    keyword = keyword_for(case_ids, case_paths)
    peer = bool(names) and not args.no_peer
    versions = {"before": args.before.resolve(), "ours": THIS_TREE} if args.before else {"ours": THIS_TREE}
    nights = [] if args.no_warm else [n for n in NIGHTS if n.split(":")[1] in args.nights.split(",")]
    print(f"{len(case_ids)} cases x {args.backends}, repeat {args.repeat}, batch {args.batch_size}, "
          f"conformance {', '.join(f'{k} {v}' for k, v in versions.items())}"
          f"{'' if peer else ' (no peer: not torch-mlir cases)' if not names else ' (no peer)'}", file=sys.stderr)  # fmt: skip

    runs: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))  # backend -> kind -> figures per repeat
    verdicts: dict[str, list[str]] = defaultdict(list)  # version -> each pair's verdict in its first cold run
    differing: list[str] = []  # runs whose verdicts are not their version's first cold run's
    peer_runs: dict[tuple[int, str], dict] = {}  # (repeat, the peer's backend) -> its figures
    with tempfile.TemporaryDirectory(prefix="conformance-peer-") as scratch_dir:
        scratch = Path(scratch_dir)
        names_file = scratch / "tests.txt"
        names_file.write_text("\n".join(names) + "\n")
        for attempt in range(args.repeat):
            for backend in args.backends:
                base = backend.split("@")[0]  # tosa@vmvx is measured against the peer's tosa
                kinds = (["peer"] if peer and base in PEER_BACKENDS else []) + list(versions)
                shift = attempt % len(kinds)  # who goes first turns with each repeat
                for kind in kinds[shift:] + kinds[:shift]:
                    load_before = load()
                    if kind == "peer":
                        if (attempt, base) not in peer_runs:
                            peer_runs[attempt, base] = run_peer(args.checkout, base, names_file, scratch)
                            peer_runs[attempt, base]["load"] = (load_before, load())
                        figures = peer_runs[attempt, base]
                        runs[backend]["peer"].append(figures)
                        print(f"  #{attempt + 1} {backend} peer {figures['wall']:.1f} s ({figures['cpu']:.1f} CPU-s) "
                              f"(load {load_before} -> {load()})", file=sys.stderr, flush=True)  # fmt: skip
                        continue
                    cache = Path(tempfile.mkdtemp(prefix="cache-", dir=scratch))
                    ours = (versions[kind], case_paths, keyword, backend)
                    rest = (args.batch_size, args.reruns, scratch)
                    whats = ["cold"] if kind == "before" and args.before_cold_only else ["cold", *(["warm"] if not args.no_warm else []), *nights]
                    for what in whats:
                        load_before = load()
                        if what.startswith("night:"):  # each night from the cache the cold run filled, as it was
                            night_cache = Path(tempfile.mkdtemp(prefix="night-", dir=scratch))
                            shutil.copytree(filled, night_cache, dirs_exist_ok=True)
                            figures = run_ours(*ours, night_cache, *rest, pretend=NIGHTS[what])
                            shutil.rmtree(night_cache, ignore_errors=True)
                        else:
                            figures = run_ours(*ours, cache, *rest)
                        if what == "cold":
                            filled = Path(tempfile.mkdtemp(prefix="filled-", dir=scratch))
                            shutil.copytree(cache, filled, dirs_exist_ok=True)
                        figures["load"] = (load_before, load())
                        runs[backend][f"{kind} {what}"].append(figures)
                        mine = [f"{backend}\t{v}" for v in figures["verdicts"]]
                        if attempt == 0 and what == "cold":
                            verdicts[kind] += mine
                        elif sorted(set(mine) - set(verdicts[kind])):
                            differing.append(f"#{attempt + 1} {backend} {kind} {what}: " + "; ".join(sorted(set(mine) - set(verdicts[kind]))[:3]))
                        stored = f", {figures['from_store']} pairs answered from the verdict store" if figures.get("from_store") else ""
                        print(f"  #{attempt + 1} {backend} {kind} {what} {figures['wall']:.1f} s ({figures['cpu']:.1f} CPU-s, "
                              f"outside stages {figures['outside']:.1f} s{stored}) (load {load_before} -> {load()})", file=sys.stderr, flush=True)  # fmt: skip
                    shutil.rmtree(cache, ignore_errors=True)
                    shutil.rmtree(filled, ignore_errors=True)

    after = load()
    report(args, runs, list(versions), ["cold", *(["warm"] if not args.no_warm else []), *nights], len(case_ids), before, after)
    print(f"\nverdicts of every run the same as its version's first cold run: {'yes' if not differing else 'NO'}")
    for line in differing[:20]:
        print(f"  {line}")
    if args.verdicts:
        for kind, lines in verdicts.items():
            path = args.verdicts if kind == "ours" else args.verdicts.with_name(f"{args.verdicts.name}.{kind}")
            path.write_text("\n".join(lines) + "\n")
        if args.before:
            same = verdicts["before"] == verdicts["ours"]
            differ = sorted(set(verdicts["before"]) ^ set(verdicts["ours"]))
            print(f"verdicts before and after: {'identical' if same else f'{len(differ)} lines differ'}")
            for line in differ[:20]:
                print(f"  {'+' if line in verdicts['ours'] else '-'} {line}")
    if args.json:
        args.json.write_text(json.dumps({"cases": case_ids, "load": [before, after], "runs": runs}, indent=1))
    return 0


def report(args, runs, versions: list[str], whats: list[str], count: int, before: str, after: str) -> None:
    def median(backend: str, kind: str, key) -> float | None:
        values = [key(f) for f in runs[backend].get(kind, [])]
        return statistics.median(values) if values else None

    def show(value, fmt="{:.1f}"):
        return "-" if value is None else fmt.format(value)

    def ratio(peer, ours, fmt="{:.2f}x"):
        return show(peer / ours if peer and ours else None, fmt)

    rows = []
    for backend in args.backends:
        peer_wall = median(backend, "peer", lambda f: f["wall"])
        peer_cpu = median(backend, "peer", lambda f: f["cpu"])
        if peer_wall is not None:
            rows.append([backend, "peer", show(peer_wall), show(peer_cpu), "", "", "", show(median(backend, "peer", lambda f: f["pass"]), "{:.0f}"),
                         show(median(backend, "peer", lambda f: f["peak_rss_mb"]), "{:.0f}"), "", ""])  # fmt: skip
        for version in versions:
            cold_wall = median(backend, f"{version} cold", lambda f: f["wall"])
            for what in whats:
                kind = f"{version} {what}"
                wall, cpu = median(backend, kind, lambda f: f["wall"]), median(backend, kind, lambda f: f["cpu"])
                rows.append([
                    backend, kind, show(wall), show(cpu), ratio(peer_wall, wall), ratio(peer_cpu, cpu),
                    "" if what == "cold" else ratio(cold_wall, wall, "{:.1f}x"),
                    show(median(backend, kind, lambda f: f["pass"]), "{:.0f}"), show(median(backend, kind, lambda f: f["peak_rss_mb"]), "{:.0f}"),
                    show(median(backend, kind, lambda f: 100 * f["outside"] / f["wall"]), "{:.0f}%"),
                    " / ".join(f"{a}-{b}" for a, b in (f["load"] for f in runs[backend].get(kind, []))),
                ])  # fmt: skip
    print(f"\n{count} cases, medians of {args.repeat}; load average {before} before, {after} after "
          f"(a shared machine with {os.cpu_count()} cores: every figure is read with the load)")  # fmt: skip
    print(tabulate(rows, headers=["backend", "run", "wall s", "CPU s", "x peer (wall)", "x peer (CPU)", "cold/this (wall)",
                                  "pass", "peak RSS MB", "outside stages", "load before-after"]))  # fmt: skip

    split = []
    for backend in args.backends:
        for version in versions:
            for what in whats:
                figures = runs[backend].get(f"{version} {what}")
                if figures:
                    wall = statistics.median(f["wall"] for f in figures)
                    shares = [statistics.median(f["stages"].get(s, 0.0) / f["wall"] for f in figures) for s in STAGES]
                    outside = statistics.median(f["outside"] / f["wall"] for f in figures)
                    split.append([f"{backend} {version} {what}", f"{wall:.1f}", *(f"{100 * s:.0f}" for s in shares), f"{100 * outside:.0f}", ""])
        peer = runs[backend].get("peer")
        if peer:
            wall = statistics.median(f["wall"] for f in peer)
            shares = {s: statistics.median(f["stages"].get(s, 0.0) / f["wall"] for f in peer) for s in PEER_STAGES}
            setup = statistics.median(f["setup"] / f["wall"] for f in peer)
            peer_row = [f"{k} {100 * v:.0f}" for k, v in shares.items()]
            split.append([f"{backend} peer", f"{wall:.1f}", *[""] * (len(STAGES) + 1), f"setup {100 * setup:.0f}, " + ", ".join(peer_row)])
    print()
    print(tabulate(split, headers=["stage split (% of wall)", "wall s", *STAGES, "outside", "the peer's"]))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    sys.exit(main())
