"""`pytest --backend=...`: item ids, backend selection, xdist, junitxml, the summary, bad input."""

from tests.conftest import fake

EAGER = ["tanh", "add.broadcast", "double", "mul.dynamic", "sum.int"]


def test_eager_passes_every_case_with_ids_case_backend(run_registry):
    run = run_registry("--backend=eager")
    assert run.returncode == 0, run
    assert sorted(run.results) == sorted(f"{c}[eager]" for c in EAGER)
    assert all(r["verdict"] == "PASS" for r in run.results.values())
    assert "conformance summary" in run.output


def test_backends_comma_separated_and_repeated_with_k_and_xdist(run_registry):
    run = run_registry("--backend=eager,eager-noisy", "--backend", "eager", "-n", "2", "-k", "tanh or double")
    assert sorted(run.results) == ["double[eager-noisy]", "double[eager]", "tanh[eager-noisy]", "tanh[eager]"]
    assert run.returncode == 1  # eager-noisy fails: numeric mismatch
    noisy = run.results["tanh[eager-noisy]"]
    assert (noisy["verdict"], noisy["stage"], noisy["code"]) == ("FAIL", "compare", "NUMERIC_MISMATCH")
    # The summary table: one row per backend with its failure codes.
    assert any(line.split()[:2] == ["eager-noisy", "2"] and "NUMERIC_MISMATCH 2" in line for line in run.output.splitlines()), run


def test_dynamic_case_runs_at_every_size(run_registry):
    run = run_registry("--backend=eager-noisy", "-k", "mul.dynamic")
    assert "at input set 1 of 2 (n=3)" in run.results["mul.dynamic[eager-noisy]"]["explanation"]


def test_a_backend_from_a_module_attribute(run_registry):
    run = run_registry(f"--backend={fake('SCRIPTED')}", "-k", "tanh")
    assert run.returncode == 0, run
    assert list(run.results) == ["tanh[scripted]"]


def test_an_unknown_backend_fails_at_once_listing_the_known_ones(run_registry):
    run = run_registry("--backend=tosa-but-wrong")
    assert run.returncode == 4  # pytest's usage error
    assert "unknown backend 'tosa-but-wrong'; known backends:" in run.output
    assert "eager" in run.output and "eager-noisy" in run.output
    assert not run.results


def test_an_object_that_is_not_a_backend_is_refused(run_registry):
    run = run_registry(f"--backend={fake('NotABackend')}")
    assert run.returncode == 4 and "not a conformance Backend" in run.output


def test_a_broken_case_is_blamed_on_the_case_not_the_backend(run_registry):
    run = run_registry("--backend=eager", cases="broken_cases")
    factory = run.results["factory.raises[eager]"]
    assert (factory["stage"], factory["code"]) == ("case", "CASE_ERROR")
    assert "this factory is broken on purpose" in factory["explanation"]
    assert "a bug in the case, not in a backend" in factory["explanation"]
    forward = run.results["forward.raises[eager]"]
    assert (forward["stage"], forward["code"]) == ("eager", "CASE_ERROR")
    assert "running it in eager PyTorch" in forward["explanation"]
    assert run.results["fine[eager]"]["verdict"] == "PASS"


def test_a_malformed_case_file_is_a_collection_error_naming_it(run_registry):
    run = run_registry("--backend=eager", cases="bad_dtype")
    assert run.returncode == 2, run  # pytest: interrupted by collection errors
    assert "bad_dtype/bad.py" in run.output and "'float17' is not supported" in run.output


def test_duplicate_ids_are_a_collection_error_naming_both(run_registry):
    run = run_registry("--backend=eager", cases="duplicates")
    assert run.returncode == 2
    assert "duplicate case id 'twice'" in run.output and "first.py:5" in run.output


def test_no_backend_means_plain_pytest(run_registry, tmp_path):
    (tmp_path / "test_plain.py").write_text("def test_one():\n    assert True\n")
    run = run_registry(cases=None, default_cases=True)
    assert run.returncode == 0 and "1 passed" in run.output, run
