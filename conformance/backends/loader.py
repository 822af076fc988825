"""Resolving a `--backend` value to a Backend.

Three ways in, tried in this order:
  - `module:attr` or `path/to/file.py:attr`: any importable object;
  - a name shipped in the project's `backends/` directory (each file exposes
    `BACKEND` or `BACKENDS`);
  - a name registered by an installed package under the entry point group
    `conformance.backends`.
The object may be a Backend instance, a Backend subclass, or a function
returning a Backend.
"""

from __future__ import annotations

import functools
import importlib
from importlib.metadata import entry_points
from pathlib import Path

from conformance import content
from conformance.backends.protocol import Backend

ENTRY_POINT_GROUP = "conformance.backends"

broken_files: dict[str, str] = {}  # backend files that failed to import, with the error


class BackendError(Exception):
    """A backend spec cannot be resolved; the message lists what is known."""


def _instantiate(obj: object, origin: str) -> Backend:
    if isinstance(obj, type) and issubclass(obj, Backend):
        obj = obj()
    elif callable(obj) and not isinstance(obj, Backend):
        obj = obj()
    if not isinstance(obj, Backend):
        raise BackendError(f"{origin} is {obj!r}, not a conformance Backend")
    if not obj.name:
        raise BackendError(f"{origin} has no name")
    if obj.stages[-1:] != ("run",):
        raise BackendError(f"{origin}: the last stage must be 'run', got {obj.stages}")
    return obj


@functools.cache
def shipped(directory: Path = content.DEFAULT_BACKENDS_DIR) -> dict[str, Backend]:
    """The backends in the project's backends/ directory, by name.

    A file that fails to import is remembered in `broken_files` and named
    when a backend cannot be found; it does not stop the others from loading.
    """
    found: dict[str, Backend] = {}
    if not directory.is_dir():
        return found
    for path in content.module_files(directory):
        try:
            module = content.import_file(directory, path)
        except Exception as e:
            broken_files[str(path)] = f"{type(e).__name__}: {e}"
            continue
        objs = getattr(module, "BACKENDS", None) or [getattr(module, "BACKEND", None)]
        for obj in objs:
            if obj is None:
                continue
            backend = _instantiate(obj, str(path))
            if backend.name in found:
                raise BackendError(f"backend name {backend.name!r} is defined twice (again in {path})")
            found[backend.name] = backend
    return found


def _entry_points() -> dict:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def known_names() -> list[str]:
    return sorted(set(shipped()) | set(_entry_points()))


def matrix_names() -> list[str]:
    """The shipped backends a nightly run and the xfail sets cover."""
    return [name for name, b in sorted(shipped().items()) if b.in_matrix]


@functools.cache
def resolve(spec: str) -> Backend:
    """The Backend for a `--backend` value; BackendError says what is known."""
    if ":" in spec:
        target, _, attr = spec.rpartition(":")
        try:
            if target.endswith(".py"):
                path = Path(target).resolve()
                module = content.import_file(path.parent, path)
            else:
                module = importlib.import_module(target)
        except Exception as e:
            raise BackendError(f"cannot import {target!r} for backend {spec!r}: {type(e).__name__}: {e}") from e
        try:
            obj = getattr(module, attr)
        except AttributeError:
            raise BackendError(f"{target!r} has no attribute {attr!r} (backend {spec!r})") from None
        return _instantiate(obj, spec)
    if spec in shipped():
        return shipped()[spec]
    eps = _entry_points()
    if spec in eps:
        return _instantiate(eps[spec].load(), f"entry point {spec!r}")
    broken = "".join(f"; {path} failed to load ({error})" for path, error in broken_files.items())
    raise BackendError(
        f"unknown backend {spec!r}; known backends: {', '.join(known_names()) or '(none)'}; "
        f"or give module:NAME to load one from any importable module{broken}"
    )


def parse_backend_option(values: list[str] | None) -> list[str]:
    """`--backend a,b --backend c` -> ["a", "b", "c"], order kept, duplicates dropped."""
    specs: list[str] = []
    for value in values or []:
        for spec in value.split(","):
            spec = spec.strip()
            if spec and spec not in specs:
                specs.append(spec)
    return specs
