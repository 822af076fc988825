"""Weights into torch-mlir's IR from their bytes (toolchain/fx_literals.py): the same IR as torch-mlir's own path."""

import torch

import conformance.toolchain.fx_literals as fx_literals
from conformance.toolchain.torch_mlir import import_program


class Weights(torch.nn.Module):
    """Literals of every kind the hook takes or leaves: dtypes, sizes, layouts, a NaN, one tensor used twice."""

    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.w32 = torch.nn.Parameter(torch.randn(4, 3, generator=g))
        self.w32_same_shape = torch.nn.Parameter(torch.randn(4, 3, generator=g))  # blob names are numbered by first use
        self.register_buffer("f16", torch.randn(3, generator=g).half())
        self.register_buffer("f64", torch.randn(2, 3, generator=g).double())
        self.register_buffer("i64", torch.tensor([[-(2**62), 7, 0]]))
        self.register_buffer("i32", torch.tensor([1, -2, 3], dtype=torch.int32))
        self.register_buffer("i8", torch.tensor([-128, 127, 0], dtype=torch.int8))
        self.register_buffer("u8", torch.tensor([0, 255, 9], dtype=torch.uint8))
        self.register_buffer("u32", torch.tensor([0, 2**32 - 1], dtype=torch.uint32))
        self.register_buffer("c64", torch.tensor([1 + 2j, -0.5j, 3], dtype=torch.complex64))
        self.register_buffer("special", torch.tensor([-0.0, float("inf"), -float("inf"), 1e-45]))
        self.register_buffer("transposed", torch.arange(6.0).reshape(2, 3).t())  # not contiguous
        self.register_buffer("nan", torch.tensor([1.0, float("nan"), 2.0]))  # left to torch-mlir
        self.register_buffer("bf16", torch.randn(3, generator=g).bfloat16())  # numpy has no bfloat16: left to torch-mlir
        self.register_buffer("flag", torch.tensor([True, False, True]))  # torch-mlir makes it uint8 first, then ours
        self.register_buffer("one", torch.tensor([5.0]))  # a splat: left to torch-mlir
        self.register_buffer("conjugated", torch.tensor([1 + 2j, 3 - 1j]).conj())  # a lazy view: left to torch-mlir

    def forward(self, x):
        y = x @ self.w32_same_shape.t() + x @ self.w32.t() + x @ self.w32.t()  # w32 used twice, after its twin
        tail = (self.f16.float().sum() + self.f64.sum() + self.i64.sum() + self.i32.sum() + self.i8.sum() + self.u8.sum()
                + self.c64.real.sum() + self.special.sum() + self.transposed.sum() + self.nan.sum() + self.bf16.float().sum()
                + self.flag.sum() + self.one.sum() + self.conjugated.imag.sum() + self.u32.to(torch.int64).sum())  # fmt: skip
        return y + tail


def imported_ir(program) -> str:
    return import_program(program).operation.get_asm(large_elements_limit=None)


def test_literals_from_bytes_give_torch_mlirs_own_ir_byte_for_byte(monkeypatch):
    export = lambda: torch.export.export(Weights(), (torch.randn(2, 3),), strict=False)  # the importer rewrites what it imports
    made = []

    def counting(tensor):
        attribute = made_by_us(tensor)
        if attribute is not None:
            made.append(tuple(tensor.shape))
        return attribute

    made_by_us = fx_literals.resource_attribute
    monkeypatch.setattr(fx_literals, "resource_attribute", counting)
    ours = imported_ir(export())
    monkeypatch.setattr(fx_literals, "resource_attribute", lambda tensor: None)
    theirs = imported_ir(export())

    assert ours == theirs
    # Made from bytes: both f32 weights, f16, f64, i64, i32, i8, u8, u32, c64, the special values, the transposed one,
    # the bools (as uint8); not the NaN's, the bfloat16's, the splat's, the conjugated view's.
    assert sorted(made) == sorted([(4, 3), (4, 3), (3,), (2, 3), (1, 3), (3,), (3,), (3,), (3,), (4,), (3, 2), (3,), (2,)])
    assert "torch_tensor_4_3_torch.float32_1" in ours  # two blobs of one shape: numbered in the importer's order
