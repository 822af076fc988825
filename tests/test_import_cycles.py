"""The conformance package has no import cycles (tests/import_cycles.py; run it on any checkout)."""

import subprocess
import sys

from tests.import_cycles import DEFAULT_PACKAGE, find_cycle


def test_the_package_has_no_import_cycle():
    assert find_cycle(DEFAULT_PACKAGE) is None


def write(root, files: dict[str, str]):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_a_cycle_closed_by_an_import_inside_a_function_is_found(tmp_path):
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/low.py": "def f():\n    from pkg.high import g\n",
            "pkg/high/__init__.py": "",
            "pkg/high/g.py": "from .. import low\n",  # relative, naming a submodule
            "pkg/high/h.py": "from pkg.high import g\n",  # outside the cycle
        },
    )
    assert find_cycle(tmp_path / "pkg") in (
        ["pkg.low", "pkg.high.g", "pkg.low"],
        ["pkg.high.g", "pkg.low", "pkg.high.g"],
    )
    (tmp_path / "pkg/low.py").write_text("def f():\n    import os\n")
    assert find_cycle(tmp_path / "pkg") is None


def test_the_script_names_the_cycle_and_fails(tmp_path):
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "import pkg.b\n",
            "pkg/b.py": "def f():\n    from pkg import a\n",
            "pkg/c.py": "from pkg import a, b\n",
        },
    )
    proc = subprocess.run(
        [sys.executable, "tests/import_cycles.py", str(tmp_path / "pkg")],
        cwd=DEFAULT_PACKAGE.parent, capture_output=True, text=True,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    cycle = [line.strip(" ->") for line in proc.stdout.splitlines()[1:]]
    assert cycle in (["pkg.a", "pkg.b", "pkg.a"], ["pkg.b", "pkg.a", "pkg.b"])


def test_a_folder_that_is_no_package_is_an_error_not_a_pass(tmp_path):
    proc = subprocess.run(
        [sys.executable, "tests/import_cycles.py", str(tmp_path / "nowhere")],
        cwd=DEFAULT_PACKAGE.parent, capture_output=True, text=True,
    )
    assert proc.returncode == 2 and "not a Python package" in proc.stdout, proc.stdout + proc.stderr
