"""The same cases through conformance and through torch-mlir's own e2e runner: cases/min and the ratio, per backend.

    .venv/bin/python benchmarks/peer.py [--checkout /work/ext/torch-mlir] [--sample 100] [--seed 0]
        [--backend tosa,linalg,stablehlo] [--repeat 3] [--verdicts FILE] [--json FILE]
    .venv/bin/python benchmarks/peer.py --cases DIR|MODULE ...   # any case source (the peer runs torch-mlir's only)

The case set: `--sample` tests of the checkout's e2e registry, chosen at
random with `--seed` among those no chosen backend's CRASHING set holds (the
peer does not run those), or `--tests FILE` (one test name a line), or every
case of `--cases` (then `--sample` of them, chosen alike).

Per repeat and backend, one after the other so both meet the same load (who
goes first alternates between repeats):

  peer   benchmarks/torch_mlir_runner.py: the checkout's own harness (strict
         export, torch-mlir's FX import and lowering, its refbackend JIT),
         one process, from its start (torch import, registry) to its end;
  cold   conformance through nightly's executor, one lane (-j 1), an empty
         compile cache, from the lane's child start to the last result;
  warm   the same again on the cache the cold run filled.

Printed, medians over the repeats: cases/min of each, ratio = ours / peer's
(above 1: conformance is faster), the CPU seconds (user + sys) of each
process tree and their ratio (less sensitive to other users of the machine
than wall time), pass counts, peak RSS (the peer's process;
our lane's child, without the compilers it runs), our stage split (each
stage's share of the cold wall, and the overhead: wall outside every stage
timer), the peer's split, and the load average before and after each run.
The machine may be shared: read every figure with the load beside it.
A target (`tosa@vmvx`) is compared with the peer's run of its backend.
`--verdicts FILE` writes each pair's verdict (status, stage, code, op) of the
first cold run, sorted, for diffing two versions of conformance.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
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
from conformance.settings import DEFAULT_BATCH, DEFAULT_RERUNS  # noqa: E402

RUNNER = Path(__file__).resolve().parent / "torch_mlir_runner.py"
OURS = Path(__file__).resolve().parent / "conformance_runner.py"
THIS_TREE = Path(__file__).resolve().parent.parent
PEER_BACKENDS = ("tosa", "linalg", "stablehlo")  # the backends torch-mlir's FX configs have
STAGES = ["eager", "export", "import", "contract", "lower", "compile", "run", "compare"]
PEER_STAGES = ["eager", "export", "decompose", "import+lower", "compile", "load (JIT)"]
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
    report, wall, usage = run_measured(command, out, f"torch-mlir's runner failed on {backend}")
    outcomes = Counter(t["outcome"] for t in report["tests"])
    stages = Counter()
    for t in report["tests"]:
        stages.update(t["stages"])
    return {
        "wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "n": len(report["tests"]), "pass": outcomes["PASS"] + outcomes["XPASS"], "outcomes": dict(outcomes),
        "peak_rss_mb": usage.ru_maxrss / 1024, "setup": report["setup_s"], "stages": dict(stages),
    }  # fmt: skip


def run_ours(tree: Path, case_paths: list[str], ids_file: Path, backend: str, cache: Path, batch: int, reruns: int, scratch: Path) -> dict:
    """conformance (imported from `tree`) through nightly's executor, one lane, in a process of its own."""
    out = scratch / f"ours-{backend}.json"
    command = [sys.executable, str(OURS), "--ids", str(ids_file), "--backend", backend, "--cache-dir", str(cache),
               "--batch-size", str(batch), "--reruns", str(reruns), "--json", str(out), *(f"--cases={c}" for c in case_paths)]  # fmt: skip
    report, wall, usage = run_measured(command, out, f"conformance ({tree}) failed on {backend}", env={**os.environ, "PYTHONPATH": str(tree)})
    results = report["results"]
    stages = Counter()
    for r in results:
        stages.update(r["timings"])
    return {
        "wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "n": len(results), "pass": sum(r["status"] == "pass" for r in results), "peak_rss_mb": report["peak_rss_mb"],
        "stages": dict(stages), "overhead": max(0.0, wall - sum(stages.values())) / wall,
        "verdicts": sorted("\t".join(str(r[k]) for k in ("case", "status", "stage", "code", "op")) for r in results),
    }  # fmt: skip


def per_min(n: int, wall: float) -> float:
    return n / wall * 60


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", type=Path, default=Path("/work/ext/torch-mlir"), help="a torch-mlir checkout (the peer and the default cases)")
    parser.add_argument("--sample", type=int, default=100, help="tests chosen at random (default 100)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tests", type=Path, help="a file of torch-mlir test names, one a line, instead of --sample")
    parser.add_argument("--cases", action="append", help="any case source instead (repeatable); the peer runs only torch-mlir's")
    parser.add_argument("--backend", default=",".join(PEER_BACKENDS), help="comma-separated (default tosa,linalg,stablehlo)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH)
    parser.add_argument("--reruns", type=int, default=DEFAULT_RERUNS, help=f"as nightly's --reruns (default {DEFAULT_RERUNS})")
    parser.add_argument("--before", type=Path, help="another conformance tree (e.g. a checkout of main) run beside this one, as 'before'")
    parser.add_argument("--no-peer", action="store_true", help="conformance only")
    parser.add_argument("--no-warm", action="store_true", help="no warm re-run")
    parser.add_argument("--verdicts", type=Path, help="write each pair's verdict of each version's first cold run here (FILE.before too with --before)")
    parser.add_argument("--json", type=Path, help="write every run's figures here")
    args = parser.parse_args()
    args.checkout = args.checkout.resolve()
    args.backends = [b for b in args.backend.split(",") if b]
    before = load()
    print(f"load average before: {before} (a shared machine with {os.cpu_count()} cores: read the figures with it)", file=sys.stderr)

    case_ids, names = choose(args)
    case_paths = [str(c) for c in args.cases] if args.cases else [f"torch-mlir-e2e:{args.checkout}"]
    peer = bool(names) and not args.no_peer
    versions = {"before": args.before.resolve(), "ours": THIS_TREE} if args.before else {"ours": THIS_TREE}
    print(f"{len(case_ids)} cases x {args.backends}, repeat {args.repeat}, batch {args.batch_size}, "
          f"conformance {', '.join(f'{k} {v}' for k, v in versions.items())}"
          f"{'' if peer else ' (no peer: not torch-mlir cases)' if not names else ' (no peer)'}", file=sys.stderr)  # fmt: skip

    runs: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))  # backend -> kind -> figures per repeat
    verdicts: dict[str, list[str]] = defaultdict(list)
    peer_runs: dict[tuple[int, str], dict] = {}  # (repeat, the peer's backend) -> its figures
    with tempfile.TemporaryDirectory(prefix="conformance-peer-") as scratch_dir:
        scratch = Path(scratch_dir)
        names_file, ids_file = scratch / "tests.txt", scratch / "ids.txt"
        names_file.write_text("\n".join(names) + "\n")
        ids_file.write_text("\n".join(case_ids) + "\n")
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
                        line = f"peer {per_min(figures['n'], figures['wall']):.0f}/min ({figures['cpu']:.0f} CPU-s)"
                    else:
                        with tempfile.TemporaryDirectory(prefix="cache-", dir=scratch) as cache:
                            ours = (versions[kind], case_paths, ids_file, backend, Path(cache), args.batch_size, args.reruns, scratch)
                            cold = run_ours(*ours)
                            cold["load"] = (load_before, load())
                            runs[backend][f"{kind} cold"].append(cold)
                            if attempt == 0:
                                verdicts[kind] += [f"{backend}\t{v}" for v in cold["verdicts"]]
                            line = f"{kind} cold {per_min(cold['n'], cold['wall']):.0f}/min ({cold['cpu']:.0f} CPU-s)"
                            if not args.no_warm:
                                warm = run_ours(*ours)
                                warm["load"] = (cold["load"][1], load())
                                runs[backend][f"{kind} warm"].append(warm)
                                line += f", warm {per_min(warm['n'], warm['wall']):.0f}/min ({warm['cpu']:.0f} CPU-s)"
                    print(f"  #{attempt + 1} {backend} {line} (load {load_before} -> {load()})", file=sys.stderr, flush=True)

    after = load()
    report(args, runs, list(versions), len(case_ids), before, after)
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


def report(args, runs, versions: list[str], count: int, before: str, after: str) -> None:
    def median(backend: str, kind: str, key) -> float | None:
        values = [key(f) for f in runs[backend].get(kind, [])]
        return statistics.median(values) if values else None

    def rate(f):
        return per_min(f["n"], f["wall"])

    def show(value, fmt="{:.0f}"):
        return "-" if value is None else fmt.format(value)

    rows = []
    for backend in args.backends:
        peer = median(backend, "peer", rate)
        peer_cpu = median(backend, "peer", lambda f: f["cpu"])
        for version in versions:
            cold, warm = median(backend, f"{version} cold", rate), median(backend, f"{version} warm", rate)
            cold_cpu = median(backend, f"{version} cold", lambda f: f["cpu"])
            rows.append([
                backend, version, show(peer), show(cold), show(cold / peer if peer and cold else None, "{:.2f}x"),
                show(peer_cpu), show(cold_cpu), show(peer_cpu / cold_cpu if peer_cpu and cold_cpu else None, "{:.2f}x"),
                show(warm), show(warm / peer if peer and warm else None, "{:.1f}x"), show(warm / cold if warm and cold else None, "{:.1f}x"),
                show(median(backend, "peer", lambda f: f["pass"])), show(median(backend, f"{version} cold", lambda f: f["pass"])),
                show(median(backend, "peer", lambda f: f["peak_rss_mb"])),
                show(median(backend, f"{version} cold", lambda f: max(f["peak_rss_mb"], 0))),
                show(median(backend, f"{version} cold", lambda f: 100 * f["overhead"]), "{:.1f}%"),
                show(median(backend, f"{version} warm", lambda f: 100 * f["overhead"]), "{:.1f}%"),
            ])  # fmt: skip
    print(f"\n{count} cases, medians of {args.repeat}; load average {before} before, {after} after "
          f"(a shared machine with {os.cpu_count()} cores: every figure is read with the load)")  # fmt: skip
    print(tabulate(rows, headers=[
        "backend", "conformance", "peer/min", "cold/min", "cold ratio", "CPU-s peer", "cold", "CPU ratio", "warm/min", "warm ratio", "warm/cold",
        "pass peer", "pass ours", "RSS MB peer", "ours", "overhead cold", "warm",
    ]))  # fmt: skip

    split = []
    for backend in args.backends:
        for version in versions:
            cold = runs[backend].get(f"{version} cold")
            if cold:
                shares = [statistics.median(f["stages"].get(s, 0.0) / f["wall"] for f in cold) for s in STAGES]
                wall = statistics.median(f["wall"] for f in cold)
                split.append([f"{backend} {version} cold", f"{wall:.0f}", *(f"{100 * s:.0f}" for s in shares), ""])
        peer = runs[backend].get("peer")
        if peer:
            wall = statistics.median(f["wall"] for f in peer)
            shares = {s: statistics.median(f["stages"].get(s, 0.0) / f["wall"] for f in peer) for s in PEER_STAGES}
            setup = statistics.median(f["setup"] / f["wall"] for f in peer)
            peer_row = [f"{k} {100 * v:.0f}" for k, v in shares.items()]
            split.append([f"{backend} peer", f"{wall:.0f}", *[""] * len(STAGES), f"setup {100 * setup:.0f}, " + ", ".join(peer_row)])
    print()
    print(tabulate(split, headers=["stage split (% of wall)", "wall s", *STAGES, "the peer's"]))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    sys.exit(main())
