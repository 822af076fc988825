"""Turning a failure into (code, op, explanation): the classifier.

Each tool has its own parser module in this package; `classify_error` asks
them in turn and falls back to UNKNOWN with the first error line verbatim,
so an unrecognised failure still says what happened and shows up in the
reports' UNKNOWN count, the parsers' to-do list.
"""

from __future__ import annotations

import re
import traceback
from dataclasses import dataclass

from conformance.backends.protocol import StageFailure
from conformance.classify.parsers import PARSERS
from conformance.classify.text import clean, error_line, stable
from conformance.taxonomy import Code, Stage
from conformance.result import RUNAWAY
from conformance.toolchain.mlir import error_text as diagnostic_text


@dataclass
class Classification:
    code: str
    explanation: str
    op: str | None = None
    details: str = ""
    parsed: bool = False  # made by the parsers from text (so it can be redone as they improve)

    def __post_init__(self):
        # Explanations are pinned in xfail sets: nothing run-dependent in them (the details keep it all).
        self.explanation = stable(self.explanation)


ERROR_LINE = re.compile(r"\b(error|Error|ERROR|failed|FAILED|Assertion|fatal|FATAL|Exception)\b")


def first_error_line(text: str) -> str:
    """The first line that looks like an error, else the first non-empty line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if ERROR_LINE.search(line):
            return line
    return lines[0] if lines else ""


def error_text(error: BaseException) -> str:
    """`module.Type: message`; the module tells torch's own errors from ours.

    MLIR diagnostics are read whoever carries them: a backend that runs a
    PassManager itself and lets the bindings' MLIRError escape, or wraps it
    in an exception of its own (raised from it), is classified as one whose
    pipeline failed inside the framework's run_pipeline.
    """
    text = f"{_type_name(error)}: {error}"
    carrier = _mlir_error(error)
    if carrier is not None:
        diagnostics = "\n".join(diagnostic_text(d) for d in carrier.error_diagnostics)
        told = f"{_type_name(carrier)}: {carrier.message}" + (f":\n{diagnostics}" if diagnostics else "")
        text = told if carrier is error else f"{text}\n{told}"
    return text


def _type_name(error: BaseException) -> str:
    kind = type(error)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _mlir_error(error: BaseException | None) -> BaseException | None:
    """The MLIR Python bindings' MLIRError that `error` is, or was raised from (or while handling)."""
    seen = set()
    while error is not None and id(error) not in seen:
        if type(error).__name__ == "MLIRError" and hasattr(error, "error_diagnostics"):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def classify_error(stage: str, error: BaseException, output: str = "") -> Classification:
    """Classify an exception raised by `stage`, with what the stage printed.

    The Result's details start with the exact text the parsers read (the
    exception, then the stage's output), then the traceback; so a stored
    Result can be re-classified later with classify_text(stage, details).
    """
    text = f"{error_text(error)}\n{output.strip()}".strip()
    details = f"{text}\n\n{traceback_without_message(error)}"
    if isinstance(error, StageFailure):
        return Classification(error.code, error.explanation, error.op, "\n".join(p for p in (error.details, details) if p))
    if stage in (Stage.CASE, Stage.EAGER):
        what = "building the module" if stage == Stage.CASE else "running it in eager PyTorch"
        return Classification(
            Code.CASE_ERROR,
            f"the case itself fails when {what} ({type(error).__name__}: {first_error_line(str(error)) or 'no message'}): "
            "a bug in the case, not in a backend",
            details=details,
        )
    return classify_text(stage, text, details)


def traceback_without_message(error: BaseException) -> str:
    """The traceback of `error` (and of the errors it chains), without its own message at the end:
    the details hold that message once, above, where the parsers read it (an MLIR error runs to pages)."""
    exception = traceback.TracebackException.from_exception(error)
    lines = list(exception.format())
    message = list(exception.format_exception_only())
    if lines[-len(message) :] == message:
        lines = lines[: -len(message)]
    return "".join(lines).strip()


TRACEBACK = "\n\nTraceback (most recent call last):"


def parser_text(details: str) -> str:
    """The part of a Result's details the parsers read (without the traceback after it)."""
    return details.split(TRACEBACK, 1)[0]


def classify_text(stage: str, text: str, details: str | None = None) -> Classification:
    """Classify a failure of `stage` from its text alone (the parsers' view)."""
    for parser in PARSERS:
        found = parser(stage, text)
        if found is not None:
            code, op, explanation = found
            return Classification(code, explanation, op, details if details is not None else text, parsed=True)
    line = error_line(text) or first_error_line(text) or text.split("\n", 1)[0]
    return Classification(Code.UNKNOWN, f"{stage} failed: {_said(line, text)}", details=details if details is not None else text, parsed=True)


def _said(line: str, text: str) -> str:
    """`line`, and when it only announces what follows (`tool killed by signal SIGABRT (6):`), the line it announces:
    an UNKNOWN's explanation is all a reader sees of it."""
    if not line.endswith(":"):
        return line
    lines = [l.strip() for l in text.splitlines()]
    at = next((i for i, l in enumerate(lines) if line in (l, clean(l))), None)
    if at is None:
        return line
    following = next((l for l in lines[at + 1 :] if l), "")
    return f"{line} {following}" if following else f"{line} (nothing more)"


def _quoted(output: str) -> str:
    """The first error line of a dying stage's output, without its location (a path and line of this checkout)."""
    return clean(first_error_line(output))


def classify_flood(stage: str, size: int, output: str) -> Classification:
    """A child killed for printing without end: a hang, with the line it kept repeating.

    How much it printed before the kill depends on the machine's speed: the details say it, not the explanation.
    """
    line = _quoted(output)
    tail = f"; it kept printing: {line}" if line else ""
    return Classification(
        Code.TIMEOUT,
        f"stage {stage} kept printing without finishing and was killed (a rewrite going round in circles){tail}",
        details=f"stage {stage} printed {size / 2**20:.0f} MB of output before it was killed\n\n{output}",
    )


def classify_crash(stage: str, how: str, output: str, measured: str = "") -> Classification:
    """A child process died in `stage`; `how` names the signal, exit status or limit, `measured` what was
    measured at the time (memory used: it differs from run to run, so it goes to the details)."""
    line = _quoted(output)
    tail = f": {line}" if line else ""
    details = "\n\n".join(part for part in (measured, output) if part)
    if how.startswith(RUNAWAY):  # the supervisor's memory watchdog
        return Classification(Code.CRASH, f"the process was {how} in stage {stage}{tail}", details=details)
    return Classification(Code.CRASH, f"the process crashed in stage {stage} ({how}){tail}", details=details)


def classify_timeout(stage: str, seconds: float, output: str) -> Classification:
    line = _quoted(output)
    tail = f"; last output: {line}" if line else ""
    return Classification(
        Code.TIMEOUT,
        f"stage {stage} gave no sign of progress for {seconds:g} s and was killed{tail}",
        details=output,
    )
