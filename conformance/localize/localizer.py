"""Localizing one failing model case on one backend, from its Result to the op to blame.

    1. the model's failure: given (a run's Result), or found by running the case
    2. export it once, save the program and its inputs in the workspace
    3. binary-search the op prefixes (search.py), each run as a case through
       the backend's own stages in the supervised child (cuts.py): a crash or
       hang there stays a CRASH or TIMEOUT of that cut
    4. the op that cut adds, and for numerics the ops feeding it, alone on
       eager's activations (emit.py writes each as a case; oracle.py measures
       its own error against fp64), in one batch
    5. the record: op, source line, errors, the case file and its bundle

Everything runs through the Engine, as a normal run does; the workspace
keeps the program, the cuts, the emitted cases, their outputs and bundles.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import shutil
import time
from pathlib import Path
from typing import Any, Callable

from conformance.cases.registry import Registry, RegistryError, sources_of
from conformance.execution.engine import Engine
from conformance.settings import Settings
from conformance.localize import cuts, emit, graph, oracle
from conformance.localize.record import EXTRAS_KEY
from conformance.localize.search import Search, first_failing_cut, same_failure
from conformance.paths import safe_name
from conformance.result import Result
from conformance.taxonomy import Code, Stage
from conformance.toolchain import mlir

RECORD = "localized.json"
OPS_DIR = "ops"  # the one-op cases written
OUTPUTS = "outputs"  # every run's outputs, kept for the errors measured here
SUSPECTS = 8  # for numerics: the op at the cut and up to this many ops feeding it, checked alone
NUMERIC_CODES = {Code.NUMERIC_MISMATCH, Code.NAN_MISMATCH}
UNCUTTABLE = {Stage.CASE, Stage.EAGER, Stage.EXPORT}  # no exported program to cut
LOWERED_SHOWN = 4  # ops named for what a numerically wrong op lowered to


class LocalizeError(Exception):
    """Nothing can be localized; the message says why (unknown case, a pass, an op case ...)."""


def localize(
    case_id: str,
    backend: str,
    settings: Settings,
    workspace: Path,
    failure: Result | None = None,
    log: Callable[[str], None] = lambda line: None,
) -> dict[str, Any]:
    """The localization record of `case_id` on `backend` (a --backend spec); raises LocalizeError.

    `failure` is the case's Result on that backend when the caller has it
    (a run's); otherwise the case runs once first.
    """
    started = time.monotonic()
    registry = Registry.load(sources_of(settings), settings.suites)
    case = _model_case(registry, case_id)
    base = dataclasses.replace(settings, backends=[backend], reruns=0, check_determinism=False)
    if failure is None:
        log(f"running {case_id} on {backend} to see how it fails")
        failure = _run(base, [(case_id, _name(backend))])[0]
    _check_failure(failure, case_id)
    workspace = Path(workspace).resolve()
    model_graph, input_sets = _export(case, settings, workspace)
    found = _search(model_graph, case, failure, base, workspace, log)
    culprit = model_graph.op(found.first)

    # The op alone (and, for numerics, the ops feeding it) on eager's activations, all in one job: one batch.
    numeric = failure.code in NUMERIC_CODES
    suspects = _suspects(model_graph, culprit, SUSPECTS if numeric else 0)
    values = model_graph.activations(input_sets[0], {n for s in suspects for n in emit.tensor_args(s)})
    files, unwritten = {}, {}
    for s in suspects:
        try:
            files[s.name] = emit.write_case(workspace / OPS_DIR, _op_case(case_id, s), s, values, case_id, backend)
        except emit.EmitError as e:
            unwritten[s.name] = str(e)
    op_settings = dataclasses.replace(
        base, case_paths=[*settings.case_paths, str(workspace / OPS_DIR)], keep_outputs=str(workspace / OUTPUTS),
        artifacts=settings.artifacts or str(workspace / "bundles"),
    )
    ran = _run(op_settings, [(_op_case(case_id, s), failure.backend) for s in suspects if s.name in files]) if files else []
    alone = {r.case: r for r in ran}
    errors = _own_errors(case_id, suspects, values, workspace, failure.backend) if numeric else {}
    blamed_name = oracle.blame(errors) if numeric else culprit.name
    blamed = next((s for s in suspects if s.name == blamed_name), culprit)
    blamed_alone = alone.get(_op_case(case_id, blamed))

    first = found.tried[found.first]
    record = {
        "case": case_id,
        "backend": failure.backend,
        "code": failure.code,
        "op": blamed.aten,
        "target": blamed.target,
        "node": blamed.name,
        "index": blamed.index,
        "ops": len(model_graph.ops),
        "source": blamed.source,
        "module": blamed.module_path,
        "mlir_op": _mlir_op(blamed_alone, failure, numeric),
        "verdict": _verdict(failure, numeric, blamed_name, blamed_alone),
        "first_failing_cut": {
            "index": culprit.index, "node": culprit.name, "op": culprit.aten, "code": first.code, "explanation": first.explanation,
            **_cut_error(model_graph, first, found.first, input_sets[0], case, workspace),
        },
        "alone": _brief(blamed_alone) | {"case": _op_case(case_id, blamed)} if blamed_alone else None,
        "suspects": [
            {"node": s.name, "op": s.aten, "index": s.index, **_brief(alone.get(_op_case(case_id, s))),
             **({"error": errors[s.name].to_dict()} if s.name in errors else {}),
             **({"not_written": unwritten[s.name]} if s.name in unwritten else {})}
            for s in suspects
        ],
        "case_file": str(files[blamed.name]) if blamed.name in files else None,
        "bundle": blamed_alone.artifacts if blamed_alone else None,
        "cuts_run": len(found.tried),
        "trail": {str(k): r.code or r.status for k, r in sorted(found.tried.items())},
        "failed_otherwise": {str(k): f"{r.code}{_at(r.op)}" for k, r in found.otherwise(failure).items()},
        "compiles": len(found.tried) + bool(ran),  # each cut, then the suspects in one batch
        "seconds": round(time.monotonic() - started, 1),
        "workspace": str(workspace),
    }
    if blamed.name in errors:
        record["own_error"] = errors[blamed.name].to_dict()
    if culprit.index == 1:
        record["note"] = f"{failure.backend} fails already on the first op of {case_id}: the failure may not be this op's alone"
    (workspace / RECORD).write_text(json.dumps(record, indent=1))
    return record


def _export(case, settings: Settings, workspace: Path) -> tuple[graph.Graph, list]:
    """Export the case once, save the program and its inputs in the workspace; its graph and input sets."""
    from conformance.cases.inputs import make_inputs, make_module

    workspace.mkdir(parents=True, exist_ok=True)
    for stale in (OUTPUTS, OPS_DIR):  # an earlier localization's outputs and cases must not be read as this one's
        shutil.rmtree(workspace / stale, ignore_errors=True)
    export_mode = case.export_mode or settings.export_mode
    module, input_sets = make_module(case, settings.seed), make_inputs(case, settings.seed)
    try:
        program = graph.export_case(module, input_sets[0], strict=export_mode == "strict")
    except Exception as e:
        raise LocalizeError(f"{case.id} does not export here ({type(e).__name__}: {e}): there is no graph to cut") from e
    graph.save(workspace, program, input_sets)
    model_graph = graph.load(workspace)
    if not model_graph.ops:
        raise LocalizeError(f"{case.id}'s exported graph has no op to cut at")
    cuts.write_plan(workspace, case, [o.name for o in model_graph.ops], export_mode)
    return model_graph, input_sets


def _search(model_graph: graph.Graph, case, failure: Result, base: Settings, workspace: Path, log) -> Search:
    """The binary search, every cut a case of the workspace run by one engine (one child, kept warm)."""
    ops = model_graph.ops
    cut_settings = dataclasses.replace(
        base, case_paths=[*base.case_paths, str(workspace / cuts.CUTS_DIR)], keep_outputs=str(workspace / OUTPUTS), artifacts=None,
    )
    engine = Engine(cut_settings)

    def run_cut(index: int) -> Result:
        [result] = list(engine.run([(cuts.cut_id(case.id, index, ops[index - 1].name), failure.backend)]))  # to the end: JobDone too
        log(f"cut {index:>3}/{len(ops)} ({ops[index - 1].name}): {result.code or result.status}")
        return result

    try:
        found = first_failing_cut(len(ops), run_cut, failure)
    finally:
        engine.close()
    first = found.tried[found.first]
    if not same_failure(failure, first):
        raise LocalizeError(
            f"the whole exported graph of {case.id} does not fail on {failure.backend} as the model does "
            f"({failure.code}{_at(failure.op)}): it gives {first.code or first.status}{_at(first.op)}"
            + (f": {first.explanation}" if first.explanation else "")
        )
    return found


def _own_errors(case_id: str, suspects, values, workspace: Path, backend: str) -> dict[str, oracle.OpError]:
    """Each suspect's own error and noise floor, from the outputs its run alone kept (none for one that failed earlier)."""
    from conformance.execution import determinism

    errors = {}
    for s in suspects:
        kept = determinism.kept(str(workspace / OUTPUTS), _op_case(case_id, s), backend)
        if kept:
            errors[s.name] = oracle.op_error(*emit.op_function(s, values), kept[0])
    return errors


def workspace_for(root: Path, case_id: str, backend: str) -> Path:
    return Path(root) / safe_name(case_id) / safe_name(backend)


def attach(result: Result, spec: str, settings: Settings, root: Path, log: Callable[[str], None] = lambda line: None) -> dict:
    """Localize a failing model Result (`spec`: its backend as the run named it) into its extras; returns the record.

    What cannot be localized is recorded as {"error": why}: a run never
    loses a result to its localization.
    """
    try:
        record = localize(result.case, spec, settings, workspace_for(root, result.case, result.backend), failure=result, log=log)
    except LocalizeError as e:
        record = {"error": str(e)}
    except Exception as e:  # a bug of ours must not cost the run its result
        record = {"error": f"localize failed: {type(e).__name__}: {e}"}
    result.extras[EXTRAS_KEY] = record
    return record


# -- helpers ------------------------------------------------------------------


def _name(spec: str) -> str:
    from conformance.backends import loader

    return loader.resolve(spec).name


def _run(settings: Settings, pairs: list[tuple[str, str]]) -> list[Result]:
    engine = Engine(settings)
    try:
        return list(engine.run(pairs))
    finally:
        engine.close()


def _model_case(registry: Registry, case_id: str):
    try:
        case = registry[case_id]
    except RegistryError:
        close = difflib.get_close_matches(case_id, [c.id for c in registry], n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else " (conformance list shows the cases)"
        raise LocalizeError(f"no case with id {case_id!r}{hint}") from None
    if case.kind != "model":
        raise LocalizeError(
            f"{case_id} is an {case.kind} case: it is one op already, nothing to cut; "
            "run it with --artifacts for its reproducer bundle"
        )
    if case.format != "torch":
        raise LocalizeError(f"{case_id} is an {case.format} model: localize cuts PyTorch's exported graphs only")
    return case


def _check_failure(failure: Result, case_id: str) -> None:
    if failure.passed:
        raise LocalizeError(f"{case_id} passes on {failure.backend}: nothing to localize")
    if not failure.failed:
        reason = f": {failure.explanation}" if failure.explanation else ""
        raise LocalizeError(f"{case_id} on {failure.backend} is {failure.status}, not a failure{reason}: nothing to localize")
    if failure.stage in UNCUTTABLE:
        raise LocalizeError(
            f"{case_id} fails on {failure.backend} at {failure.stage} ({failure.code}), before there is an exported "
            "graph to cut: localize works on the exported program"
        )


def _suspects(model_graph: graph.Graph, culprit: graph.OpNode, count: int) -> list[graph.OpNode]:
    """The op at the cut, then (nearest first) up to `count` earlier ops whose values reach it."""
    if count == 0:
        return [culprit]
    ancestors: set = set()
    stack = [culprit.node]
    while stack:
        for n in stack.pop().all_input_nodes:
            if n not in ancestors:
                ancestors.add(n)
                stack.append(n)
    feeding = [o for o in model_graph.ops[: culprit.index - 1] if o.node in ancestors]
    return [culprit, *reversed(feeding[-count:])]


def _cut_error(model_graph: graph.Graph, first: Result, index: int, inputs, case, workspace: Path) -> dict[str, Any]:
    """The error at the first failing cut, from the outputs its run kept (where it ran to the end)."""
    import torch

    from conformance.execution import determinism

    kept = determinism.kept(str(workspace / OUTPUTS), first.case, first.backend)
    if not kept:
        return {}
    with torch.no_grad():
        expected = model_graph.cut(index)(*inputs)
    abs_error, ratio, _ = oracle.error(kept[0], expected, case.rtol, case.atol)
    return {"max_abs_error": abs_error, "error_ratio": ratio}


def _op_case(case_id: str, op: graph.OpNode) -> str:
    return f"{case_id}.{op.name}"


def _brief(result: Result | None) -> dict[str, Any]:
    if result is None:
        return {}
    return {"status": result.status, "code": result.code, "explanation": result.explanation}


def _verdict(failure: Result, numeric: bool, blamed: str | None, alone: Result | None) -> str:
    if numeric:
        if blamed is None:
            return "propagated: no op near the cut is off by more than its dtype allows; the error at the cut accumulated"
        return "local: the op's own error exceeds its dtype's tolerance and the noise floor"
    if alone is None:
        return "not run alone: the op has no case file (see suspects)"
    if same_failure(failure, alone):
        return "fails alone as in the model"
    return f"alone it gives {alone.code or alone.status}{_at(alone.op)}: the failure needs its context in the model"


def _mlir_op(alone: Result | None, failure: Result, numeric: bool) -> str | None:
    """The MLIR op the failure names (not an ATen op); for a numeric failure, what the op alone lowered to.

    A wrong number names no op, but the op's own bundle keeps the IR its run
    compiled: the ops computing in it are what the ATen op became. (Other
    failures stop before that IR: their bundle holds an earlier dialect.)
    """
    for r in (alone, failure):
        if r is not None and r.op and not r.op.startswith(("aten.", "prims.")):
            return r.op
    if not numeric or alone is None or not alone.artifacts:
        return None
    lowered = _lowered_ops(Path(alone.artifacts))
    if not lowered:
        return None
    return ", ".join(lowered[:LOWERED_SHOWN]) + (", ..." if len(lowered) > LOWERED_SHOWN else "")


def _lowered_ops(bundle: Path) -> list[str]:
    """The computing ops of the IR a bundle's failing stage took (input.mlir first, where there are several)."""
    files = sorted(bundle.glob("*.mlir"), key=lambda p: (p.name != "input.mlir", p.name))
    return mlir.computing_ops(files[0].read_text()) if files else []


def _at(op: str | None) -> str:
    return f" ({op})" if op else ""
