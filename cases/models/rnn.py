"""Recurrent sequence models: a two-layer LSTM and a bidirectional GRU, each with a
linear head, batch_first."""

import torch
from torch import nn

from conformance import T, model


class LSTMTagger(nn.Module):
    """Two stacked LSTM layers; a linear head on every time step."""

    def __init__(self, input_size=32, hidden_size=64, num_layers=2, num_classes=10):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers=num_layers, batch_first=True)
        self.head = nn.Linear(hidden_size, num_classes)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return self.head(out), h, c


class GRUClassifier(nn.Module):
    """A bidirectional GRU; a linear head on the final states of both directions."""

    def __init__(self, input_size=32, hidden_size=48, num_classes=5):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hidden_size, num_classes)

    def forward(self, x):
        out, h = self.gru(x)
        return self.head(torch.cat([h[0], h[1]], dim=-1)), out


CASES = [
    # Gates squash everything into (-1, 1): outputs and states are at most
    # ~0.6, and float32 vs float64 differs by <= 1e-7 after 16 steps.
    # rtol 1e-4 / atol 1e-5 allow a compiler's own gate fusion, activation
    # approximations and summation order.
    model(
        "lstm",
        LSTMTagger,
        T(4, 16, 32, low=-1.0, high=1.0),
        ops=("aten.lstm", "aten.linear"),
        tags={"sequence"},
        rtol=1e-4,
        atol=1e-5,
    ),
    model(
        "gru.bidirectional",
        GRUClassifier,
        T(4, 16, 32, low=-1.0, high=1.0),
        ops=("aten.gru", "aten.linear", "aten.cat"),
        tags={"sequence"},
        rtol=1e-4,
        atol=1e-5,
    ),
]
