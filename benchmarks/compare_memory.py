"""Peak memory of comparing one large output with eager's (conformance.compare.compare).

    .venv/bin/python benchmarks/compare_memory.py [--size f16:256M --size f32:64M] [--source DIR]

Each measurement runs in a fresh process: it makes eager's output and the
backend's (equal, or with a few elements off so every check runs to the
end and the explanation is built), then resets the kernel's peak-RSS mark
(/proc/self/clear_refs), compares, and reads the peak (VmHWM). The figure
is what comparing added on top of the two outputs, in MB and as a multiple
of one output's size; wall time beside it, for information (the machine is
shared, so it is noisy). `--source DIR` imports conformance from another
checkout (e.g. the commit before a change) to measure before and after.
A measurement whose worst case (25 times the output) would not fit in the
memory available now is skipped, saying so: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import psutil
from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
DTYPES = {"f16": ("float16", 2), "bf16": ("bfloat16", 2), "f32": ("float32", 4), "f64": ("float64", 8), "i32": ("int32", 4), "i64": ("int64", 8)}
SCENARIOS = ("equal", "off")  # "off": a few elements differ
WORST_CASE = 25  # times the output's size, to decide whether a measurement may run


def parse_size(text: str) -> tuple[str, int]:
    dtype, _, count = text.partition(":")
    if dtype not in DTYPES or not count:
        raise argparse.ArgumentTypeError(f"expected DTYPE:COUNT with DTYPE one of {', '.join(DTYPES)}, e.g. f16:256M; got {text!r}")
    scale = {"K": 2**10, "M": 2**20, "G": 2**30}.get(count[-1].upper(), 1)
    return dtype, int(count.rstrip("KMGkmg")) * scale


def child(source: str, dtype_name: str, count: int, scenario: str) -> dict:
    sys.path.insert(0, source)
    import torch

    from conformance.compare import compare

    dtype = getattr(torch, DTYPES[dtype_name][0])
    if dtype.is_floating_point:
        expected = torch.empty(count, dtype=dtype).uniform_(-1, 1)
    else:
        expected = torch.randint(-1000, 1000, (count,), dtype=dtype)
    actual = expected.clone()
    if scenario == "off":
        actual[:: max(1, count // 7)] += 1
    Path("/proc/self/clear_refs").write_text("5")  # the peak-RSS mark starts again from here
    before = _status("VmRSS")
    start = time.perf_counter()
    mismatch = compare(expected, actual)
    seconds = time.perf_counter() - start
    return {
        "extra_mb": (_status("VmHWM") - before) / 2**20,
        "output_mb": expected.numel() * expected.element_size() / 2**20,
        "seconds": seconds,
        "verdict": mismatch.code if mismatch else "match",
    }


def _status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", action="append", type=parse_size, help="DTYPE:COUNT, e.g. f16:256M (repeatable)")
    parser.add_argument("--scenario", action="append", choices=SCENARIOS)
    parser.add_argument("--source", default=str(ROOT), help="the checkout whose conformance is measured (default: this one)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        dtype_name, count, scenario = args.child
        print(json.dumps(child(args.source, dtype_name, int(count), scenario)))
        return 0

    rows = []
    for dtype_name, count in args.size or [("f16", 256 * 2**20), ("f32", 64 * 2**20)]:
        for scenario in args.scenario or SCENARIOS:
            size = f"{dtype_name}:{count / 2**20:g}M"
            output_bytes = count * DTYPES[dtype_name][1]
            needed, available = (WORST_CASE + 2) * output_bytes, psutil.virtual_memory().available
            if needed > available:
                rows.append([size, scenario, "skipped", f"needs ~{needed / 2**30:.1f} GB, {available / 2**30:.1f} GB available", "", ""])
                continue
            proc = subprocess.run(
                [sys.executable, __file__, "--source", args.source, "--child", dtype_name, str(count), scenario],
                capture_output=True, text=True,
            )
            if proc.returncode != 0:
                rows.append([size, scenario, "error", proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else proc.returncode, "", ""])
                continue
            found = json.loads(proc.stdout.strip().splitlines()[-1])
            rows.append([
                size, scenario, found["verdict"], f"{found['extra_mb']:.0f}",
                f"{found['extra_mb'] / found['output_mb']:.2f}x", f"{found['seconds']:.1f}",
            ])
            print(f"  {size} {scenario}: {rows[-1][3]} MB", file=sys.stderr)
    print(f"conformance from {args.source}")
    print(tabulate(rows, headers=["output", "scenario", "verdict", "peak MB beyond the outputs", "x output size", "wall s"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
