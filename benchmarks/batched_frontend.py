"""What a batched frontend would save: small op cases through torch's frontend one by one, and as one program.

    .venv/bin/python benchmarks/batched_frontend.py [--batch 16] [--batches 3] [--seed 0] [--repeat 3]

Each batch is `--batch` op cases drawn at random from the default registry
among those that torch.export takes with static sizes. They go through the
frontends alone, one case after the other, and together: one module whose
forward calls each case's module on its own inputs, exported once. Two
frontends, each timed on the same batch, warm, median of `--repeat`:

  torch-mlir   torch.export, torch-mlir's decompositions (decompose()), FX import
  onnx         torch.export, torch.onnx's exporter (torch_to_onnx)

The joint program is not split back into one per case here: these are the
costs a batched frontend starts from. The torch frontend's export stage does
export a batch's static cases together and split the program back
(conformance/toolchain/export_together.py), and the decompositions of the
import and of torch.onnx's exporter decompose the joint program once and
split it too; the FX import and the rest of the ONNX export stay one case
at a time. A batch whose
joint program a frontend refuses is printed as such (one member can refuse
it all: a batched frontend falls back to one by one there).
"""

from __future__ import annotations

import argparse
import random
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
from conformance.toolchain.decompose import decompose, settle  # noqa: E402
from conformance.toolchain.export_together import Together  # noqa: E402
from conformance.toolchain.onnx import torch_to_onnx  # noqa: E402
from conformance.toolchain.torch_mlir import import_program  # noqa: E402


def export(module, inputs):
    with torch.no_grad():
        return torch.export.export(module, inputs, strict=False)


FRONTENDS = {
    "torch-mlir": lambda program: import_program(decompose(program, get_decomposition_table())),
    "onnx": torch_to_onnx,
}


def static_batches(size: int, count: int, seed: int) -> list[list[tuple[str, torch.nn.Module, tuple]]]:
    """`count` batches of `size` op cases torch.export takes with static sizes, drawn at random."""
    cases = [case for case in Registry.load(discover()) if case.kind == "op" and not case.is_dynamic]
    random.Random(seed).shuffle(cases)
    batches, batch = [], []
    for case in cases:
        module, inputs = make_module(case), tuple(make_inputs(case)[0])
        try:
            if export(module, inputs).range_constraints:
                continue  # a data-dependent size: not static
        except Exception:  # noqa: BLE001 - a case torch.export refuses is not what is measured here
            continue
        batch.append((case.id, module, inputs))
        if len(batch) == size:
            batches.append(batch)
            batch = []
            if len(batches) == count:
                break
    return batches


def seconds(work, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=16, help="cases in a batch (default 16, as --batch-size)")
    parser.add_argument("--batches", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    settle()

    rows = []
    for index, batch in enumerate(static_batches(args.batch, args.batches, args.seed)):
        joint = Together([module for _, module, _ in batch], [len(inputs) for _, _, inputs in batch])
        joint_inputs = tuple(t for _, _, inputs in batch for t in inputs)
        for name, frontend in FRONTENDS.items():
            alone = lambda: [frontend(export(module, inputs)) for _, module, inputs in batch]
            together = lambda: frontend(export(joint, joint_inputs))
            try:
                together()
                alone()
            except Exception as e:  # noqa: BLE001
                rows.append([index, name, len(batch), None, None, f"refused: {type(e).__name__}"])
                continue
            t_alone, t_together = seconds(alone, args.repeat), seconds(together, args.repeat)
            rows.append([index, name, len(batch), t_alone, t_together, f"{t_alone / t_together:.1f}x"])
    headers = ["batch", "frontend", "cases", "alone s", "together s", "alone/together"]
    print(tabulate(rows, headers=headers, floatfmt=".3f"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
