"""`conformance issue GROUP --results DIR`: a root-cause group as an issue file for the failing tool's tracker.

One Markdown file per group (issue-ID.md): a title, the smallest failing
case (a reduction under DIR/reduced when there is one), the IR handed to the
tool and the public command that fails on it, replayed just now in an empty
folder (what it printed, and whether it reproduced), expected vs got, the
versions of every tool, and the group's other cases. Nothing of this machine
is in it. See docs/filing-issues.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

from conformance.cli.common import fail

NAME = "issue"
HELP = "write a root-cause group (its id or # from `conformance triage`) as a Markdown issue for the failing tool's tracker"


def add_arguments(parser) -> None:
    parser.add_argument("groups", nargs="*", metavar="GROUP", help="a group's id (or a unique prefix of it) or its # as `conformance triage` and the reports show them")
    parser.add_argument("--results", required=True, metavar="DIR", help="the report directory of the run (its results.jsonl, with bundles from --artifacts)")
    parser.add_argument("--all", action="store_true", help="every group that has a bundle")
    parser.add_argument("-o", "--output", metavar="DIR", help="where the files go (default: DIR/issues)")
    parser.add_argument("--no-replay", action="store_true",
                        help="quote what the tool printed during the run instead of running its command again now")


def run(args) -> int:
    from conformance.report.issues.files import EvidenceError, issue_markdown, pick, write
    from conformance.report.triage import root_causes
    from conformance.report_dir import CASES, RUN, has_results, latest, read_json, read_results
    from conformance.toolchain.versions import toolchain_versions

    results_dir = Path(args.results)
    if not has_results(results_dir):
        fail(f"{results_dir} holds no results.jsonl: name the report directory of a run (conformance nightly, pytest --report-dir)")
    if bool(args.groups) == bool(args.all):
        fail("name the groups (their ids or #s, from `conformance triage`), or give --all")
    cases = read_json(results_dir, CASES, {})
    groups = root_causes(latest(read_results(results_dir)), cases)
    versions = read_json(results_dir, RUN, {}).get("toolchain") or toolchain_versions()
    output = Path(args.output) if args.output else results_dir / "issues"
    try:
        chosen = groups if args.all else pick(groups, args.groups)
    except EvidenceError as e:
        fail(str(e))
    written, missing = 0, []
    for group in chosen:
        number = groups.index(group) + 1
        try:
            text = issue_markdown(group, results_dir, cases, versions, replayed=not args.no_replay)
        except EvidenceError as e:
            if not args.all:
                fail(f"group #{number} ({group.id}): {e}")
            missing.append(group)
            continue
        path = write(group, text, output)
        written += 1
        print(f"#{number} {group.id}: {path}\n    {text.splitlines()[0].removeprefix('# ')}")
    if missing:
        print(f"{len(missing)} group(s) have no bundle (run with --artifacts to file them): "
              + ", ".join(g.id for g in missing[:20]) + (" ..." if len(missing) > 20 else ""), file=sys.stderr)
    return 0 if written else 1
