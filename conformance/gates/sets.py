"""Gate sets: one TOML file per backend (and target: `tosa@cuda.toml`) in gate_sets/, beside the xfail sets.

    [tolerance]                      # the file's own, for every case (default: figures.py's)
    run_seconds = { relative = 0.5, absolute = 0.002 }

    [cases.resnet18]
    dispatches = 71
    vmfb_bytes = 2405376
    compile_seconds = 24.1
    run_seconds = 0.0412
    note = "..."                     # yours, kept by every rewrite
    tolerance = { run_seconds = { relative = 1.0 } }   # this case's own, kept too

The figures are written by `conformance gates update` from a run; the
tolerances and notes belong to humans and survive every rewrite. Cases are
sorted by id so a rewrite diffs cleanly. A malformed file stops a run
before anything runs, naming the file, the line and the key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import tomli_w

from conformance.gates.figures import FIGURES, Tolerance
from conformance.xfail.sets import TableLine, read_toml

HEADER = """\
# Golden figures of backend `{backend}`: per gated case, its dispatches, module size, compile and run time.
# The figures are rewritten by `conformance gates update --backend {backend}`; `[tolerance]`, a case's
# `tolerance` and `note` are yours and are kept. `pytest --backend={backend} --gates` fails a case beyond
# tolerance; `conformance nightly --gates` reports it (docs/gates.md).
"""

CASE_FIELDS = ("note", "tolerance")  # the human ones; the rest are figures
TOLERANCE_FIELDS = ("relative", "absolute")


class GatesError(Exception):
    """A malformed gates file; the message names the file, the line and the key."""


@dataclass
class GateEntry:
    figures: dict[str, float] = field(default_factory=dict)  # figure name -> golden value
    tolerance: dict[str, Tolerance] = field(default_factory=dict)  # this case's own, by figure
    note: str | None = None

    def to_toml(self) -> dict:
        data: dict = {name: self.figures[name] for name in FIGURES if name in self.figures}
        if self.note:
            data["note"] = self.note
        if self.tolerance:
            data["tolerance"] = {name: t.to_toml() for name, t in self.tolerance.items()}
        return data


@dataclass
class GateSet:
    backend: str
    path: Path
    tolerance: dict[str, Tolerance] = field(default_factory=dict)  # the file's own, by figure
    entries: dict[str, GateEntry] = field(default_factory=dict)

    @classmethod
    def load(cls, directory: Path | str, backend: str) -> GateSet:
        """The set of `backend` in `directory`; an empty set when there is no file."""
        path = Path(directory) / f"{backend}.toml"
        gates = cls(backend, path)
        text, data = read_toml(path, GatesError)
        unknown = set(data) - {"tolerance", "cases"}
        if unknown:
            raise GatesError(f"{path}: unknown top-level key(s) {sorted(unknown)}; a gates file holds [tolerance] and [cases.<id>] tables")
        gates.tolerance = _tolerances(data.get("tolerance", {}), f"{path}:{_line(text, 'tolerance')}: [tolerance]")
        cases = data.get("cases", {})
        if not isinstance(cases, dict):
            raise GatesError(f"{path}: cases must be tables, [cases.<id>]")
        for case_id, table in cases.items():
            gates.entries[case_id] = _entry(TableLine(path, text, case_id, within="cases"), case_id, table)
        return gates

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        cases = tomli_w.dumps({"cases": {case: self.entries[case].to_toml() for case in sorted(self.entries)}})
        self.path.write_text(HEADER.format(backend=self.backend) + "\n" + self._tolerance_table() + "\n" + cases)

    def _tolerance_table(self) -> str:
        """Every figure's tolerance, written out, one line each: a reviewer reads what a case is held to."""
        lines = ["[tolerance]  # a figure may move by the larger of relative x golden and absolute (in its unit)"]
        for name, figure in FIGURES.items():
            t = self.tolerance.get(name, figure.default)
            lines.append(f"{name} = {{ relative = {float(t.relative)!r}, absolute = {float(t.absolute)!r} }}")
        return "\n".join(lines) + "\n"

    def get(self, case_id: str) -> GateEntry | None:
        return self.entries.get(case_id)

    def tolerance_of(self, case_id: str, figure: str) -> Tolerance:
        """The case's own tolerance for `figure`, else the file's, else the figure's default."""
        entry = self.entries.get(case_id)
        if entry is not None and figure in entry.tolerance:
            return entry.tolerance[figure]
        return self.tolerance.get(figure, FIGURES[figure].default)


def _line(text: str, table: str) -> int:
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip().replace(" ", "") == f"[{table}]":
            return number
    return 0


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _tolerances(table: object, where: str) -> dict[str, Tolerance]:
    if not isinstance(table, dict):
        raise GatesError(f"{where} must be a table of figures, e.g. run_seconds = {{ relative = 0.5, absolute = 0.002 }}")
    out = {}
    for figure, bounds in table.items():
        if figure not in FIGURES:
            raise GatesError(f"{where}: unknown figure {figure!r}; known: {', '.join(FIGURES)}")
        if not isinstance(bounds, dict) or set(bounds) - set(TOLERANCE_FIELDS):
            raise GatesError(f"{where}: {figure} must be {{ relative = R, absolute = A }} (either may be left out), got {bounds!r}")
        for key, value in bounds.items():
            if not _number(value) or value < 0:
                raise GatesError(f"{where}: {figure}.{key} must be a number at least 0, got {value!r}")
        out[figure] = Tolerance(float(bounds.get("relative", 0.0)), float(bounds.get("absolute", 0.0)))
    return out


def _entry(where: str, case_id: str, table: object) -> GateEntry:
    if not isinstance(table, dict):
        raise GatesError(f"{where}: {case_id!r} must be a table ([cases.\"{case_id}\"]) of figures")
    entry = GateEntry()
    for key, value in table.items():
        if key == "note":
            if not isinstance(value, str):
                raise GatesError(f"{where}: case {case_id!r}: note must be a string, got {value!r}")
            entry.note = value
        elif key == "tolerance":
            entry.tolerance = _tolerances(value, f"{where}: case {case_id!r}: tolerance")
        elif key in FIGURES:
            if not _number(value) or value < 0:
                raise GatesError(f"{where}: case {case_id!r}: {key} must be a number at least 0, got {value!r}")
            if FIGURES[key].integral and not isinstance(value, int):
                raise GatesError(f"{where}: case {case_id!r}: {key} must be a whole number, got {value!r}")
            entry.figures[key] = value
        else:
            raise GatesError(
                f"{where}: case {case_id!r} has unknown key {key!r}; figures: {', '.join(FIGURES)}; yours: {', '.join(CASE_FIELDS)}"
            )
    return entry
