"""What the recurrent suite's generators share (generation only)."""
from __future__ import annotations

import os

from common import all_nodes

HERE = os.path.dirname(os.path.abspath(__file__))
# onnx-testdata/recurrent/<exporter>/<case>/
RECURRENT_ROOT = os.path.join(os.path.dirname(os.path.dirname(HERE)), "recurrent")

LOOP_OPS = ("Loop", "Scan")
RNN_OPS = ("LSTM", "GRU", "RNN")


def op_counts(model, ops):
    """`["Loopx2", ...]`: how many nodes of each of `ops` the graph holds, subgraphs and functions included."""
    found: dict[str, int] = {}
    nodes = list(all_nodes(model.graph))
    for f in model.functions:
        nodes += list(f.node)
    for node in nodes:
        if node.op_type in ops:
            found[node.op_type] = found.get(node.op_type, 0) + 1
    return [f"{k}x{v}" for k, v in sorted(found.items())]


def loop_meta(model) -> dict:
    """`case.toml` keys: the graph's Loop/Scan nodes (the suite gates these cases) and its ONNX
    recurrent ops (reported, not gated: they are tract's own LSTM/GRU/RNN)."""
    return {"loops": op_counts(model, LOOP_OPS), "rnn_ops": op_counts(model, RNN_OPS)}
