"""The compile cache: warm re-runs, invalidation, corruption, the size bound, parallel writers."""

import json
import multiprocessing
import shutil

from conformance.execution.compile_cache_store import CompileCache
from conformance.execution.engine import Engine
from conformance.settings import Settings
from tests.conftest import FIXTURES, fake

CASES = ["tanh", "add.broadcast", "double", "sum.int"]


def run(cache_dir, cases_dir=FIXTURES / "cases", backend="tosa", cases=CASES, name=None):
    """`backend` is a --backend spec; `name` the backend's name when the spec is not it."""
    settings = Settings(backends=[backend], case_paths=[str(cases_dir)], default_cases=False, cache_dir=str(cache_dir) if cache_dir else None)
    engine = Engine(settings)
    try:
        return {r.case: r for r in engine.run([(c, name or backend) for c in cases])}
    finally:
        engine.close()


def verdicts(results):
    return {c: (r.status, r.stage, r.code, r.explanation) for c, r in results.items()}


def test_a_warm_rerun_skips_export_lowering_and_compile_with_the_same_results(tmp_path):
    cold = run(tmp_path / "cache")
    warm = run(tmp_path / "cache")
    assert verdicts(warm) == verdicts(cold)
    assert all("compile" in r.timings for r in cold.values())
    for r in warm.values():
        assert not {"export", "import", "contract", "lower", "compile"} & set(r.timings), r.timings
        assert "cache" in r.timings and ("run" in r.timings) == r.passed
    # The ops seen at export survive in the cached record.
    assert warm["tanh"].extras["aten_ops"] == cold["tanh"].extras["aten_ops"] == ["aten.tanh.default"]


def test_a_failure_before_compile_is_kept_and_replayed_by_a_warm_run(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_SCRIPT", json.dumps({"double": "raise"}))  # fails at lower, parsed
    cold = run(tmp_path / "cache", backend=fake("CACHED"), name="cached")
    warm = run(tmp_path / "cache", backend=fake("CACHED"), name="cached")
    assert verdicts(warm) == verdicts(cold)
    assert (cold["double"].stage, cold["double"].code) == ("lower", "UNSUPPORTED_OP"), cold["double"]
    assert "lower" in cold["double"].timings
    for case, result in warm.items():
        assert not {"lower", "compile"} & set(result.timings), (case, result.timings)
        assert "cache" in result.timings
        assert ("run" in result.timings) == (case != "double")


def test_no_cache_writes_nothing(tmp_path):
    run(None)
    assert not (tmp_path / "cache").exists()


def test_a_case_is_keyed_by_what_its_module_computes_not_by_the_source_files_near_it(tmp_path):
    cases = tmp_path / "cases"
    shutil.copytree(FIXTURES / "cases", cases)
    run(tmp_path / "cache", cases_dir=cases)
    (cases / "small.py").write_text((cases / "small.py").read_text().replace("x * 2", "x * 3") + "# an edit elsewhere\n")
    again = run(tmp_path / "cache", cases_dir=cases)
    # Only the case whose program changed is lowered and compiled again; the others still hit.
    assert "lower" in again["double"].timings and "compile" in again["double"].timings
    assert not {"lower", "compile"} & set(again["tanh"].timings)


DATA_CASES = """
import json
from pathlib import Path

import torch

from conformance import Exact, Stored, T, op

DATA = json.loads((Path(__file__).parent.parent / "data.json").read_text())


def offsets(shape, dtype, generator):
    return torch.full(shape, float(DATA["offset"]), dtype=dtype)


CASES = [
    op("scaled", lambda x: x * DATA["scale"], T(4)),
    op("shifted", torch.neg, T(4, gen=offsets)),
    op("stored", torch.neg, Exact.tensors(torch.ones(4)), reference=Stored(lambda: [torch.full((4,), -float(DATA["stored"]))])),
    op("rand_like", lambda x: torch.rand_like(x), T(64, 64), nondeterministic=True),
]
"""


def test_a_constant_or_generated_inputs_from_a_data_file_change_the_key(tmp_path):
    """The data sit outside the case directory: no source file of the cases changes."""
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "data_cases.py").write_text(DATA_CASES)
    data = tmp_path / "data.json"
    data.write_text('{"scale": 2, "offset": 1, "stored": 1}')
    ids = ["scaled", "shifted", "stored", "rand_like"]
    first = run(tmp_path / "cache", cases_dir=cases, cases=ids)
    assert all(r.passed for r in first.values()), first
    # Unchanged, a hit: a random op's eager outputs differ from run to run, but they are no part of the key.
    unchanged = run(tmp_path / "cache", cases_dir=cases, cases=ids)
    assert all(r.passed and "lower" not in r.timings for r in unchanged.values()), unchanged
    data.write_text('{"scale": 3, "offset": 5, "stored": 2}')
    changed = run(tmp_path / "cache", cases_dir=cases, cases=ids)
    # The constant is an argument of the module's call: a miss, compiled anew (a stale hit failed with NUMERIC_MISMATCH).
    assert changed["scaled"].passed and "compile" in changed["scaled"].timings, changed["scaled"]
    # New input bytes: a miss up to the IR, whose compiled artifact is still the one it was.
    assert changed["shifted"].passed and "lower" in changed["shifted"].timings, changed["shifted"]
    assert "compile" not in changed["shifted"].timings
    # New stored outputs: a miss too (a cached contract check was made against the old ones).
    assert "lower" in changed["stored"].timings and changed["stored"].code == "NUMERIC_MISMATCH", changed["stored"]
    assert "lower" not in changed["rand_like"].timings


def test_the_export_mode_is_part_of_the_key(tmp_path):
    run(tmp_path / "cache", cases=["tanh"])
    settings = Settings(backends=["tosa"], case_paths=[str(FIXTURES / "cases")], default_cases=False,
                        cache_dir=str(tmp_path / "cache"), export_mode="strict")
    engine = Engine(settings)
    try:
        strict = {r.case: r for r in engine.run([("tanh", "tosa")])}["tanh"]
    finally:
        engine.close()
    assert strict.passed and strict.extras["export_mode"] == "strict"
    assert "lower" in strict.timings  # another key: lowered again (the same IR then hits, not compiled)


def test_an_onnx_case_is_keyed_by_its_model_and_a_warm_rerun_replays_it(tmp_path):
    """An ONNX case's module is a ModelProto, not an nn.Module: no trace, no state_dict; its bytes key it."""
    cases = ["onnx.abs", "onnx.abs_wrong"]  # a pass and a NUMERIC_MISMATCH against the stored reference
    cold = run(tmp_path / "cache", FIXTURES / "onnx_cases", backend="onnx-linalg", cases=cases)
    warm = run(tmp_path / "cache", FIXTURES / "onnx_cases", backend="onnx-linalg", cases=cases)
    assert verdicts(warm) == verdicts(cold)
    assert cold["onnx.abs"].passed and cold["onnx.abs_wrong"].code == "NUMERIC_MISMATCH", cold
    for result in warm.values():
        assert not {"import", "onnx2torch", "contract", "lower", "compile"} & set(result.timings), result.timings


def test_corrupt_entries_are_detected_and_rebuilt(tmp_path):
    cache_dir = tmp_path / "cache"
    run(cache_dir, cases=["tanh", "double"])
    blobs = list((cache_dir / "blobs").glob("*/*"))
    assert blobs
    for blob in blobs:
        blob.write_bytes(b"torn write")
    for index in (cache_dir / "cases").glob("*/*.json"):
        index.write_text("{not json")
    again = run(cache_dir, cases=["tanh", "double"])
    assert all(r.passed and "compile" in r.timings for r in again.values())
    cache = CompileCache(cache_dir)
    assert all(cache.blob(p.name) for p in (cache_dir / "blobs").glob("*/*"))  # rebuilt, contents match names


def test_the_store_is_bounded_and_evicts_the_least_recently_used(tmp_path):
    cache = CompileCache(tmp_path, limit_bytes=3000)
    keys = []
    for i in range(5):
        source = tmp_path / f"a{i}"
        source.write_bytes(bytes([i]) * 1000)
        keys.append(cache.put_blob(source))
    cache.blob(keys[0])  # used again: now the most recent
    assert cache.evict() == 3
    kept = {p.name for p in (tmp_path / "blobs").glob("*/*")}
    assert kept == {keys[0], keys[4]}


def _writer(root, n):
    cache = CompileCache(root)
    source = root / f"src{n}"
    source.write_bytes(b"x" * 100_000)
    for i in range(20):
        key = cache.put_blob(source)
        cache.put_ir(f"{i:064x}", key, {"function": f"c{i}", "writer": n})
        assert cache.ir(f"{i:064x}") is not None


def test_parallel_writers_never_leave_a_torn_entry(tmp_path):
    processes = [multiprocessing.get_context("spawn").Process(target=_writer, args=(tmp_path, n)) for n in range(4)]
    for p in processes:
        p.start()
    for p in processes:
        p.join()
    assert all(p.exitcode == 0 for p in processes)
    cache = CompileCache(tmp_path)
    for i in range(20):
        path, meta = cache.ir(f"{i:064x}")
        assert meta["function"] == f"c{i}" and path.read_bytes() == b"x" * 100_000
    assert not list(tmp_path.rglob(".tmp-*"))


def test_the_call_trace_sees_constants_weights_and_calls_and_nothing_that_varies():
    import contextlib

    import torch

    from conformance.execution.call_trace import trace_digest

    def digest_of(module, *inputs):
        return trace_digest(module, list(inputs), contextlib.nullcontext())

    class Scaled(torch.nn.Module):
        def __init__(self, scale):
            super().__init__()
            self.scale = scale
            self.linear = torch.nn.Linear(3, 2)
            torch.nn.init.ones_(self.linear.weight)
            torch.nn.init.zeros_(self.linear.bias)

        def forward(self, x):
            generator = torch.Generator().manual_seed(0)  # an argument whose repr holds an address
            return self.linear(x) * self.scale + torch.rand(2, generator=generator)

    x = torch.ones(4, 3)
    base = digest_of(Scaled(2), x)
    assert digest_of(Scaled(2), x) == base  # a new module object, the same computation
    assert digest_of(Scaled(2), torch.zeros(4, 3)) == base  # input values are the values digest's business
    assert digest_of(Scaled(3), x) != base  # a constant
    heavier = Scaled(2)
    torch.nn.init.zeros_(heavier.linear.weight)
    assert digest_of(heavier, x) != base  # a weight
    explicit = Scaled(2)
    explicit.forward = lambda x: (x @ explicit.linear.weight.t() + explicit.linear.bias) * 2 + torch.rand(2, generator=torch.Generator().manual_seed(0))
    assert digest_of(explicit, x) != base  # the same numbers by other calls: another program
