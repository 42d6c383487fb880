"""float16 accumulating ops, hand-written ONNX, for the control-flow corpus (generation only).

Run with the venv pinned in requirements-float16.txt:

    python onnx-testdata/control-flow/gen/float16.py

Writes `onnx-testdata/control-flow/float16/<case>/`, one case per ONNX op that accumulates
(Conv, ConvTranspose, MatMul, Gemm, the reductions, Softmax/LogSoftmax, the normalizations,
pooling, CumSum; not LpPool, which tract lacks), each in float16 with an accumulation length in
the hundreds or thousands:

- `model.onnx`: one node, float16 data; weights are initializers, as exporters write them;
- `test_data_set_0/input_<i>.pb`: the graph inputs (float16, seeded);
- `test_data_set_0/output_0.pb`: the expected value, the float64 result rounded once to float16;
- `reference/output_0.pb`: the float64 result itself (the same graph with every float16 tensor read
  as float64, run by onnx's reference evaluator, which computes in float64);
- `tolerance.toml`: `atol` = one float16 step (ulp) at the output's largest magnitude, `rtol` = 0:
  a runtime that computes in float32 and rounds once is within it, one that accumulates in float16
  is not;
- `float16.toml`: the op, its input shape, the float16 ulp at the output's largest magnitude and
  onnxruntime 1.31.1's largest error against the float64 result (the Rust side measures tract's and
  the plugin's against the same reference: `tests/tract_overrides.rs`, `float16_*`);
- `case.toml`: the corpus convention (onnxruntime's verdict against the expected value).

Prints the table of onnxruntime's errors.
"""
from __future__ import annotations

import os
import shutil

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "float16")
SEED = 50

CASES = []


def case(name, op, opset=18):
    """Registers `build(rng) -> (attrs, [(input name, array, is_initializer)])` for one `op` node."""

    def deco(build):
        CASES.append((name, op, opset, build))
        return build

    return deco


def u(rng, shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float16)


def axes(*a):
    return np.array(a, dtype=np.int64)


@case("conv", "Conv")
def _(rng):
    return dict(pads=[1, 1, 1, 1]), [
        ("x", u(rng, (1, 64, 16, 16)), False),
        ("w", u(rng, (16, 64, 3, 3)), True),
        ("b", u(rng, (16,)), True),
    ]


@case("conv_transpose", "ConvTranspose")
def _(rng):
    return dict(), [
        ("x", u(rng, (1, 64, 8, 8)), False),
        ("w", u(rng, (64, 8, 3, 3)), True),
        ("b", u(rng, (8,)), True),
    ]


@case("matmul", "MatMul")
def _(rng):
    return dict(), [("a", u(rng, (16, 512)), False), ("b", u(rng, (512, 16)), True)]


@case("gemm", "Gemm")
def _(rng):
    return dict(transB=1), [
        ("a", u(rng, (16, 512)), False),
        ("b", u(rng, (16, 512)), True),
        ("c", u(rng, (16,)), True),
    ]


def reduction(name, op, lo=-1.0, hi=1.0, shape=(4, 1024)):
    @case(name, op)
    def _(rng):
        return dict(keepdims=0), [("x", u(rng, shape, lo, hi), False), ("axes", axes(1), True)]


reduction("reduce_sum", "ReduceSum")
reduction("reduce_mean", "ReduceMean")
reduction("reduce_l1", "ReduceL1")
reduction("reduce_l2", "ReduceL2")
reduction("reduce_sum_square", "ReduceSumSquare")
reduction("reduce_log_sum", "ReduceLogSum", 0.0, 1.0)
reduction("reduce_log_sum_exp", "ReduceLogSumExp")
reduction("reduce_prod", "ReduceProd", 0.99, 1.01, (4, 256))


@case("softmax", "Softmax")
def _(rng):
    return dict(axis=-1), [("x", u(rng, (4, 1024), -4.0, 4.0), False)]


@case("log_softmax", "LogSoftmax")
def _(rng):
    return dict(axis=-1), [("x", u(rng, (4, 1024), -4.0, 4.0), False)]


@case("batch_normalization", "BatchNormalization")
def _(rng):
    return dict(epsilon=1e-3), [
        ("x", u(rng, (2, 64, 8, 8), -4.0, 4.0), False),
        ("scale", u(rng, (64,), 0.5, 1.5), True),
        ("bias", u(rng, (64,)), True),
        ("mean", u(rng, (64,)), True),
        ("var", u(rng, (64,), 0.5, 2.0), True),
    ]


@case("layer_normalization", "LayerNormalization")
def _(rng):
    return dict(axis=-1, epsilon=1e-5), [
        ("x", u(rng, (4, 1024), 0.0, 4.0), False),
        ("scale", u(rng, (1024,), 0.5, 1.5), True),
        ("bias", u(rng, (1024,)), True),
    ]


@case("instance_normalization", "InstanceNormalization")
def _(rng):
    return dict(epsilon=1e-5), [
        ("x", u(rng, (1, 8, 32, 32), 0.0, 4.0), False),
        ("scale", u(rng, (8,), 0.5, 1.5), True),
        ("bias", u(rng, (8,)), True),
    ]


@case("average_pool", "AveragePool")
def _(rng):
    return dict(kernel_shape=[16, 16], strides=[8, 8]), [("x", u(rng, (1, 8, 32, 32), 0.0, 4.0), False)]


@case("global_average_pool", "GlobalAveragePool")
def _(rng):
    return dict(), [("x", u(rng, (1, 16, 32, 32), 0.0, 4.0), False)]


@case("global_lp_pool", "GlobalLpPool")
def _(rng):
    return dict(p=2), [("x", u(rng, (1, 16, 32, 32)), False)]


@case("cumsum", "CumSum")
def _(rng):
    return dict(), [("x", u(rng, (4, 1024)), False), ("axis", np.array(1, dtype=np.int64), True)]


def global_lp_pool_2(x):
    """GlobalLpPool p=2 in float64 (onnx's reference evaluator has no GlobalLpPool)."""
    return np.sqrt((x * x).sum(axis=(2, 3), keepdims=True))


NUMPY_REFERENCES = {"GlobalLpPool": global_lp_pool_2}


def model_of(op, opset, attrs, tensors, y_shape, float_type):
    """One-node model; every float16 tensor typed `float_type` (float16, or double for the reference)."""
    np_float = {TensorProto.FLOAT16: np.float16, TensorProto.DOUBLE: np.float64}[float_type]

    def typed(a):
        return a.astype(np_float) if a.dtype == np.float16 else a

    inputs, inits = [], []
    for name, a, is_init in tensors:
        if is_init:
            inits.append(numpy_helper.from_array(typed(a), name))
        else:
            elem = helper.np_dtype_to_tensor_dtype(typed(a).dtype)
            inputs.append(helper.make_tensor_value_info(name, elem, list(a.shape)))
    node = helper.make_node(op, [n for n, _, _ in tensors], ["y"], **attrs)
    y = helper.make_tensor_value_info("y", float_type, None if y_shape is None else list(y_shape))
    graph = helper.make_graph([node], f"float16_{op}", inputs, [y], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    if y_shape is not None:
        onnx.checker.check_model(model, full_check=True)
    return model


def feeds_of(tensors, np_float):
    return {n: a.astype(np_float) for n, a, is_init in tensors if not is_init}


def write_tensor(path, array, name):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


def main():
    rows = []
    for index, (name, op, opset, build) in enumerate(CASES):
        rng = np.random.default_rng(SEED + index)
        attrs, tensors = build(rng)
        if op in NUMPY_REFERENCES:
            reference = NUMPY_REFERENCES[op](*(a.astype(np.float64) for _, a, _ in tensors))
        else:
            ref_model = model_of(op, opset, attrs, tensors, None, TensorProto.DOUBLE)
            reference = ReferenceEvaluator(ref_model).run(None, feeds_of(tensors, np.float64))[0]
        assert reference.dtype == np.float64, (name, reference.dtype)
        model = model_of(op, opset, attrs, tensors, reference.shape, TensorProto.FLOAT16)
        expected = reference.astype(np.float16)
        assert np.isfinite(expected).all(), name
        peak = float(np.abs(reference).max())
        ulp = float(np.spacing(np.float16(peak)))

        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        got = session.run(None, feeds_of(tensors, np.float16))[0]
        assert got.dtype == np.float16, (name, got.dtype)
        ort_error = float(np.abs(got.astype(np.float64) - reference).max())
        off = np.abs(got.astype(np.float64) - expected.astype(np.float64))
        if (off <= ulp).all():
            verdict = "pass"
        else:
            i = np.unravel_index(int(off.argmax()), off.shape)
            verdict = f"y{list(i)}: got {got[i]} expected {expected[i]} (tolerance {ulp})"

        d = os.path.join(ROOT, name)
        if os.path.isdir(d):
            shutil.rmtree(d)
        os.makedirs(d)
        onnx.save_model(model, os.path.join(d, "model.onnx"))
        k = 0
        for n, a, is_init in tensors:
            if not is_init:
                write_tensor(os.path.join(d, "test_data_set_0", f"input_{k}.pb"), a, n)
                k += 1
        write_tensor(os.path.join(d, "test_data_set_0", "output_0.pb"), expected, "y")
        write_tensor(os.path.join(d, "reference", "output_0.pb"), reference, "y")
        shape = "x".join(str(s) for s in tensors[0][1].shape)
        with open(os.path.join(d, "tolerance.toml"), "w") as f:
            f.write(f"# one float16 step at the output's largest magnitude ({peak:.6g})\n")
            f.write(f"rtol = 0.0\natol = {ulp!r}\n")
        with open(os.path.join(d, "float16.toml"), "w") as f:
            f.write(f'op = "{op}"\nshape = "{shape}"\nulp = {ulp!r}\n')
            f.write(f"onnxruntime_max_error = {ort_error!r}\n")
        with open(os.path.join(d, "case.toml"), "w") as f:
            f.write(f'source = "hand-written ONNX (onnx {onnx.__version__}), opset {opset}"\n')
            f.write(f'pattern = "float16-{name.replace("_", "-")}"\n')
            f.write(f'onnxruntime = "{verdict}"\n')
        rows.append((op, shape, ort_error, ulp, verdict))

    print(f"{'op':28} {'shape':14} {'onnxruntime':>12} {'ulp':>10}  verdict")
    for op, shape, err, ulp, verdict in rows:
        print(f"{op:28} {shape:14} {err:12.3g} {ulp:10.3g}  {verdict}")


if __name__ == "__main__":
    main()
