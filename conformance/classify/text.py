"""Reading tool output: error lines without their noise (temp paths, IR dumps)."""

from __future__ import annotations

import re

# `/tmp/conformance-job-x/a.mlir:86:11: `, `loc("f.py":10:0): `, `"f.py":10:0: ` before a message.
_LOCATION = re.compile(r'^(?:loc\([^)]*\)|"[^"]*":\d+:\d+|[^\s:]+:\d+:\d+):\s*')
# MLIR appends the offending op after ": %0 = ..." or ": \"tosa.x\"(...)"; the message is before.
_IR_TAIL = re.compile(r':\s+(?:%[\w#:]+(?:,\s*%[\w#:]+)*\s+=|"[\w.]+"\().*$')


def clean(line: str) -> str:
    """A diagnostic line without its location prefix and trailing IR dump."""
    line = line.strip()
    line = _LOCATION.sub("", line)
    line = re.sub(r"^error:\s*", "", line)
    line = _LOCATION.sub("", line)
    return _IR_TAIL.sub("", line).strip()


def first(pattern: re.Pattern, text: str) -> re.Match | None:
    return pattern.search(text)


def error_line(text: str) -> str | None:
    """The first MLIR-style `error:` line, cleaned."""
    for line in text.splitlines():
        if "error:" in line:
            return clean(line)
    return None


def short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
