"""The compile cache keys each stage by what it depends on: a new release of one tool re-does only its stages.

A night with a new release is simulated by $CONFORMANCE_PRETEND_VERSIONS
(toolchain/versions.py): the keys see the new version, the tools that run
are the installed ones. The cases run through the real tosa backend.
"""

from __future__ import annotations

import json
import shutil

import pytest

from conformance.backends import loader
from conformance.execution.engine import Engine
from conformance.settings import Settings
from conformance.execution.compile_cache_store import all_versions, compiler_versions, frontend_versions
from conformance.toolchain.versions import PRETEND, pretended_versions
from tests.conftest import FIXTURES, fake
from tests.test_cache import CASES, run, verdicts

FRONTEND = {"export", "import", "contract", "lower"}
NEW_TORCH_MLIR = "torch-mlir=next"
NEW_IREE = "iree-base-compiler=next,iree-base-runtime=next"


def stages_run(results) -> dict[str, set[str]]:
    return {case: set(r.timings) & (FRONTEND | {"compile", "run"}) for case, r in results.items()}


# A case torch-mlir's TOSA lowering refuses (UNSUPPORTED_OP at lower: an empty tensor): a failure of the frontend.
# And one iree-compile refuses (ILLEGAL_TYPE at compile: TOSA has no f64): the compiler's refusal.
FRONTEND_FAILURE = """
import torch

from conformance import T, op

CASES = [op("add.empty", torch.add, T(0, 3), T(0, 3)), op("exp.f64", torch.exp, T(3, dtype=torch.float64))]
"""


@pytest.fixture(scope="module")
def nights(tmp_path_factory):
    """A cold run filling the cache, then each next night on a copy of it, and a cold run of each night for comparison."""
    root = tmp_path_factory.mktemp("nights")
    cases_dir = root / "cases"
    shutil.copytree(FIXTURES / "cases", cases_dir)
    (cases_dir / "refused.py").write_text(FRONTEND_FAILURE)
    night = lambda cache: run(cache, cases_dir=cases_dir, cases=[*CASES, "add.empty", "exp.f64"])
    filled = root / "filled"
    out = {"cold": night(filled)}
    with pytest.MonkeyPatch.context() as patch:
        for name, pretend in (("torch-mlir", NEW_TORCH_MLIR), ("iree", NEW_IREE)):
            patch.setenv(PRETEND, pretend)
            cache = root / name
            shutil.copytree(filled, cache)
            out[name] = night(cache)
            out[f"{name} cold"] = night(root / f"{name}-cold")
    out["caches"] = {"cold": filled, **{name: root / name for name in ("torch-mlir", "iree")}, "torch-mlir cold": root / "torch-mlir-cold"}
    return out


def test_a_new_torch_mlir_imports_and_lowers_again_but_exports_nothing_and_compiles_no_ir_that_is_unchanged(nights):
    assert nights["cold"]["exp.f64"].stage == "compile", "the cases should include a refusal of the compiler"
    for case, ran in stages_run(nights["torch-mlir"]).items():
        passed = nights["cold"][case].passed
        assert "export" not in ran and {"import", "lower"} <= ran and "compile" not in ran, (case, ran)
        assert ("run" in ran) == passed, (case, ran)
    # The IR it refused is the same IR: refused again, not compiled again.
    assert nights["torch-mlir"]["exp.f64"].extras.get("replayed_from_cache")


def test_what_torch_export_made_is_kept_apart_from_torch_mlir_and_shared_by_its_backends():
    from conformance.execution.compile_cache_store import export_versions

    tosa, linalg = loader.resolve("tosa"), loader.resolve("linalg")
    assert "torch" in export_versions(tosa) and "torch-mlir" not in export_versions(tosa)
    assert tosa.share_chain(0) == linalg.share_chain(0)  # so their exported keys are one


def test_a_new_iree_exports_nothing_and_compiles_everything(nights):
    for case, ran in stages_run(nights["iree"]).items():
        assert not FRONTEND & ran, (case, ran)
        cold = nights["cold"][case]
        # A failure of the frontend (before the compiler) is the frontend's: replayed, not compiled.
        assert ("compile" in ran) == (cold.stage not in FRONTEND or cold.passed), (case, ran, cold.stage)


def test_each_night_gives_the_verdicts_a_cold_run_of_that_night_gives(nights):
    assert {r.stage for r in nights["cold"].values()} & FRONTEND, "the cases should include a frontend failure"
    for night in ("torch-mlir", "iree"):
        assert verdicts(nights[night]) == verdicts(nights[f"{night} cold"]) == verdicts(nights["cold"])


def test_a_rerun_reuses_the_lowered_ir_of_its_first_run_but_compiles_again(tmp_path, monkeypatch):
    """A pair failing after the compiler runs again in a fresh process: the compiler and runtime again, not the frontend."""
    monkeypatch.setenv("FAKE_FLAKY_STATE", str(tmp_path))
    settings = Settings(backends=[fake("COUNTED_WRONG_TOSA")], case_paths=[str(FIXTURES / "cases")], default_cases=False,
                        cache_dir=str(tmp_path / "cache"), reruns=1)  # fmt: skip
    engine = Engine(settings)
    try:
        (result,) = list(engine.run([("double", "counted-wrong-tosa")]))
    finally:
        engine.close()
    assert result.code == "NUMERIC_MISMATCH" and len(result.extras["attempts"]) == 2, result
    counted = lambda what: int((tmp_path / f"counted-wrong-tosa-{what}-double").read_text())
    assert (counted("export"), counted("compile")) == (1, 2)


def test_the_host_cpu_keys_only_what_is_compiled_for_the_host():
    default, host = loader.resolve("tosa"), loader.resolve("tosa@llvm-cpu:host")
    assert "cpu" not in compiler_versions(default) and "cpu" not in all_versions(default)
    assert "cpu" in compiler_versions(host) and "cpu" in all_versions(host)
    for backend in (default, host):
        assert "cpu" not in frontend_versions(backend)


def test_each_key_names_only_the_versions_of_its_stages():
    backend = loader.resolve("tosa")
    assert "iree-base-compiler" in compiler_versions(backend) and "torch-mlir" not in compiler_versions(backend)
    assert "torch" not in compiler_versions(backend)
    frontend = frontend_versions(backend)
    assert {"torch", "torch-mlir"} <= set(frontend) and not {"iree-base-compiler", "iree-base-runtime"} & set(frontend)
    assert {"torch", "torch-mlir", "iree-base-compiler", "iree-base-runtime"} <= set(all_versions(backend))
    reference = loader.resolve("tosa-ref")
    assert "tosa-tools" in compiler_versions(reference) and "tosa-tools" not in frontend_versions(reference)


def test_a_pretended_version_must_be_spelled_name_equals_version(monkeypatch):
    monkeypatch.setenv(PRETEND, "torch-mlir=next, iree-base-compiler = 9")
    assert pretended_versions() == {"torch-mlir": "next", "iree-base-compiler": "9"}
    monkeypatch.setenv(PRETEND, "torch-mlir")
    with pytest.raises(ValueError, match="NAME=VERSION"):
        pretended_versions()


def test_a_refusal_of_the_frontend_is_not_run_again_but_a_failure_after_the_compiler_is(nights, tmp_path, monkeypatch):
    from conformance.execution.reruns import ATTEMPTS, TRANSLATION

    refused = nights["cold"]["add.empty"]
    assert refused.stage == "lower" and refused.extras.get(TRANSLATION) and ATTEMPTS not in refused.extras, refused
    # The other half is test_a_rerun_reuses_the_lowered_ir_of_its_first_run_but_compiles_again: a wrong answer runs twice.


def test_lowered_ir_that_does_not_parse_back_runs_the_stages_again(tmp_path):
    """IR the compiler's parser rejects (a lowering's bug) may be rejected by ours too: a miss, never a crash."""
    cache = tmp_path / "cache"
    cold = run(cache)
    for record in (cache / "lowered").rglob("*.json"):
        blob = cache / "blobs" / json.loads(record.read_text())["blob"][:2] / json.loads(record.read_text())["blob"]
        blob.chmod(0o644)
        blob.write_text("this is not MLIR")
        record.write_text(json.dumps({**json.loads(record.read_text()), "blob": _put(cache, blob)}))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(PRETEND, NEW_IREE)
        night = run(cache)
    assert verdicts(night) == verdicts(cold)
    # Back to what torch.export made: imported and lowered again.
    assert all("import" in r.timings and "export" not in r.timings for r in night.values())


def test_an_exported_program_that_does_not_load_is_exported_again(tmp_path):
    cache = tmp_path / "cache"
    cold = run(cache)
    kept = list((cache / "exported").rglob("*.json"))
    assert kept, "the cold run should keep what torch.export made (and its decomposition)"
    for record in kept:
        data = json.loads(record.read_text())
        if "blob" in data:
            broken = tmp_path / "broken.bin"
            broken.write_text("this is no exported program")
            record.write_text(json.dumps({**data, "blob": _put(cache, broken)}))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(PRETEND, NEW_TORCH_MLIR)
        night = run(cache)
    # Neither the decomposed program nor what torch.export made loads: exported and decomposed again, in import.
    assert verdicts(night) == verdicts(cold)
    with pytest.MonkeyPatch.context() as patch:  # what it decomposed again replaced the broken record
        patch.setenv(PRETEND, "torch-mlir=after-next")
        after = run(cache)
    assert verdicts(after) == verdicts(cold) and not any("export" in r.timings for r in after.values())


def _put(cache, blob):
    from conformance.execution.compile_cache_store import CompileCache

    return CompileCache(cache).put_blob(blob)


def test_conformances_own_code_keys_export_and_lowering_but_not_the_compile():
    """A new conformance exports, lowers and classifies again (a fixed classifier must not meet its old
    verdicts in the cache) and still finds each artifact compiled from the same IR bytes."""
    from conformance.digests import code_digest

    tosa = loader.resolve("tosa")
    assert frontend_versions(tosa)["conformance"] == all_versions(tosa)["conformance"] == code_digest() != ""
    assert "conformance" not in compiler_versions(tosa)


def test_a_program_torch_export_saved_decomposes_and_imports_as_it_did_fresh(tmp_path):
    """torch's reader makes fake tensors that run no fallback kernel (an op without a meta rule: the
    decomposition of fake_quantize_per_tensor_affine); load_exported sets them as export made them."""
    import torch
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table

    from conformance.toolchain.decompose import decompose
    from conformance.toolchain.torch_mlir import import_program, load_exported

    class FakeQuantize(torch.nn.Module):
        def forward(self, x):
            return torch.ops.aten.fake_quantize_per_tensor_affine(x, 0.1, 1, 0, 255)

    program = torch.export.export(FakeQuantize(), (torch.rand(3, 4),), strict=False)
    path = tmp_path / "exported.pt2"
    torch.export.save(program, path)
    fresh = import_program(decompose(program, get_decomposition_table()))
    loaded = import_program(decompose(load_exported(path), get_decomposition_table()))
    assert str(loaded) == str(fresh)



def test_a_program_with_symbolic_sizes_or_a_higher_order_op_is_not_kept():
    """Loaded again, such programs decompose otherwise (not_saved_faithfully): they are exported again."""
    import torch

    from conformance.toolchain.torch_mlir import TorchMlirBackend, not_saved_faithfully

    class Sum(torch.nn.Module):
        def forward(self, x):
            return x.sum()

    class Loop(torch.nn.Module):
        def forward(self, x):
            return torch.cond(x.sum() > 0, lambda y: y + 1, lambda y: y - 1, (x,))

    static = torch.export.export(Sum(), (torch.rand(3),))
    dynamic = torch.export.export(Sum(), (torch.rand(3),), dynamic_shapes=({0: torch.export.Dim("n")},))
    looped = torch.export.export(Loop(), (torch.rand(3),))
    assert not_saved_faithfully(static) is None
    assert not_saved_faithfully(dynamic) == "it has symbolic sizes"
    assert "higher-order op cond" in not_saved_faithfully(looped)
    with pytest.raises(ValueError, match="not kept"):
        TorchMlirBackend().export_store(dynamic, None)


def test_a_program_lifting_a_tensor_constant_is_not_kept():
    """narrow's start from a tensor made in forward: a fresh trace folds it (the constant's value is known), a loaded
    program would not."""
    import torch

    from conformance.toolchain.torch_mlir import not_saved_faithfully

    class Narrow(torch.nn.Module):
        def forward(self, x):
            return torch.narrow(x, 1, torch.tensor(0), 2)

    program = torch.export.export(Narrow(), (torch.rand(3, 4),), strict=True)
    assert not_saved_faithfully(program) == "it lifts tensor constants"


def test_a_new_torch_mlir_decomposes_nothing_when_its_table_is_unchanged(nights):
    """The decomposed program is kept under the exported key and the table (CaseRun.kept): the night with a new
    torch-mlir reads it back, so it stores no new record, while a cold run of that night makes and keeps one."""
    records = lambda cache: {p.name for p in (nights["caches"][cache] / "exported").rglob("*.json")}
    kept = [p for p in (nights["caches"]["cold"] / "exported").rglob("*.json") if "extras" not in json.loads(p.read_text())]
    assert kept, "the cold run should keep decomposed programs beside what torch.export made"
    assert records("torch-mlir") == records("cold"), "the night kept something new: it decomposed again"
    assert len(records("torch-mlir cold")) == len(records("cold")) > 0


def test_a_kept_value_is_read_back_for_the_same_case_and_made_again_for_another_table(tmp_path):
    from conformance.execution.compile_cache_store import CompileCache
    from conformance.execution.compile_cache_use import CacheUse

    made = []
    make = lambda value: lambda: made.append(value) or value
    save = lambda value, path: path.write_text(value)
    load = lambda path: path.read_text()
    pair = ("e" * 64, "tanh", tmp_path)  # its exported key, case id and workdir
    first = CacheUse(CompileCache(tmp_path / "cache"), {})
    assert first._keep(*pair, "decomposed", "table 1", make("one"), save, load) == "one"
    again = CacheUse(CompileCache(tmp_path / "cache"), {})  # the next night, another process
    assert again._keep(*pair, "decomposed", "table 1", make("not made"), save, load) == "one"
    assert again._keep(*pair, "decomposed", "table 2", make("two"), save, load) == "two"
    assert made == ["one", "two"]
    unsaved = lambda value, path: (_ for _ in ()).throw(ValueError("not kept"))
    assert again._keep(*pair, "decomposed", "table 3", make("three"), unsaved, load) == "three"
    assert again._keep(*pair, "decomposed", "table 3", make("three again"), save, load) == "three again"


def test_a_decomposition_is_identified_by_its_ops_and_their_functions():
    import torch
    from torch._decomp import get_decompositions

    from conformance.toolchain.decompose import table_identity

    table = get_decompositions([torch.ops.aten.addmm, torch.ops.aten.native_layer_norm])
    assert table_identity(table) == table_identity(dict(reversed(table.items())))
    assert table_identity(table) != table_identity(get_decompositions([torch.ops.aten.addmm]))
    assert "torch._decomp.decompositions.addmm" in table_identity(table)
    assert "torch-mlir" not in table_identity(table)  # torch's functions alone: no tool's version in it
    foreign = {**table, torch.ops.aten.abs.default: lambda x: x.abs()}  # a function of another package's
    assert "'torch-mlir'" in table_identity(foreign)
    # Remembered by content: the same ops with another function are another table.
    other = dict(table)
    other[torch.ops.aten.addmm.default] = table[torch.ops.aten.native_layer_norm.default]
    assert table_identity(other) != table_identity(table) and "native_layer_norm" in table_identity(other).split("\n")[0]


def test_a_program_calling_as_strided_is_not_kept(tmp_path):
    """torch-mlir imports as_strided from what the fake tensors know of storage (bases, offsets), which torch's
    reader does not restore: a kept decomposed program gave a wrong answer (AtenAsStridedAfterAliasDetachModule_basic)
    and IR iree-compile rejects (AtenAsStridedAfterSliceStepModule_basic). This one imports otherwise loaded."""
    import torch
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table

    from conformance.toolchain.decompose import decompose
    from conformance.toolchain.torch_mlir import import_program, load_exported, not_kept_decomposed

    class StridedView(torch.nn.Module):
        def forward(self, x):
            return torch.ops.aten.as_strided(x[:, ::2], size=(3, 2), stride=(4, 2))

    program = decompose(torch.export.export(StridedView(), (torch.rand(3, 4),)), get_decomposition_table())
    assert "aten::as_strided" in not_kept_decomposed(program)
    path = tmp_path / "decomposed.pt2"
    torch.export.save(program, path)
    assert str(import_program(load_exported(path))) != str(import_program(program))


def test_a_kept_export_is_read_only_when_needed_and_exported_again_when_it_does_not_load(tmp_path):
    import torch

    from conformance.toolchain.torch_mlir import SavedProgram, exported_program

    class Neg(torch.nn.Module):
        def forward(self, x):
            return -x

    program = torch.export.export(Neg(), (torch.rand(3),))
    good, bad = tmp_path / "good.pt2", tmp_path / "bad.pt2"
    torch.export.save(program, good)
    bad.write_text("this is no exported program")
    exports = []
    again = lambda: exports.append(1) or program
    assert str(exported_program(SavedProgram(good, again)).graph) == str(program.graph) and not exports
    assert exported_program(SavedProgram(bad, again)) is program and exports == [1]
    assert exported_program(program) is program


def test_a_program_with_an_op_of_several_results_is_not_kept(tmp_path):
    """torch's reader gives split_with_sizes' value back as a tuple without tensor_meta; torch-mlir's importer
    types a list only: a kept decomposed program failed to import (split, chunk, lstm, gpt2.small)."""
    import torch
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table

    from conformance.toolchain.decompose import decompose
    from conformance.toolchain.torch_mlir import import_program, load_exported, not_kept_decomposed, not_saved_faithfully

    class Split(torch.nn.Module):
        def forward(self, x):
            a, b = torch.split(x, [1, 3], dim=1)
            return a + 1, b * 2

    program = decompose(torch.export.export(Split(), (torch.rand(2, 4),)), get_decomposition_table())
    assert "several results" in not_kept_decomposed(program)
    exported = torch.export.export(Split(), (torch.rand(2, 4),))  # decomposed again once loaded: kept
    assert not_saved_faithfully(exported) is None
    path = tmp_path / "decomposed.pt2"
    torch.export.save(program, path)
    with pytest.raises(Exception, match="Could not deduce type"):
        import_program(load_exported(path))
