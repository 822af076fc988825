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
PROJECT = HERE.parent
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
            command.append(f"--cases={FIXTURES / cases}")
        if not default_cases:
            command.append("--no-default-cases")
        proc = subprocess.run(
            command, cwd=tmp_path, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})}
        )
        return Run(proc, junit)

    return run


def writable(directory: Path) -> bool:
    try:
        (directory / "probe").touch()
    except OSError:
        return False
    (directory / "probe").unlink()
    return True


@pytest.fixture
def read_only_dir(tmp_path):
    """A directory no one may write in. Root ignores permission bits, so as root it is made immutable."""
    path = tmp_path / "read-only"
    path.mkdir()
    path.chmod(0o555)
    immutable = os.geteuid() == 0 and subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0
    if writable(path):
        path.chmod(0o755)
        pytest.skip("cannot make a read-only directory here: root, and `chattr +i` failed")
    yield path
    if immutable:
        subprocess.run(["chattr", "-i", str(path)], check=True)
    path.chmod(0o755)
