"""The case registry: discovery, stable ids, duplicate ids, selection, malformed cases."""

import re
import subprocess
import sys

import pytest
import torch

from conformance.cases import registry as reg
from conformance.cases.inputs import make_inputs, make_module
from conformance.cases.keyword import KeywordError, compile_keyword
from conformance.cases.spec import Case, CaseError, Dyn, T, op
from tests.conftest import FIXTURES


def load(*dirs, suites=("default",)):
    sources = reg.discover([str(FIXTURES / d) for d in dirs], default_dir=False, plugins=False)
    return reg.Registry.load(sources, suites)


def test_discovers_the_cases_of_a_directory_with_family_and_location():
    registry = load("cases")
    assert [c.id for c in registry] == ["tanh", "add.broadcast", "double", "mul.dynamic", "sum.int"]
    tanh = registry["tanh"]
    assert tanh.family == "small"
    assert tanh.defined_at.endswith("tests/fixtures/cases/small.py:10")
    assert tanh.ops == ("aten.tanh",)
    assert {"op", "small"} <= tanh.all_tags


def test_ids_and_inputs_are_stable_across_processes():
    code = (
        "from conformance.cases import registry as reg; from conformance.cases.inputs import make_inputs;"
        f"r = reg.Registry.load(reg.discover([{str(FIXTURES / 'cases')!r}], default_dir=False, plugins=False));"
        "print([(c.id, float(make_inputs(c)[0][0].double().sum())) for c in r])"
    )
    first, second = (subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout for _ in range(2))
    assert first == second
    assert "tanh" in first


def test_a_duplicate_id_names_both_definitions():
    with pytest.raises(reg.RegistryError) as e:
        load("duplicates")
    message = str(e.value)
    assert "duplicate case id 'twice'" in message
    assert "duplicates/first.py:5" in message and "duplicates/second.py:5" in message


def test_an_impossible_dtype_is_an_error_naming_the_source_and_dtype():
    with pytest.raises(reg.RegistryError) as e:
        load("bad_dtype")
    assert "bad_dtype/bad.py" in str(e.value)
    assert "'float17' is not supported" in str(e.value)


def test_a_module_without_cases_is_an_error():
    with pytest.raises(reg.RegistryError, match="no_cases/empty.py: defines neither CASES nor cases()"):
        load("no_cases")


def test_a_missing_case_directory_is_an_error():
    with pytest.raises(reg.RegistryError, match="does not exist"):
        reg.discover([str(FIXTURES / "nowhere")], default_dir=False)


def test_selection_by_keyword_and_by_tag():
    registry = load("cases")
    assert [c.id for c in registry.select(keyword="tanh")] == ["tanh"]
    assert [c.id for c in registry.select(keyword="binary and not dynamic")] == ["add.broadcast"]
    assert [c.id for c in registry.select(tags=["binary"])] == ["add.broadcast", "mul.dynamic"]
    assert [c.id for c in registry.select(tags=["binary"], skip_tags=["dynamic"])] == ["add.broadcast"]


@pytest.mark.parametrize(
    "expression, true_names, expected",
    [
        ("a or b and not c", {"a", "c"}, True),  # `and` binds tighter than `or`
        ("(a or b) and not c", {"a", "c"}, False),
        ("not not a", {"a"}, True),
        ("add.broadcast and not x[1]", {"add.broadcast"}, True),
        ("a-b or f16/x", {"f16/x"}, True),
    ],
)
def test_keyword_expressions_follow_pytests_grammar(expression, true_names, expected):
    assert compile_keyword(expression)(lambda name: name in true_names) is expected


@pytest.mark.parametrize(
    "expression, message",
    [("tanh and", "ends where a name or '(' was expected"), ("(tanh", "'(' without its ')'"), ("tanh !x", "unexpected '!' at column 6")],
)
def test_a_malformed_keyword_expression_says_where(expression, message):
    with pytest.raises(KeywordError, match=re.escape(message)):
        compile_keyword(expression)


def test_suites_other_than_default_load_only_when_asked(tmp_path):
    (tmp_path / "extra.py").write_text(
        "import torch\nfrom conformance import T, op\nSUITE = 'extra'\ndef cases():\n    return [op('relu.extra', torch.relu, T(2))]\n"
    )
    sources = reg.discover([str(tmp_path)], default_dir=False, plugins=False)
    assert len(reg.Registry.load(sources)) == 0
    assert [c.id for c in reg.Registry.load(sources, suites=["default", "extra"])] == ["relu.extra"]
    assert reg.Registry.load(sources, suites=["extra"])["relu.extra"].suite == "extra"


def test_malformed_declarations_fail_at_once():
    with pytest.raises(CaseError, match="without spaces"):
        op("has space", torch.relu, T(2))
    with pytest.raises(CaseError, match="not a T"):
        op("not.a.spec", torch.relu, (2, 3))
    with pytest.raises(CaseError, match="give both rtol and atol"):
        op("half.tolerance", torch.relu, T(2), rtol=1e-3)
    with pytest.raises(CaseError, match=">= 2"):
        Dyn("n", 1)


def test_dynamic_dims_run_at_every_size_with_shared_symbols():
    n = Dyn("n", 3, 6)
    case = op("mul.dyn", torch.mul, T(n, 4), T(n, 4))
    sets = make_inputs(case)
    assert [tuple(t.shape) for t in sets[0]] == [(3, 4), (3, 4)]
    assert [tuple(t.shape) for t in sets[1]] == [(6, 4), (6, 4)]
    assert case.is_dynamic and case.size_count == 2 and "dynamic" in case.all_tags


def test_seed_changes_inputs_and_is_reproducible():
    case = op("seeded", torch.relu, T(8))
    assert torch.equal(make_inputs(case, 0)[0][0], make_inputs(case, 0)[0][0])
    assert not torch.equal(make_inputs(case, 0)[0][0], make_inputs(case, 1)[0][0])


def test_module_weights_are_seeded():
    case = Case(id="lin", build=lambda: torch.nn.Linear(4, 4), inputs=(T(4),), kind="model")
    assert torch.equal(make_module(case).weight, make_module(case).weight)


def test_no_default_cases_keeps_the_project_suites_a_run_names(tmp_path, monkeypatch):
    # `--suite opinfo --no-default-cases` runs OpInfo alone: its module lives in the project's cases/.
    (tmp_path / "small.py").write_text("import torch\nfrom conformance import T, op\nCASES = [op('relu.small', torch.relu, T(2))]\n")
    (tmp_path / "extra.py").write_text(
        "import torch\nfrom conformance import T, op\nSUITE = 'extra'\nCASES = [op('relu.extra', torch.relu, T(2))]\n"
    )
    monkeypatch.setattr(reg.content, "DEFAULT_CASES_DIR", tmp_path)
    with_default = reg.discover(default_dir=True, plugins=False)
    without = reg.discover(default_dir=False, plugins=False)
    assert [c.id for c in reg.Registry.load(with_default, ["default", "extra"])] == ["relu.extra", "relu.small"]
    assert [c.id for c in reg.Registry.load(without, ["default", "extra"])] == ["relu.extra"]
    assert len(reg.Registry.load(without, ["default"])) == 0
