"""What of a torch-mlir checkout's e2e registry cannot be imported, by reason, for `conformance list`.

Knowing which tests import means running every test function once (about a
minute of CPU: a few tests carry hundreds of MB of inputs), so the census is
kept beside the compile cache, keyed by the checkout's test sources, torch
and the optional packages installed.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import torch

from conformance.cases.sources.torch_mlir_e2e.capture import E2eTest
from conformance.cases.sources.torch_mlir_e2e.conversion import SUITE
from conformance.cases.sources.torch_mlir_e2e.loading import PACKAGE, PYTHON_TREE, Registered, load, suite_modules
from conformance.cases.sources.torch_mlir_e2e.stand_ins import OPTIONAL_PACKAGES, installed
from conformance.cases.spec import CaseUnavailable

CENSUS_FORMAT = 1


def not_importable(checkout: Path) -> list[str]:
    """Lines for `conformance list`: how many tests registered, and which cannot be imported, by reason."""
    registered = load(checkout)
    reasons = _kept_census(checkout, registered)
    counts = Counter(_reason_group(reason) for reason in reasons.values())
    lines = [
        f"{SUITE} ({checkout}): {len(registered.tests)} tests registered from "
        f"{len(suite_modules(checkout))} modules; not importable: {len(reasons) + len(registered.failed)}"
    ]
    lines += [f"  {count:5d}  {group}" for group, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]
    lines += [f"      1  test module {name} failed to import: {error}" for name, error in registered.failed.items()]
    return lines


def _kept_census(checkout: Path, registered: Registered) -> dict[str, str]:
    """The census as kept for this checkout's sources, torch and packages; taken (and kept) when there is none."""
    from conformance.digests import digest
    from conformance.run_options import default_cache_dir

    missing = [name for name in OPTIONAL_PACKAGES if not installed(name)]
    package = checkout / PYTHON_TREE / PACKAGE
    files = sorted(package.rglob("*.py"))
    key = digest(CENSUS_FORMAT, torch.__version__, missing, [str(f.relative_to(package)) for f in files], *files)
    path = Path(default_cache_dir()) / "sources" / f"torch-mlir-e2e-{key[:16]}.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        reasons = _census(registered)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(reasons, indent=0, sort_keys=True))
        return reasons


def _reason_group(reason: str) -> str:
    """A reason without its particulars (the error's message), so equal causes count together."""
    if reason.startswith("the test's own eager run fails: "):
        return "the test's own eager run fails: " + reason.split(": ")[1]
    return reason


def _census(registered: Registered) -> dict[str, str]:
    """Test name -> why it cannot be imported, for every test that cannot; each captured once and let go."""
    print(f"conformance: capturing the inputs of {len(registered.tests)} torch-mlir e2e tests once, to see which import "
          "(kept for the next `conformance list`)", file=sys.stderr)
    reasons = {}
    for test, module in registered.tests:
        try:
            E2eTest(test, module, registered.test_utils, dynamic=False).load()
        except CaseUnavailable as e:
            reasons[test.unique_name] = e.reason
    return reasons
