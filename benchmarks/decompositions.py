"""torch's run_decompositions against toolchain/decompose.py's, case by case: CPU time, and whether the IR is the same.

    .venv/bin/python benchmarks/decompositions.py [-k EXPR] [--suite opinfo] [--limit N]

Each registered case (static shapes, non-strict export) is decomposed with
torch-mlir's table twice, by torch's own code and by `decompose()`, one
after the other in one process, and both are imported with torch-mlir's FX
importer: the torch-dialect modules must be the same text. A case that
fails must fail alike both ways. Prints the CPU time of each, per case.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402
from tabulate import tabulate  # noqa: E402
from torch_mlir.extras.fx_decomp_util import get_decomposition_table  # noqa: E402

from conformance.cases.inputs import make_inputs, make_module  # noqa: E402
from conformance.cases.registry import Registry, discover  # noqa: E402
from conformance.toolchain.decompose import decompose  # noqa: E402
from conformance.toolchain.torch_mlir import import_program  # noqa: E402


def imported(decomposer, program) -> tuple[str, float]:
    """The imported module's text (or the error's), and the CPU seconds the decomposition took."""
    start = time.process_time()
    try:
        decomposed = decomposer(program)
    except Exception as e:  # noqa: BLE001 - a failure must be the same both ways
        return f"{type(e).__name__}: {e}", time.process_time() - start
    seconds = time.process_time() - start
    try:
        return str(import_program(decomposed)), seconds
    except Exception as e:  # noqa: BLE001
        return f"import: {type(e).__name__}: {e}", seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", dest="keyword")
    parser.add_argument("--suite", action="append", default=[])
    parser.add_argument("--limit", type=int, default=0, help="the first N selected cases only")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")

    cases = Registry.load(discover(), ["default", *args.suite]).select(args.keyword)
    if args.limit:
        cases = cases[: args.limit]
    own, remembered, same, different, unexportable = [], [], 0, [], 0
    for case in cases:
        try:
            program = torch.export.export(make_module(case), tuple(make_inputs(case)[0]), strict=False)
        except Exception:  # noqa: BLE001 - not what is measured here
            unexportable += 1
            continue
        ir_own, t_own = imported(lambda p: p.run_decompositions(get_decomposition_table()), program)
        ir_remembered, t_remembered = imported(lambda p: decompose(p, get_decomposition_table()), program)
        own.append(t_own)
        remembered.append(t_remembered)
        if ir_own == ir_remembered:
            same += 1
        else:
            different.append(case.id)
    rows = [
        ["torch's run_decompositions", len(own), statistics.median(own), sum(own)],
        ["decompose() (set-up remembered)", len(remembered), statistics.median(remembered), sum(remembered)],
    ]
    print(tabulate(rows, headers=["decomposition", "cases", "median CPU s", "total CPU s"], floatfmt=".3f"))
    print(f"\n{len(cases)} cases: {same} imported alike, {len(different)} differ, {unexportable} not exportable (left out)")
    for case_id in different:
        print(f"  differs: {case_id}")
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
