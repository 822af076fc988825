"""Resolving a `--backend` value to a Backend.

Three ways in, tried in this order:
  - `module:attr` or `path/to/file.py:attr`: any importable object;
  - a name shipped in the project's `backends/` directory (each file exposes
    `BACKEND` or `BACKENDS`);
  - a name registered by an installed package under the entry point group
    `conformance.backends`.
The object may be a Backend instance, a Backend subclass, or a function
returning a Backend.

A name may carry a target after `@` (parse_targeted): `tosa@cuda`,
`linalg@rocm:gfx942`, `tosa@llvm-cpu:O0` is the named backend's
`targeted(target, options)`, a backend of its own name.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import traceback
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

from conformance import content
from conformance.backends.protocol import Backend

ENTRY_POINT_GROUP = "conformance.backends"

broken_files: dict[str, str] = {}  # backend files that failed to import, with the error


class BackendError(Exception):
    """A backend spec cannot be resolved; the message lists what is known."""


# Frames of the import machinery and of this package, above the user's code in a traceback.
_MACHINERY = (str(Path(importlib.__file__).parent) + os.sep, str(Path(__file__).resolve().parent.parent) + os.sep, "<frozen ")


def their_traceback(error: BaseException) -> str:
    """`error`'s traceback from the first frame of the user's code on (their file, what it called)."""
    frames = traceback.extract_tb(error.__traceback__)
    first = next((i for i, frame in enumerate(frames) if not frame.filename.startswith(_MACHINERY)), len(frames))
    lines = traceback.format_list(frames[first:]) + traceback.format_exception_only(error)
    return "Traceback (most recent call last):\n" + "".join(lines).rstrip()


def _load(what: str, load):
    """`load()`, or BackendError naming `what` with the user's traceback."""
    try:
        return load()
    except BackendError:
        raise
    except Exception as e:
        raise BackendError(f"{what} failed:\n{their_traceback(e)}") from e


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
            broken_files[str(path)] = their_traceback(e)
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


# NAME@TARGET[:OPTION]...: a backend name (no path, no module), then the target and its options.
TARGETED = re.compile(r"(?P<name>[A-Za-z0-9_-]+)@(?P<rest>.*)")


@dataclass(frozen=True)
class TargetedSpec:
    name: str  # the backend, e.g. "tosa"
    target: str  # e.g. "rocm"
    options: tuple[str, ...]  # e.g. ("gfx942",) or ("O0",)


def parse_targeted(spec: str) -> TargetedSpec | None:
    """`linalg@rocm:gfx942` -> TargetedSpec("linalg", "rocm", ("gfx942",)); None when `spec` names no target."""
    match = TARGETED.fullmatch(spec)
    if match is None:
        return None
    target, *options = match["rest"].split(":")
    if not target or not all(options):
        raise BackendError(
            f"backend {spec!r}: write NAME@TARGET[:CHIP][:LEVEL], e.g. tosa@cuda, linalg@rocm:gfx942, tosa@llvm-cpu:O0"
        )
    return TargetedSpec(match["name"], target, tuple(options))


def _targeted(spec: str, parsed: TargetedSpec) -> Backend:
    base = resolve(parsed.name)
    if not takes_targets(base):
        able = [name for name, backend in shipped().items() if takes_targets(backend)]
        raise BackendError(f"backend {spec!r}: {parsed.name} compiles for no target of choice; these do: {', '.join(able) or '(none)'}")
    try:
        return base.targeted(parsed.target, list(parsed.options))
    except ValueError as e:  # an unknown target, chip or level: the message names the known ones
        raise BackendError(f"backend {spec!r}: {e}") from None


def takes_targets(backend: Backend) -> bool:
    return type(backend).targeted is not Backend.targeted


@functools.cache
def resolve(spec: str) -> Backend:
    """The Backend for a `--backend` value; BackendError says what is known."""
    parsed = parse_targeted(spec)
    if parsed is not None:
        return _targeted(spec, parsed)
    if ":" in spec:
        target, _, attr = spec.rpartition(":")
        module = _load(f"backend {spec!r}: importing {target}", lambda: _import(target, spec))
        try:
            obj = getattr(module, attr)
        except AttributeError:
            raise BackendError(f"{target!r} has no attribute {attr!r} (backend {spec!r})") from None
        return _load(f"backend {spec!r}: making the backend", lambda: _instantiate(obj, spec))
    if spec in shipped():
        return shipped()[spec]
    eps = _entry_points()
    if spec in eps:
        origin = f"entry point {spec!r} ({eps[spec].value})"
        return _load(f"loading {origin}", lambda: _instantiate(eps[spec].load(), origin))
    broken = "".join(f"\n{path} failed to load:\n{error}" for path, error in broken_files.items())
    raise BackendError(
        f"unknown backend {spec!r}; known backends: {', '.join(known_names()) or '(none)'}; "
        f"or give module:NAME to load one from any importable module{broken}"
    )


def _import(target: str, spec: str):
    if target.endswith(".py"):
        path = Path(target).resolve()
        if not path.is_file():
            raise BackendError(f"backend {spec!r}: no such file {target}")
        return content.import_file(path.parent, path)
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as e:
        if e.name and (target == e.name or target.startswith(e.name + ".")):  # the module itself, not one it imports
            raise BackendError(f"backend {spec!r}: no module named {e.name!r}") from None
        raise
