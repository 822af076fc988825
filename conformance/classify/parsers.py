"""The diagnostic parsers, asked in order.

A parser takes (stage, text) and returns (code, op, explanation) or None.
"""

from __future__ import annotations

from typing import Callable

Parser = Callable[[str, str], "tuple[str, str | None, str] | None"]

PARSERS: list[Parser] = []
