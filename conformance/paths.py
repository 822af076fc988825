"""File names derived from case ids, safe whatever the id contains."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def pair_dir(root, case: str, backend: str) -> Path:
    """A (case, backend) pair's own folder under `root`: ROOT/CASE/BACKEND, both made safe. Bundles,
    localize and reduce workspaces and the job's scratch all lay pairs out so; a reader finds them by it."""
    return Path(root) / safe_name(case) / safe_name(backend)


def safe_name(text: str, limit: int = 80) -> str:
    """A file name for `text`: readable, and unique even when characters had to go.

    Ids may hold '/', '..', spaces or be very long (OpInfo ids); any change
    to the text adds a short hash of the original so two ids never collide.
    """
    name = _UNSAFE.sub("_", text).strip("._") or "_"
    if name != text or len(name) > limit:
        digest = hashlib.sha1(text.encode()).hexdigest()[:8]
        name = f"{name[: limit - 9]}-{digest}"
    return name
