"""The custom-op audit: over a run, which ops convert to tosa.custom and why the others do not.

The table torch-mlir's RFC #1519 review asked for ("run the e2e suite in a
dummy mode that turns all ops into tosa custom ops and see what ops don't
work ... a clear explanation for each kind of op that we don't
systematically convert"). It reads only Results (their `extras`, written by
the tosa-custom convert stage), so the nightly report can build it from
results.jsonl as well as `conformance custom-audit` from a fresh run.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Iterable

from conformance.custom_ops.reasons import CONVERTED, ERASED, FOLDED, explain
from conformance.result import Result

HEADERS = ["op", "cases", "converted", "unconvertible", "why not / how else (cases)", "passed"]
HANDLED = (ERASED, FOLDED)  # no tosa.custom, and no failure either: said in the table all the same


@dataclass
class Kind:
    """One kind of unconvertible op: its explanation, the ops and cases it touches, an example sentence."""

    kind: str
    explanation: str
    ops: list[str]
    cases: int
    example: str


@dataclass
class Audit:
    headers: list[str]
    rows: list[list]  # one per op, most frequent first
    kinds: list[Kind]  # most cases first
    totals: dict[str, int] = field(default_factory=dict)  # cases: audited, passed, unconvertible, ...


def audit(results: Iterable[Result], backend: str | None = "tosa-custom") -> Audit:
    """The audit of the Results of `backend` (None: every Result carrying custom-op extras)."""
    occurs: Counter = Counter()
    converted: Counter = Counter()
    handled: dict[str, Counter] = defaultdict(Counter)
    passed: Counter = Counter()
    why: dict[str, Counter] = defaultdict(Counter)
    kind_ops: dict[str, set] = defaultdict(set)
    kind_cases: dict[str, set] = defaultdict(set)
    example: dict[str, str] = {}
    totals: Counter = Counter()
    for r in results:
        if backend is not None and r.backend != backend:
            continue
        fates = (r.extras or {}).get("custom_ops")
        if fates is None:
            if r.status == "skip":
                totals["skipped"] += 1
            else:
                totals["not reached"] += 1  # failed before the convert stage (case, export, import)
            continue
        totals["audited"] += 1
        totals["passed" if r.passed else "failed"] += 1
        if r.code == "CUSTOM_OP_UNCONVERTIBLE":
            totals["unconvertible"] += 1
        reasons = (r.extras or {}).get("custom_op_reasons", {})
        for op, status in fates.items():
            occurs[op] += 1
            if r.passed:
                passed[op] += 1
            if status == CONVERTED:
                converted[op] += 1
            elif status in HANDLED:
                handled[op][status] += 1
            else:
                why[op][status] += 1
                kind_ops[status].add(op)
                kind_cases[status].add(r.case)
                if op in reasons:
                    example.setdefault(status, reasons[op])
    rows = []
    for op in sorted(occurs, key=lambda o: (-occurs[o], o)):
        unconvertible = sum(why[op].values())
        reasons_text = ", ".join(f"{k} ({n})" for k, n in [*why[op].most_common(), *handled[op].most_common()])
        rows.append([op, occurs[op], converted[op], unconvertible, reasons_text or "-", passed[op]])
    kinds = [
        Kind(k, explain(k), sorted(kind_ops[k]), len(kind_cases[k]), example.get(k, ""))
        for k in sorted(kind_cases, key=lambda k: (-len(kind_cases[k]), k))
    ]
    for status in HANDLED:
        ops = sorted(op for op in handled if handled[op][status])
        if ops:
            kinds.append(Kind(status, explain(status), ops, 0, ""))
    return Audit(list(HEADERS), rows, kinds, dict(totals))


def render(result: Audit, top: int | None = None, fmt: str = "simple") -> str:
    """The audit as text: totals, the op table (its `top` rows), then each kind with its explanation."""
    from tabulate import tabulate

    t = result.totals
    lines = [
        f"{t.get('audited', 0)} cases reached the conversion: {t.get('passed', 0)} converted fully and passed, "
        f"{t.get('unconvertible', 0)} hold an unconvertible op, "
        f"{t.get('failed', 0) - t.get('unconvertible', 0)} failed later (verify, run or compare)"
        + (f"; {t['not reached']} failed before it" if t.get("not reached") else "")
        + (f"; {t['skipped']} skipped" if t.get("skipped") else ""),
        "",
    ]
    rows = result.rows[:top] if top else result.rows
    lines.append(tabulate(rows, headers=result.headers, tablefmt=fmt))
    if top and len(result.rows) > top:
        lines.append(f"... {len(result.rows) - top} more ops")
    if result.kinds:
        lines += ["", "Ops not converted, by kind (and ops handled without a tosa.custom):"]
        for k in result.kinds:
            ops = ", ".join(k.ops[:8]) + (f" and {len(k.ops) - 8} more" if len(k.ops) > 8 else "")
            cases = f"{k.cases} case(s); " if k.cases else ""
            lines.append(f"- {k.kind}: {k.explanation}. [{cases}{ops}]")
            if k.example:
                lines.append(f"    e.g. {k.example}")
    return "\n".join(lines)


def to_dict(result: Audit) -> dict:
    return {
        "totals": result.totals,
        "ops": [dict(zip(result.headers, row)) for row in result.rows],
        "kinds": [vars(k) for k in result.kinds],
    }


def report_section(results: Iterable[Result], backend: str = "tosa-custom", top: int = 40) -> dict | None:
    """The nightly report's section: {"title", "markdown", "html"}; None when the run has no `backend` results."""
    import html

    table = audit(results, backend=backend)
    if not table.totals.get("audited"):
        return None
    text = render(table, top=top, fmt="github")
    t = table.totals
    rows = table.rows[:top]
    head = "".join(f"<th>{html.escape(h)}</th>" for h in table.headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    kinds = "".join(
        f"<li><b>{html.escape(k.kind)}</b>: {html.escape(k.explanation)}."
        f" <i>{html.escape(', '.join(k.ops[:8]) + (f' and {len(k.ops) - 8} more' if len(k.ops) > 8 else ''))}</i>"
        + (f"<br><code>{html.escape(k.example)}</code>" if k.example else "")
        + "</li>"
        for k in table.kinds
    )
    more = f"<p>… {len(table.rows) - top} more ops</p>" if len(table.rows) > top else ""
    page = (
        f"<p>{t.get('audited', 0)} cases reached the conversion to tosa.custom (contract v1): "
        f"{t.get('passed', 0)} converted fully and passed on the interpreter, {t.get('unconvertible', 0)} hold an "
        f"unconvertible op.</p><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}"
        f"<ul>{kinds}</ul>"
    )
    return {"title": f"Custom-op audit ({backend})", "markdown": text, "html": page}
