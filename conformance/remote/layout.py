"""What a COMPILED pair's bundle holds for running elsewhere: the one home of these names.

    DIR/
      run-compiled.sh          runs every pair below with iree-run-module alone (scripts.py)
      bin/iree-run-module      optional: the runtime carried along (the script prefers it)
      .modules/<sha256>.vmfb   each compiled module once (a batch's module serves all its cases);
                               the pairs' module.vmfb are hard links to it, so `du` and `tar` count it once
      <case>/<backend>/
        README.txt
        module.vmfb            the compiled module
        remote.sh              the pair's iree-run-module commands, one per input set
        input.mlir             the case's own IR, and reproduce.sh: it compiled alone by iree-compile
        reproduce.sh           (alone.vmfb) and run by iree-run-module against expected/ (to report a failure)
        inputs/setN/I.npy      the case's inputs
        expected/setN/J.npy    eager's outputs, flattened (J.pt for a dtype NumPy lacks)
        after/setN/I.npy       an input as eager left it, for the inputs the program updates in place
        remote.json            how to judge the outputs: tolerances, mutations, sizes, the Result so far
        structure.pkl          the nesting of eager's outputs (pytree specs) and their non-tensor leaves
        outputs/setN/          written there: J.npy, exit_code, stderr.txt, stdout.txt

remote.json and structure.pkl are read back by `conformance verdicts-from`
only, on a machine with this package; the machine that runs the modules
reads nothing but the shell scripts, the modules and the .npy files.
"""

from __future__ import annotations

import json
import pickle
import warnings
from pathlib import Path
from typing import Any

STAGE = "remote"  # the staged reproducer's name (reproducer.py): files and commands of the run elsewhere
MANIFEST = "remote.json"
STRUCTURE = "structure.pkl"
MODULE = "module.vmfb"
PAIR_SCRIPT = "remote.sh"
DIRECTORY_SCRIPT = "run-compiled.sh"
MODULES = ".modules"
INPUTS, EXPECTED, AFTER, OUTPUTS = "inputs", "expected", "after", "outputs"
EXIT_CODE, STDERR, STDOUT = "exit_code", "stderr.txt", "stdout.txt"
RUNTIME_INFO = "runtime.txt"  # what run-compiled.sh found there: the runtime's devices


def set_dir(bundle: Path, folder: str, index: int) -> Path:
    """`bundle`/`folder`/set<index>: the files of one input set."""
    return Path(bundle) / folder / f"set{index}"


def write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    path.write_text(json.dumps(manifest, indent=1, sort_keys=True))


def read_manifest(bundle: Path) -> dict[str, Any]:
    return json.loads((Path(bundle) / MANIFEST).read_text())


def write_structure(path: Path, specs: list, leaves: list[list]) -> None:
    """Per input set, the pytree spec of eager's outputs and its leaves, each None where a tensor file holds it."""
    path.write_bytes(pickle.dumps({"specs": specs, "leaves": leaves}))


def read_structure(bundle: Path) -> dict[str, list]:
    with warnings.catch_warnings():  # torch's own TreeSpec unpickling warns of its own deprecated isinstance check
        warnings.simplefilter("ignore", FutureWarning)
        return pickle.loads((Path(bundle) / STRUCTURE).read_bytes())


def bundles_in(directory: Path) -> list[Path]:
    """The COMPILED pairs' bundles under `directory` (DIR/<case>/<backend>/ holding remote.json), sorted."""
    return sorted(p.parent for p in Path(directory).glob(f"*/*/{MANIFEST}"))
