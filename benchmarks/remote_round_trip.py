"""Compare two report directories pair by pair: a merged compile-here-run-there report and a local run.

    python benchmarks/remote_round_trip.py MERGED LOCAL

Prints how many pairs agree on status, stage, code, op and verdict, how many
also on the explanation, and each pair that differs. Exit 1 when a verdict differs.
"""

from __future__ import annotations

import sys
from pathlib import Path

from conformance.report_dir import latest, read_results


def main(merged: str, local: str) -> int:
    a = {r.key: r for r in latest(read_results(Path(merged)))}
    b = {r.key: r for r in latest(read_results(Path(local)))}
    fields = ("status", "stage", "code", "op", "verdict")
    same = [k for k in a.keys() & b.keys() if all(getattr(a[k], f) == getattr(b[k], f) for f in fields)]
    worded = [k for k in same if a[k].explanation == b[k].explanation]
    print(f"{len(a)} pairs merged, {len(b)} local, {len(a.keys() & b.keys())} in both")
    print(f"same status/stage/code/op/verdict: {len(same)}; same explanation too: {len(worded)}")
    for k in sorted(a.keys() ^ b.keys()):
        print(f"  only in {'merged' if k in a else 'local'}: {k}")
    for k in sorted((a.keys() & b.keys()) - set(worded)):
        print(f"  {k[0]}[{k[1]}]")
        for name, r in (("merged", a[k]), ("local", b[k])):
            print(f"    {name}: {r.status} {r.verdict} {r.stage} {r.code} {r.op}: {r.explanation[:300]}")
    return 0 if len(same) == len(a.keys() | b.keys()) else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
