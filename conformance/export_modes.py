"""torch.export's two modes as `--export-mode` and a case's `export_mode` spell them.

Strict mode traces forward with TorchDynamo (torch-mlir's own e2e configs
export so); non-strict runs it as Python on fake tensors. Cases that take
`int()`, `float()` or `.item()` of a tensor export in one and not the other.
A leaf module: settings, cases and run options all read it.
"""

EXPORT_MODES = ("non-strict", "strict")
DEFAULT_EXPORT_MODE = "non-strict"
