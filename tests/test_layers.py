"""No two folders of the conformance package import each other (tests/layers.py; run it on any checkout)."""

import subprocess
import sys

from tests.layers import DEFAULT_PACKAGE, floors, loops
from tests.test_import_cycles import write


def test_no_two_folders_of_the_package_import_each_other():
    found = loops(DEFAULT_PACKAGE)
    assert not found, "folders import each other (a lower one imports a higher one):\n" + "\n\n".join(
        "\n".join(str(i) for i in loop) for loop in found
    )


def test_the_front_ends_stand_on_the_run_layer_and_settings_at_the_bottom():
    """The picture the README draws, in the terms that matter: who stands over whom."""
    levels = floors(DEFAULT_PACKAGE)
    floor = {name: len(levels) - i for i, names in enumerate(levels) for name in names}
    for front_end in ("cli", "pytest_plugin"):
        assert floor[front_end] > floor["run"] > floor["report"] > floor["report_dir"], floor
    assert floor["settings"] <= 2 and floor["result"] <= 2, floor


def test_an_import_inside_a_function_ties_two_folders_and_is_named_with_its_line(tmp_path):
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/low/__init__.py": "",
            "pkg/low/store.py": "import os\n\n\ndef names():\n    from pkg.high.build import RUN\n",
            "pkg/high/__init__.py": "",
            "pkg/high/build.py": "from pkg.low.store import names\nRUN = 1\n",
        },
    )
    # the loop of folders is named by its imports, each with its file and line
    [loop] = loops(tmp_path / "pkg")
    lines = sorted(str(i) for i in loop)
    assert lines == sorted([
        f"{tmp_path / 'pkg/low/store.py'}:5: pkg.low.store imports pkg.high.build",
        f"{tmp_path / 'pkg/high/build.py'}:1: pkg.high.build imports pkg.low.store",
    ])


def test_folders_that_import_each_other_through_different_modules_are_found(tmp_path):
    """No module cycle at all: high.a -> low.b and low.c -> high.d. Only the folders loop."""
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/low/__init__.py": "",
            "pkg/low/b.py": "",
            "pkg/low/c.py": "from pkg.high import d\n",
            "pkg/high/__init__.py": "",
            "pkg/high/a.py": "from pkg.low import b\n",
            "pkg/high/d.py": "",
            "pkg/top.py": "import pkg.high.a\n",
        },
    )
    from tests.import_cycles import find_cycle

    assert find_cycle(tmp_path / "pkg") is None
    [loop] = loops(tmp_path / "pkg")
    assert sorted(f"{i.module} -> {i.target}" for i in loop) == ["pkg.high.a -> pkg.low.b", "pkg.low.c -> pkg.high.d"]
    (tmp_path / "pkg/low/c.py").write_text("")
    assert loops(tmp_path / "pkg") == []
    assert floors(tmp_path / "pkg") == [["top"], ["high"], ["low"]]


def test_folders_inside_a_folder_are_checked_too(tmp_path):
    """report/html/ importing report/build.py, which imports html/: a loop one level down."""
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/report/__init__.py": "",
            "pkg/report/build.py": "from pkg.report.html import page\n",
            "pkg/report/names.py": "",
            "pkg/report/html/__init__.py": "",
            "pkg/report/html/page.py": "def f():\n    from pkg.report import build\n",
        },
    )
    [loop] = loops(tmp_path / "pkg")
    assert {(i.module, i.target) for i in loop} == {("pkg.report.build", "pkg.report.html.page"), ("pkg.report.html.page", "pkg.report.build")}
    (tmp_path / "pkg/report/html/page.py").write_text("from pkg.report import names\n")  # downwards: fine
    assert loops(tmp_path / "pkg") == []


def test_the_script_names_the_imports_and_fails(tmp_path):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": "import pkg.b\n", "pkg/b.py": "def f():\n    from pkg import a\n"})
    proc = subprocess.run([sys.executable, "tests/layers.py", str(tmp_path / "pkg")], cwd=DEFAULT_PACKAGE.parent, capture_output=True, text=True)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"{tmp_path / 'pkg/b.py'}:2: pkg.b imports pkg.a" in proc.stdout and "pkg.a imports pkg.b" in proc.stdout, proc.stdout
    fine = subprocess.run([sys.executable, "tests/layers.py"], cwd=DEFAULT_PACKAGE.parent, capture_output=True, text=True)
    floors = [line.split()[1:] for line in fine.stdout.splitlines()[1:] if line.strip()]
    assert fine.returncode == 0 and "cli" in floors[0] and "arrays" in floors[-1], fine.stdout + fine.stderr
