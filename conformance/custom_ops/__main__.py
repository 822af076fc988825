"""`python -m conformance.custom_ops input.mlir`: replay the convert and verify stages on torch IR.

Reads a torch-dialect module (as the import stage left it), converts every
op to tosa.custom, verifies the result and prints it, or prints why an op
cannot be converted. Exit status 0 when converted and verified, 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.custom_ops", description=__doc__.splitlines()[0])
    parser.add_argument("input", help="a torch-dialect .mlir file")
    args = parser.parse_args(argv)

    from torch_mlir import ir
    from torch_mlir.dialects import torch as torch_dialect

    from conformance.backends.protocol import StageFailure
    from conformance.custom_ops import convert, verify

    context = ir.Context()
    torch_dialect.register_dialect(context)
    with context, open(args.input) as f:
        module = ir.Module.parse(f.read())
    converted, fates = convert.to_custom_module(module)
    if converted is None:
        for failure in fates.failures:
            print(failure.sentence, file=sys.stderr)
        return 1
    try:
        verify.verify(converted, only_custom=True)
    except StageFailure as e:
        print(f"{e.code}: {e.explanation}", file=sys.stderr)
        return 1
    print(converted)
    return 0


if __name__ == "__main__":
    sys.exit(main())
