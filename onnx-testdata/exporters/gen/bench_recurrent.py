#!/usr/bin/env python3
"""Recurrent layers for `cargo xtask bench` (generation only): the same two layers, each as
tf2onnx writes it from Keras (ONNX `Loop`s, which the plugin runs) and as PyTorch's TorchScript
exporter writes it (one ONNX GRU/LSTM op, tract's native kernel), with the same weights:

- `keras_gru_loop.onnx`: Keras 3 `GRU(128, return_sequences=True)` (reset_after, Keras' default)
  on `x` f32 [batch, time, 64], through tf2onnx opset 18 (one `Loop`).
- `keras_bilstm_masked_loop.onnx`: `Masking(0.0)` then `Bidirectional(LSTM(128,
  return_sequences=True))` on the same input (a `Loop` per direction).
- `torch_gru_op.onnx`: `nn.GRU(64, 128, batch_first=True)`, every step's output, through the
  TorchScript exporter (`dynamo=False`), opset 17, `batch` and `time` dynamic: one ONNX `GRU`.
- `torch_bilstm_op.onnx`: `nn.LSTM(64, 128, batch_first=True, bidirectional=True)`, every step's
  output, the same way: one bidirectional ONNX `LSTM`.

The weights come from numpy RNGs seeded by the layer's name, drawn in Keras' layout and moved
into PyTorch's gate order (GRU: Keras z, r, h, PyTorch r, z, n; LSTM: i, f, c/g, o in both, Keras'
single bias as `bias_ih`, `bias_hh` zero), so each Keras model and its PyTorch twin compute the
same function (the masked LSTM only on rows without padding). The models hold their weights and
nothing else (no test data).

Two venvs, one per framework (TensorFlow and torch do not share one here); each run writes the
models of the frameworks it can import, or those named on the command line:

    <tf venv>/bin/python onnx-testdata/exporters/gen/bench_recurrent.py tf
    <torch venv>/bin/python onnx-testdata/exporters/gen/bench_recurrent.py torch

Pinned as generated (requirements-tf.txt, requirements-torch.txt): tensorflow-cpu 2.21.0,
keras 3.15.1, tf2onnx 1.17.0, protobuf 7.36.2 (tf venv); torch 2.15.0, onnxscript 0.7.2 (torch
venv); onnx 1.23.2, onnxruntime 1.31.1 and numpy 2.4.6 in both. The tf2onnx models go through
`tf_cases.canonicalize` with `PYTHONHASHSEED=0`, so reruns are byte-identical. Each part checks
its models against onnxruntime (Keras and PyTorch eager outputs); the torch part, when the Keras
models are already written, also checks each PyTorch twin against its Keras model (onnxruntime).
"""
from __future__ import annotations

import hashlib
import io
import os
import sys
import warnings
import zlib

# tf2onnx's optimizers iterate over sets of strings: pin hash randomization so reruns are identical.
if os.environ.get("PYTHONHASHSEED") != "0":
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable, *sys.argv])

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
import onnx  # noqa: E402

from common import all_nodes  # noqa: E402

OUT = os.path.normpath(os.path.join(HERE, "..", "..", "..", "crates", "scatter-bench", "models"))

F = 64  # features per step
U = 128  # units
# The check inputs' size (the bench's: crates/scatter-bench/src/recurrent.rs).
BATCH, TIME, PAD = 8, 64, 8
TOLERANCE = 1e-4


def rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def uniform(r, shape):
    """PyTorch's default RNN init, U(-1/sqrt(U), 1/sqrt(U))."""
    k = 1.0 / np.sqrt(U)
    return r.uniform(-k, k, shape).astype(np.float32)


def gru_weights(name):
    """Keras GRU(reset_after=True) weights: kernel [F, 3U], recurrent [U, 3U], bias [2, 3U] (input,
    recurrent), gates z, r, h."""
    r = rng(name)
    return [uniform(r, (F, 3 * U)), uniform(r, (U, 3 * U)), uniform(r, (2, 3 * U))]


def lstm_weights(name):
    """Keras LSTM weights: kernel [F, 4U], recurrent [U, 4U], bias [4U], gates i, f, c, o."""
    r = rng(name)
    return [uniform(r, (F, 4 * U)), uniform(r, (U, 4 * U)), uniform(r, (4 * U,))]


# (Keras model, PyTorch model, weights): forward direction, then the backward one for the BiLSTM.
PAIRS = [
    ("keras_gru_loop", "torch_gru_op", lambda: [gru_weights("bench_gru")]),
    ("keras_bilstm_masked_loop", "torch_bilstm_op",
     lambda: [lstm_weights("bench_bilstm/forward"), lstm_weights("bench_bilstm/backward")]),
]


def check_input(masked):
    """x [BATCH, TIME, F]; masked: the last PAD steps of the second half of the batch zeroed."""
    x = rng("bench_recurrent/x").standard_normal((BATCH, TIME, F)).astype(np.float32)
    if masked:
        x[BATCH // 2:, TIME - PAD:] = 0.0
    return x


def op_counts(model, ops):
    found = {}
    for node in all_nodes(model.graph):
        if node.op_type in ops:
            found[node.op_type] = found.get(node.op_type, 0) + 1
    return found


def ort_run(path, x):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return sess.run(None, {sess.get_inputs()[0].name: x})[0]


def max_diff(a, b):
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max())


def save(name, model, expected_ops, x, want):
    """Checks `model` (onnx's checker, and that it holds `expected_ops`, e.g. `{"Loop"}`), writes it
    and checks that onnxruntime gives `want` on `x`."""
    counts = op_counts(model, ("Loop", "Scan", "GRU", "LSTM", "RNN"))
    missing = [op for op in expected_ops if op not in counts]
    if missing:
        raise SystemExit(f"{name}: no {', '.join(missing)} node (found {counts})")
    onnx.checker.check_model(model, full_check=True)  # topological order, outer scopes included
    path = os.path.join(OUT, f"{name}.onnx")
    onnx.save_model(model, path)
    diff = max_diff(ort_run(path, x), want)
    if diff > TOLERANCE:
        raise SystemExit(f"{name}: onnxruntime differs from eager by {diff:.2e}")
    opset = next(i.version for i in model.opset_import if i.domain in ("", "ai.onnx"))
    ops = ", ".join(f"{k}x{v}" for k, v in sorted(counts.items()))
    print(f"{path}: opset {opset}, {ops}, {os.path.getsize(path)} bytes, onnxruntime vs eager {diff:.1e}")


def implicit_inputs(node):
    """The values `node`'s bodies read from outside them."""
    used, defined = [], set()
    for a in node.attribute:
        if a.type != onnx.AttributeProto.GRAPH:
            continue
        defined |= {vi.name for vi in a.g.input} | {i.name for i in a.g.initializer}
        for n in a.g.node:
            used += [*n.input, *implicit_inputs(n)]
            defined |= set(n.output)
        used += [o.name for o in a.g.output]
    return [x for x in dict.fromkeys(used) if x and x not in defined]


def canonical_order(graph, outer=()):
    """Sorts the nodes of `graph` and of its Loop bodies in an order that depends on the graph
    alone, not on tf2onnx's (which varies from run to run): of the nodes whose inputs are ready,
    the least by op, inputs (the producing node's place, an initializer's contents, a graph input's
    position) and attributes first. Then, in each body, a carried output that is the `Identity` of a
    later output (tf2onnx writes the same step's `h` as state and as scan output, either one through
    an `Identity`) swaps names with it, and `domain: ""` is cleared."""
    keys = {name: ("outer", key) for name, key in outer}
    keys[""] = ("none",)
    for k, vi in enumerate(graph.input):
        keys[vi.name] = ("input", k)
    for init in graph.initializer:
        bare = onnx.TensorProto()
        bare.CopyFrom(init)
        bare.name = ""
        keys[init.name] = ("const", hashlib.sha256(bare.SerializeToString()).hexdigest())

    def attributes(node):
        out = []
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                out.append((a.name, "graph", len(a.g.node)))
            else:
                bare = onnx.AttributeProto()
                bare.CopyFrom(a)
                bare.t.name = ""
                out.append((a.name, bare.SerializeToString().hex()))
        return tuple(out)

    nodes = [onnx.NodeProto.FromString(n.SerializeToString()) for n in graph.node]
    # A node is ready once its inputs are, and the outer values its bodies read.
    needs = [[*n.input, *implicit_inputs(n)] for n in nodes]
    placed = []
    pending = list(range(len(nodes)))
    while pending:
        ready = [i for i in pending if all(x in keys for x in needs[i])]
        if not ready:
            raise SystemExit(f"{graph.name}: a node's inputs are never produced")
        best = min(ready, key=lambda i: (nodes[i].op_type, nodes[i].domain,
                                         tuple(keys[x] for x in nodes[i].input), attributes(nodes[i]), i))
        pending.remove(best)
        for k, o in enumerate(nodes[best].output):
            keys[o] = ("node", len(placed), k)
        placed.append(nodes[best])
    del graph.node[:]
    graph.node.extend(placed)
    for node in graph.node:
        if node.domain == "":
            node.ClearField("domain")
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                canonical_order(a.g, tuple(keys.items()))
    if outer:  # a Loop body: (cond, carried..., scan...)
        identity_of = {n.output[0]: n.input[0] for n in graph.node if n.op_type == "Identity"}
        outs = graph.output
        for i in range(len(outs)):
            for j in range(i + 1, len(outs)):
                if identity_of.get(outs[i].name) == outs[j].name:
                    outs[i].name, outs[j].name = outs[j].name, outs[i].name
    return graph


def rename_all(model):
    """tf2onnx keeps one of several equal nodes or constants (`while/Less` or `while/Less_1`,
    `gru/time` or `while/loop_counter`) in an order that varies from run to run even with
    `PYTHONHASHSEED=0`, which `canonicalize` leaves as it is: the graph is the same, its names are
    not. Rename every node `<op>__<N>` and every tensor but the graph's inputs and outputs after
    its producer (`<node>:<i>`), initializer (`const__<N>`) or Loop body (`<loop>/in:<i>`), in
    order of first appearance, subgraphs at their node."""
    graph = model.graph
    keep = {i.name for i in graph.input} | {o.name for o in graph.output}
    initializers = set()
    for g in [graph, *(a.g for n in all_nodes(graph) for a in n.attribute if a.type == onnx.AttributeProto.GRAPH)]:
        initializers |= {i.name for i in g.initializer}
    names = {}
    count = {"node": 0, "const": 0}

    def name(old, fresh):
        if old and old not in keep and old not in names:
            names[old] = fresh()
        return names.get(old, old)

    def const():
        count["const"] += 1
        return f"const__{count['const']}"

    def unproduced(node, i):
        raise SystemExit(f"{node.name} reads {i!r} before it is produced")

    def walk(g, owner=None):
        for k, vi in enumerate(g.input):
            vi.name = name(vi.name, lambda: f"{owner}/in:{k}")
        for node in g.node:
            count["node"] += 1
            node.name = f"{node.op_type}__{count['node']}"
            for k, i in enumerate(node.input):
                node.input[k] = name(i, const if i in initializers else lambda: unproduced(node, i))
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g, node.name)
            for k, o in enumerate(node.output):
                node.output[k] = name(o, lambda: f"{node.name}:{k}")
        for vi in [*g.output, *g.value_info]:
            vi.name = names.get(vi.name, vi.name)
        for init in g.initializer:
            init.name = name(init.name, const)

    walk(graph)
    number = lambda t: int(t.name.split("__")[1]) if t.name.startswith("const__") else 0  # noqa: E731
    for g in [graph, *(a.g for n in all_nodes(graph) for a in n.attribute if a.type == onnx.AttributeProto.GRAPH)]:
        inits = sorted(g.initializer, key=lambda t: (number(t), t.name))
        inits = [onnx.TensorProto.FromString(t.SerializeToString()) for t in inits]
        del g.initializer[:]
        g.initializer.extend(inits)
    return model


def write_tf():
    import tensorflow as tf
    import keras
    import tf2onnx

    from tf_cases import canonicalize

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    keras.utils.set_random_seed(0)

    def gru():
        x = keras.Input(shape=(None, F), dtype="float32")
        layer = keras.layers.GRU(U, return_sequences=True)
        net = keras.Model(x, layer(x))
        layer.set_weights(gru_weights("bench_gru"))
        return net

    def bilstm():
        x = keras.Input(shape=(None, F), dtype="float32")
        m = keras.layers.Masking(mask_value=0.0)(x)
        layer = keras.layers.Bidirectional(keras.layers.LSTM(U, return_sequences=True))
        net = keras.Model(x, layer(m))
        layer.set_weights(lstm_weights("bench_bilstm/forward") + lstm_weights("bench_bilstm/backward"))
        return net

    for (name, _, _), build, masked in [(PAIRS[0], gru, False), (PAIRS[1], bilstm, True)]:
        net = build()
        x = check_input(masked)
        want = net(tf.constant(x), training=False).numpy()
        spec = [tf.TensorSpec([None, None, F], tf.float32, name="x")]
        fn = tf.function(lambda x, net=net: net(x, training=False))
        model, _ = tf2onnx.convert.from_function(fn, input_signature=spec, opset=18)
        model = canonicalize(model)
        canonical_order(model.graph)
        save(name, rename_all(model), {"Loop"}, x, want)


def write_torch():
    import torch
    from torch import nn

    torch.manual_seed(0)

    def gru_from_keras(g, prefix, weights):
        kernel, recurrent, bias = weights
        # Keras z, r, h -> PyTorch r, z, n.
        order = lambda w: np.concatenate([w[..., U:2 * U], w[..., :U], w[..., 2 * U:]], axis=-1)  # noqa: E731
        g[f"weight_ih_{prefix}"] = order(kernel).T
        g[f"weight_hh_{prefix}"] = order(recurrent).T
        g[f"bias_ih_{prefix}"] = order(bias[0])
        g[f"bias_hh_{prefix}"] = order(bias[1])

    def lstm_from_keras(g, prefix, weights):
        kernel, recurrent, bias = weights
        g[f"weight_ih_{prefix}"] = kernel.T
        g[f"weight_hh_{prefix}"] = recurrent.T
        g[f"bias_ih_{prefix}"] = bias
        g[f"bias_hh_{prefix}"] = np.zeros_like(bias)

    class Sequences(nn.Module):
        """Every step's output of an nn.GRU/nn.LSTM (Keras' return_sequences)."""

        def __init__(self, rnn):
            super().__init__()
            self.rnn = rnn

        def forward(self, x):
            return self.rnn(x)[0]

    def load(rnn, state):
        rnn.load_state_dict({k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in state.items()})
        return Sequences(rnn).eval()

    (keras_gru, gru_name, gru_w), (keras_lstm, lstm_name, lstm_w) = PAIRS
    state = {}
    gru_from_keras(state, "l0", gru_w()[0])
    gru = load(nn.GRU(F, U, batch_first=True), state)
    state = {}
    forward, backward = lstm_w()
    lstm_from_keras(state, "l0", forward)
    lstm_from_keras(state, "l0_reverse", backward)
    lstm = load(nn.LSTM(F, U, batch_first=True, bidirectional=True), state)

    for name, keras_name, mod, op, masked in [
        (gru_name, keras_gru, gru, "GRU", False),
        (lstm_name, keras_lstm, lstm, "LSTM", True),
    ]:
        x = check_input(masked)
        with torch.no_grad():
            want = mod(torch.from_numpy(x)).numpy()
        buf = io.BytesIO()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(mod, (torch.from_numpy(x),), buf, opset_version=17, input_names=["x"],
                              output_names=["y"], dynamic_axes={"x": {0: "batch", 1: "time"}}, dynamo=False)
        save(name, onnx.load_from_string(buf.getvalue()), {op}, x, want)
        # The twin: the Keras model, where written, on the rows without padding.
        keras_path = os.path.join(OUT, f"{keras_name}.onnx")
        if os.path.exists(keras_path):
            rows = slice(0, BATCH // 2) if masked else slice(None)
            diff = max_diff(ort_run(keras_path, x)[rows], want[rows])
            what = "rows without padding" if masked else "every row"
            print(f"  {name} vs {keras_name} (onnxruntime, {what}): {diff:.1e}")
            if diff > TOLERANCE:
                raise SystemExit(f"{name} and {keras_name} differ by {diff:.2e}")


PARTS = {"tf": write_tf, "torch": write_torch}


def main(selected):
    os.makedirs(OUT, exist_ok=True)
    for part in selected or PARTS:
        if part not in PARTS:
            raise SystemExit(f"unknown part {part!r} (tf, torch)")
        try:
            PARTS[part]()
        except ImportError as e:
            if selected:
                raise
            print(f"{part} models skipped: {e} (run with the {part} venv)")


if __name__ == "__main__":
    main(sys.argv[1:])
