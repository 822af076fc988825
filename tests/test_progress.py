"""The nightly's progress line counts each outcome apart: an XFAIL is no failure to look at."""

import io

from conformance.nightly.progress import Progress
from conformance.result import Result


def result(status: str, verdict: str | None) -> Result:
    return Result("c", "b", status, verdict=verdict)


def test_the_line_counts_xfails_apart_from_failures():
    stream = io.StringIO()
    progress = Progress(6, stream=stream, interactive=False)
    for status, verdict in [("pass", "PASS"), ("pass", "PASS"), ("fail", "XFAIL"), ("fail", "XFAIL"), ("fail", "FAIL"), ("skip", "SKIP")]:
        progress.update(result(status, verdict))
    line = stream.getvalue().splitlines()[-1]  # the last result always prints a plain line
    assert line.startswith("[6/6] 100.0%  pass 2 xfail 2 fail 1 skip 1  ")


def test_without_xfail_sets_the_statuses_are_counted():
    stream = io.StringIO()
    progress = Progress(2, stream=stream, interactive=False)
    progress.update(result("fail", None))
    progress.update(result("pass", None))
    assert "  pass 1 fail 1  " in stream.getvalue().splitlines()[-1]
