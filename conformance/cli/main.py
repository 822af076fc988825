"""`conformance <command>`: each command is a module here with NAME, HELP,
add_arguments(parser) and run(args) -> exit status. Modules import their
heavy dependencies inside run(), so `conformance --help` stays instant.

A command that runs backends also has backend_specs(args): when its command
line holds options the command does not know, those backends are loaded and
the options they declare (Backend.options) are added before parsing again.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from conformance import run_options
from conformance.cli.common import Parser, fail
from conformance.run import RunError

COMMANDS = ["list_cases", "nightly", "localize", "reduce", "fuzz", "merge", "verdicts_from", "triage", "issue", "xfail", "gates", "custom_audit"]


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="conformance",
        description="Backend-contract conformance tests for PyTorch-to-MLIR compilers. "
        "Run cases through backends with `pytest --backend=NAME`; these commands list, report and maintain.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        module = importlib.import_module(f"conformance.cli.{name}")
        command = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        command.set_defaults(run=module.run, module=module, parser=command, backend_options=[])
        module.add_arguments(command)  # after set_defaults: a nested command may name its own parser
    return parser


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    specs = getattr(args.module, "backend_specs", None)
    if unknown and specs:
        from conformance.run.session import resolve_backends

        group = args.parser.add_argument_group("options of the backends run")
        try:
            options = run_options.add_backend_options(group, resolve_backends(specs(args)))
        except (RunError, ValueError) as e:
            fail(str(e))
        args = parser.parse_args(argv)
        args.backend_options = options
        return args
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    try:
        return args.run(args)
    except RunError as e:  # what stops a run before it starts: a usage error, as a bad option is
        fail(str(e))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`conformance list | head`): stop quietly, as a
        # shell tool does. Python would still flush into the closed pipe at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def console() -> int:
    """The `conformance` command: main, ending without Python's last walk over the heap (process_exit.py)."""
    from conformance.process_exit import skip_last_collection

    skip_last_collection()
    return main()


if __name__ == "__main__":
    sys.exit(console())
