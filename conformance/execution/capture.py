"""Capturing what native code prints, stage by stage.

The supervisor points a child's stdout and stderr at one log file. Before a
stage the child notes the file's size; afterwards everything past that mark
is what the stage printed: MLIR diagnostics written straight to fd 2,
compiler asserts, Python warnings. After a crash the supervisor reads the
same file from the stage's mark, so the dying words are kept too.
"""

from __future__ import annotations

import os
import stat
import sys
from itertools import groupby


class OutputCapture:
    def __init__(self, fd: int = 2):
        self.fd = fd
        # Only a log file can be measured; a terminal or pipe (an in-process
        # run, a debugging session) is left alone.
        try:
            self.enabled = stat.S_ISREG(os.fstat(fd).st_mode)
        except OSError:
            self.enabled = False

    def mark(self) -> int:
        if not self.enabled:
            return 0
        sys.stdout.flush()
        sys.stderr.flush()
        return os.fstat(self.fd).st_size

    def since(self, mark: int) -> str:
        if not self.enabled:
            return ""
        sys.stdout.flush()
        sys.stderr.flush()
        return read_log(os.readlink(f"/proc/self/fd/{self.fd}"), mark)

    def reset(self) -> None:
        """Empty the log between jobs so it does not grow for a child's whole life."""
        if self.enabled:
            sys.stdout.flush()
            sys.stderr.flush()
            os.ftruncate(self.fd, 0)


def read_log(path: str, offset: int, limit: int = 2_000_000) -> str:
    """The log from `offset` on (at most about `limit` bytes, keeping the end)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            end = f.tell()
            start = max(offset, end - limit) if end > offset else end
            f.seek(start)
            text = f.read()
            if start > offset:  # cut: begin at a whole line
                text = text.partition(b"\n")[2]
            return text.decode("utf-8", errors="replace")
    except OSError:
        return ""


def fold_repeats(text: str, keep: int = 3) -> str:
    """Runs of one repeated line cut to `keep` copies and a count.

    A looping pass prints the same diagnostic millions of times; the Result
    keeps what is informative, not megabytes of it.
    """
    out: list[str] = []
    for line, run in groupby(text.split("\n")):
        count = sum(1 for _ in run)
        out += [line] * min(count, keep)
        if count > keep:
            out.append(f"[the line above repeated {count - keep} more times]")
    return "\n".join(out)
