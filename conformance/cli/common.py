"""Options shared by commands that run or select cases, and what they build."""

from __future__ import annotations

import argparse
import sys

from conformance.execution.settings import Settings


def add_case_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("cases")
    group.add_argument("--cases", action="append", default=[], metavar="DIR|MODULE", help="add cases from a directory or module")
    group.add_argument("--no-default-cases", action="store_true", help="leave out the project's cases/ directory")
    group.add_argument("--suite", action="append", metavar="NAME", help="suites to include (default: default; also: opinfo)")
    group.add_argument("-k", dest="keyword", metavar="EXPRESSION", help="pytest-style -k expression over case ids and tags")
    group.add_argument("--tag", action="append", default=[], help="only cases with this tag (repeatable)")
    group.add_argument("--skip-tag", action="append", default=[], help="leave out cases with this tag (repeatable)")


def settings_from_args(args: argparse.Namespace, **extra) -> Settings:
    return Settings(
        case_paths=list(args.cases),
        default_cases=not args.no_default_cases,
        suites=args.suite or ["default"],
        **extra,
    )


def select_cases(args: argparse.Namespace, settings: Settings):
    from conformance.cases.registry import Registry, RegistryError

    try:
        registry = Registry.load(settings.case_sources(), settings.suites)
    except RegistryError as e:
        fail(str(e))
    return registry, registry.select(keyword=args.keyword, tags=args.tag, skip_tags=args.skip_tag)


def fail(message: str) -> None:
    print(f"conformance: error: {message}", file=sys.stderr)
    raise SystemExit(2)
