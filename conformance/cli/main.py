"""`conformance <command>`: each command is a module here with NAME, HELP,
add_arguments(parser) and run(args) -> exit status. Modules import their
heavy dependencies inside run(), so `conformance --help` stays instant.
"""

from __future__ import annotations

import argparse
import importlib
import sys

COMMANDS = ["list_cases", "nightly", "merge", "triage", "xfail", "custom_audit"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="conformance",
        description="Backend-contract conformance tests for PyTorch-to-MLIR compilers. "
        "Run cases through backends with `pytest --backend=NAME`; these commands list, report and maintain.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        module = importlib.import_module(f"conformance.cli.{name}")
        command = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        module.add_arguments(command)
        command.set_defaults(run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
