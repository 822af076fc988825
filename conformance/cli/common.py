"""What the commands that run or select cases share: option groups, selection, errors.

The options themselves are declared once, in conformance.run_options (the
nightly's own in nightly/options.py); backends are resolved by the run layer
(run/session.resolve_backends), whose RunError main.py shows as a usage error.
"""

from __future__ import annotations

import argparse
import sys

from conformance import run_options


class Parser(argparse.ArgumentParser):
    """argparse, with a usage error on one line (and exit status 2)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def add_group(parser: argparse.ArgumentParser, title: str, options) -> None:
    group = parser.add_argument_group(title)
    for option in options:
        option.add_to(group)


def add_case_arguments(parser: argparse.ArgumentParser) -> None:
    add_group(parser, "cases", run_options.CASE_SELECTION)


def select_cases(args: argparse.Namespace, settings, *, required: bool = False):
    """(the registry, the selected cases); with `required`, selecting nothing is an error."""
    from conformance.cases.keyword import KeywordError
    from conformance.cases.registry import Registry, RegistryError, sources_of

    try:
        registry = Registry.load(sources_of(settings), settings.suites)
        cases = registry.select(keyword=args.keyword, tags=args.tag, skip_tags=args.skip_tag)
    except (RegistryError, KeywordError) as e:
        fail(str(e))
    if required and not cases:
        words = [f"-k {args.keyword!r}"] * bool(args.keyword) + [f"--tag {t}" for t in args.tag] + [f"--skip-tag {t}" for t in args.skip_tag]
        fail(f"no case matches {' '.join(words) or 'the selection'} ({len(registry)} cases in the registry); nothing was run")
    return registry, cases


def fail(message: str) -> None:
    print(f"conformance: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def duration(text: str) -> float:
    """Seconds from `90`, `90s`, `30m` or `1h` (a time budget); more than 0."""
    units = {"s": 1, "m": 60, "h": 3600}
    number, unit = (text[:-1], text[-1]) if text and text[-1] in units else (text, "s")
    try:
        seconds = float(number) * units[unit]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration (e.g. 90s, 30m, 1h)") from None
    if not seconds > 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a duration must be more than 0")
    return seconds


def one_backend(args: argparse.Namespace, command: str):
    """(its spec, the Backend, the run's Settings) for a command that works on one backend (localize, reduce)."""
    from conformance.run.session import resolve_backends

    specs = run_options.parse_backends(args.backend)
    if len(specs) != 1:
        fail(f"--backend: {command} takes one backend, got {len(specs)} ({', '.join(specs)})")
    [backend] = resolve_backends(specs)
    return specs[0], backend, run_options.settings_from(args, specs, args.backend_options)


def recorded_failure(source: str, case: str, backend: str):
    """The Result of `case` on `backend` in a report (--results), or a usage error naming what is missing."""
    from pathlib import Path

    from conformance.report_dir import latest, read_results

    found = [r for r in latest(read_results(Path(source))) if r.key == (case, backend)]
    if not found:
        fail(f"--results {source}: no result for {case} on {backend}")
    return found[0]
