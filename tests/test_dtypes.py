"""The dtype table against the real MLIR printers: every name it holds is one torch-mlir and MLIR use."""

from __future__ import annotations

import pytest
import torch

from conformance import dtypes


@pytest.fixture(scope="module")
def context():
    from torch_mlir import ir
    from torch_mlir.dialects import torch as torch_dialect

    ctx = ir.Context()
    torch_dialect.register_dialect(ctx)
    return ctx


def _printed(context, text: str) -> str:
    from torch_mlir import ir

    return str(ir.Type.parse(text, context))


def test_each_dtype_is_named_as_torch_mlirs_importer_names_it():
    from torch_mlir.extras.fx_importer import TORCH_DTYPE_TO_MLIR_TYPE_ASM as importer

    assert len({row.dtype for row in dtypes.TABLE}) == len(dtypes.TABLE)
    assert len({row.torch_mlir for row in dtypes.TABLE}) == len(dtypes.TABLE)
    assert len({row.short for row in dtypes.TABLE}) == len(dtypes.TABLE)
    assert dtypes.INPUT_DTYPES == {row.dtype for row in dtypes.TABLE}
    # Complex and fp8 inputs import; the rest (uint16, uint64, qint32) fail at import, a verdict of its own.
    assert {torch.complex64, torch.complex128, torch.float8_e4m3fn} <= set(importer)
    for row in (row for row in dtypes.TABLE if row.dtype in importer):
        assert row.torch_mlir == importer[row.dtype], row.dtype
        assert dtypes.from_torch_mlir(row.torch_mlir) is row.dtype
        assert dtypes.torch_mlir_name(row.dtype) == row.torch_mlir


@pytest.mark.parametrize("row", dtypes.TABLE, ids=lambda row: dtypes.name(row.dtype))
def test_each_row_reads_back_from_the_printed_types(context, row):
    vtensor = _printed(context, f"!torch.vtensor<[2,?],{row.torch_mlir}>")
    assert dtypes.parse_vtensor(vtensor) == (["2", "?"], row.torch_mlir)
    assert dtypes.builtin_of(row.torch_mlir) == row.builtin
    builtin = _printed(context, dtypes.tensor_type(["2", "?"], row.builtin))
    assert dtypes.parse_tensor(builtin) == (["2", "?"], row.builtin)
    assert dtypes.from_builtin(row.builtin) is row.dtype
    if row.dtype.is_floating_point or row.dtype == torch.bool:
        assert row.builtin == row.torch_mlir
    else:  # builtin integers are signless, but unsigned ones keep their `u` (TOSA has none of them)
        assert row.builtin == row.torch_mlir.removeprefix("s")


@pytest.mark.parametrize("element", ["f32", "si64", "i1", "complex<f32>", "complex<f64>", "!torch.qint8", "f8E4M3FN"])
def test_the_vtensor_pattern_reads_every_element_type_the_importer_emits(context, element):
    scalar = _printed(context, f"!torch.vtensor<[],{element}>")
    assert dtypes.parse_vtensor(scalar) == ([], element)
    ranked = _printed(context, f"!torch.vtensor<[?,3],{element}>")
    assert dtypes.parse_vtensor(ranked) == (["?", "3"], element)
    # In a diagnostic's signature, each type's element is found on its own.
    signature = f"({ranked}, !torch.vtensor<[3],si64>) -> {scalar}"
    assert [e for _, e in dtypes.VTENSOR.findall(signature)] == [element, "si64", element]


def test_other_types_are_not_read_as_value_tensors(context):
    assert dtypes.parse_vtensor(_printed(context, "!torch.tensor<[2],f32>")) is None
    assert dtypes.parse_vtensor(_printed(context, "!torch.vtensor")) is None
    assert dtypes.parse_vtensor(_printed(context, "!torch.int")) is None
    assert dtypes.parse_tensor(_printed(context, "tensor<*xf32>")) is None
    assert dtypes.from_torch_mlir("!torch.int") is None
    assert dtypes.torch_mlir_name(torch.bits8) is None  # opaque bytes: no case input has them


def test_every_dtype_a_tensor_can_have_is_in_the_table():
    """Each dtype torch can make a tensor of, bits* aside, is a row (so a case may take it as input)."""
    makeable = set()
    for value in vars(torch).values():
        if isinstance(value, torch.dtype) and not str(value).startswith("torch.bits"):
            try:
                torch.zeros(2, dtype=value).clone()  # sub-byte dtypes make a tensor but no op copies it
                makeable.add(value)
            except (RuntimeError, NotImplementedError, TypeError):
                if value in (torch.qint8, torch.quint8, torch.qint32):
                    makeable.add(value)  # made by quantizing, not by empty()
    assert makeable <= dtypes.INPUT_DTYPES, makeable - dtypes.INPUT_DTYPES


def test_case_id_suffixes_and_names():
    assert [dtypes.short_name(d) for d in (torch.int64, torch.uint8, torch.bool, torch.bfloat16)] == ["i64", "u8", "bool", "bf16"]
    assert dtypes.name(torch.float32) == "float32"
