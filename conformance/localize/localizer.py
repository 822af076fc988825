"""Localizing one failing case (a model, or an op case of several ops) on one backend, from its Result to the op to blame.

    1. export it once (an op case of one op: its decomposition, or nothing to cut)
    2. the case's failure: given (a run's Result), or found by running the case
    3. save the program and its inputs in the workspace; its higher-order ops
       inlined (inline.py), number its ops: cut k, a case of the workspace, is
       the program up to op k (cuts.py)
    4. find the first cut that fails as the case does: the node the failure
       names, confirmed (named.py), else a binary search (search.py); each cut
       runs as a case through the backend's own stages in the supervised
       child: a crash or hang there stays a CRASH or TIMEOUT of that cut
    5. run the op that cut adds, and for numerics the ops feeding it, alone on
       eager's activations (emit.py writes each as a case; oracle.py measures
       its own error against fp64), in one batch
    6. blame one of them (blame.py); where the op blamed does not fail alone,
       try it in its context (context.py: its constants frozen, the op before
       it), one more batch
    7. write the record (record.py): op, source line, errors, the case file and its bundle

Everything runs through the Engine, as a normal run does; the workspace
keeps the program, the cuts, the emitted cases, their outputs and bundles.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import time
from pathlib import Path
from typing import Any, Callable

from conformance.cases.registry import Registry, RegistryError, sources_of
from conformance.execution.engine import Engine
from conformance.settings import Settings
from conformance.localize import context, cuts, emit, graph, oracle
from conformance.localize.blame import SUSPECTS, Checked, InContext, blame, needs_context, suspects
from conformance.localize.named import named_op
from conformance.localize.record import EXTRAS_KEY, Localized
from conformance.localize.search import Search, at, at_named, first_failing_cut, same_failure
from conformance.paths import pair_dir
from conformance.result import Result
from conformance.taxonomy import WRONG_VALUES, Stage

RECORD = "localized.json"
OPS_DIR = "ops"  # the one-op cases written
OUTPUTS = "outputs"  # every run's outputs, kept for the errors measured here
UNCUTTABLE = {Stage.CASE, Stage.EAGER, Stage.EXPORT}  # no exported program to cut


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
    case = _cuttable_case(Registry.load(sources_of(settings), settings.suites), case_id)
    base = dataclasses.replace(settings, backends=[backend], reruns=0, check_determinism=False, compile_only=False)
    if failure is not None:
        _check_failure(failure, case_id)
    export_mode = case.export_mode or settings.export_mode
    program, input_sets, decomposed = _export(case, settings.seed, export_mode)
    if failure is None:
        log(f"running {case_id} on {backend} to see how it fails")
        failure = _run(base, [(case_id, _name(backend))])[0]
        _check_failure(failure, case_id)
    workspace = Path(workspace).resolve()
    model_graph = _save(program, input_sets, workspace)
    _number(model_graph, case, export_mode, workspace)
    found = _search(model_graph, case, failure, base, workspace, log)
    culprit = model_graph.op(found.first)
    numeric = failure.code in WRONG_VALUES
    checked = _run_suspects(case_id, model_graph, culprit, numeric, input_sets[0], failure, base, workspace)
    in_context = None
    if needs_context(failure, culprit, checked, numeric):
        in_context = _run_in_context(case_id, model_graph, culprit, input_sets[0], failure, base, workspace)
    blamed = blame(failure, culprit, checked, numeric, model_graph.inlined.kept, in_context)
    first_cut = _cut_error(model_graph, found.tried[found.first], found.first, input_sets[0], case, workspace)
    seconds = round(time.monotonic() - started, 1)
    record = Localized.build(
        failure, culprit, len(model_graph.ops), found, first_cut, checked, blamed, seconds, str(workspace),
        decomposed=decomposed, inlined=model_graph.inlined.inlined,
    )
    return _write(workspace, record)


def _export(case, seed: int, export_mode: str) -> tuple[Any, list, bool]:
    """The case exported (its program, input sets, and whether it was decomposed to have ops to cut).

    An op case of one op has nothing to cut: its decomposition (torch's core
    ATen set) may have several ops, the failure among them; if not, it is
    refused here, before anything runs.
    """
    from conformance.cases.inputs import make_inputs, make_module

    module, input_sets = make_module(case, seed), make_inputs(case, seed)
    try:
        program = graph.export_case(module, input_sets[0], strict=export_mode == "strict")
    except Exception as e:
        raise LocalizeError(f"{case.id} does not export here ({type(e).__name__}: {e}): there is no graph to cut") from e
    ops = graph.of_program(program, input_sets[0]).ops
    if not ops:
        raise LocalizeError(f"{case.id}'s exported graph has no op to cut at")
    if case.kind == "model" or len(ops) > 1:
        return program, input_sets, False
    decomposed = graph.decompose(program)
    if len(graph.of_program(decomposed, input_sets[0]).ops) > 1:
        return decomposed, input_sets, True
    raise LocalizeError(
        f"{case.id} is an {case.kind} case: it is one op already, nothing to cut ({ops[0].aten}, decomposed too); "
        "run it with --artifacts for its reproducer bundle"
    )


def _save(program, input_sets: list, workspace: Path) -> graph.Graph:
    """The program and its inputs saved in the workspace, read back as the children will read them."""
    workspace.mkdir(parents=True, exist_ok=True)
    for stale in (OUTPUTS, OPS_DIR):  # an earlier localization's outputs and cases must not be read as this one's
        shutil.rmtree(workspace / stale, ignore_errors=True)
    graph.save(workspace, program, input_sets)
    return graph.load(workspace)


def _number(model_graph: graph.Graph, case, export_mode: str, workspace: Path) -> None:
    """Number the graph's ops into cuts: the plan and case file the child loads cut k (ops 1..k) from."""
    cuts.write_plan(workspace, case, [o.name for o in model_graph.ops], export_mode)


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
        named, tried = named_op(model_graph, failure), {}
        found = None
        if named is not None:
            log(f"the failure names node {named.name} (op {named.index}): confirming it is the first to fail")
            found, tried = at_named(named.index, run_cut, failure)
        if found is None:
            found = first_failing_cut(len(ops), run_cut, failure, tried)
    finally:
        engine.close()
    first = found.tried[found.first]
    if not same_failure(failure, first):
        raise LocalizeError(
            f"the whole exported graph of {case.id} does not fail on {failure.backend} as the model does "
            f"({failure.code}{at(failure.op)}): it gives {first.code or first.status}{at(first.op)}"
            + (f": {first.explanation}" if first.explanation else "")
        )
    return found


def _run_suspects(
    case_id: str, model_graph: graph.Graph, culprit: graph.OpNode, numeric: bool, inputs: list, failure: Result,
    base: Settings, workspace: Path,
) -> Checked:
    """The op alone (and, for numerics, the ops feeding it) on eager's activations, all in one job: one batch."""
    ops = suspects(model_graph, culprit, SUSPECTS if numeric else 0)
    values = model_graph.activations(inputs, {n for s in ops for n in emit.tensor_args(s)})
    [spec] = base.backends  # as the run named it: the case files say how to rerun them with it
    files, unwritten = _write_op_cases(case_id, ops, values, spec, workspace)
    op_settings = dataclasses.replace(
        base, case_paths=[*base.case_paths, str(workspace / OPS_DIR)], keep_outputs=str(workspace / OUTPUTS),
        artifacts=base.artifacts or str(workspace / "bundles"),
    )
    ran = _run(op_settings, [(emit.op_case_id(case_id, s), failure.backend) for s in ops if s.name in files]) if files else []
    by_case = {r.case: r for r in ran}
    alone = {s.name: by_case[emit.op_case_id(case_id, s)] for s in ops if emit.op_case_id(case_id, s) in by_case}
    errors = _own_errors(case_id, ops, values, workspace, failure.backend) if numeric else {}
    return Checked(case_id, ops, files, unwritten, alone, errors, ran=bool(ran))


def _run_in_context(
    case_id: str, model_graph: graph.Graph, culprit: graph.OpNode, inputs: list, failure: Result, base: Settings, workspace: Path,
) -> InContext:
    """The op that did not fail alone, in each of its contexts in the model (context.py), all in one batch."""
    values = model_graph.activations(inputs, context.nodes_needed(model_graph, culprit))
    tries = context.candidates(model_graph, culprit, values)
    [spec] = base.backends
    files, unwritten = {}, {}
    for c in tries:
        try:
            files[c.suffix] = emit.write_case(
                workspace / OPS_DIR, context_case_id(case_id, culprit, c), culprit, values, case_id, spec,
                before=c.before, frozen=c.frozen, stem=f"{culprit.name}_{c.suffix}",
            )
        except emit.EmitError as e:
            unwritten[c.suffix] = str(e)
    op_settings = dataclasses.replace(
        base, case_paths=[*base.case_paths, str(workspace / OPS_DIR)], artifacts=base.artifacts or str(workspace / "bundles"),
    )
    pairs = [(context_case_id(case_id, culprit, c), failure.backend) for c in tries if c.suffix in files]
    by_case = {r.case: r for r in _run(op_settings, pairs)} if pairs else {}
    ran = {c.suffix: by_case[context_case_id(case_id, culprit, c)] for c in tries if context_case_id(case_id, culprit, c) in by_case}
    return InContext(tries, files, unwritten, ran)


def context_case_id(case_id: str, op: graph.OpNode, candidate: context.Candidate) -> str:
    return f"{emit.op_case_id(case_id, op)}.{candidate.suffix}"


def _write_op_cases(case_id: str, ops: list[graph.OpNode], values, spec: str, workspace: Path) -> tuple[dict, dict]:
    """Each op as a case file of its own: ({node: its file}, {node: why it has none})."""
    files, unwritten = {}, {}
    for s in ops:
        try:
            files[s.name] = emit.write_case(workspace / OPS_DIR, emit.op_case_id(case_id, s), s, values, case_id, spec)
        except emit.EmitError as e:
            unwritten[s.name] = str(e)
    return files, unwritten


def _own_errors(case_id: str, suspects, values, workspace: Path, backend: str) -> dict[str, oracle.OpError]:
    """Each suspect's own error and noise floor, from the outputs its run alone kept (none for one that failed earlier)."""
    from conformance.execution import determinism

    errors = {}
    for s in suspects:
        kept = determinism.kept(str(workspace / OUTPUTS), emit.op_case_id(case_id, s), backend)
        if kept:
            errors[s.name] = oracle.op_error(*emit.op_function(s, values), kept[0])
    return errors


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


def _write(workspace: Path, record: Localized) -> dict[str, Any]:
    """The record into the workspace's localized.json; returned as Results carry it (a dict)."""
    written = record.to_dict()
    (workspace / RECORD).write_text(json.dumps(written, indent=1))
    return written


workspace_for = pair_dir  # a pair's workspace: ROOT/CASE/BACKEND


def attach(result: Result, spec: str, settings: Settings, root: Path, log: Callable[[str], None] = lambda line: None) -> dict:
    """Localize a failing Result into its extras; returns the record. `spec`: its backend as the run named it.

    A model case, or an op case of several ops (one op: refused, as below).

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


def _cuttable_case(registry: Registry, case_id: str):
    try:
        case = registry[case_id]
    except RegistryError as e:
        raise LocalizeError(str(e)) from None
    if case.format != "torch":
        raise LocalizeError(f"{case_id} is an {case.format} {case.kind} case: localize cuts PyTorch's exported graphs only")
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
