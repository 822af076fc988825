"""Reading tool output: error lines without their noise (temp paths, IR dumps)."""

from __future__ import annotations

import functools
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
    line = _strip_callsite(line)
    line = _LOCATION.sub("", line)
    return _IR_TAIL.sub("", line).strip()


def _strip_callsite(line: str) -> str:
    """Without a leading `callsite("f.py":1:0 at "g.py":2:0): ` (strict export's locations), parentheses nested or not."""
    if not line.startswith("callsite("):
        return line
    depth, quoted = 0, False
    for i, char in enumerate(line):
        if char == '"':
            quoted = not quoted
        elif not quoted and char == "(":
            depth += 1
        elif not quoted and char == ")":
            depth -= 1
            if depth == 0:
                return line[i + 1 :].lstrip(": ").strip()
    return line


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


# MLIR's note naming the op being processed, generic (`"tosa.add"(...)`) or pretty (`linalg.matmul ins(...)`).
CURRENT_OP = re.compile(r'see current operation: (?:%[\w#:]+(?:, %[\w#:]+)* = )?"?([a-z_]+\.[\w.]+)"?')


def current_op(text: str) -> str | None:
    """The op the tool was processing when it stopped: the last "see current operation" note."""
    found = CURRENT_OP.findall(text)
    return found[-1] if found else None


_PATTERN_FRAME = re.compile(r"(\w+)::matchAndRewrite\((?:[\w:]*Torch::(Aten\w+?)Op\b)?")
_PASS_FRAME = re.compile(r"(\w+)::runOnOperation\(\)")


_GENERIC_FRAMES = {"PatternApplicator", "ConversionPattern", "OpConversionPattern", "RewritePattern", "OpRewritePattern"}


def crash_site(text: str) -> tuple[str | None, str | None, str | None]:
    """(rewrite pattern, pass, torch op) from the innermost frames of an LLVM stack dump."""
    pattern = next((m for m in _PATTERN_FRAME.finditer(text) if m.group(1) not in _GENERIC_FRAMES), None)
    pass_ = _PASS_FRAME.search(text)
    op = None
    if pattern and pattern.group(2):
        op = "aten." + re.sub(r"(?<!^)([A-Z])", r"_\1", pattern.group(2).removeprefix("Aten")).lower()
    return (pattern.group(1) if pattern else None, pass_.group(1) if pass_ else None, op)


# -- explanations that stay the same from run to run ---------------------------
#
# An explanation is pinned in an xfail set, so anything in it that differs from
# one run or machine to the next (a temp dir, this checkout's location, an
# address, a pid) would report the entry CHANGED on every update. The raw text
# stays in the Result's details; the explanation keeps what is stable.

_TERMINAL_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")  # colours some tools print (torch.onnx's exporter)
_ABSOLUTE_PATH = re.compile(r"(?<![\w.~/-])/(?:[\w.+@-]+/)*[\w.+@-]+")
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")
_PID = re.compile(r"\b(pid|PID|process)([ =:#]+)\d+\b")


@functools.cache
def _machine_roots() -> list[tuple[str, str]]:
    """(absolute prefix, what it becomes), longest first: where this machine keeps things."""
    import site
    import sys
    import tempfile

    from conformance.content import PROJECT_ROOT

    roots = [(str(PROJECT_ROOT), "")]
    roots += [(path, "") for path in (*site.getsitepackages(), site.getusersitepackages()) if path]
    roots += [(sys.prefix, ""), (tempfile.gettempdir(), "<tmp>")]
    return sorted(roots, key=lambda root: -len(root[0]))


def _portable_path(match: re.Match) -> str:
    path = match.group(0)
    for root, replacement in _machine_roots():
        if path.startswith(root.rstrip("/") + "/"):
            rest = path[len(root.rstrip("/")) + 1 :]
            if replacement == "<tmp>":  # a temp dir's name is random: keep the file's own name
                return f"<tmp>/{rest.rsplit('/', 1)[-1]}"
            return rest.split("site-packages/", 1)[-1]
    if "/site-packages/" in path or "/dist-packages/" in path:  # another interpreter's packages
        return re.split(r"/(?:site|dist)-packages/", path, maxsplit=1)[1]
    return path  # a path compiled into a tool (an assert's source file) is the same everywhere


def stable(explanation: str) -> str:
    """`explanation` without what differs from run to run: this machine's paths made
    project-relative (temp files by their name alone), addresses and pids elided; and
    without terminal colour codes."""
    explanation = _TERMINAL_ESCAPE.sub("", explanation)
    explanation = _ABSOLUTE_PATH.sub(_portable_path, explanation)
    explanation = _ADDRESS.sub("0x…", explanation)
    return _PID.sub(lambda m: m.group(1), explanation)
