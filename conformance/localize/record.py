"""The localization record as a Result carries it (`extras["localized"]`) and reports show it.

Light on purpose: reports and the pytest plugin read it without torch.
"""

from __future__ import annotations

from typing import Any

EXTRAS_KEY = "localized"  # Result.extras key of the record


def localization(result: Any) -> dict | None:
    """The record a Result carries, or None."""
    extras = getattr(result, "extras", None)
    record = extras.get(EXTRAS_KEY) if isinstance(extras, dict) else None
    return record if isinstance(record, dict) else None


def summary(record: dict) -> str:
    """One line: the op, its source line, how far off it is on its own (or why nothing was localized)."""
    if "error" in record:
        return f"not localized: {record['error']}"
    own = record.get("own_error")
    numbers = f"; own error {own['own_abs']:.3g} vs noise floor {own['noise_abs']:.3g}" if own else ""
    lowered = f" -> {record['mlir_op']}" if record.get("mlir_op") else ""
    return (
        f"localized to {record['op']}{lowered} (node {record['node']}, op {record['index']} of {record['ops']}) "
        f"at {record['source'] or record.get('module') or 'an unknown line'}{numbers}; {record['verdict']}"
    )
