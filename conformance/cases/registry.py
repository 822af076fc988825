"""The case registry: discovery, unique ids, selection.

A case module exposes either `CASES` (a list of Case) or `cases()` (a
function returning them, for content that is costly to enumerate), and
optionally `SUITE = "name"` (default "default"): a suite is loaded only when
a run asks for it. Sources are the project's `cases/` directory, any
`--cases` directory or module, a suite written elsewhere
(`--cases KIND:LOCATION`, e.g. `torch-mlir-e2e:PATH`: see
conformance/cases/sources/), and the entry point group `conformance.cases`
(a module, a list of cases, or a function returning one).
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import types
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Callable, Iterable, Sequence

from conformance import content
from conformance.cases.spec import Case, CaseError

ENTRY_POINT_GROUP = "conformance.cases"
DEFAULT_SUITE = "default"
# Suites of other projects shipped with the framework (conformance/cases/sources/):
# always discovered, loaded only when a run asks for their suite (--suite NAME).
BUILTIN_SUITES = ("conformance.cases.sources.onnx_node",)
# `--cases KIND:LOCATION`, a suite living in a checkout of its own: the module reading each KIND,
# whose `sources(location, spec)` returns its CaseSources. By name: the sources import this module.
SOURCE_KINDS = {
    "torch-mlir-e2e": "conformance.cases.sources.torch_mlir_e2e",  # a torch-mlir checkout's e2e registry
}


class RegistryError(Exception):
    """The registry cannot be built; the message names the source and the problem."""


@dataclass(frozen=True)
class CaseSource:
    """One place cases come from: a file in a case directory, a module, an entry point, a suite from elsewhere."""

    label: str  # what a user recognises: a path, a module name, an entry point
    load_module: Callable[[], object]
    family: str = ""  # default family for its cases (a file's stem)
    path: Path | None = None
    origin: str = ""  # the source tree (a case directory, or a module's file)
    # A suite from elsewhere names its suite here. Named by --cases, it loads whatever the
    # run's suites; `opt_in` (a variant of it) only when the run asks for the suite.
    suite: str | None = None
    opt_in: bool = False
    # The project's cases/ under --no-default-cases: its default suite is left out, but a suite the
    # run asks for by name (--suite opinfo, whose module lives there) still loads.
    named_suites_only: bool = False
    report: Callable[[], list[str]] | None = None  # what the source could not import, by reason (conformance list)

    def load(self, suites: Iterable[str]) -> list[Case]:
        """The source's cases in the wanted suites; raises RegistryError naming the source."""
        if self.suite is not None and self.opt_in and self.suite not in suites:
            return []
        if self.named_suites_only and not set(suites) - {DEFAULT_SUITE}:
            return []  # not even imported: only the default suite is wanted, and it is left out
        try:
            obj = self.load_module()
            suite = self.suite or (getattr(obj, "SUITE", DEFAULT_SUITE) if isinstance(obj, types.ModuleType) else DEFAULT_SUITE)
            if suite not in suites and self.suite is None:
                return []
            if self.named_suites_only and suite == DEFAULT_SUITE:
                return []
            found = _cases_of(obj)
        except (CaseError, RegistryError) as e:
            raise RegistryError(f"{self.label}: {e}") from e
        except Exception as e:
            raise RegistryError(f"{self.label}: loading the cases failed: {type(e).__name__}: {e}") from e
        for c in found:
            if not isinstance(c, Case):
                raise RegistryError(f"{self.label}: {c!r} is not a Case")
        family = self.family
        origin = self.origin or getattr(obj, "__file__", None) or ""
        return [
            dataclasses.replace(c, family=c.family or family, suite=suite, defined_at=c.defined_at or self.label, origin=origin)
            for c in found
        ]


def _cases_of(obj: object) -> list[Case]:
    if isinstance(obj, types.ModuleType):
        if hasattr(obj, "cases"):
            return list(obj.cases())
        if hasattr(obj, "CASES"):
            return list(obj.CASES)
        raise RegistryError("defines neither CASES nor cases()")
    if callable(obj):
        return list(obj())
    if isinstance(obj, (list, tuple)):
        return list(obj)
    raise RegistryError(f"{obj!r} is not a module, a list of cases or a function returning one")


def directory_sources(directory: Path) -> list[CaseSource]:
    if not directory.is_dir():
        raise RegistryError(f"case directory {directory} does not exist")
    return [
        CaseSource(
            label=str(path.relative_to(directory.parent)) if directory.parent in path.parents else str(path),
            load_module=lambda path=path: content.import_file(directory, path),
            family=path.stem,
            path=path,
            origin=str(directory.resolve()),
        )
        for path in content.module_files(directory)
    ]


def module_source(name: str) -> CaseSource:
    return CaseSource(label=name, load_module=lambda: importlib.import_module(name), family=name.rsplit(".", 1)[-1])


def entry_point_sources() -> list[CaseSource]:
    return [
        CaseSource(label=f"entry point {ep.name} ({ep.value})", load_module=ep.load, family=ep.name)
        for ep in entry_points(group=ENTRY_POINT_GROUP)
    ]


def external_sources(spec: str) -> list[CaseSource] | None:
    """The sources of `KIND:LOCATION` (a suite written elsewhere), or None when `spec` is not one."""
    kind, colon, location = spec.partition(":")
    if not colon or Path(spec).exists():
        return None
    if kind not in SOURCE_KINDS:
        if "/" in kind or not kind.replace("-", "").replace("_", "").isalnum():
            return None  # a path or module that happens to hold a colon: let those rules speak
        raise RegistryError(f"--cases {spec}: no case source kind {kind!r} (known: {', '.join(sorted(SOURCE_KINDS))})")
    return importlib.import_module(SOURCE_KINDS[kind]).sources(location, spec)


def sources_of(settings) -> list[CaseSource]:
    """The case sources a run's Settings name (its --cases paths, with or without the project's cases/)."""
    return discover(settings.case_paths, default_dir=settings.default_cases)


def discover(paths: Sequence[str] = (), default_dir: bool = True, plugins: bool = True) -> list[CaseSource]:
    """All case sources: the project's cases/, the built-in suites, then `paths` (dirs, modules or KIND:LOCATION), then entry points.

    Without `default_dir` the project's cases/ contributes only the suites a run names (--suite).
    """
    sources: list[CaseSource] = []
    if content.DEFAULT_CASES_DIR.is_dir():
        project = directory_sources(content.DEFAULT_CASES_DIR)
        sources += project if default_dir else [dataclasses.replace(s, named_suites_only=True) for s in project]
    sources += [module_source(name) for name in BUILTIN_SUITES]
    for p in paths:
        external = external_sources(p)
        if external is not None:
            sources += external
            continue
        looks_like_path = "/" in p or p.endswith(".py") or Path(p).exists()
        sources += directory_sources(Path(p)) if looks_like_path else [module_source(p)]
    if plugins:
        sources += entry_point_sources()
    return sources


class Registry:
    """Cases by id, in declaration order."""

    def __init__(self, cases: Iterable[Case] = ()):
        self.cases: dict[str, Case] = {}
        for c in cases:
            self.add(c)

    def add(self, case: Case) -> None:
        other = self.cases.get(case.id)
        if other is not None:
            raise RegistryError(
                f"duplicate case id {case.id!r}: defined at {other.defined_at} and at {case.defined_at}"
            )
        self.cases[case.id] = case

    @classmethod
    def load(cls, sources: Sequence[CaseSource], suites: Iterable[str] = (DEFAULT_SUITE,)) -> Registry:
        suites = tuple(suites)
        registry = cls()
        for source in sources:
            for c in source.load(suites):
                registry.add(c)
        return registry

    def __len__(self) -> int:
        return len(self.cases)

    def __iter__(self):
        return iter(self.cases.values())

    def __getitem__(self, case_id: str) -> Case:
        try:
            return self.cases[case_id]
        except KeyError:
            close = difflib.get_close_matches(case_id, list(self.cases), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else " (conformance list shows the cases)"
            raise RegistryError(f"no case with id {case_id!r}{hint}") from None

    def select(self, keyword: str | None = None, tags: Iterable[str] = (), skip_tags: Iterable[str] = ()) -> list[Case]:
        """Cases matching a pytest-style `-k` expression and tag filters.

        `-k` matches against the id and the tags, as pytest's -k does against
        an item's name and keywords.
        """
        tags, skip_tags = set(tags), set(skip_tags)
        matcher = _keyword_matcher(keyword)
        chosen = []
        for c in self:
            all_tags = c.all_tags
            if tags and not tags & all_tags:
                continue
            if skip_tags & all_tags:
                continue
            if matcher and not matcher(c.id, all_tags):
                continue
            chosen.append(c)
        return chosen


def _keyword_matcher(expression: str | None):
    if not expression:
        return None
    # pytest's -k grammar, so the CLI and `pytest -k` select alike.
    from conformance.cases.keyword import compile_keyword

    compiled = compile_keyword(expression)

    def matches(case_id: str, tags: frozenset[str]) -> bool:
        names = [case_id.lower(), *(t.lower() for t in tags)]
        return compiled(lambda sub: any(sub.lower() in n for n in names))

    return matches
