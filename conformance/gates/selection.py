"""Which cases are gated: the models, the op cases tagged `gated`, and any case a gates file names.

A team chooses by tagging a case (`tags={"gated"}`) or by adding its id to
a gates file by hand; `conformance gates update` then keeps its figures.
"""

from __future__ import annotations

from typing import Iterable

GATED_TAG = "gated"


def chosen_by_default(kind: str, tags: Iterable[str]) -> bool:
    """A model, or a case tagged `gated`: what gates update writes without being told."""
    return kind == "model" or GATED_TAG in set(tags)
