"""Shared test helpers: running pytest on the registry in a subprocess, reading its results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"
FAKE_BACKENDS = HERE / "fake_backends.py"


def fake(name: str) -> str:
    """A --backend spec for one of the fake backends."""
    return f"{FAKE_BACKENDS}:{name}"


class Run:
    def __init__(self, proc: subprocess.CompletedProcess, junit: Path):
        self.returncode = proc.returncode
        self.output = proc.stdout + proc.stderr
        self.results: dict[str, dict] = {}
        if junit.exists():
            for case in ET.parse(junit).getroot().iter("testcase"):
                for prop in case.iter("property"):
                    if prop.get("name") == "conformance.result":
                        self.results[case.get("name")] = json.loads(prop.get("value"))

    def __repr__(self):
        return f"<Run rc={self.returncode}>\n{self.output[-3000:]}"


@pytest.fixture
def run_registry(tmp_path):
    """Run `pytest --backend=...` over fixture cases in a subprocess, as a user would."""

    def run(*args: str, cases: str | None = "cases", default_cases: bool = False, timeout: float = 600, env: dict | None = None) -> Run:
        junit = tmp_path / f"junit-{len(list(tmp_path.glob('junit-*')))}.xml"
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--junitxml={junit}", *args]
        if cases:
            command += ["--cases", str(FIXTURES / cases)]
        if not default_cases:
            command.append("--no-default-cases")
        proc = subprocess.run(
            command, cwd=tmp_path, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})}
        )
        return Run(proc, junit)

    return run
