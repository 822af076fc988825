"""Shard balance: the time each shard of the default registry takes, dealt by hash and by measured durations.

    .venv/bin/python benchmarks/shard_balance.py REPORT [--durations EARLIER] [--jitter 0.3] [--shards 2,4,8]

A shard's time is the sum of its cases' times in REPORT (each case: its
pairs' stage timers on REPORT's backends, plus the timeout a TIMEOUT waited
out; see nightly/matrix.py). The cases are the default registry's; those
REPORT lacks count as nothing. Per N: the slowest and the fastest shard when
the cases are dealt by the hash of their id (`--shard I/N`), and when they
are dealt longest first by the times of EARLIER (`--shard I/N --durations
EARLIER`; default REPORT itself, which is the best case: the deal knows the
very times it is judged by). Without a second night to deal by, `--jitter P`
stands in for one: each case's dealing time is off by a random factor
between 1-P and 1+P (seeded), as night-to-night noise would make it.

The night takes as long as its slowest shard: max is the figure that counts.
Child start-up and scheduling are in no stage timer, so real shards take
somewhat longer than these sums, about equally each.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tabulate import tabulate  # noqa: E402

from conformance.cases.registry import Registry, discover  # noqa: E402
from conformance.nightly.matrix import Durations, deal, hash_shard  # noqa: E402
from conformance.report_dir import RUN, read_json  # noqa: E402


def shard_times(shard_of: dict[str, int], seconds: dict[str, float], count: int) -> list[float]:
    times = [0.0] * count
    for case, shard in shard_of.items():
        times[shard - 1] += seconds.get(case, 0.0)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", help="a full nightly report directory: the times shards are judged by")
    parser.add_argument("--durations", help="the earlier report the deal uses (default: REPORT itself)")
    parser.add_argument("--jitter", type=float, default=0.0, help="deal by times off by up to this share (0.3: +-30%%)")
    parser.add_argument("--shards", default="2,3,4,8", help="shard counts (comma-separated)")
    args = parser.parse_args()

    backends = read_json(Path(args.report), RUN)["backends"]
    measured = Durations.load(args.report, backends).seconds
    dealer = Durations.load(args.durations, backends).seconds if args.durations else measured
    noise = random.Random(0)
    dealer = {case: seconds * noise.uniform(1 - args.jitter, 1 + args.jitter) for case, seconds in sorted(dealer.items())}
    cases = [c.id for c in Registry.load(discover())]
    known = sum(1 for c in cases if c in dealer)
    print(f"{len(cases)} cases of the default registry ({known} timed in {args.durations or args.report}, "
          f"jitter {args.jitter:.0%}) x {len(backends)} backends; "
          f"{sum(measured.get(c, 0.0) for c in cases) / 60:.1f} min of stage time in {args.report}")  # fmt: skip

    rows = []
    for count in (int(n) for n in args.shards.split(",")):
        by_hash = shard_times({c: hash_shard(c, count) for c in cases}, measured, count)
        by_time = shard_times(deal(cases, count, dealer), measured, count)
        rows.append([count, *(f"{t / 60:.1f}" for t in (max(by_hash), min(by_hash))), f"{max(by_hash) / min(by_hash):.2f}",
                     *(f"{t / 60:.1f}" for t in (max(by_time), min(by_time))), f"{max(by_time) / min(by_time):.2f}",
                     f"{max(by_hash) / max(by_time):.2f}x"])  # fmt: skip
    print("minutes of stage time per shard:")
    print(tabulate(rows, headers=["N", "hash: slowest", "fastest", "max/min", "durations: slowest", "fastest", "max/min", "slowest shard shorter"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
