"""Xfail sets: one TOML file per backend, one table per expected failure.

    ["cumsum.dim0"]
    stage = "lower"
    code = "UNSUPPORTED_OP"
    op = "aten.cumsum"
    explanation = "torch-mlir cannot lower aten.cumsum to tosa ..."
    note = "https://github.com/llvm/torch-mlir/issues/NNNN"

`stage`, `code`, `op` and `explanation` are generated; `note`, `flaky`,
`cpu_dependent` and `garbage_output` belong to humans and survive every
rewrite. `garbage_output = "..."` says, with the evidence, that the wrong
values are whatever memory held: whether some of them are NaN then varies,
so any wrong-values code (WRONG_VALUES) matches the entry. `flaky = true`
says the pair fails only sometimes (pytest's non-strict xfail): a pass is
then no XPASS, and an update keeps the entry. `cpu_dependent = "..."` says,
with the evidence, that the verdict follows the CPU the code is compiled
for (it fails for the default CPU the entry was written on and passes for
another): a pass compiled for that other CPU is no XPASS either, and the
entry is never written as a plain failure. Entries are sorted by case id so a
rewrite diffs cleanly.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import tomli_w

from conformance.taxonomy import WRONG_VALUES, Code

HEADER = """\
# Expected failures of backend `{backend}`, one table per case id.
# stage/code/op/explanation are rewritten by `conformance xfail update --backend {backend}`
# (or `pytest --backend={backend} --update-xfails`); `note` is yours and is kept.
"""

FIELDS = ("stage", "code", "op", "explanation", "note", "flaky", "cpu_dependent", "garbage_output")


class XfailError(Exception):
    """A malformed xfail file; the message names the file, the line and the problem."""


@dataclass
class Entry:
    code: str
    explanation: str = ""
    stage: str | None = None
    op: str | None = None
    note: str | None = None
    flaky: bool = False  # fails only sometimes: a pass is not an XPASS
    cpu_dependent: str | None = None  # the evidence that the verdict follows the CPU compiled for: a pass is not an XPASS
    garbage_output: str | None = None  # the evidence that the wrong values are whatever memory held: any WRONG_VALUES code matches

    @property
    def may_pass(self) -> bool:
        """A pass of this pair is no XPASS, and does not drop the entry: it is flaky or CPU-dependent."""
        return self.flaky or bool(self.cpu_dependent)

    def to_toml(self) -> dict:
        return {k: v for k in FIELDS if (v := getattr(self, k)) not in (None, "", False)}


@dataclass
class XfailSet:
    backend: str
    path: Path
    entries: dict[str, Entry] = field(default_factory=dict)

    @classmethod
    def load(cls, directory: Path | str, backend: str) -> XfailSet:
        """The set of `backend` in `directory`; an empty set when there is no file."""
        path = Path(directory) / f"{backend}.toml"
        xfails = cls(backend, path)
        text, data = read_toml(path, XfailError)
        for case_id, table in data.items():
            xfails.entries[case_id] = _entry(path, text, case_id, table)
        return xfails

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        body = tomli_w.dumps({case: self.entries[case].to_toml() for case in sorted(self.entries)})
        self.path.write_text(HEADER.format(backend=self.backend) + ("\n" + body if body else ""))

    def get(self, case_id: str) -> Entry | None:
        return self.entries.get(case_id)


def read_toml(path: Path, error: type[Exception]) -> tuple[str, dict]:
    """A per-backend file's text and tables (both empty when there is no file); `error`, naming the file and
    the line, when it is no TOML. The gate sets (gates/sets.py) are read the same way."""
    if not path.exists():
        return "", {}
    text = path.read_text()
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise error(f"{path}: invalid TOML: {e}") from None


def line_of(text: str, case_id: str, within: str = "") -> int:
    """The line where the table of `case_id` starts (1-based), or 0 if not found.

    `within`: the table that holds the case tables (gate sets keep theirs
    under `[cases."<id>"]`); TOML allows spaces around the dot.
    """
    parent = rf"{re.escape(within)}\s*\.\s*" if within else ""
    pattern = re.compile(r'^\s*\[\s*' + parent + r'(?:"' + re.escape(case_id) + r'"|' + re.escape(case_id) + r")\s*\]")
    for number, line in enumerate(text.splitlines(), 1):
        if pattern.match(line):
            return number
    return 0


@dataclass(frozen=True)
class TableLine:
    """`path:line` of a case's table, found when shown."""

    path: Path
    text: str = field(repr=False)
    case_id: str
    within: str = ""

    def __str__(self) -> str:
        return f"{self.path}:{line_of(self.text, self.case_id, self.within)}"


def _entry(path: Path, text: str, case_id: str, table: object) -> Entry:
    # The line is looked up only for an error: looking it up for every entry is quadratic in the file
    # (40 s for a set of 3,500 entries).
    where = TableLine(path, text, case_id)
    if not isinstance(table, dict):
        raise XfailError(f"{where}: {case_id!r} must be a table ([\"{case_id}\"]) with code and explanation")
    unknown = set(table) - set(FIELDS)
    if unknown:
        raise XfailError(f"{where}: entry {case_id!r} has unknown field(s) {sorted(unknown)}; allowed: {', '.join(FIELDS)}")
    for key, value in table.items():
        if key == "flaky" and not isinstance(value, bool):
            raise XfailError(f"{where}: entry {case_id!r}: flaky must be true or false, got {value!r}")
        if key != "flaky" and not isinstance(value, str):
            raise XfailError(f"{where}: entry {case_id!r}: {key} must be a string, got {value!r}")
    code = table.get("code")
    if code is None:
        raise XfailError(f"{where}: entry {case_id!r} has no code (the expected failure code, e.g. UNSUPPORTED_OP)")
    if code not in Code.__members__:
        raise XfailError(f"{where}: entry {case_id!r}: unknown code {code!r}; known: {', '.join(Code.__members__)}")
    if table.get("garbage_output") and code not in WRONG_VALUES:
        raise XfailError(
            f"{where}: entry {case_id!r}: garbage_output is for a wrong answer ({' or '.join(WRONG_VALUES)}), not {code}"
        )
    return Entry(
        code=code,
        explanation=table.get("explanation", ""),
        stage=table.get("stage"),
        op=table.get("op"),
        note=table.get("note"),
        flaky=table.get("flaky", False),
        cpu_dependent=table.get("cpu_dependent"),
        garbage_output=table.get("garbage_output"),
    )
