"""Inline SVG pictures for report.html: pass-rate trend, status bars, stage-time bars, sparklines.

Plain strings of SVG markup embedded in the page (no library, no network).
Every piece of text in them comes from data (backend, stage, report names)
and goes through `esc`, as anywhere else in the page.
"""

from __future__ import annotations

import math

from conformance.report.html.format import esc, pct, seconds

# Tableau 10, then a few more: distinct on screen and in print.
BACKEND_COLOURS = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
    "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#1f3b73", "#8cd17d",
]
STATUS_COLOURS = {"pass": "#6cbf5a", "fail": "#e15759", "skip": "#cfd3da", "compiled": "#a8cde8"}
STAGE_COLOURS = {
    "case": "#bab0ac", "eager": "#9c755f", "export": "#b07aa1", "import": "#4e79a7",
    "contract": "#76b7b2", "lower": "#59a14f", "compile": "#edc948", "run": "#f28e2b",
    "compare": "#e15759",
}
EXTRA_COLOURS = ["#ff9da7", "#86bcb6", "#d4a6c8", "#8cd17d", "#f1ce63", "#a0cbe8", "#d37295", "#79706e"]


def _f(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


def stage_colours(stages: list[str]) -> dict[str, str]:
    out, extra = {}, 0
    for s in stages:
        if s in STAGE_COLOURS:
            out[s] = STAGE_COLOURS[s]
        else:
            out[s] = EXTRA_COLOURS[extra % len(EXTRA_COLOURS)]
            extra += 1
    return out


def trend_chart(history: list[dict], backends: list[str], colours: dict[str, str]) -> str:
    """Pass rate per backend across reports (oldest left): one <path class="trend-line"> per backend."""
    width, height = 860, 280
    left, right, top, bottom = 52, 20, 14, 40
    pw, ph = width - left - right, height - top - bottom
    n = len(history)
    xs = [left + (pw * i / (n - 1) if n > 1 else pw / 2) for i in range(n)]
    values = [v for h in history for v in (h.get("pass_rate") or {}).values() if v is not None]
    lowest = max(0.0, min(values) - 0.02) if values else 0.0
    step = 0.05 if lowest >= 0.7 else 0.1 if lowest >= 0.4 else 0.25
    lo, hi = math.floor(lowest / step + 1e-9) * step, 1.0  # gridlines on multiples of the step, up to 100%
    span = hi - lo

    def y(v: float) -> float:
        return top + ph * (1 - (v - lo) / span)

    out = [
        f'<svg id="trend" class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="Pass rate per backend across reports">'
    ]
    tick = lo
    while tick <= hi + 1e-9:
        ty = y(tick)
        out.append(f'<line class="grid" x1="{left}" x2="{width - right}" y1="{_f(ty)}" y2="{_f(ty)}"/>')
        out.append(f'<text class="axis" x="{left - 6}" y="{_f(ty + 4)}" text-anchor="end">{round(tick * 100)}%</text>')
        tick = round(tick + step, 6)
    every = max(1, math.ceil(n / 8))
    for i, h in enumerate(history):
        if i % every and i != n - 1:
            continue
        if i != n - 1 and n - 1 - i < every:
            continue  # keep the last label clear of its neighbour
        label = str(h.get("report") or (h.get("started") or "")[:10] or i + 1)
        if len(label) > 16:
            label = label[:15] + "…"
        anchor = "middle" if n == 1 or 0 < i < n - 1 else "start" if i == 0 else "end"
        out.append(
            f'<text class="axis" x="{_f(xs[i])}" y="{height - bottom + 18}" text-anchor="{anchor}">{esc(label)}</text>'
        )
    for backend in backends:
        colour = colours.get(backend, "#333")
        points = [(xs[i], h.get("pass_rate", {}).get(backend)) for i, h in enumerate(history)]
        d, pen_down = [], False
        for x, v in points:
            if v is None:
                pen_down = False
                continue
            d.append(f"{'L' if pen_down else 'M'}{_f(x)} {_f(y(v))}")
            pen_down = True
        out.append(
            f'<path class="trend-line" data-backend="{esc(backend)}" d="{" ".join(d)}" '
            f'stroke="{colour}" fill="none" stroke-width="2.2" stroke-linejoin="round"/>'
        )
        for (x, v), h in zip(points, history):
            if v is not None:
                out.append(
                    f'<circle cx="{_f(x)}" cy="{_f(y(v))}" r="3.2" fill="{colour}">'
                    f'<title>{esc(backend)} · {esc(h.get("report"))}: {pct(v)}</title></circle>'
                )
    out.append("</svg>")
    return "".join(out)


def status_bars(rows: list[tuple[str, int, int, int, float | None, int]]) -> str:
    """One stacked bar per backend: pass / fail / skip / compiled (not run) as shares of its results, the pass rate at the end."""
    width, bar_h, gap, label_w, value_w = 860, 20, 8, 170, 175
    if any(row[5] for row in rows):
        value_w += 150  # room for "; N compiled, not run"
    height = len(rows) * (bar_h + gap) + gap
    pw = width - label_w - value_w
    out = [
        f'<svg id="status-bars" class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="Pass, fail and skip per backend">'
    ]
    for i, (name, n_pass, n_fail, n_skip, rate, n_compiled) in enumerate(rows):
        y0 = gap + i * (bar_h + gap)
        total = n_pass + n_fail + n_skip + n_compiled
        out.append(f'<text class="label" x="{label_w - 8}" y="{y0 + bar_h - 5}" text-anchor="end">{esc(name)}</text>')
        x = float(label_w)
        for status, count in (("pass", n_pass), ("fail", n_fail), ("skip", n_skip), ("compiled", n_compiled)):
            if not total or not count:
                continue
            w = pw * count / total
            out.append(
                f'<rect class="bar-{status}" x="{_f(x)}" y="{y0}" width="{_f(w)}" height="{bar_h}" '
                f'fill="{STATUS_COLOURS[status]}"><title>{esc(name)}: {count} {status}</title></rect>'
            )
            x += w
        out.append(
            f'<text class="value" x="{label_w + pw + 8}" y="{y0 + bar_h - 5}">{pct(rate)} '
            f'<tspan class="muted">({n_pass:,}/{n_pass + n_fail:,} ran{f"; {n_compiled:,} compiled, not run" if n_compiled else ""})</tspan></text>'
        )
    out.append("</svg>")
    return "".join(out)


def stage_bars(rows: list[tuple[str, dict[str, float]]], stages: list[str], colours: dict[str, str]) -> str:
    """One stacked bar per backend: seconds per stage, on a common scale."""
    width, bar_h, gap, label_w, value_w = 860, 20, 8, 170, 110
    height = len(rows) * (bar_h + gap) + gap
    pw = width - label_w - value_w
    longest = max([sum(secs.values()) for _, secs in rows] + [1e-9])
    out = [
        f'<svg id="stage-bars" class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="Seconds per stage per backend">'
    ]
    for i, (name, secs) in enumerate(rows):
        y0 = gap + i * (bar_h + gap)
        total = sum(secs.values())
        out.append(f'<text class="label" x="{label_w - 8}" y="{y0 + bar_h - 5}" text-anchor="end">{esc(name)}</text>')
        x = float(label_w)
        for stage in stages:
            s = secs.get(stage, 0.0)
            if s <= 0:
                continue
            w = pw * s / longest
            out.append(
                f'<rect x="{_f(x)}" y="{y0}" width="{_f(w)}" height="{bar_h}" fill="{colours[stage]}">'
                f'<title>{esc(name)} · {esc(stage)}: {s:,.1f} s ({100 * s / total:.0f}%)</title></rect>'
            )
            x += w
        out.append(f'<text class="value" x="{_f(x + 8)}" y="{y0 + bar_h - 5}">{seconds(total)}</text>')
    out.append("</svg>")
    return "".join(out)


def sparkline(values: list[float | None], colour: str) -> str:
    """A tiny pass-rate line for a backend's card (0–100%)."""
    width, height, pad = 120, 30, 3
    pts = [(i, v) for i, v in enumerate(values) if v is not None]
    if not pts:
        return ""
    n = len(values)
    lo = min(v for _, v in pts)
    hi = max(v for _, v in pts)
    if hi - lo < 0.02:  # a flat line sits in the middle rather than on an edge
        mid = (hi + lo) / 2
        lo, hi = mid - 0.01, mid + 0.01
    span = hi - lo

    def xy(i: int, v: float) -> str:
        x = pad + (width - 2 * pad) * (i / (n - 1) if n > 1 else 0.5)
        y = pad + (height - 2 * pad) * (1 - (v - lo) / span)
        return f"{_f(x)},{_f(y)}"

    line = " ".join(xy(i, v) for i, v in pts)
    last_i, last_v = pts[-1]
    cx, cy = xy(last_i, last_v).split(",")
    return (
        f'<svg class="spark" viewBox="0 0 {width} {height}" width="{width}" height="{height}" aria-hidden="true">'
        f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="1.6"/>'
        f'<circle cx="{cx}" cy="{cy}" r="2.4" fill="{colour}"/></svg>'
    )
