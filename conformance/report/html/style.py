"""How outcomes look: each failure code's abbreviation and colour, and the CSS classes of matrix cells.

The classes are shared with assets/report.css (their colours) and
assets/report.js (the outcome filter reads them).
"""

from __future__ import annotations

from conformance.report.html.format import text_colour
from conformance.taxonomy import Code, Stage, Verdict

# Failure codes: abbreviation shown in a matrix cell, and its colour. Hues
# group the kinds: purple frontend, orange unsupported, red compiler, dark red
# runtime, pink numerics, brown the case or the environment, black UNKNOWN.
CODE_STYLE: dict[str, tuple[str, str]] = {
    Code.EXPORT_UNSUPPORTED: ("EXP", "#8e6bbf"),
    Code.DYNAMIC_SHAPE_UNSUPPORTED: ("DYN", "#a58bd0"),
    Code.TYPE_REFINEMENT: ("TRF", "#6f4fa8"),
    Code.UNSUPPORTED_OP: ("UOP", "#f28e2b"),
    Code.ILLEGAL_TYPE: ("ITY", "#f5a95b"),
    Code.CUSTOM_OP_UNCONVERTIBLE: ("CUC", "#d9771a"),
    Code.VERIFIER_ERROR: ("VER", "#e15759"),
    Code.COMPILER_ERROR: ("CMP", "#c9383a"),
    Code.RUNTIME_ERROR: ("RUN", "#9c2f2f"),
    Code.CRASH: ("CRS", "#5e1414"),
    Code.TIMEOUT: ("TMO", "#b05a7a"),
    Code.NUMERIC_MISMATCH: ("NUM", "#d64f9e"),
    Code.SHAPE_MISMATCH: ("SHP", "#c75ba8"),
    Code.DTYPE_MISMATCH: ("DTY", "#a9478f"),
    Code.NAN_MISMATCH: ("NAN", "#ef9dcc"),
    Code.STRUCTURE_MISMATCH: ("STR", "#8f3a70"),
    Code.CASE_ERROR: ("CAS", "#9c755f"),
    Code.NONDETERMINISTIC_REFERENCE: ("NDR", "#b59a86"),
    Code.TOOLCHAIN_SKEW: ("SKW", "#8c6d31"),
    Code.TOOL_MISSING: ("TMS", "#a39a96"),
    Code.UNKNOWN: ("UNK", "#222222"),
}
FALLBACK_CODE_COLOURS = ["#5f6b7a", "#7d5a50", "#4b6a88", "#6b5b95", "#807040"]
UNSTYLED = ("?", "#777777")

STATUS_CLASS = {"pass": "p", "fail": "f", "skip": "s", "flaky": "y", "compiled": "cp"}  # cp: compiled, not run (no device)
VERDICT_CLASS = {Verdict.XFAIL: "vx", Verdict.XPASS: "vp", Verdict.CHANGED: "vc", Verdict.FAIL: "vf"}
VERDICT_ORDER = [v.value for v in Verdict]
CHANGE_CLASS = {1: "nf", 2: "np", 3: "nc"}  # newly failing, newly passing, failing differently
CHANGE_FLAG = {"newly_failing": 1, "newly_passing": 2, "changed": 3}  # summary["changes"] key -> flag
STAGE_ORDER = [s.value for s in Stage]


def ordered_codes(codes: set[str]) -> list[str]:
    """Codes in taxonomy order (kinds together), codes from elsewhere after them."""
    known = list(CODE_STYLE)
    return sorted(codes, key=lambda c: (known.index(c) if c in CODE_STYLE else len(known), c))


def code_styles(codes: list[str]) -> dict[str, tuple[str, str]]:
    """(abbreviation, colour) per code; a code the taxonomy lacks gets a free abbreviation and a grey."""
    styles, used, extra = {}, {a for a, _ in CODE_STYLE.values()}, 0
    for code in codes:
        if code in CODE_STYLE:
            styles[code] = CODE_STYLE[code]
            continue
        abbr = "".join(w[:1] for w in code.split("_") if w)[:3].upper() or code[:3].upper()
        while abbr in used:
            abbr = (abbr[:2] + str(extra))[:3]
            extra += 1
        used.add(abbr)
        styles[code] = (abbr, FALLBACK_CODE_COLOURS[len(styles) % len(FALLBACK_CODE_COLOURS)])
    return styles


def code_css(codes: list[str], styles: dict[str, tuple[str, str]]) -> str:
    """One class per code (k0, k1, ...): a matrix cell's and a legend swatch's colour."""
    rules = []
    for i, code in enumerate(codes):
        colour = styles[code][1]
        rules.append(f".mx td.k{i},.lg.k{i}{{background-color:{colour};color:{text_colour(colour)}}}")
    return "\n" + "\n".join(rules) + "\n"


def ordered_stages(present: set[str]) -> list[str]:
    """Stages in pipeline order, unknown ones after them."""
    return [s for s in STAGE_ORDER if s in present] + sorted(present - set(STAGE_ORDER))
