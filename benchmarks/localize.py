"""Compiles and seconds per localization: ResNet-18 and BERT-tiny, each with a real failure on a real toolchain.

    .venv/bin/python benchmarks/localize.py [--pair CASE=BACKEND ...] [--warm]

By default:
  resnet18 on tests/fake_localize_backends.py:TOSA_BROKEN_RELU  (the real tosa backend, torch-mlir's lowering
      and IREE, with a planted bug in ReLU's lowering: a numeric mismatch, localized with the fp64 oracle)
  bert.tiny on tosa  (its real failure: ILLEGAL_TYPE at iree-compile, tosa.gather on i64 x i32)

Each localization starts cold (a compile cache of its own, empty); with --warm it runs again on that cache,
as a second localization of the same failure would. Seconds are wall time on this machine, whatever else
runs on it: the machine's load is printed beside them.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tabulate import tabulate  # noqa: E402

from conformance.settings import Settings  # noqa: E402
from conformance.localize.localizer import localize  # noqa: E402

PAIRS = [f"resnet18={ROOT / 'tests' / 'fake_localize_backends.py'}:TOSA_BROKEN_RELU", "bert.tiny=tosa"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pair", action="append", metavar="CASE=BACKEND", help="a model case and the backend it fails on")
    parser.add_argument("--warm", action="store_true", help="localize each a second time from the compile cache")
    args = parser.parse_args()
    rows = []
    for pair in args.pair or PAIRS:
        case, _, backend = pair.partition("=")
        with tempfile.TemporaryDirectory(prefix="localize-bench-") as scratch:
            settings = Settings(cache_dir=str(Path(scratch) / "cache"))
            for run in ("cold", "warm") if args.warm else ("cold",):
                load = os.getloadavg()[0]
                start = time.monotonic()
                record = localize(case, backend, settings, Path(scratch) / run)
                seconds = time.monotonic() - start
                rows.append([case, backend.rsplit(":", 1)[-1].rsplit("/", 1)[-1], run, record["code"], record["op"],
                             f"{record['index']}/{record['ops']}", record["cuts_run"], record["compiles"], f"{seconds:.0f}",
                             f"{load:.1f}"])
                print(tabulate([rows[-1]], tablefmt="plain"), file=sys.stderr, flush=True)
    print(tabulate(rows, headers=["case", "backend", "cache", "code", "op found", "op / ops", "cuts run", "compiles", "seconds", "load"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
