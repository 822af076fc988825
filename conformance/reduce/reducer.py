"""Reducing one failing case on one backend, from its id to its smallest case file and bundle.

    1. the case's failure: given (a run's Result), or found by running the case
    2. the case as a program (graph.py), run once: it must fail the same way
       (same stage, code and op), or there is nothing to reduce it with
    3. the loop (loop.py), every step through the backend's own stages in
       the supervised child (programs/runner.py)
    4. the smallest program written as a case file, run from that file in a
       fresh child with --artifacts: confirmed, and its reproducer bundle

Any case reduces: a registry case, an OpInfo sample (--suite opinfo), a
fuzz case or a localized model op (--cases DIR, or the file's path as CASE).
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any, Callable

from conformance.cases.registry import Registry, RegistryError, directory_sources, sources_of
from conformance.execution.engine import Engine
from conformance.paths import pair_dir, safe_name
from conformance.programs import program as programs
from conformance.programs.runner import Runner, confirm
from conformance.programs.verdict import fails_same_way, invalid, signature
from conformance.reduce import graph, loop
from conformance.result import Result
from conformance.settings import Settings

RECORD = "reduced.json"


class ReduceError(Exception):
    """Nothing can be reduced; the message says why (unknown case, a pass, a failure before the backend ...)."""


def resolve_case(spec: str, settings: Settings) -> tuple[str, Settings]:
    """A case id, or the path of a case file declaring one case: (its id, settings whose case paths find it)."""
    path = Path(spec)
    if path.suffix != ".py" or not path.is_file():
        return spec, settings
    source = next((s for s in directory_sources(path.resolve().parent) if s.path == path.resolve()), None)
    if source is None:
        raise ReduceError(f"{spec} is not a case module (a file whose name starts with _ is a helper)")
    cases = source.load(settings.suites)
    if len(cases) != 1:
        raise ReduceError(f"{spec} declares {len(cases)} cases: name one by its id, with --cases {path.parent}")
    return cases[0].id, dataclasses.replace(settings, case_paths=[*settings.case_paths, str(path.resolve().parent)])


def reduce_case(case_id: str, spec: str, settings: Settings, workspace: Path, *, failure: Result | None = None,
                seconds: float = 600.0, runs: int = 1000, log: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    """The reduction record of `case_id` on `spec` (a --backend value); raises ReduceError."""
    from conformance.backends import loader

    started = time.monotonic()
    registry = Registry.load(sources_of(settings), settings.suites)
    case = _case(registry, case_id)
    name = loader.resolve(spec).name
    base = dataclasses.replace(settings, backends=[spec], reruns=0, check_determinism=False, compile_only=False, artifacts=None)
    if failure is None:
        log(f"running {case_id} on {name} to see how it fails")
        engine = Engine(base)
        try:
            [failure] = list(engine.run([(case_id, name)]))
        finally:
            engine.close()
    _check(failure, case_id)
    try:
        program = graph.program_of(case, settings.seed, settings.export_mode)
    except graph.GraphError as e:
        raise ReduceError(str(e)) from None
    workspace = Path(workspace).resolve()
    log(f"{case_id} as a program: {program.describe()}; it fails with {signature(failure)}")
    with Runner(base, [name], workspace, settings.batch_size * 2, program.rtol, program.atol, program.export_mode) as runner:
        [[first]] = runner.run([program])
        dynamic = None if fails_same_way(failure, first) else graph.with_dynamic_dims(program, case)
        if dynamic is not None:
            log(f"{case_id} as a static program gives {signature(first) if first.failed else first.status}: "
                f"trying its dynamic dims, {dynamic.describe()}")
            [[first]] = runner.run([dynamic])
            program = dynamic
        if not fails_same_way(failure, first):
            raise ReduceError(
                f"{case_id} as a program of its exported graph gives {signature(first) if first.failed else first.status} on {name}, "
                f"not {signature(failure)}: the failure needs something the graph does not keep "
                f"({'its dynamic dims did not bring it back: ' if dynamic else ''}an input set, a size the graph spells ...)"
            )
        outcome = loop.reduce(program, failure, lambda batch: [r[0] for r in runner.run(batch)], seconds=seconds, runs=runs, log=log)
    reduced_id = f"{case_id}.reduced"
    doc = (
        f"{case_id} on {name}, reduced by `conformance reduce`: {signature(failure)}.\n\n{failure.explanation}\n\n"
        f"From {program.describe()}, after {outcome.runs} runs: {'; '.join(outcome.kept) or 'nothing smaller fails so'}.\n"
        f"Run it: pytest --backend={spec} --cases {workspace / 'case'} -k {reduced_id}"
    )
    case_file = programs.write(outcome.program, workspace / "case", safe_name(reduced_id).replace(".", "_"), reduced_id, doc, ("reduced",))
    confirmed = confirm(settings, [spec], workspace / "case", [(reduced_id, name)], workspace / "bundles")[(reduced_id, name)]
    record = {
        "case": case_id, "backend": name, "stage": failure.stage, "code": failure.code, "op": failure.op,
        "explanation": failure.explanation,
        "from": program.describe(), "to": outcome.program.describe(), "ops": list(outcome.program.ops),
        "inputs": [f"{i.dtype}[{', '.join(map(str, i.shape))}]" for i in outcome.program.inputs],
        "steps": outcome.kept, "rounds": outcome.rounds, "runs": outcome.runs, "out_of_budget": outcome.out_of_budget,
        "case_id": reduced_id, "case_file": str(case_file),
        "confirmed": fails_same_way(failure, confirmed),
        "confirm": {"status": confirmed.status, "code": confirmed.code, "op": confirmed.op, "explanation": confirmed.explanation},
        "bundle": confirmed.artifacts, "seconds": round(time.monotonic() - started, 1), "workspace": str(workspace),
    }
    (workspace / RECORD).write_text(json.dumps(record, indent=1))
    return record


workspace_for = pair_dir  # a pair's workspace: ROOT/CASE/BACKEND


def _case(registry: Registry, case_id: str):
    try:
        case = registry[case_id]
    except RegistryError as e:
        raise ReduceError(str(e)) from None
    if case.format != "torch":
        raise ReduceError(f"{case_id} is an {case.format} model: reduce works on PyTorch programs only")
    return case


def _check(failure: Result, case_id: str) -> None:
    if failure.passed:
        raise ReduceError(f"{case_id} passes on {failure.backend}: nothing to reduce")
    if not failure.failed:
        raise ReduceError(f"{case_id} on {failure.backend} is {failure.status}, not a failure: nothing to reduce")
    if invalid(failure):
        raise ReduceError(
            f"{case_id} fails at {failure.stage} ({failure.code}) before {failure.backend} sees it: "
            "reduce shrinks what a backend gets wrong"
        )
