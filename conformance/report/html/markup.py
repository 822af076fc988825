"""Small builders of page markup: tables (in a scrolling box, stackable, sortable) and cell links."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence
from urllib.parse import quote

from conformance.report.html.format import esc


@dataclass(frozen=True)
class Column:
    label: str  # header text; each cell repeats it as data-label for the stacked phone layout
    cls: str = ""  # "n" numbers (right-aligned; a grid of them in a phone's card), "expl" explanations, "case", "op"
    head: str | None = None  # header markup when it is more than the label (a backend's swatch)


@dataclass(frozen=True)
class Cell:
    html: str
    cls: str = ""
    sort: float | str | None = None  # the value a sortable table orders by, when the text is not it
    attrs: str = ""  # more attributes, already escaped


Row = tuple[str, Sequence["Cell | str"]]  # (attributes of the <tr>, cells: markup or Cell)


def table(
    table_id: str,
    columns: Sequence[Column],
    rows: Iterable[Row],
    *,
    kind: str = "t",
    stack: bool = False,
    sortable: bool = False,
    box: str = "",
) -> str:
    """A table in a box that scrolls sideways on a narrow screen.

    stack: under the phone breakpoint each row becomes a card: a labelled
    line per text column, the numbers ("n" columns) in a grid with their
    labels above, so the table never needs scrolling sideways; a table not
    stacked is a grid (a column per backend) whose first column stays as it
    scrolls in its box. sortable: a click on a header sorts by that column
    (assets/report.js). box: more classes of the scrolling box.
    """
    classes = " ".join(c for c in (kind, "stack" if stack else "", "sortable" if sortable else "") if c)
    head = "".join(
        f'<th{f" class={col.cls}" if col.cls else ""}{" aria-sort=none" if sortable else ""}>{col.head or esc(col.label)}</th>'
        for col in columns
    )
    body = []
    for attrs, cells in rows:
        tds = []
        for col, c in zip(columns, cells):
            c = c if isinstance(c, Cell) else Cell(c)
            cls = " ".join(x for x in (col.cls, c.cls) if x)
            extra = (f' class="{cls}"' if cls else "") + (f' data-label="{esc(col.label)}"' if stack else "")
            if c.sort is not None:
                extra += f' data-sort="{esc(c.sort)}"'
            tds.append(f"<td{extra}{' ' + c.attrs if c.attrs else ''}>{c.html}</td>")
        body.append(f"<tr{' ' + attrs if attrs else ''}>{''.join(tds)}</tr>")
    return (
        f'<div class="scroll{" " + box if box else ""}"><table class="{classes}" id="{table_id}"><thead><tr>{head}</tr></thead>'
        f'<tbody>{"".join(body)}</tbody></table></div>'
    )


def cell_anchor(case: str, backend: str) -> str:
    """A link that opens a matrix cell's details (read by assets/report.js)."""
    return "#cell=" + quote(case, safe="") + "|" + quote(backend, safe="")


def case_link(case: str, backend: str) -> str:
    return f'<a href="{esc(cell_anchor(case, backend))}">{esc(case)}</a>'


def more(shown: int, total: int, what: str = "more (all in summary.json)") -> str:
    """The line under a table cut at `shown` rows."""
    return f'<p class="muted">… and {total - shown:,} {what}.</p>' if total > shown else ""


@dataclass(frozen=True)
class Part:
    """What a section builder returns: its body, and a caption shown beside the section's title."""

    body: str
    sub: str = ""
