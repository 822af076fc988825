"""Comparison with eager: each kind of mismatch, default tolerances, nested outputs."""

import numpy as np
import pytest
import torch

from conformance.compare import compare
from conformance.taxonomy import Code


def test_equal_outputs_match():
    x = torch.randn(3, 4)
    assert compare(x, x.clone()) is None


def test_numeric_mismatch_explains_counts_worst_index_and_tolerances():
    expected = torch.zeros(3, 4)
    actual = expected.clone()
    actual[1, 2] = 0.5
    actual[2, 3] = 0.25
    m = compare(expected, actual)
    assert m.code == Code.NUMERIC_MISMATCH
    assert "2 of 12 elements differ" in m.explanation
    assert "max abs error 0.5 at [1, 2]" in m.explanation
    assert "(expected 0, got 0.5)" in m.explanation
    assert "rtol=1.3e-06, atol=1e-05" in m.explanation
    assert "max rel error" in m.explanation


def test_default_tolerances_follow_the_dtype():
    # 5e-4 relative is within float16's default rtol (1e-3) but not float32's (1.3e-6).
    base = torch.full((4,), 2.0)
    nudged = base * (1 + 5e-4)
    assert compare(base.half(), nudged.half()) is None
    assert compare(base, nudged).code == Code.NUMERIC_MISMATCH
    # Explicit tolerances replace the defaults.
    assert compare(base, nudged, rtol=1e-3, atol=0.0) is None


def test_integer_outputs_are_compared_exactly():
    m = compare(torch.tensor([1, 2, 3]), torch.tensor([1, 2, 4]))
    assert m.code == Code.NUMERIC_MISMATCH and "1 of 3 elements differ (exact)" in m.explanation


def test_dtype_shape_and_structure_mismatches_are_told_apart():
    x = torch.ones(2, 3)
    assert compare(x, x.double()).code == Code.DTYPE_MISMATCH
    assert compare(x, torch.ones(3, 2)).code == Code.SHAPE_MISMATCH
    m = compare((x, x), (x,))
    assert m.code == Code.STRUCTURE_MISMATCH and "eager returns 2 output(s)" in m.explanation
    assert compare({"a": x}, {"a": x, "b": x}).code == Code.STRUCTURE_MISMATCH


def test_nan_in_the_same_places_passes_and_elsewhere_is_a_nan_mismatch():
    e = torch.tensor([1.0, float("nan"), 3.0])
    assert compare(e, e.clone()) is None
    a = torch.tensor([float("nan"), 2.0, 3.0])
    m = compare(e, a)
    assert m.code == Code.NAN_MISMATCH and "at [0]" in m.explanation


def test_nested_outputs_name_the_failing_leaf():
    x = torch.zeros(2)
    expected = {"logits": (x, x + 1), "aux": [x]}
    actual = {"logits": (x, x + 2), "aux": [x]}
    m = compare(expected, actual)
    assert m.code == Code.NUMERIC_MISMATCH
    assert m.explanation.startswith("output['logits'][1]:")


def test_backend_numpy_outputs_compare_with_eager_tensors():
    x = torch.randn(2, 3)
    assert compare((x,), [x.numpy().copy()]) is None
    assert compare(x, x.numpy().astype(np.float64)).code == Code.DTYPE_MISMATCH


def test_scalars_and_none():
    assert compare(3, 3) is None
    assert compare(2.0, torch.tensor(2.0)) is None
    assert compare(None, None) is None
    assert compare(None, torch.zeros(1)).code == Code.STRUCTURE_MISMATCH


def test_statistical_comparison_for_nondeterministic_cases():
    a = torch.nn.functional.dropout(torch.ones(128, 128), 0.5, training=True)
    b = torch.nn.functional.dropout(torch.ones(128, 128), 0.5, training=True)
    assert compare(a, b, statistical=True) is None
    m = compare(a, torch.ones(128, 128), statistical=True)
    assert m.code == Code.NUMERIC_MISMATCH and "statistics differ" in m.explanation


def test_relative_error_is_never_a_division_by_zero():
    m = compare(torch.tensor([0, 5, 7]), torch.tensor([3, 5, 7]))
    assert m.explanation == (
        "output: 1 of 3 elements differ (exact); max abs error 3 at [0] (expected 0, got 3); "
        "max rel error n/a (eager is 0 wherever they differ)"
    )
    m = compare(torch.tensor([0, 4, 7]), torch.tensor([3, 5, 7]))
    assert m.explanation.endswith("max abs error 3 at [0] (expected 0, got 3); max rel error 0.25")
    m = compare(torch.zeros(3), torch.tensor([0.0, 0.5, 0.0]))
    assert "max rel error n/a" in m.explanation and "e+" not in m.explanation


def test_integers_and_bools_are_printed_exactly():
    m = compare(torch.tensor([8589934591]), torch.tensor([8589934592]))
    assert "max abs error 1 at [0] (expected 8589934591, got 8589934592)" in m.explanation
    # Beyond 2**53 float64 cannot tell them apart; integers are compared in their own dtype.
    m = compare(torch.tensor([2**53]), torch.tensor([2**53 + 1]))
    assert m is not None and "(expected 9007199254740992, got 9007199254740993)" in m.explanation
    m = compare(torch.tensor([True, False, True]), torch.tensor([True, True, False]))
    assert m.explanation == "output: 2 of 3 elements differ (exact); first at [1] (expected False, got True)"


@pytest.mark.parametrize("piece", [1, 7, 1 << 20])
def test_comparing_piece_by_piece_finds_what_comparing_whole_finds(monkeypatch, piece):
    from conformance.compare import values

    monkeypatch.setattr(values, "PIECE", piece)
    g = torch.Generator().manual_seed(3)
    expected = torch.randn(6, 5, 4, generator=g).transpose(0, 2)  # not contiguous
    actual = expected.contiguous().clone()
    actual[1, 2, 3] += 0.5
    actual[3, 4, 5] -= 2.0
    actual[0, 0, 0] = float("inf")
    m = compare(expected, actual)
    assert m.explanation.startswith("output: 3 of 120 elements differ (rtol=1.3e-06, atol=1e-05); max abs error inf at [0, 0, 0]")
    actual[0, 0, 0] = expected[0, 0, 0]
    m = compare(expected, actual)
    assert f"max abs error 2 at [3, 4, 5] (expected {expected[3, 4, 5].item():.6g}" in m.explanation
    actual[2, 1, 0] = actual[3, 3, 3] = float("nan")
    m = compare(expected, actual)
    assert m.code == Code.NAN_MISMATCH and "the backend gives NaN at 2 of 120 places where eager does not (first at [2, 1, 0]" in m.explanation


def test_nesting_is_compared_not_only_the_number_of_outputs():
    v, i = torch.max(torch.randn(3, 4), 1)
    m = compare((v, i), ((v, i),))
    assert m.code == Code.STRUCTURE_MISMATCH
    assert m.explanation == (
        "output: eager gives (float32[3], int64[3]), the backend ((float32[3], int64[3]),) (the outputs are nested differently)"
    )
    out, h, c = torch.randn(5, 3, 8), torch.randn(1, 3, 8), torch.randn(1, 3, 8)
    m = compare((out, (h, c)), ((out, h, c),))
    assert m.code == Code.STRUCTURE_MISMATCH and m.explanation.startswith("output: eager gives (float32[5, 3, 8], (float32")
    m = compare({"a": (out, (h, c))}, {"a": (out, [h, [c]])})
    assert m.code == Code.STRUCTURE_MISMATCH and m.explanation.startswith("output['a'][1][1]: eager gives float32[1, 3, 8], the backend [float32[1, 3, 8]]")


def test_a_flat_return_stands_for_any_nesting_as_mlir_functions_return_outputs():
    out, h, c = torch.randn(5, 3, 8), torch.randn(1, 3, 8), torch.randn(1, 3, 8)
    assert compare((out, (h, c)), (out, h, c)) is None
    assert compare((out, (h, c)), [out, h, c]) is None
    result = torch.max(torch.randn(3, 4), 1)  # torch.return_types.max
    assert compare(result, tuple(result)) is None
    assert compare(tuple(result), result) is None
    assert compare(result, list(result)) is None
    assert compare(out, (out,)) is None and compare((out,), out) is None and compare([out], out) is None
    # Nested like eager, with other sequence types, or a mapping's keys in another order.
    assert compare((out, (h, c)), [out, [h, c]]) is None
    assert compare({"a": out, "b": (h, c)}, {"b": (h, c), "a": out}) is None
    m = compare({"a": out, "b": h}, {"a": out, "c": h})
    assert m.code == Code.STRUCTURE_MISMATCH and "nested differently" in m.explanation
    # The leaf named in a value mismatch is eager's, even when the backend returned flat.
    m = compare((out, (h, c)), (out, h, c + 1))
    assert m.code == Code.NUMERIC_MISMATCH and m.explanation.startswith("output[1][1]:")


def test_swapped_outputs_are_named_as_such():
    a, b = torch.randn(3, 4), torch.randn(3, 4)
    m = compare((a, b), (b, a))
    assert m.code == Code.STRUCTURE_MISMATCH
    assert m.explanation == (
        "the outputs come in another order: output[0] matches eager's output[1], "
        "output[1] matches eager's output[0] (outputs swapped?)"
    )
    c = torch.randn(3, 4)
    m = compare((a, b, c), (b, c, a))
    assert m.code == Code.STRUCTURE_MISMATCH and "output[2] matches eager's output[0]" in m.explanation
    # Only one of them matches elsewhere: its own mismatch stands, with the hint.
    m = compare((a, b), (b, b))
    assert m.code == Code.NUMERIC_MISMATCH
    assert m.explanation.startswith("output[0]: 12 of 12 elements differ")
    assert m.explanation.endswith("; but output[0] matches eager's output[1] (outputs swapped?)")
    # Output 0 matches eager's output 1, output 1 matches nothing: not merely another order.
    m = compare((a, b), (b, a + 1))
    assert m.code == Code.NUMERIC_MISMATCH and m.explanation.endswith("but output[0] matches eager's output[1] (outputs swapped?)")
    # Nothing matches: a plain mismatch.
    m = compare((a, b), (a + 1, b))
    assert m.code == Code.NUMERIC_MISMATCH and "swapped" not in m.explanation
