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


def test_complex32_outputs_compare_though_torch_equal_does_not_take_them():
    # OpInfo's chalf samples return complex32: torch.equal raises NotImplementedError ("equal_cpu"
    # not implemented for 'ComplexHalf'), which made eager's own determinism check a CASE_ERROR.
    x = torch.tensor([1 + 2j, 3 - 1j], dtype=torch.complex32)
    assert compare(x, x.clone(), rtol=0.0, atol=0.0) is None
    other = x.clone()
    other[1] = 3 + 1j
    m = compare(x, other)
    assert m.code == Code.NUMERIC_MISMATCH and "1 of 2 elements differ" in m.explanation and "at [1]" in m.explanation


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
    # Dropout that keeps 90% of the elements, scaled as if it kept half: eager's values (0, 2), other statistics.
    m = compare(a, torch.where(torch.rand(128, 128) < 0.1, 0.0, 2.0), statistical=True)
    assert m.code == Code.NUMERIC_MISMATCH and "statistics differ: mean is" in m.explanation
    assert "judged on NaN/Inf, dtype, shape, range, support and statistics" in m.explanation


# -- random outputs (nondeterministic cases) ------------------------------------------------------


def _samples(kind: str, shape: tuple, generator: torch.Generator) -> torch.Tensor:
    """A fresh random output of `kind`: what eager and a correct backend each give."""
    g = generator
    if kind == "rand":
        return torch.rand(shape, generator=g)
    if kind == "randn":
        return torch.randn(shape, generator=g) * 2.0 + 1.0
    if kind == "exponential":
        return torch.empty(shape).exponential_(generator=g)
    if kind == "dropout":  # of one fixed input: the kept values are the input's, doubled
        kept = torch.rand(shape, generator=g) < 0.5
        return torch.where(kept, torch.linspace(-3, 3, int(np.prod(shape))).reshape(shape) * 2, 0.0)
    if kind == "bernoulli":
        return torch.bernoulli(torch.full(shape, 0.3), generator=g)
    if kind == "mask":
        return torch.rand(shape, generator=g) < 0.1
    if kind == "randint":
        return torch.randint(0, 10, shape, generator=g)
    if kind == "randint.wide":
        return torch.randint(-(2**62), 2**62, shape, generator=g)
    if kind == "complex":
        return torch.randn(shape, dtype=torch.complex64, generator=g)
    raise ValueError(kind)


KINDS = ["rand", "randn", "exponential", "dropout", "bernoulli", "mask", "randint", "randint.wide", "complex"]


@pytest.mark.parametrize("shape", [(), (3,), (17,), (10, 10), (32, 32), (64, 64)], ids=str)
def test_a_correct_random_output_passes_whatever_its_size_and_distribution(shape):
    g = torch.Generator().manual_seed(sum(shape) + len(shape))
    for kind in KINDS:
        for _ in range(15):
            eager, backend = _samples(kind, shape, g), _samples(kind, shape, g)
            assert compare(eager, backend, statistical=True) is None, (kind, compare(eager, backend, statistical=True))


def test_a_nan_in_a_random_output_is_a_nan_mismatch():
    eager = torch.nn.functional.dropout(torch.randn(64, 64), 0.5, training=True)
    backend = torch.nn.functional.dropout(torch.randn(64, 64), 0.5, training=True)
    backend[3, 5] = float("nan")
    m = compare(eager, backend, statistical=True)
    assert m.code == Code.NAN_MISMATCH
    assert m.explanation.startswith("output: the backend gives NaN at 1 of 4096 places, eager at none")
    m = compare(backend, eager, statistical=True)
    assert m.code == Code.NAN_MISMATCH and "eager gives NaN at 1 of 4096 places, the backend at none" in m.explanation
    backend[3, 5] = float("inf")
    assert compare(eager, backend, statistical=True).code == Code.NUMERIC_MISMATCH


def test_a_small_random_output_is_judged_without_statistics_and_says_so():
    # Statistics of three values mean nothing: a correct backend's differ from eager's by chance.
    assert compare(torch.tensor([0.1, 0.5, 0.2]), torch.tensor([0.9, 0.7, 0.8]), statistical=True) is None
    assert compare(torch.tensor(0.25), torch.tensor(0.75), statistical=True) is None
    m = compare(torch.tensor([0.1, 0.5, 0.2]), torch.tensor([0.9, float("nan"), 0.8]), statistical=True)
    assert m.code == Code.NAN_MISMATCH
    assert "3 elements are too few for statistics" in m.explanation
    m = compare(torch.rand(3), torch.rand(3).double(), statistical=True)
    assert m.code == Code.DTYPE_MISMATCH and "too few for statistics" in m.explanation


def test_values_beyond_eager_s_range_fail_even_below_the_statistics_threshold():
    from conformance.compare.samples import MIN_STATISTICS_ELEMENTS

    g = torch.Generator().manual_seed(1)
    eager = torch.rand(200, generator=g)
    stretched = torch.rand(200, generator=g) * 1.5  # a third of the values above eager's largest
    assert 200 < MIN_STATISTICS_ELEMENTS
    m = compare(eager, stretched, statistical=True)
    assert m.code == Code.NUMERIC_MISMATCH and "values lie above eager's largest" in m.explanation
    m = compare(eager, stretched - 0.5, statistical=True)
    assert "values lie below eager's smallest" in m.explanation


def test_range_and_support_of_a_random_output_allow_the_case_s_tolerance():
    # A bernoulli computed in another order gives 1 + 1e-7: below every tolerance, still a 1.
    g = torch.Generator().manual_seed(3)
    coin = torch.bernoulli(torch.full((64, 64), 0.1), generator=g)
    backend = torch.bernoulli(torch.full((64, 64), 0.1), generator=g)
    assert compare(coin, torch.where(backend == 1, 1 + 1e-7, backend), statistical=True) is None
    # Beyond the tolerance it is a value eager never gives, as before.
    m = compare(coin, torch.where(backend == 1, 1.01, backend), statistical=True)
    assert m.code == Code.NUMERIC_MISMATCH and "above eager's largest, 1" in m.explanation
    # The case's own tolerance decides, not only torch.testing's default.
    assert compare(coin, torch.where(backend == 1, 1.01, backend), statistical=True, rtol=0.0, atol=0.05) is None
    # A dropout mask scaled by 1/(1-p) in another order: within tolerance of eager's 2, not a new value.
    mask = torch.rand(64, 64, generator=g) < 0.5
    scaled = mask * 2.0
    assert compare(scaled, (torch.rand(64, 64, generator=g) < 0.5) * (2.0 + 2e-6), statistical=True) is None
    m = compare(scaled, (torch.rand(64, 64, generator=g) < 0.5) * 2.5, statistical=True)
    assert m.code == Code.NUMERIC_MISMATCH and "above eager's largest, 2" in m.explanation


def test_a_random_output_of_another_distribution_fails_even_with_eager_s_mean_and_deviation():
    # torch-mlir's TOSA lowering makes every aten.uniform one compile-time constant, so randn's
    # Box-Muller transform gets the same uniform twice: sqrt(-2 log u) cos(2 pi u), skewed by 1.
    g = torch.Generator().manual_seed(4)
    eager = torch.randn(64, 64, generator=g)
    u = torch.rand(64, 64, generator=g)
    skewed = (torch.sqrt(-2 * torch.log(u)) * torch.cos(2 * torch.pi * u)).clamp(eager.min(), eager.max())
    m = compare(eager, skewed, statistical=True)
    assert m.code == Code.NUMERIC_MISMATCH
    assert "statistics differ: the distributions are" in m.explanation and "allowed 0.0595 at 4096 and 4096 elements" in m.explanation


def test_the_distance_of_two_samples_is_the_largest_gap_between_their_distribution_functions():
    # The definition, value by value: F(v) is the share of a sample at or below v. Ties (integers) and none (floats).
    from conformance.compare.samples import _distance

    g = torch.Generator().manual_seed(6)
    for x, y in (
        (torch.randint(0, 7, (300,), generator=g), torch.randint(1, 9, (170,), generator=g)),
        (torch.rand(250, generator=g), torch.rand(190, generator=g) * 1.1),
        (torch.zeros(40), torch.ones(60)),
        (torch.ones(50), torch.ones(20)),
    ):
        xs, ys = x.double().tolist(), y.double().tolist()
        expected = max(abs(sum(u <= v for u in xs) / len(xs) - sum(u <= v for u in ys) / len(ys)) for v in set(xs) | set(ys))
        assert _distance(torch.sort(x.double()).values, torch.sort(y.double()).values) == pytest.approx(expected, abs=1e-15)


def test_a_random_output_is_judged_the_same_in_any_order():
    # The checks sort both samples once; a backend's output in another order is the same sample.
    g = torch.Generator().manual_seed(8)
    eager, skewed = torch.randn(64, 64, generator=g), torch.rand(64, 64, generator=g) * 4 - 2
    for backend in (skewed, torch.randn(64, 64, generator=g)):
        shuffled = backend.reshape(-1)[torch.randperm(backend.numel(), generator=g)].reshape(64, 64)
        assert compare(eager, backend, statistical=True) == compare(eager, shuffled, statistical=True)


def test_integer_and_bool_random_outputs_are_compared():
    g = torch.Generator().manual_seed(2)
    eager = torch.randint(0, 10, (64, 64), generator=g)
    m = compare(eager, torch.randint(0, 20, (64, 64), generator=g), statistical=True)
    assert m.code == Code.NUMERIC_MISMATCH and "above eager's largest, 9 (the backend's extreme: 19)" in m.explanation
    m = compare(eager, torch.randint(0, 10, (64, 64), generator=g) * 1, statistical=True)
    assert m is None
    m = compare(eager, torch.randint(0, 5, (64, 64), generator=g) * 2, statistical=True)  # even values only
    assert m.code == Code.NUMERIC_MISMATCH and "statistics differ" in m.explanation
    # A dropout mask: the backend keeps everything.
    mask = torch.rand(64, 64, generator=g) < 0.5
    m = compare(mask, torch.ones(64, 64, dtype=torch.bool), statistical=True)
    assert m.code == Code.NUMERIC_MISMATCH and "statistics differ" in m.explanation
    # Bernoulli's support is eager's 0 and 1; values in between are not a sample of it.
    coin = torch.bernoulli(torch.full((64, 64), 0.5), generator=g)
    m = compare(coin, torch.full((64, 64), 0.5), statistical=True)
    assert m.code == Code.NUMERIC_MISMATCH
    assert "4096 of 4096 values are ones eager never gives (e.g. 0.5); eager's 4096 values take only 2 distinct values (0, 1)" in m.explanation
    # ... and bools are spelled as bools.
    small = torch.zeros(4096, dtype=torch.bool)
    backend = small.clone()
    backend[:100] = True
    m = compare(small, backend, statistical=True)
    assert m.explanation.startswith("output: 100 of 4096 values lie above eager's largest, False (the backend's extreme: True)")


# -- nesting, order, numbers ----------------------------------------------------------------------


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
