"""Hand-written ONNX `If` patterns whose condition only the run knows (generation only).

Run with the venv pinned in requirements-onnx.txt (outside the repository):

    python onnx-testdata/control-flow/gen/if_onnx.py

Writes `onnx-testdata/control-flow/if-onnx/<case>/`: `model.onnx`, `test_data_set_0` with the
condition true and `test_data_set_1` with it false (expected values from numpy, by hand), and
`case.toml` with onnxruntime's verdict on both data sets. Every case holds a ScatterElements or a
Loop downstream of its If where the pattern allows, as the models it stands for do.
"""
from __future__ import annotations

import os
import shutil
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "if-onnx")
OPSET = 18
F = TensorProto.FLOAT
I64 = TensorProto.INT64
B = TensorProto.BOOL


def vi(name, dtype, shape):
    """A tensor's value info; `shape` None leaves its shape (and rank) unsaid."""
    if shape is None:
        return helper.make_value_info(name, helper.make_tensor_type_proto(dtype, None))
    return helper.make_tensor_value_info(name, dtype, shape)


def const(name, array):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(array, name))


def branch(name, nodes, outputs, inits=()):
    return helper.make_graph(nodes, name, [], outputs, initializer=list(inits))


def if_node(cond, then_g, else_g, outputs, name="choose"):
    return helper.make_node("If", [cond], outputs, name=name, then_branch=then_g, else_branch=else_g)


CASES = []


def case(name, notes):
    def deco(fn):
        CASES.append((name, notes, fn))
        return fn

    return deco


def scatter_rows(data_name, out_name, value_name, tag):
    """ScatterElements writing `value_name` (shape [1, n]) over row 0 of `data_name` ([2, n])."""
    return [
        const(f"{tag}_idx", np.zeros((1, 4), np.int64)),
        helper.make_node(
            "ScatterElements", [data_name, f"{tag}_idx", value_name], [out_name], axis=0, name=f"{tag}_scatter"
        ),
    ]


@case("const_then_bool_flag", "then a Constant true, else computed: tract folds it to true")
def const_then_bool_flag():
    then_g = branch("then", [const("t", np.array(True))], [vi("t", B, [])])
    else_g = branch(
        "else",
        [helper.make_node("ReduceMax", ["x"], ["m"], keepdims=0), const("zero", np.array(0, np.float32)),
         helper.make_node("Greater", ["m", "zero"], ["e"])],
        [vi("e", B, [])],
    )
    nodes = [
        if_node("cond", then_g, else_g, ["flag"]),
        helper.make_node("Cast", ["flag"], ["flag_f"], to=F),
        helper.make_node("Mul", ["x", "flag_f"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "g", [vi("cond", B, []), vi("x", F, [4])], [vi("y", F, [4])])

    def expected(cond, x):
        flag = True if cond else bool(x.max() > 0)
        return [x * np.float32(flag)]

    x = -np.abs(np.arange(1, 5, dtype=np.float32))
    return graph, [[np.array(c), x] for c in (True, False)], expected


@case("const_then_values_scatter", "then a Constant row, else a computed one; written by ScatterElements")
def const_then_values_scatter():
    then_g = branch("then", [const("t", np.full((1, 4), 7.0, np.float32))], [vi("t", F, [1, 4])])
    else_g = branch("else", [helper.make_node("Add", ["u", "u"], ["e"])], [vi("e", F, [1, 4])])
    nodes = [if_node("cond", then_g, else_g, ["row"])] + scatter_rows("data", "y", "row", "s")
    graph = helper.make_graph(
        nodes, "g", [vi("cond", B, []), vi("u", F, [1, 4]), vi("data", F, [2, 4])], [vi("y", F, [2, 4])]
    )

    def expected(cond, u, data):
        row = np.full((1, 4), 7.0, np.float32) if cond else u + u
        y = data.copy()
        y[0] = row[0]
        return [y]

    u = np.array([[1.5, -2.0, 3.25, 0.5]], np.float32)
    data = np.arange(8, dtype=np.float32).reshape(2, 4)
    return graph, [[np.array(c), u, data] for c in (True, False)], expected


@case("two_constants", "both branches Constants of different values")
def two_constants():
    then_g = branch("then", [const("t", np.array([1.0, 2.0], np.float32))], [vi("t", F, [2])])
    else_g = branch("else", [const("e", np.array([3.0, 4.0], np.float32))], [vi("e", F, [2])])
    nodes = [if_node("cond", then_g, else_g, ["v"]), helper.make_node("Mul", ["v", "x"], ["y"])]
    graph = helper.make_graph(nodes, "g", [vi("cond", B, []), vi("x", F, [2])], [vi("y", F, [2])])

    def expected(cond, x):
        v = np.array([1.0, 2.0] if cond else [3.0, 4.0], np.float32)
        return [v * x]

    x = np.array([10.0, 100.0], np.float32)
    return graph, [[np.array(c), x] for c in (True, False)], expected


@case("scalar_or_rank1_break_flag", "paddle2onnx's break flag: then a rank-0 Constant, else the [1] flag")
def scalar_or_rank1_break_flag():
    then_g = branch("then", [const("t", np.array(False))], [vi("t", B, [])])
    else_g = branch("else", [helper.make_node("Identity", ["flag"], ["e"])], [vi("e", B, [1])])
    nodes = [
        if_node("cond", then_g, else_g, ["keep"]),
        helper.make_node("Not", ["keep"], ["not_keep"]),
        helper.make_node("Or", ["not_keep", "done"], ["stop"]),
        helper.make_node("Cast", ["keep"], ["keep_f"], to=F),
        helper.make_node("Mul", ["x", "keep_f"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [vi("cond", B, []), vi("flag", B, [1]), vi("done", B, [1]), vi("x", F, [3])],
        [vi("y", F, [3]), vi("stop", B, [1])],
    )

    def expected(cond, flag, done, x):
        keep = np.array(False) if cond else flag
        return [x * keep.astype(np.float32), np.logical_or(np.logical_not(keep), done)]

    x = np.array([1.0, 2.0, 3.0], np.float32)
    return graph, [[np.array(c), np.array([True]), np.array([False]), x] for c in (True, False)], expected


@case("slices_of_different_lengths", "then x[:2], else x[:3]: the output's length only the run knows")
def slices_of_different_lengths():
    def sl(out, end):
        return [
            const(f"{out}_s", np.array([0], np.int64)),
            const(f"{out}_e", np.array([end], np.int64)),
            helper.make_node("Slice", ["x", f"{out}_s", f"{out}_e"], [out]),
        ]

    then_g = branch("then", sl("t", 2), [vi("t", F, [2])])
    else_g = branch("else", sl("e", 3), [vi("e", F, [3])])
    nodes = [
        if_node("cond", then_g, else_g, ["part"]),
        const("two", np.array(2.0, np.float32)),
        helper.make_node("Mul", ["part", "two"], ["y"]),
        # TorchScript casts the shapes it emits; a folded Shape of a dim only the run binds, as a
        # graph output itself, is tract's symbolic constant (docs/conformance.md, control flow).
        helper.make_node("Shape", ["part"], ["shape"]),
        helper.make_node("Cast", ["shape"], ["n"], to=I64),
    ]
    graph = helper.make_graph(
        nodes, "g", [vi("cond", B, []), vi("x", F, [5])], [vi("y", F, ["k"]), vi("n", I64, [1])]
    )

    def expected(cond, x):
        part = x[: 2 if cond else 3]
        return [part * 2, np.array([len(part)], np.int64)]

    x = np.arange(5, dtype=np.float32)
    return graph, [[np.array(c), x] for c in (True, False)], expected


@case("outer_values_of_different_shapes", "each branch reads an outer value of its own shape")
def outer_values_of_different_shapes():
    then_g = branch("then", [helper.make_node("Relu", ["a"], ["t"])], [vi("t", F, [2, 3])])
    else_g = branch("else", [helper.make_node("Neg", ["b"], ["e"])], [vi("e", F, [4, 3])])
    nodes = [
        if_node("cond", then_g, else_g, ["v"]),
        helper.make_node("ReduceSum", ["v"], ["y"], keepdims=0),
    ]
    graph = helper.make_graph(
        nodes, "g", [vi("cond", B, []), vi("a", F, [2, 3]), vi("b", F, [4, 3])], [vi("y", F, [])]
    )

    def expected(cond, a, b):
        v = np.maximum(a, 0) if cond else -b
        return [np.array(v.sum(), np.float32)]

    a = np.array([[1, -2, 3], [-4, 5, -6]], np.float32)
    b = np.arange(12, dtype=np.float32).reshape(4, 3)
    return graph, [[np.array(c), a, b] for c in (True, False)], expected


@case("symbolic_batch_columns", "x of a symbolic batch: then its first 2 columns, else all 4")
def symbolic_batch_columns():
    def sl(out, end):
        return [
            const(f"{out}_s", np.array([0], np.int64)),
            const(f"{out}_e", np.array([end], np.int64)),
            const(f"{out}_a", np.array([1], np.int64)),
            helper.make_node("Slice", ["x", f"{out}_s", f"{out}_e", f"{out}_a"], [out]),
        ]

    then_g = branch("then", sl("t", 2), [vi("t", F, ["batch", 2])])
    else_g = branch("else", [helper.make_node("Identity", ["x"], ["e"])], [vi("e", F, ["batch", 4])])
    nodes = [
        if_node("cond", then_g, else_g, ["v"]),
        helper.make_node("Sigmoid", ["v"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "g", [vi("cond", B, []), vi("x", F, ["batch", 4])], [vi("y", F, ["batch", "cols"])]
    )

    def expected(cond, x):
        v = x[:, :2] if cond else x
        return [(1 / (1 + np.exp(-v.astype(np.float64)))).astype(np.float32)]

    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    return graph, [[np.array(c), x] for c in (True, False)], expected


@case("shape_or_constant", "then Shape(x) (tract's TDim), else a Constant int64")
def shape_or_constant():
    then_g = branch("then", [helper.make_node("Shape", ["x"], ["t"])], [vi("t", I64, [2])])
    else_g = branch("else", [const("e", np.array([2, 3], np.int64))], [vi("e", I64, [2])])
    nodes = [
        if_node("cond", then_g, else_g, ["shape"]),
        helper.make_node("Reshape", ["x", "shape"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "g", [vi("cond", B, []), vi("x", F, [3, 2])], [vi("y", F, [None, None])]
    )

    def expected(cond, x):
        return [x.reshape((3, 2) if cond else (2, 3))]

    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    return graph, [[np.array(c), x] for c in (True, False)], expected


@case("two_outputs_one_constant", "two outputs: one equal in both branches, one a Constant in then")
def two_outputs_one_constant():
    then_g = branch(
        "then",
        [helper.make_node("Relu", ["x"], ["t0"]), const("t1", np.array([0.0, 0.0, 0.0], np.float32))],
        [vi("t0", F, [3]), vi("t1", F, [3])],
    )
    else_g = branch(
        "else",
        [helper.make_node("Neg", ["x"], ["e0"]), helper.make_node("Abs", ["x"], ["e1"])],
        [vi("e0", F, [3]), vi("e1", F, [3])],
    )
    nodes = [
        if_node("cond", then_g, else_g, ["a", "b"]),
        helper.make_node("Add", ["a", "b"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "g", [vi("cond", B, []), vi("x", F, [3])], [vi("y", F, [3])])

    def expected(cond, x):
        if cond:
            return [np.maximum(x, 0)]
        return [-x + np.abs(x)]

    x = np.array([-1.0, 2.0, -3.0], np.float32)
    return graph, [[np.array(c), x] for c in (True, False)], expected


@case("nested_if", "an If inside the else-branch, both conditions from the run")
def nested_if():
    inner_then = branch("inner_then", [const("it", np.array([5.0, 5.0], np.float32))], [vi("it", F, [2])])
    inner_else = branch("inner_else", [helper.make_node("Neg", ["x"], ["ie"])], [vi("ie", F, [2])])
    then_g = branch("then", [const("t", np.array([1.0, 1.0], np.float32))], [vi("t", F, [2])])
    else_g = branch(
        "else", [if_node("cond2", inner_then, inner_else, ["e"], name="inner")], [vi("e", F, [2])]
    )
    nodes = [if_node("cond", then_g, else_g, ["v"]), helper.make_node("Mul", ["v", "x"], ["y"])]
    graph = helper.make_graph(
        nodes, "g", [vi("cond", B, []), vi("cond2", B, []), vi("x", F, [2])], [vi("y", F, [2])]
    )

    def expected(cond, cond2, x):
        v = np.ones(2, np.float32) if cond else (np.full(2, 5.0, np.float32) if cond2 else -x)
        return [v * x]

    x = np.array([2.0, -3.0], np.float32)
    sets = [[np.array(c), np.array(c2), x] for c, c2 in ((True, False), (False, True), (False, False))]
    return graph, sets, expected


@case("if_in_loop_body", "a Loop whose body chooses by an If on the iteration's value; ScatterElements writes it")
def if_in_loop_body():
    # body: (i, cond, buf) -> (cond, buf'), buf'[0, i] = If(x[i] > 0, Constant 1, x[i] * 3)
    body_nodes = [
        helper.make_node("Unsqueeze", ["i", "ax0"], ["i1"]),
        helper.make_node("Gather", ["x", "i"], ["xi"], axis=0),
        const("zero", np.array(0, np.float32)),
        helper.make_node("Greater", ["xi", "zero"], ["pos"]),
        if_node(
            "pos",
            branch("then", [const("one", np.array(1.0, np.float32))], [vi("one", F, [])]),
            branch("else", [const("three", np.array(3.0, np.float32)), helper.make_node("Mul", ["xi", "three"], ["e"])], [vi("e", F, [])]),
            ["v"],
            name="sign",
        ),
        helper.make_node("Reshape", ["v", "shape11"], ["v11"]),
        helper.make_node("Reshape", ["i1", "shape11"], ["i11"]),
        helper.make_node("ScatterElements", ["buf", "i11", "v11"], ["buf_out"], axis=1, name="write"),
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
    ]
    body = helper.make_graph(
        body_nodes,
        "body",
        [vi("i", I64, []), vi("cond_in", B, []), vi("buf", F, [1, 4])],
        [vi("cond_out", B, []), vi("buf_out", F, [1, 4])],
        initializer=[
            numpy_helper.from_array(np.array([0], np.int64), "ax0"),
            numpy_helper.from_array(np.array([1, 1], np.int64), "shape11"),
        ],
    )
    nodes = [
        const("m", np.array(4, np.int64)),
        const("init", np.zeros((1, 4), np.float32)),
        helper.make_node("Loop", ["m", "", "init"], ["y"], body=body, name="loop"),
    ]
    graph = helper.make_graph(nodes, "g", [vi("x", F, [4])], [vi("y", F, [1, 4])])

    def expected(x):
        return [np.where(x > 0, np.float32(1), x * 3).reshape(1, 4).astype(np.float32)]

    sets = [[np.array([1.0, -2.0, 3.0, -0.5], np.float32)], [np.array([-1.0, -2.0, -3.0, -4.0], np.float32)]]
    return graph, sets, expected


def write(name, notes, graph, sets, expected, out=OUT, pattern="if-run-time-condition"):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="if_onnx.py")
    model.ir_version = 9
    onnx.checker.check_model(model, full_check=False)
    d = os.path.join(out, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    onnx.save(model, os.path.join(d, "model.onnx"))
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    input_names = [i.name for i in graph.input]
    verdicts = []
    for k, inputs in enumerate(sets):
        outs = expected(*inputs)
        ds = os.path.join(d, f"test_data_set_{k}")
        os.makedirs(ds)
        for i, (n, v) in enumerate(zip(input_names, inputs)):
            with open(os.path.join(ds, f"input_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(v), n).SerializeToString())
        for i, (o, v) in enumerate(zip(graph.output, outs)):
            with open(os.path.join(ds, f"output_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(v), o.name).SerializeToString())
        try:
            got = sess.run(None, dict(zip(input_names, inputs)))
            bad = [
                i
                for i, (g, e) in enumerate(zip(got, outs))
                if np.asarray(g).dtype != np.asarray(e).dtype
                or not np.allclose(np.asarray(g).reshape(-1), np.asarray(e).reshape(-1), rtol=1e-5, atol=1e-6)
                or np.asarray(g).size != np.asarray(e).size
            ]
            verdicts.append("pass" if not bad else f"data set {k}: output {bad[0]} differs: {got[bad[0]]!r}")
        except Exception as e:  # noqa: BLE001 - the verdict records any error
            verdicts.append(f"data set {k}: error: {str(e).splitlines()[0]}")
    failed = [v for v in verdicts if v != "pass"]
    verdict = "pass" if not failed else failed[0]
    with open(os.path.join(d, "case.toml"), "w") as f:
        f.write(f'source = "hand-written ONNX (onnx {onnx.__version__}, opset {OPSET})"\n')
        f.write(f'pattern = "{pattern}"\n')
        f.write(f"notes = {notes!r}\n".replace("'", '"'))
        f.write(f"onnxruntime = {verdict!r}\n".replace("'", '"'))
    return verdict


def main():
    only = sys.argv[1] if len(sys.argv) > 1 else ""
    for name, notes, fn in CASES:
        if only not in name:
            continue
        graph, sets, expected = fn()
        print(f"{name}: onnxruntime {write(name, notes, graph, sets, expected)}")


if __name__ == "__main__":
    main()
