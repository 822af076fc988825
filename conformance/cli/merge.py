"""`conformance merge`: combine sharded report directories into one report.

Only a whole set is merged: every shard of one split (I/N for each I, once,
dealt the same way), each finished, no pair in two directories. Anything
else would be a report that looks like the whole matrix and is not, so it is
refused, naming what is missing or doubled. Directories that are not shards
(backends run separately, say) merge as long as no pair is in two of them,
but for one: a pair COMPILED in a run and judged by `conformance
verdicts-from` after it ran elsewhere takes that verdict.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from conformance import run_options
from conformance.cli.common import fail
from conformance.cli.verdicts_from import VERDICTS
from conformance.result import Result
from conformance.taxonomy import Status

NAME = "merge"
HELP = "combine the report directories of shards (--shard I/N) into one report, as an unsharded run would give"


def add_arguments(parser) -> None:
    parser.add_argument("directories", nargs="+", metavar="DIR", help="report directories of the shards")
    parser.add_argument("-o", "--output", help="the merged report directory (default: <output-dir>/<first>-merged)")
    run_options.BASELINE.add_to(parser, help="report to compare with (default: none)")


def merge_runs(runs: list[dict]) -> dict:
    merged = dict(runs[0])
    merged["started"] = min(r["started"] for r in runs)
    finished = [r.get("finished") for r in runs]
    merged["finished"] = max(finished) if all(finished) else None
    # Shards run side by side on separate machines: the night took as long as the slowest.
    merged["wall_seconds"] = max(r.get("wall_seconds") or 0.0 for r in runs)
    merged["shards"] = sorted(s for r in runs for s in r.get("shards", []))
    merged["backends"] = sorted({b for r in runs for b in r["backends"]})
    merged.pop(VERDICTS, None)
    elsewhere = [r[VERDICTS] for r in runs if VERDICTS in r]
    if elsewhere:
        merged["ran_elsewhere"] = elsewhere
    return merged


def check_shards(runs: dict[Path, dict]) -> str | None:
    """Why these runs are not one whole set of shards, or None when they are (or none is a shard).

    Verdicts of pairs run elsewhere (`conformance verdicts-from`) are no shard: they go with any set.
    """
    shards = {d: (run.get("shards") or []) for d, run in runs.items() if VERDICTS not in run}
    if not any(shards.values()):
        return None
    plain = [str(d) for d, s in shards.items() if not s]
    if plain:
        return f"{', '.join(plain)} {'is not a shard' if len(plain) == 1 else 'are not shards'} (no --shard in run.json), the others are"
    labels = {d: s[0] for d, s in shards.items() if len(s) == 1}
    if len(labels) < len(shards):
        merged = next(str(d) for d, s in shards.items() if len(s) > 1)
        return f"{merged} is already a merged report (shards {', '.join(shards[Path(merged)])}); merge the shards themselves"
    counts = {label.split("/")[1] for label in labels.values()}
    if len(counts) > 1:
        return "the shards come from different splits: " + ", ".join(f"{label} ({d})" for d, label in labels.items())
    dealt = {d: runs[d].get("sharding", "hash") for d in labels}
    if len(set(dealt.values())) > 1:
        return "the shards were dealt differently (--durations): " + ", ".join(f"{d}: {how}" for d, how in dealt.items())
    count = int(counts.pop())
    seen = Counter(labels.values())
    doubled = [f"{label} ({', '.join(str(d) for d, other in labels.items() if other == label)})" for label, n in seen.items() if n > 1]
    if doubled:
        return f"shard {' and '.join(doubled)} given twice"
    missing = [f"{i}/{count}" for i in range(1, count + 1) if f"{i}/{count}" not in seen]
    if missing:
        return f"shard {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} missing (have {', '.join(sorted(seen))})"
    unfinished = [f"{labels[d]} ({d})" for d in labels if not runs[d].get("finished")]
    if unfinished:
        return f"shard {', '.join(unfinished)} did not finish: complete it with `conformance nightly --resume DIR` first"
    return None


def ran_elsewhere(a: Result, run_a: dict, b: Result, run_b: dict) -> Result | None:
    """Of two results of one pair, the one to keep when one is a verdict of its run elsewhere: that verdict
    when the other is the pair's COMPILED, else the run's own (a pair FLAKY in its run, one attempt
    COMPILED, stays FLAKY). None when neither is from elsewhere: a pair in two runs is a mistake to refuse."""
    for mine, run_mine, verdict, run_verdict in ((a, run_a, b, run_b), (b, run_b, a, run_a)):
        if VERDICTS not in run_mine and VERDICTS in run_verdict:
            return verdict if mine.status == Status.COMPILED else mine
    return None


def run(args) -> int:
    from conformance.report.build import build_reports
    from conformance.report_dir import CASES, RESULTS, RUN, ResultsFile, has_results, latest, read_json, read_results, write_json

    dirs = [Path(d) for d in args.directories]
    for d in dirs:
        if not has_results(d) or not (d / RUN).exists():
            fail(f"{d} is not a report directory (needs {RESULTS} and {RUN})")
    resolved = [d.resolve() for d in dirs]
    if len(set(resolved)) < len(dirs):
        fail("not merging: a directory is given twice: " + ", ".join(sorted({str(d) for d, r in zip(dirs, resolved) if resolved.count(r) > 1})))
    runs = {d: read_json(d, RUN) for d in dirs}
    problem = check_shards(runs)
    if problem:
        fail(f"not merging: {problem}")
    per_dir = {d: latest(read_results(d)) for d in dirs}
    chosen: dict = {}  # pair -> (directory, Result)
    twice = []
    for d, rs in per_dir.items():
        for r in rs:
            if r.key not in chosen:
                chosen[r.key] = (d, r)
                continue
            other, kept = chosen[r.key]
            winner = ran_elsewhere(kept, runs[other], r, runs[d])
            if winner is None:
                twice.append(f"{r.case}[{r.backend}] in {other} and {d}")
            elif winner is r:
                chosen[r.key] = (d, r)
    if twice:
        fail(f"not merging: {len(twice)} pairs have results in two directories, e.g. {twice[0]}")
    output = Path(args.output) if args.output else dirs[0].parent / f"{dirs[0].name}-merged"
    if has_results(output):
        fail(f"{output} already holds results; choose another --output")
    output.mkdir(parents=True, exist_ok=True)
    results = [r for _, r in chosen.values()]
    store = ResultsFile(output)
    for r in sorted(results, key=lambda r: r.key):
        store.append(r)
    store.close()
    cases: dict = {}
    for d in dirs:
        cases.update(read_json(d, CASES, {}))
    write_json(output, CASES, cases)
    write_json(output, RUN, merge_runs(sorted(runs.values(), key=lambda r: VERDICTS in r)))  # the run itself first: its settings
    baseline = None if args.baseline in (None, "none") else Path(args.baseline)
    build_reports(output, baseline)
    print(f"merged {len(dirs)} report directories ({len(results)} results) into {output}")
    return 0
