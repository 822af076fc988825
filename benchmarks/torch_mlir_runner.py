"""torch-mlir's own e2e harness over a list of tests, serially in one process: the peer of benchmarks/peer.py.

    .venv/bin/python benchmarks/torch_mlir_runner.py --checkout PATH --backend tosa --tests NAMES.txt --json OUT.json

Each test goes through the checkout's `framework.compile_and_run_test` with
the `FxImporterTestConfig` torch-mlir's e2e main.py builds for its configs
`fx_importer` (linalg), `fx_importer_tosa` and `fx_importer_stablehlo`
(strict torch.export, torch-mlir's decompositions and FX import, the
backend's lowering, the refbackend's MLIR->LLVM JIT), and is judged by the
checkout's `SingleTestReport`. Tests in the config's CRASHING set are not
run, as main.py does not run them.

Why not main.py itself: with the torch-mlir wheel it cannot start (its
configs package imports the lazy-tensor and TorchScript configs, whose
native extensions the wheel does not ship), and on a 2-core machine its
serial path runs every test twice. Only the config module the FX configs
need is imported here, and the registry is loaded by conformance's own
torch-mlir-e2e case source (the same stand-ins, none touching the checkout).

Stage times come from wrappers around the entry points the harness calls;
they time and hand everything through unchanged.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import io
import json
import resource
import sys
import time
import types
import warnings
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# conformance backend -> (main.py's config name, the backend class's module and name, output type)
CONFIGS = {
    "linalg": ("fx_importer", "linalg_on_tensors_backends.refbackend", "RefBackendLinalgOnTensorsBackend", "linalg-on-tensors"),
    "tosa": ("fx_importer_tosa", "tosa_backends.linalg_on_tensors", "LinalgOnTensorsTosaBackend", "tosa"),
    "stablehlo": ("fx_importer_stablehlo", "stablehlo_backends.linalg_on_tensors", "LinalgOnTensorsStablehloBackend", "stablehlo"),
}
PACKAGE = "torch_mlir_e2e_test"


def expected_sets(checkout: Path, config: str) -> tuple[set[str], set[str]]:
    """(xfail set, crashing set) of a config, from the checkout's e2e_testing/xfail_sets.py.

    It imports the checkout's torch_mlir._version: load the registry first
    (torch_mlir_e2e.loading.load puts the checkout's python tree on sys.path).
    """
    path = checkout / "projects/pt1/e2e_testing/xfail_sets.py"
    spec = importlib.util.spec_from_file_location("torch_mlir_xfail_sets", path)
    module = importlib.util.module_from_spec(spec)
    with contextlib.redirect_stdout(io.StringIO()):  # it prints the torch version it compares with
        spec.loader.exec_module(module)
    name = config.upper()
    return set(getattr(module, f"{name}_XFAIL_SET")), set(getattr(module, f"{name}_CRASHING_SET"))


def fx_config_module():
    """The checkout's configs/fx_importer_backend.py, imported without the configs package's __init__."""
    root = importlib.import_module(PACKAGE)
    package = f"{PACKAGE}.configs"
    if package not in sys.modules:
        stand_in = types.ModuleType(package)
        stand_in.__path__ = [str(Path(root.__file__).parent / "configs")]
        sys.modules[package] = stand_in
    return importlib.import_module(f"{package}.fx_importer_backend")


class StageTimes:
    """Wall seconds per stage of the test being run, by wrapping callables in place."""

    def __init__(self):
        self.now: Counter = Counter()

    def wrap(self, owner, attribute: str, stage: str) -> None:
        inner = getattr(owner, attribute)

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.now[stage] += time.perf_counter() - start

        setattr(owner, attribute, timed)


def main() -> int:
    warnings.filterwarnings("ignore")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", type=Path, required=True)
    parser.add_argument("--backend", choices=sorted(CONFIGS), required=True)
    parser.add_argument("--tests", type=Path, required=True, help="one test name a line")
    parser.add_argument("--json", type=Path, required=True)
    args = parser.parse_args()
    started = time.perf_counter()

    from conformance.cases.sources.torch_mlir_e2e.loading import load

    checkout = args.checkout.resolve()
    registered = load(checkout)
    by_name = {test.unique_name: test for test, _ in registered.tests}
    names = [line.strip() for line in args.tests.read_text().splitlines() if line.strip()]
    unknown = [n for n in names if n not in by_name]
    if unknown:
        parser.error(f"{args.tests}: not in the registry of {checkout}: {', '.join(unknown[:5])}")

    import torch
    from torch.export import ExportedProgram
    from torch_mlir import fx

    framework = importlib.import_module(f"{PACKAGE}.framework")
    reporting = importlib.import_module(f"{PACKAGE}.reporting")
    config_name, backend_module, backend_class, output_type = CONFIGS[args.backend]
    backend = getattr(importlib.import_module(f"{PACKAGE}.{backend_module}"), backend_class)()
    xfail, crashing = expected_sets(checkout, config_name)
    times = StageTimes()
    times.wrap(framework, "generate_golden_trace", "eager")
    times.wrap(torch.export, "export", "export")
    times.wrap(ExportedProgram, "run_decompositions", "decompose")
    times.wrap(fx, "export_and_import", "import+lower")  # includes decompose: subtracted below
    times.wrap(backend, "compile", "compile")
    times.wrap(backend, "load", "load (JIT)")
    config = fx_config_module().FxImporterTestConfig(backend, output_type)
    setup = time.perf_counter() - started

    tests = []
    run_start = time.perf_counter()
    for name in names:
        if name in crashing:
            tests.append({"name": name, "outcome": "NOT RUN (crashing set)", "seconds": 0.0, "stages": {}})
            continue
        times.now = Counter()
        start = time.perf_counter()
        result = framework.compile_and_run_test(by_name[name], config)
        failed = reporting.SingleTestReport(result, reporting.ErrorContext.empty()).failed
        outcome = {(False, False): "PASS", (True, False): "FAIL", (True, True): "XFAIL", (False, True): "XPASS"}[
            (failed, name in xfail)
        ]
        stages = dict(times.now)
        stages["import+lower"] = stages.get("import+lower", 0.0) - stages.get("decompose", 0.0)
        tests.append({"name": name, "outcome": outcome, "seconds": time.perf_counter() - start, "stages": stages})
    run = time.perf_counter() - run_start
    args.json.write_text(json.dumps({
        "backend": args.backend, "config": config_name, "setup_s": setup, "run_s": run,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "tests": tests,
    }, indent=1))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
