"""`pytest --backend=...`: item ids, backend selection, xdist, junitxml, the summary, bad input."""

import subprocess
import sys

import pytest

from tests.conftest import PROJECT, fake

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


# -- options: checked while the command line is read, before anything runs --


@pytest.mark.parametrize(
    "option, message",
    [
        ("--case-timeout=0", "argument --case-timeout: must be more than 0 and at most 86400 seconds (a day), got 0"),
        ("--case-timeout=-5", "argument --case-timeout: must be more than 0"),
        ("--case-timeout=inf", "argument --case-timeout: expected a number of seconds, got 'inf'"),
        ("--memory-limit=-5", "argument --memory-limit: -5 MB is less than a case process needs"),
        ("--memory-limit=150", "argument --memory-limit: 150 MB is less than a case process needs (the limit is in MB"),
        ("--memory-limit=99999999", "argument --memory-limit: 99999999 MB is more than this machine's memory"),
        ("--batch-size=0", "argument --batch-size: must be at least 1, got 0"),
        ("--xfail-dir=/no/such/dir", "argument --xfail-dir: /no/such/dir: no such directory"),
    ],
)
def test_an_option_out_of_range_is_a_usage_error_naming_it(run_registry, option, message):
    run = run_registry("--backend=eager", option)
    assert run.returncode == 4, run  # pytest's usage error
    assert message in run.output
    assert not run.results


def test_an_unknown_case_id_is_an_error_naming_close_matches(run_registry):
    run = run_registry("--backend=eager", "--case", "tanh", "--case", "tahn")
    assert run.returncode == 2, run  # a collection error: nothing ran
    assert "--case tahn: no such case (did you mean tanh?)" in run.output
    assert not run.results


def test_an_unwritable_artifacts_directory_is_refused_before_the_run(run_registry, read_only_dir, tmp_path):
    run = run_registry("--backend=eager", f"--artifacts={read_only_dir / 'bundles'}")
    assert run.returncode == 4, run
    assert f"argument --artifacts: {read_only_dir / 'bundles'}: cannot write in {read_only_dir}" in run.output
    (tmp_path / "file").write_text("")
    run = run_registry("--backend=eager", f"--artifacts={tmp_path / 'file' / 'bundles'}")
    assert run.returncode == 4 and f"{tmp_path / 'file'} is not a directory" in run.output, run


def test_a_path_option_apart_from_its_value_keeps_the_projects_rootdir_and_ids(tmp_path):
    # pytest reads `/some/dir` in `--artifacts /some/dir` as a test path (it does not know the option yet).
    bundles = tmp_path / "bundles"
    bundles.mkdir()
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--backend=eager", "--case", "tanh", "--artifacts", str(bundles), "-v"]
    proc = subprocess.run(command, cwd=PROJECT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"rootdir: {PROJECT}" in proc.stdout and "configfile: pyproject.toml" in proc.stdout
    assert any(line.startswith("tanh[eager] PASSED") for line in proc.stdout.splitlines()), proc.stdout


def test_a_path_option_apart_from_its_value_in_pytest_main_is_refused_saying_how(tmp_path):
    code = f"import pytest; raise SystemExit(pytest.main(['--backend=eager', '--artifacts', {str(tmp_path)!r}]))"
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 4
    assert f"write --artifacts={tmp_path}" in proc.stdout + proc.stderr


def test_a_backends_own_option_reaches_it_under_xdist_and_other_backends_refuse_it(run_registry):
    run = run_registry(f"--backend={fake('OPTIONED')}", "--fake-flavours=sour,sweet", "-n", "2", "-k", "tanh or double")
    assert run.returncode == 0, run
    assert {name: r["extras"]["flavours"] for name, r in run.results.items()} == {
        "tanh[optioned]": ["sour", "sweet"],
        "double[optioned]": ["sour", "sweet"],
    }
    assert run_registry(f"--backend={fake('OPTIONED')}", "-k", "tanh").results["tanh[optioned]"]["extras"]["flavours"] == ["plain"]
    refused = run_registry("--backend=eager", "--fake-flavours=sour")
    assert refused.returncode == 4 and "unrecognized arguments: --fake-flavours=sour" in refused.output


def test_a_missing_backend_file_is_named(run_registry, tmp_path):
    run = run_registry(f"--backend={tmp_path / 'missing.py'}:BACKEND")
    assert run.returncode == 4
    assert f"no such file {tmp_path / 'missing.py'}" in run.output and "conformance_content" not in run.output


def test_a_backend_that_raises_on_import_shows_the_users_traceback(run_registry, tmp_path):
    broken = tmp_path / "broken_backend.py"
    broken.write_text("import os\n\n\ndef setup():\n    raise RuntimeError('broken on purpose')\n\n\nsetup()\n")
    run = run_registry(f"--backend={broken}:BACKEND")
    assert run.returncode == 4
    assert f"importing {broken} failed" in run.output
    assert f'File "{broken}", line 8, in <module>' in run.output and f'File "{broken}", line 5, in setup' in run.output
    assert "RuntimeError: broken on purpose" in run.output
    assert "importlib" not in run.output and "loader.py" not in run.output  # only the user's part


@pytest.mark.parametrize("args", [["-q", "-p", "no:cacheprovider"], ["--help"]])
def test_a_run_without_backend_does_not_import_torch(tmp_path, args):
    (tmp_path / "test_plain.py").write_text("def test_one():\n    pass\n")
    code = f"import sys, pytest; status = pytest.main({args!r}); print('torch imported:', 'torch' in sys.modules); raise SystemExit(status)"
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout or "--case-timeout=SECONDS" in proc.stdout  # the run, or the help with our options
    assert "torch imported: False" in proc.stdout
