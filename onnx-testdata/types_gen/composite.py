"""Small graphs around a scatter: f32 -> Cast(bf16) -> scatter -> Cast(f32) models
(the scatter runs in bf16, inputs and outputs are float32), and complex64 / complex128
slabs moved by Transpose, Reshape, Concat and Slice before and after a scatter.
Expected values come from ReferenceEvaluator on the whole graph.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from .cases import Case, add_case, rng_for
from .values import DTYPES, idx, rand_arr

F32 = TensorProto.FLOAT
BF16T = TensorProto.BFLOAT16


def f32_values(rng, shape):
    """float32 values most of which bf16 does not hold (the Cast rounds them)."""
    n = int(np.prod(shape))
    return np.array([rng.randint(-255, 255) / 64.0 + rng.randint(-8, 8) * 2.0 ** -12 for _ in range(n)],
                    dtype=np.float32).reshape(shape)


def cast_case(name, op, opset, attrs, data, indices, updates, extra_inputs=()):
    c = Case(name, "Cast(bf16) + " + op, "bf16", opset)
    ins = ["data_bf16", "indices", "updates_bf16"] + [nm for (nm, _, _) in extra_inputs]
    out_name = "present_bf16" if op == "TensorScatter" else "scattered_bf16"
    if op == "TensorScatter":
        ins = ["data_bf16", "updates_bf16"] + [nm for (nm, _, _) in extra_inputs]
    c.nodes = [
        helper.make_node("Cast", ["data"], ["data_bf16"], name="cast_data", to=BF16T),
        helper.make_node("Cast", ["updates"], ["updates_bf16"], name="cast_updates", to=BF16T),
        helper.make_node(op, ins, [out_name], name="scatter_node", **attrs),
        helper.make_node("Cast", [out_name], ["output"], name="cast_back", to=F32),
    ]
    c.inputs = [("data", data, F32)]
    if indices is not None:
        c.inputs.append(("indices", indices, TensorProto.INT64))
    c.inputs.append(("updates", updates, F32))
    c.inputs += list(extra_inputs)
    c.outputs = [("output", F32)]
    return add_case(c)


def gen_cast_bf16():
    for opset, red, axis in ((13, None, 1), (16, "add", -1), (16, "mul", 0), (18, "add", -2), (18, "mul", 1),
                             (18, "max", -1), (18, "min", 0), (18, "none", 1)):
        name = f"cast_f32_bf16_scatter_elements_{opset}_{red or 'noreduction'}_axis{axis}_cast_back"
        rng = rng_for(name)
        shape = [3, 4]
        ax = axis % 2
        ishape = [3, 4]
        ishape[1 - ax] = 2
        ivals = [rng.randint(-shape[ax], shape[ax] - 1) for _ in range(int(np.prod(ishape)))]
        attrs = {"axis": axis}
        if red is not None:
            attrs["reduction"] = red
        cast_case(name, "ScatterElements", opset, attrs, f32_values(rng, shape), idx(ivals, ishape),
                  f32_values(rng, ishape))
    for opset, red in ((13, None), (16, "add"), (18, "mul"), (18, "max"), (18, "min")):
        name = f"cast_f32_bf16_scatter_nd_{opset}_{red or 'noreduction'}_rows_cast_back"
        rng = rng_for(name)
        ivals = [rng.randint(-4, 3) for _ in range(3)]
        attrs = {} if red is None else {"reduction": red}
        cast_case(name, "ScatterND", opset, attrs, f32_values(rng, [4, 3]), idx(ivals, [3, 1]), f32_values(rng, [3, 3]))
    # per-step rounding seen through f32: 1.0 + 4 x 2^-8 in bf16 is 1.0, not 1.015625
    for opset in (16, 18):
        name = f"cast_f32_bf16_scatter_elements_{opset}_add_duplicates_round_per_step_cast_back"
        c = cast_case(name, "ScatterElements", opset, {"axis": 0, "reduction": "add"},
                      np.array([1.0, 5.0], np.float32), idx([0, 0, 0, 0], [4]), np.full([4], 2.0 ** -8, np.float32))
        c.checks = [(0, 0, 1.0)]
    name = "cast_f32_bf16_tensor_scatter_24_circular_cast_back"
    rng = rng_for(name)
    cast_case(name, "TensorScatter", 24, {"mode": "circular", "axis": 1}, f32_values(rng, [2, 4, 2]), None,
              f32_values(rng, [2, 3, 2]), extra_inputs=[("write_indices", idx([3, 6], [2]), TensorProto.INT64)])


def i64(name, vals):
    return (name, np.array(vals, dtype=np.int64))


def slab_case(name, dt, opset, nodes, inputs, inits, out_name="output"):
    c = Case(name, "complex slabs + scatter", dt, opset)
    et = DTYPES[dt][1]
    c.nodes = nodes
    c.inputs = [(nm, a, et if np.iscomplexobj(a) else TensorProto.INT64) for (nm, a) in inputs]
    c.inits = inits
    c.outputs = [(out_name, et)]
    return add_case(c)


def gen_complex_slabs():
    mk = helper.make_node
    for dt in ("c64", "c128"):
        # Transpose -> ScatterND (rows of the transposed slab) -> Transpose back
        name = f"complex_slabs_{dt}_transpose_scatter_nd_18_add_transpose_back"
        rng = rng_for(name)
        x = rand_arr(rng, dt, [2, 3, 4])
        upd = rand_arr(rng, dt, [3, 2, 3])
        slab_case(name, dt, 18, [
            mk("Transpose", ["x"], ["xt"], name="to_last_first", perm=[2, 0, 1]),
            mk("ScatterND", ["xt", "indices", "updates"], ["yt"], name="scatter_node", reduction="add"),
            mk("Transpose", ["yt"], ["output"], name="back", perm=[1, 2, 0]),
        ], [("x", x), ("indices", idx([-1, 0, 3], [3, 1])), ("updates", upd)], [])
        # Reshape -> ScatterElements(axis -1, mul) -> Reshape back
        name = f"complex_slabs_{dt}_reshape_scatter_elements_16_mul_reshape_back"
        rng = rng_for(name)
        x = rand_arr(rng, dt, [2, 3, 4])
        ivals = [rng.randint(-4, 3) for _ in range(18)]
        slab_case(name, dt, 16, [
            mk("Reshape", ["x", "flat_shape"], ["xf"], name="flatten"),
            mk("ScatterElements", ["xf", "indices", "updates"], ["yf"], name="scatter_node", axis=-1, reduction="mul"),
            mk("Reshape", ["yf", "shape"], ["output"], name="unflatten"),
        ], [("x", x), ("indices", idx(ivals, [6, 3])), ("updates", rand_arr(rng, dt, [6, 3]))],
            [i64("flat_shape", [6, 4]), i64("shape", [2, 3, 4])])
        # Concat two slabs -> ScatterND (depth 2, none) -> Slice the middle rows
        name = f"complex_slabs_{dt}_concat_scatter_nd_13_slice"
        rng = rng_for(name)
        slab_case(name, dt, 13, [
            mk("Concat", ["a", "b"], ["ab"], name="join", axis=0),
            mk("ScatterND", ["ab", "indices", "updates"], ["s"], name="scatter_node"),
            mk("Slice", ["s", "starts", "ends", "axes", "steps"], ["output"], name="middle"),
        ], [("a", rand_arr(rng, dt, [2, 3])), ("b", rand_arr(rng, dt, [3, 3])),
            ("indices", idx([1, -1, -2, 0, 4, 2, 0, 0], [4, 2])), ("updates", rand_arr(rng, dt, [4]))],
            [i64("starts", [1, 2]), i64("ends", [4, -4]), i64("axes", [0, 1]), i64("steps", [1, -1])])
        # Slice a slab out -> ScatterElements (Scatter-style, opset 11) -> Concat it back with the rest
        name = f"complex_slabs_{dt}_slice_scatter_elements_11_concat"
        rng = rng_for(name)
        slab_case(name, dt, 11, [
            mk("Slice", ["x", "s0", "e0", "ax"], ["head"], name="head"),
            mk("Slice", ["x", "s1", "e1", "ax"], ["tail"], name="tail"),
            mk("ScatterElements", ["tail", "indices", "updates"], ["tail2"], name="scatter_node", axis=-2),
            mk("Concat", ["head", "tail2"], ["output"], name="join", axis=1),
        ], [("x", rand_arr(rng, dt, [2, 5, 2])), ("indices", idx([-3, 2, 0, -1], [2, 1, 2])),
            ("updates", rand_arr(rng, dt, [2, 1, 2]))],
            [i64("s0", [0]), i64("e0", [2]), i64("s1", [2]), i64("e1", [5]), i64("ax", [1])])
        # Transpose -> TensorScatter (linear, opset 24) -> Transpose back
        name = f"complex_slabs_{dt}_transpose_tensor_scatter_24_linear_transpose_back"
        rng = rng_for(name)
        slab_case(name, dt, 24, [
            mk("Transpose", ["x"], ["xt"], name="seq_first_to_second", perm=[1, 0, 2]),
            mk("TensorScatter", ["xt", "update", "write_indices"], ["yt"], name="scatter_node", mode="linear", axis=1),
            mk("Transpose", ["yt"], ["output"], name="back", perm=[1, 0, 2]),
        ], [("x", rand_arr(rng, dt, [4, 2, 3])), ("update", rand_arr(rng, dt, [2, 2, 3])),
            ("write_indices", idx([2, 0], [2]))], [])
