"""A greedy decoder `Loop` as paddle2onnx writes table-structure decoders (generation only).

Run with the venv pinned in requirements-onnx.txt (outside the repository):

    python onnx-testdata/control-flow/gen/paddle_style.py

Writes `onnx-testdata/control-flow/paddle-style/<case>/`. The Loop carries a hidden state, a token
buffer, a score buffer and a step counter; each iteration writes the argmax token and its score with
ScatterElements and decides whether to go on with an `If` whose then-branch is a rank-0 Constant
`false` (the end token came) and whose else-branch gives the carried `[1]` flag: the branches differ in
rank, as paddle2onnx's do. Expected values come from a numpy run of the same recurrence; data set 0
meets the end token before the step limit, data set 1 does not.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from if_onnx import OUT as IF_OUT, const, vi, write  # noqa: E402

OUT = os.path.join(os.path.dirname(IF_OUT), "paddle-style")
F = TensorProto.FLOAT
I64 = TensorProto.INT64
B = TensorProto.BOOL
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
# Hidden units, vocabulary, step limit and end token of the corpus cases.
CORPUS = dict(H=8, V=6, STEPS=10, EOS=0)
# The bench row `loop_greedy_decoder_if` (crates/scatter-bench/src/loops.rs): wider, longer, and an
# end token no step meets, so every run takes all its steps.
BENCH = dict(H=64, V=256, STEPS=64, EOS=256)
BENCH_MODEL = os.path.join(REPO, "crates", "scatter-bench", "models", "greedy_decoder_if.onnx")


def weights(seed, H, V, **_):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((H, V)).astype(np.float32)
    u = (rng.standard_normal((H, H)) * 0.5).astype(np.float32)
    e = rng.standard_normal((V, H)).astype(np.float32)
    return w, u, e


def decoder_graph(w, u, e, symbolic_batch, H, V, STEPS, EOS):
    one = lambda n: numpy_helper.from_array(np.array([1, 1], np.int64), n)  # noqa: E731
    body_nodes = [
        helper.make_node("MatMul", ["h", "W"], ["logits"]),
        helper.make_node("ArgMax", ["logits"], ["tok"], axis=1, keepdims=1),
        helper.make_node("ReduceMax", ["logits", "ax1"], ["score"], keepdims=1),
        helper.make_node("Reshape", ["step", "shape11"], ["pos"]),
        helper.make_node("ScatterElements", ["buf", "pos", "tok"], ["buf_out"], axis=1, name="write_token"),
        helper.make_node("ScatterElements", ["scores", "pos", "score"], ["scores_out"], axis=1, name="write_score"),
        helper.make_node("Reshape", ["tok", "shape1"], ["tok1"]),
        helper.make_node("Gather", ["E", "tok1"], ["emb"], axis=0),
        helper.make_node("MatMul", ["h", "U"], ["hu"]),
        helper.make_node("Add", ["hu", "emb"], ["pre"]),
        helper.make_node("Tanh", ["pre"], ["h_out"]),
        const("one_i", np.array([1], np.int64)),
        helper.make_node("Add", ["step", "one_i"], ["step_out"]),
        const("eos", np.array([[EOS]], np.int64)),
        helper.make_node("Equal", ["tok", "eos"], ["is_eos11"]),
        helper.make_node("Squeeze", ["is_eos11"], ["is_eos"]),
        helper.make_node(
            "If",
            ["is_eos"],
            ["cond_out"],
            name="break_flag",
            then_branch=helper.make_graph([const("stop", np.array(False))], "stop", [], [vi("stop", B, [])]),
            else_branch=helper.make_graph(
                [helper.make_node("Identity", ["keep"], ["go"])], "go", [], [vi("go", B, [1])]
            ),
        ),
        helper.make_node("Identity", ["keep"], ["keep_out"]),
    ]
    body = helper.make_graph(
        body_nodes,
        "body",
        [
            vi("i", I64, []),
            vi("cond_in", B, []),
            vi("h", F, [1, H]),
            vi("buf", I64, [1, STEPS]),
            vi("scores", F, [1, STEPS]),
            vi("step", I64, [1]),
            vi("keep", B, [1]),
        ],
        [
            vi("cond_out", B, None),
            vi("h_out", F, [1, H]),
            vi("buf_out", I64, [1, STEPS]),
            vi("scores_out", F, [1, STEPS]),
            vi("step_out", I64, [1]),
            vi("keep_out", B, [1]),
        ],
        initializer=[
            numpy_helper.from_array(w, "W"),
            numpy_helper.from_array(u, "U"),
            numpy_helper.from_array(e, "E"),
            numpy_helper.from_array(np.array([1], np.int64), "ax1"),
            one("shape11"),
            numpy_helper.from_array(np.array([1], np.int64), "shape1"),
        ],
    )
    nodes = [
        const("m", np.array(STEPS, np.int64)),
        const("go0", np.array(True)),
        const("buf0", np.zeros((1, STEPS), np.int64)),
        const("scores0", np.zeros((1, STEPS), np.float32)),
        const("step0", np.array([0], np.int64)),
        const("keep0", np.array([True])),
        helper.make_node(
            "Loop",
            ["m", "go0", "h0", "buf0", "scores0", "step0", "keep0"],
            ["h_end", "tokens", "token_scores", "steps", "keep_end"],
            body=body,
            name="decode",
        ),
    ]
    h0_shape = ["batch", H] if symbolic_batch else [1, H]
    return helper.make_graph(
        nodes,
        "g",
        [vi("h0", F, h0_shape)],
        [vi("tokens", I64, [1, STEPS]), vi("token_scores", F, [1, STEPS]), vi("steps", I64, [1])],
    )


def reference(w, u, e, STEPS, EOS, **_):
    def run(h0):
        h = h0.astype(np.float32)
        buf = np.zeros((1, STEPS), np.int64)
        scores = np.zeros((1, STEPS), np.float32)
        step = 0
        for _ in range(STEPS):
            logits = h @ w
            tok = int(np.argmax(logits[0]))
            buf[0, step] = tok
            scores[0, step] = logits[0].max()
            h = np.tanh(h @ u + e[tok][None, :]).astype(np.float32)
            step += 1
            if tok == EOS:
                break
        return [buf, scores, np.array([step], np.int64)]

    return run


def h0_meeting(w, u, e, want_eos, seed, H, STEPS, **dims):
    """A start state whose greedy decode meets the end token (or never does) within the limit."""
    run = reference(w, u, e, STEPS=STEPS, **dims)
    rng = np.random.default_rng(seed)
    for _ in range(10000):
        h0 = rng.standard_normal((1, H)).astype(np.float32)
        steps = int(run(h0)[2][0])
        if (2 <= steps < STEPS) == want_eos and (want_eos or steps == STEPS):
            return h0
    raise SystemExit("no start state found")


def main():
    dims = CORPUS
    w, u, e = weights(7, **dims)
    sets = [[h0_meeting(w, u, e, True, 1, **dims)], [h0_meeting(w, u, e, False, 2, **dims)]]
    for name, symbolic in (("greedy_decoder_break_flag", False), ("greedy_decoder_break_flag_symbolic_batch", True)):
        graph = decoder_graph(w, u, e, symbolic, **dims)
        verdict = write(
            name,
            "a greedy decoder Loop: ScatterElements token and score buffers, an If break flag of rank 0 or 1",
            graph,
            sets,
            reference(w, u, e, **dims),
            out=OUT,
            pattern="paddle-style-greedy-decoder",
        )
        print(f"{name}: onnxruntime {verdict}")
    w, u, e = weights(11, **BENCH)
    model = helper.make_model(
        decoder_graph(w, u, e, False, **BENCH), opset_imports=[helper.make_opsetid("", 18)], producer_name="paddle_style.py"
    )
    model.ir_version = 9
    onnx.checker.check_model(model)
    onnx.save(model, BENCH_MODEL)
    print(f"{os.path.relpath(BENCH_MODEL, REPO)}: {os.path.getsize(BENCH_MODEL)} bytes")


if __name__ == "__main__":
    main()
