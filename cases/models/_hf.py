"""Wrapping `transformers` models so they return plain tuples of tensors.

Models are built from configs only (random weights, never from_pretrained),
so nothing is downloaded.
"""

import torch
from torch import nn


class TupleOutput(nn.Module):
    """Calls `model(**{input_name: x})` and returns the named fields as a tuple."""

    def __init__(self, model: nn.Module, fields: tuple[str, ...], input_name: str = "input_ids"):
        super().__init__()
        self.model = model
        self.fields = fields
        self.input_name = input_name

    def forward(self, x: torch.Tensor):
        out = self.model(**{self.input_name: x})
        return tuple(out[f] for f in self.fields)
