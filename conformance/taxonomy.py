"""The failure taxonomy: stages, failure codes and outcomes.

These strings are an API. Reports, xfail sets and users' dashboards key on
them, so a value is never renamed or reused for another meaning; new ones are
added at the end. docs/taxonomy.md documents each with a real example.
"""

from __future__ import annotations

from enum import StrEnum


class Stage(StrEnum):
    """Where in the flow of one case a failure happened.

    The standard stages, in flow order. A backend may name its own stages
    (the `tosa-custom` backend has `convert` and `verify`); they are plain
    strings in a Result, so these members are the common vocabulary, not a
    closed set.
    """

    CASE = "case"  # the case declaration itself (its module factory, its inputs)
    EAGER = "eager"  # the PyTorch eager reference (golden)
    EXPORT = "export"  # torch.export
    IMPORT = "import"  # decompositions + torch_mlir.fx import -> torch dialect
    CONTRACT = "contract"  # lowering to the torch backend contract
    LOWER = "lower"  # torch dialect -> tosa | linalg | stablehlo | ...
    COMPILE = "compile"  # iree-compile, tosa-opt --tosa-serialize, ...
    RUN = "run"  # the runtime or reference model
    COMPARE = "compare"  # backend outputs against eager


class Code(StrEnum):
    """What kind of failure, independent of where it happened."""

    CASE_ERROR = "CASE_ERROR"  # the case itself is broken: not a backend failure
    NONDETERMINISTIC_REFERENCE = "NONDETERMINISTIC_REFERENCE"
    EXPORT_UNSUPPORTED = "EXPORT_UNSUPPORTED"
    UNSUPPORTED_OP = "UNSUPPORTED_OP"
    ILLEGAL_TYPE = "ILLEGAL_TYPE"
    DYNAMIC_SHAPE_UNSUPPORTED = "DYNAMIC_SHAPE_UNSUPPORTED"
    TYPE_REFINEMENT = "TYPE_REFINEMENT"
    VERIFIER_ERROR = "VERIFIER_ERROR"
    COMPILER_ERROR = "COMPILER_ERROR"
    RUNTIME_ERROR = "RUNTIME_ERROR"
    CRASH = "CRASH"
    TIMEOUT = "TIMEOUT"
    NUMERIC_MISMATCH = "NUMERIC_MISMATCH"
    SHAPE_MISMATCH = "SHAPE_MISMATCH"
    DTYPE_MISMATCH = "DTYPE_MISMATCH"
    NAN_MISMATCH = "NAN_MISMATCH"
    STRUCTURE_MISMATCH = "STRUCTURE_MISMATCH"
    CUSTOM_OP_UNCONVERTIBLE = "CUSTOM_OP_UNCONVERTIBLE"
    TOOLCHAIN_SKEW = "TOOLCHAIN_SKEW"
    TOOL_MISSING = "TOOL_MISSING"  # a backend's external tool is not installed
    UNKNOWN = "UNKNOWN"  # no parser recognised it: the parsers' to-do list


# The codes of outputs with the right structure, shape and dtype but wrong values. A bug reading memory
# nobody wrote shows as either, depending on whether what it read holds a NaN (xfail's garbage_output).
WRONG_VALUES = (Code.NUMERIC_MISMATCH, Code.NAN_MISMATCH)


class Status(StrEnum):
    """What the runner observed for one (case, backend)."""

    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"  # the case is declared not applicable to the backend
    FLAKY = "flaky"  # the attempts disagreed (a re-run in a fresh process, or --check-determinism): no stable verdict
    COMPILED = "compiled"  # compiled for its target, not run: no device of that kind here (backends.protocol.NotRun)


class Verdict(StrEnum):
    """A status judged against the backend's xfail set."""

    PASS = "PASS"
    XFAIL = "XFAIL"  # failed exactly as the xfail set says
    XPASS = "XPASS"  # passed, but the xfail set lists it
    CHANGED = "CHANGED"  # failed, but not as the xfail set says
    FAIL = "FAIL"  # failed and is not listed
    SKIP = "SKIP"
    FLAKY = "FLAKY"  # the attempts disagreed: fails a strict run unless the xfail set expects a failure seen (judge.py)
    COMPILED = "COMPILED"  # compiled, not run for lack of a device: neither a pass nor a failure

    @property
    def is_failure(self) -> bool:
        """Whether this verdict fails a strict run whatever the xfail entry (FLAKY depends on it: judge.fails_strict_run)."""
        return self in (Verdict.XPASS, Verdict.CHANGED, Verdict.FAIL)
