"""A Result against its golden figures: each figure within tolerance, above it (a regression) or below it.

The outcome is not a verdict: a pair beyond tolerance stays PASS. It is
recorded in `extras["gates"]` (outcome() below) for the reports, and
`pytest --gates` fails the item with message() naming each figure beyond.
Only a pass (or a pair compiled for a device not here: its compile
figures) is judged; a failure has no figures worth the name. A figure the
run did not measure (a batch's module size, a run time without --gates)
is listed as unmeasured, never as a failure.
"""

from __future__ import annotations

from conformance.gates.figures import FIGURES, Tolerance
from conformance.gates.sets import GateSet
from conformance.result import Result
from conformance.taxonomy import Status

EXTRAS_KEY = "gates"

WITHIN = "within"
BEYOND = "beyond"  # worse than golden beyond tolerance: a regression
BELOW = "below"  # better than golden beyond tolerance: the golden is stale (update it); no regression


def judge(result: Result, gates: GateSet) -> dict | None:
    """The gate outcome of `result` against its backend's set; None when the case is not gated or the pair not judged."""
    entry = gates.get(result.case)
    if entry is None or result.status not in (Status.PASS, Status.COMPILED):
        return None
    figures, unmeasured = [], []
    for name, golden in entry.figures.items():
        measured = FIGURES[name].measured(result.extras or {})
        if measured is None:
            unmeasured.append(name)
            continue
        tolerance = gates.tolerance_of(result.case, name)
        allowed = tolerance.allowed(golden)
        state = BEYOND if measured > golden + allowed else BELOW if measured < golden - allowed else WITHIN
        figures.append({
            "figure": name, "golden": golden, "measured": measured, "allowed": round(allowed, 6),
            "tolerance": tolerance.to_toml(), "state": state,
        })
    states = {f["state"] for f in figures}
    status = BEYOND if BEYOND in states else BELOW if BELOW in states else WITHIN
    return {"status": status, "file": gates.path.name, "figures": figures, "unmeasured": unmeasured}


def attach(result: Result, gates: GateSet) -> dict | None:
    """Judge `result` and record the outcome in its extras (replacing an earlier one)."""
    found = judge(result, gates)
    result.extras.pop(EXTRAS_KEY, None)
    if found is not None:
        result.extras[EXTRAS_KEY] = found
    return found


def outcome(result: Result) -> dict | None:
    """The gate outcome recorded in a Result, or None."""
    return (result.extras or {}).get(EXTRAS_KEY)


def beyond(result: Result) -> list[dict]:
    """The figures of `result` beyond tolerance (worse than golden)."""
    found = outcome(result)
    return [f for f in found["figures"] if f["state"] == BEYOND] if found else []


def describe(figure: dict) -> str:
    """`run_seconds 0.052 s, golden 0.031 s, tolerance 50% or 0.002 s (allowed up to 0.0465 s)`."""
    spec = FIGURES[figure["figure"]]
    golden, measured, allowed = figure["golden"], figure["measured"], figure["allowed"]
    tolerance = Tolerance(**figure["tolerance"]).describe(spec.unit)
    bound = golden + allowed if figure["state"] != BELOW else golden - allowed
    side = "up to" if figure["state"] != BELOW else "down to"
    return (
        f"{spec.name} {spec.format(measured)}, golden {spec.format(golden)}, "
        f"tolerance {tolerance} (allowed {side} {spec.format(bound)})"
    )


def message(result: Result) -> str:
    """What `pytest --gates` says of a pair beyond tolerance: one line per figure beyond."""
    found = beyond(result)
    head = f"GATE beyond tolerance ({len(found)} figure{'s' if len(found) > 1 else ''}, {outcome(result)['file']}): "
    return head + "; ".join(describe(f) for f in found)
