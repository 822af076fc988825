"""Text and colour helpers every part of the page uses: escaping, percentages, durations, heat colours."""

from __future__ import annotations

import html


def esc(value) -> str:
    """HTML-escaped text (quotes too, so it is safe in an attribute)."""
    return html.escape("" if value is None else str(value), quote=True)


def pct(rate: float | None, digits: int = 1) -> str:
    return "–" if rate is None else f"{100 * rate:.{digits}f}%"


def seconds(s: float | None) -> str:
    if s is None:
        return "–"
    if s < 120:
        return f"{s:,.1f} s"
    if s < 7200:
        return f"{s / 60:,.1f} min"
    return f"{s / 3600:,.1f} h"


def clip(text: str | None, limit: int) -> str:
    text = text or ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def heat(rate: float | None) -> str:
    """A style attribute for a pass rate: a clear green at 100%, then yellow to red down to 50% and below.

    Most rates sit between 50% and 100%, so the scale spends its hues there.
    """
    if rate is None:
        return ""
    if rate >= 1:
        return ' style="background:hsl(125,55%,78%)"'
    hue = round(95 * max(0.0, (rate - 0.5) / 0.5) ** 1.3)
    return f' style="background:hsl({hue},78%,{84 if hue > 30 else 86}%)"'


def text_colour(hex_colour: str) -> str:
    """Dark or white text, whichever reads on a background of `#rrggbb`."""
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return "#111" if 0.299 * r + 0.587 * g + 0.114 * b > 150 else "#fff"
