"""A pair not run here (no device, or --compile-only): stage what running it on another machine needs.

The backend says how its run stage goes elsewhere (Backend.remote_run: the
compiled module and one command per input set); this adds how to judge
what those commands write, so that `conformance verdicts-from` compares
as RunAndCompare would have (remote/layout.py names the files): the case's
tolerances, the nesting of eager's outputs, the inputs updated in place,
and the Result so far (its timings and extras). Staged only with
--artifacts; bundles.py and remote/bundle.py make the bundle of it.
"""

from __future__ import annotations

from torch.utils._pytree import tree_flatten

from conformance.backends.protocol import Backend
from conformance.bundles import save_tensor
from conformance.execution.item import Item
from conformance.remote import layout
from conformance.reproducer import Reproducer, stage_reproducer
from conformance.settings import Settings

# Non-tensor outputs JSON and pickle hold as they are (a case returning a shape or a flag).
PLAIN = (bool, int, float, str, type(None))


def can_run_elsewhere(backend: Backend, it: Item) -> bool:
    return backend.remote_run(it.value, it.run) is not None


def stage(backend: Backend, it: Item, explanation: str, settings: Settings) -> None:
    """With --artifacts, stage the pair's run elsewhere (nothing when the backend cannot, or an output is no plain value)."""
    run = it.run
    if run.staging is None:
        return
    remote = backend.remote_run(it.value, run)
    if remote is None:
        return
    flat = [tree_flatten(expected) for expected in run.expected]
    leaves = [[None if hasattr(leaf, "detach") else leaf for leaf in leaves] for leaves, _ in flat]
    if any(not isinstance(leaf, PLAIN) for set_leaves in leaves for leaf in set_leaves):
        return
    mutations = run.extras.get("mutations") or []
    files = dict(remote.files)
    files[layout.MANIFEST] = lambda path: layout.write_manifest(path, manifest(backend, it, explanation, settings))
    files[layout.STRUCTURE] = lambda path: layout.write_structure(path, [spec for _, spec in flat], leaves)
    for index, after in enumerate(run.inputs_after if mutations else ()):
        for i in (i for i in mutations if i is not None):
            files[f"{layout.AFTER}/set{index}/{i}"] = _saver(after[i])
    stage_reproducer(run.staging, layout.STAGE, Reproducer(files, remote.commands, remote.replay))


def _saver(tensor):
    def write(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        save_tensor(tensor, path)  # path.npy (or .pt)

    return write


def manifest(backend: Backend, it: Item, explanation: str, settings: Settings) -> dict:
    """remote.json: what judging the outputs elsewhere needs, as RunAndCompare reads it from the CaseRun;
    and where the case comes from, to measure a numeric mismatch against the program in float64."""
    from conformance.execution.judging import input_set_sizes

    run, case = it.run, it.run.case
    return {
        "case": it.case_id,
        "backend": backend.name,
        "compiled": explanation,
        "sets": len(run.inputs),
        "case_timeout": settings.case_timeout,
        "case_source": {"case_paths": settings.case_paths, "default_cases": settings.default_cases, "suites": settings.suites,
                        "seed": settings.seed},
        "sizes": [input_set_sizes(run, index) for index in range(len(run.inputs))],
        "rtol": case.rtol,
        "atol": case.atol,
        "statistical": run.random,
        "values": case.reference.values,
        "reference": case.reference.label,
        "ops": list(case.ops),
        "mutations": run.extras.get("mutations") or [],
        "timings": dict(it.timings),
        "extras": run.extras,
        "case_record": case.record(),
        "tool": backend.tool("run"),
        "compare_tool": backend.tool("compare"),
    }
