"""JAX (`.at[]`, segment ops, KV cache, top-k mask) exported with jax2onnx.

Run with the venv pinned in requirements-jax.txt:

    python onnx-testdata/exporters/gen/jax_cases.py [idiom-substring]

Writes `onnx-testdata/exporters/jax2onnx/` (wiped first; with an idiom-name substring, only those
idioms' cases are rewritten). Expected outputs are JAX's eager outputs.
Indices are exercised both as run-time graph inputs and as constants baked into the function.
JAX's default scatter mode drops out-of-bounds updates; jax2onnx lowers that to a run-time filter
(NonZero + Gather + Reshape before ScatterND), which we keep on purpose.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import importlib.metadata  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from jax2onnx import to_onnx  # noqa: E402

from common import Writer, all_nodes  # noqa: E402

# Every idiom at opset 18; the loops and a representative subset also at 23 (jax2onnx 0.17.1 emits the same graph
# for both, apart from the opset import, so repeating all of them would only add bulk).
OPSETS = (18,)
ALSO_OPSET_23 = {
    "set_rows_runtime", "add_dup_runtime", "max_dup_runtime", "set_oob_default_runtime",
    "segment_sum_runtime", "kv_cache_at_set_runtime", "kv_cache_dynamic_update_slice_runtime",
    "top_k_mask",
}
F32 = np.float32
I32 = np.int32


def rng_for(name: str) -> np.random.Generator:
    # One fixed-seed stream per idiom, so adding or reordering cases does not change others.
    seed = sum((i + 1) * b for i, b in enumerate(name.encode())) % (2**31)
    return np.random.default_rng(seed)


def graph_flags(model: onnx.ModelProto) -> str:
    """Control flow and data-dependent shapes, which matter to a static-shape engine.

    A Reshape's shape input is "folded" when it comes from an initializer or Constant, "foldable"
    when it is computed only from constants and Shape of tensors whose shapes shape inference knows
    fully, and "data-dependent" otherwise (typically downstream of NonZero)."""
    inferred = onnx.shape_inference.infer_shapes(model)
    static_shape = set()
    for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
        dims = vi.type.tensor_type.shape.dim
        if vi.type.tensor_type.HasField("shape") and all(d.HasField("dim_value") for d in dims):
            static_shape.add(vi.name)
    const = {i.name for i in model.graph.initializer}
    static = set(const)
    ops: dict[str, int] = {}
    reshapes = {"foldable": 0, "data-dependent": 0}

    def walk(graph, top):
        for n in graph.node:
            ops[n.op_type] = ops.get(n.op_type, 0) + 1
            if top:
                if n.op_type == "Constant":
                    const.update(n.output)
                    static.update(n.output)
                elif n.op_type == "Shape":
                    if n.input[0] in static_shape:
                        static.update(n.output)
                elif n.op_type not in ("If", "Loop", "Scan") and all(i in static for i in n.input if i):
                    static.update(n.output)
            if n.op_type == "Reshape" and len(n.input) > 1 and n.input[1] not in const:
                reshapes["foldable" if top and n.input[1] in static else "data-dependent"] += 1
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g, False)
                for sub in a.graphs:
                    walk(sub, False)

    walk(model.graph, True)
    flags = [f"{op}x{ops[op]}" for op in ("If", "Loop", "Scan", "NonZero") if op in ops]
    flags += [f"Reshape with {k} shape x{v}" for k, v in reshapes.items() if v]
    return "graph has " + ", ".join(flags) if flags else "graph has no If/Loop/NonZero/computed Reshape shape"


# Each case: (idiom name, description, fn, [(input name, numpy array)], note).
CASES: list[tuple[str, str, object, list[tuple[str, np.ndarray]], str]] = []


def case(name: str, idiom: str, inputs, note: str = ""):
    def deco(fn):
        CASES.append((name, idiom, fn, inputs, note))
        return fn

    return deco


def r(name: str):
    return rng_for(name)


def normal(g, *shape):
    return g.standard_normal(shape).astype(F32)


# ---- .at[].set ----------------------------------------------------------------------------------
g = r("set_scalar_index")
case("set_scalar_index_runtime", "x.at[i].set(v), scalar i as a graph input",
     [("x", normal(g, 5, 3)), ("i", np.array(2, dtype=I32)), ("v", normal(g, 3))])(
    lambda x, i, v: x.at[i].set(v))
case("set_scalar_index_const", "x.at[3].set(v), constant scalar index",
     [("x", normal(g, 5, 3)), ("v", normal(g, 3))])(
    lambda x, v: x.at[3].set(v))

g = r("set_rows")
case("set_rows_runtime", "x.at[idx].set(v), index array (rows) as a graph input",
     [("x", normal(g, 6, 4)), ("idx", np.array([4, 0, 2], dtype=I32)), ("v", normal(g, 3, 4))])(
    lambda x, idx, v: x.at[idx].set(v))
case("set_rows_const", "x.at[jnp.array([5, 1])].set(v), constant index array",
     [("x", normal(g, 6, 4)), ("v", normal(g, 2, 4))])(
    lambda x, v: x.at[jnp.array([5, 1], dtype=jnp.int32)].set(v))

g = r("set_negative")
case("set_negative_runtime", "x.at[idx].set(v), negative indices (JAX wraps them) as a graph input",
     [("x", normal(g, 5, 3)), ("idx", np.array([-1, 1, -4], dtype=I32)), ("v", normal(g, 3, 3))])(
    lambda x, idx, v: x.at[idx].set(v))
case("set_negative_const", "x.at[jnp.array([-1, -3])].set(v), constant negative indices",
     [("x", normal(g, 5, 3)), ("v", normal(g, 2, 3))])(
    lambda x, v: x.at[jnp.array([-1, -3], dtype=jnp.int32)].set(v))

g = r("set_2d_advanced")
case("set_2d_advanced_runtime", "x.at[i, j].set(v), 2-D advanced indexing, i and j graph inputs",
     [("x", normal(g, 4, 5)), ("i", np.array([0, 3, 1], dtype=I32)), ("j", np.array([4, 0, 2], dtype=I32)),
      ("v", normal(g, 3))])(
    lambda x, i, j, v: x.at[i, j].set(v))
case("set_2d_advanced_const", "x.at[[1, 2], [3, -1]].set(v), constant 2-D advanced indices",
     [("x", normal(g, 4, 5)), ("v", normal(g, 2))])(
    lambda x, v: x.at[jnp.array([1, 2], dtype=jnp.int32), jnp.array([3, -1], dtype=jnp.int32)].set(v))

g = r("set_columns")
case("set_columns_runtime", "x.at[:, idx].set(v), column scatter (axis 1), idx a graph input",
     [("x", normal(g, 3, 6)), ("idx", np.array([5, 2], dtype=I32)), ("v", normal(g, 3, 2))])(
    lambda x, idx, v: x.at[:, idx].set(v))

g = r("set_slice")
case("set_slice", "x.at[:, 1:3].set(v), static slice",
     [("x", normal(g, 4, 5)), ("v", normal(g, 4, 2))])(
    lambda x, v: x.at[:, 1:3].set(v))
case("set_strided", "x.at[..., ::2].set(v), static strided slice",
     [("x", normal(g, 2, 3, 6)), ("v", normal(g, 2, 3, 3))])(
    lambda x, v: x.at[..., ::2].set(v))

# ---- .at[] reductions with duplicate indices ---------------------------------------------------
DUP = np.array([1, 3, 1, 0, 3, 1], dtype=I32)
for red in ("add", "mul", "min", "max"):
    g = r(f"{red}_dup")
    case(f"{red}_dup_runtime", f"x.at[idx].{red}(v) with duplicate indices, idx a graph input",
         [("x", normal(g, 5, 2)), ("idx", DUP.copy()), ("v", normal(g, 6, 2))])(
        (lambda red: lambda x, idx, v: getattr(x.at[idx], red)(v))(red))
    case(f"{red}_dup_const", f"x.at[[2, 0, 2, 2]].{red}(v) with duplicate constant indices",
         [("x", normal(g, 5, 2)), ("v", normal(g, 4, 2))])(
        (lambda red: lambda x, v: getattr(x.at[jnp.array([2, 0, 2, 2], dtype=jnp.int32)], red)(v))(red))

g = r("bincount")
case("bincount_int_add_runtime", "jnp.zeros(6, int32).at[idx].add(1): integer histogram, idx a graph input",
     [("idx", np.array([0, 5, 2, 2, 5, 5, 1], dtype=I32))])(
    lambda idx: jnp.zeros(6, jnp.int32).at[idx].add(1))

# ---- out of bounds: default mode (drop), mode="drop", mode="clip", promise_in_bounds ------------
g = r("oob")
case("set_oob_default_runtime", "x.at[idx].set(v), default mode drops out-of-range idx (graph input)",
     [("x", normal(g, 5, 3)), ("idx", np.array([1, 7, -9, 4], dtype=I32)), ("v", normal(g, 4, 3))])(
    lambda x, idx, v: x.at[idx].set(v))
case("set_oob_default_const", "x.at[[0, 9, 2]].set(v), default mode, constant index with one out of range",
     [("x", normal(g, 5, 3)), ("v", normal(g, 3, 3))])(
    lambda x, v: x.at[jnp.array([0, 9, 2], dtype=jnp.int32)].set(v))
case("set_mode_drop_runtime", "x.at[idx].set(v, mode='drop'), idx graph input with out-of-range entries",
     [("x", normal(g, 5, 3)), ("idx", np.array([3, 5, 0, 100], dtype=I32)), ("v", normal(g, 4, 3))])(
    lambda x, idx, v: x.at[idx].set(v, mode="drop"))
case("add_oob_default_runtime", "x.at[idx].add(v), default mode, duplicates and out-of-range idx",
     [("x", normal(g, 5, 3)), ("idx", np.array([2, 6, 2, -1, -6], dtype=I32)), ("v", normal(g, 5, 3))])(
    lambda x, idx, v: x.at[idx].add(v))
case("set_mode_clip_runtime", "x.at[idx].set(v, mode='clip'), out-of-range idx clamped",
     [("x", normal(g, 5, 3)), ("idx", np.array([8, 1], dtype=I32)), ("v", normal(g, 2, 3))],
     "jax2onnx lowers mode='clip' without clamping the indices (same graph as promise_in_bounds), "
     "so ScatterND gets index 8 on an axis of 5: exporter bug")(
    lambda x, idx, v: x.at[idx].set(v, mode="clip"))
case("set_promise_in_bounds_runtime", "x.at[idx].set(v, mode='promise_in_bounds'), in-range idx",
     [("x", normal(g, 5, 3)), ("idx", np.array([4, 0], dtype=I32)), ("v", normal(g, 2, 3))])(
    lambda x, idx, v: x.at[idx].set(v, mode="promise_in_bounds"))

# ---- segment ops (GNN) --------------------------------------------------------------------------
g = r("segment")
SEG = np.array([0, 2, 0, 3, 2, 0, 3], dtype=I32)  # segment 1 is empty
case("segment_sum_runtime", "jax.ops.segment_sum(data, ids, num_segments=4), ids a graph input",
     [("data", normal(g, 7, 3)), ("ids", SEG.copy())])(
    lambda data, ids: jax.ops.segment_sum(data, ids, num_segments=4))
case("segment_sum_const", "jax.ops.segment_sum with constant segment ids",
     [("data", normal(g, 7, 3))])(
    lambda data: jax.ops.segment_sum(data, jnp.asarray(SEG), num_segments=4))
case("segment_max_runtime", "jax.ops.segment_max(data, ids, num_segments=4), empty segment gives -inf",
     [("data", normal(g, 7, 3)), ("ids", SEG.copy())])(
    lambda data, ids: jax.ops.segment_max(data, ids, num_segments=4))
case("gnn_message_passing_runtime",
     "segment_sum(h[src] @ w, dst, num_nodes): gather + scatter-add message passing, edges graph inputs",
     [("h", normal(g, 5, 4)), ("w", normal(g, 4, 4)),
      ("src", np.array([0, 1, 2, 3, 4, 0, 2], dtype=I32)), ("dst", np.array([1, 2, 3, 4, 0, 2, 1], dtype=I32))])(
    lambda h, w, src, dst: jax.ops.segment_sum(h[src] @ w, dst, num_segments=5))

# ---- one-hot, KV cache, top-k mask --------------------------------------------------------------
g = r("one_hot")
case("one_hot_set_runtime", "jnp.zeros((n, 6)).at[jnp.arange(n), labels].set(1.0), labels a graph input",
     [("labels", np.array([3, 0, 5, 3, 1], dtype=I32))])(
    lambda labels: jnp.zeros((labels.shape[0], 6), jnp.float32).at[jnp.arange(labels.shape[0]), labels].set(1.0))

g = r("kv_cache")
case("kv_cache_at_set_runtime", "cache.at[:, :, pos].set(k), cache [B,H,T,D], pos a scalar graph input",
     [("cache", normal(g, 1, 2, 8, 4)), ("k", normal(g, 1, 2, 4)), ("pos", np.array(5, dtype=I32))])(
    lambda cache, k, pos: cache.at[:, :, pos].set(k))
case("kv_cache_dynamic_update_slice_runtime",
     "lax.dynamic_update_slice(cache, k[:, :, None], (0, 0, pos, 0)), pos a scalar graph input",
     [("cache", normal(g, 1, 2, 8, 4)), ("k", normal(g, 1, 2, 4)), ("pos", np.array(3, dtype=I32))])(
    lambda cache, k, pos: jax.lax.dynamic_update_slice(cache, k[:, :, None, :], (0, 0, pos, 0)))

g = r("top_k_mask")
case("top_k_mask", "zeros_like(x).at[rows[:, None], lax.top_k(x, 3)[1]].set(1.0): top-k mask",
     [("x", normal(g, 4, 8))])(
    lambda x: jnp.zeros_like(x).at[jnp.arange(x.shape[0])[:, None], jax.lax.top_k(x, 3)[1]].set(1.0))

# ---- scatter_apply (usually not lowerable) -------------------------------------------------------
g = r("apply")
case("apply_runtime", "x.at[idx].apply(jnp.sin), scatter_apply, idx a graph input",
     [("x", normal(g, 5, 2)), ("idx", np.array([0, 3], dtype=I32))],
     "jax2onnx ignores scatter_apply's update computation and scatters the dummy zero updates "
     "(rows 0 and 3 become 0 instead of sin(x)): exporter bug")(
    lambda x, idx: x.at[idx].apply(jnp.sin))

# ---- loops writing into a carried array (issue 22) ----------------------------------------------
# lax.fori_loop (constant bounds) and lax.while_loop lower to an ONNX Loop; jax2onnx 0.17.1 refuses
# a fori_loop with a run-time bound or whose body closes over traced arrays (both kept, listed as not
# exported; the exportable fori_loops pass every array through the carry). A case without a Loop node is
# listed as not exported.
LOOP_CASES = set()


def loop_case(name: str, idiom: str, inputs, note: str = ""):
    LOOP_CASES.add(name)
    return case(name, idiom, inputs, note)


def _fori_rows(n):
    def fn(x, *runtime_n):
        def body(i, carry):
            h, buf, x = carry
            h = jnp.tanh(x[i] + 0.5 * h)
            return h, buf.at[i].set(h), x

        upper = runtime_n[0] if runtime_n else n
        return jax.lax.fori_loop(0, upper, body, (jnp.zeros_like(x[0]), jnp.zeros_like(x), x))[1]

    return fn


g = r("loop_fori")
_x = normal(g, 7, 4)
loop_case("loop_fori_at_set_rows", "lax.fori_loop(0, 5, ...): h = tanh(x[i] + h/2); buf = buf.at[i].set(h) (constant trip count; x passed in the carry)",
          [("x", _x)])(_fori_rows(5))
loop_case("loop_fori_at_set_rows_runtime_n", "lax.fori_loop(0, n, ...): h = tanh(x[i] + h/2); buf = buf.at[i].set(h), n a scalar graph input",
          [("x", _x), ("n", np.array(5, dtype=I32))])(_fori_rows(None))


def _fori_hist(hist, idx, v):
    def body(i, carry):
        hist, idx, v = carry
        return hist.at[idx[i]].add(v[i]), idx, v

    return jax.lax.fori_loop(0, 6, body, (hist, idx, v))[0]


def _fori_hist_closure(hist, idx, v):
    return jax.lax.fori_loop(0, 6, lambda i, hist: hist.at[idx[i]].add(v[i]), hist)


_hist_inputs = [("hist", normal(g, 5, 2)), ("idx", np.array([3, 0, 3, 4, 3, 1], dtype=I32)), ("v", normal(g, 6, 2))]
loop_case("loop_fori_at_add_histogram", "lax.fori_loop(0, 6, ...): hist = hist.at[idx[i]].add(v[i]) (rows hit more than once across steps; idx and v passed in the carry)",
          _hist_inputs)(_fori_hist)
loop_case("loop_fori_at_add_histogram_closure", "lax.fori_loop(0, 6, lambda i, hist: hist.at[idx[i]].add(v[i]), hist): the body closes over the traced idx and v",
          _hist_inputs)(_fori_hist_closure)


def _while_data_cond(x, limit):
    def cond(carry):
        i, s, _ = carry
        return (i < x.shape[0]) & (s.sum() < limit)

    def body(carry):
        i, s, out = carry
        s = s + jnp.abs(x[i])
        return i + 1, s, out.at[i].set(s)

    i, _, out = jax.lax.while_loop(cond, body, (jnp.int32(0), jnp.zeros_like(x[0]), jnp.zeros_like(x)))
    return out, i


g = r("loop_while")
loop_case("loop_while_at_set_data_cond", "lax.while_loop with a data-dependent stop (running sum past limit): out = out.at[i].set(s); also returns the step count",
          [("x", normal(g, 8, 3)), ("limit", np.array(9.0, dtype=F32))])(_while_data_cond)


def _while_columns(buf, idx, src, n):
    def body(carry):
        i, buf = carry
        rows = jnp.arange(buf.shape[0])
        return i + 1, buf.at[rows, idx[:, i]].set(src[:, i] * (i + 1).astype(buf.dtype))

    return jax.lax.while_loop(lambda c: c[0] < n, body, (jnp.int32(0), buf))[1]


loop_case("loop_while_at_set_columns", "lax.while_loop(i < n): buf = buf.at[rows, idx[:, i]].set(src[:, i] * (i+1)) (one element per row per step)",
          [("buf", normal(g, 3, 6)), ("idx", np.array([[0, 5, 2, 0, 4], [1, 1, 3, 5, 0], [4, 2, 2, 1, 3]], dtype=I32)),
           ("src", normal(g, 3, 5)), ("n", np.array(4, dtype=I32))])(_while_columns)


g = r("loop_greedy_decode")
_GREEDY = {k: normal(g, *shape) * F32(0.8) for k, shape in (("embed", (12, 8)), ("cell", (16, 8)), ("proj", (8, 12)))}


def _greedy_decode(start, h0, max_len):
    """Embedding + recurrent cell + projection; tok = argmax; tokens.at[:, i].set(tok) for max_len
    steps into a preallocated int32 [batch, 10] buffer."""
    def body(i, carry):
        tok, h, tokens = carry
        w = {k: jnp.asarray(v) for k, v in _GREEDY.items()}
        h = jnp.tanh(jnp.concatenate([w["embed"][tok], h], 1) @ w["cell"])
        tok = jnp.argmax(h @ w["proj"], -1).astype(I32)
        return tok, h, tokens.at[:, i].set(tok)

    tokens = jnp.zeros((start.shape[0], 10), I32)
    return jax.lax.while_loop(lambda c: c[0] < max_len, lambda c: (c[0] + 1, *body(c[0], c[1:])),
                              (jnp.int32(0), start, h0, tokens))[3]


loop_case("loop_greedy_decode_at_set", "greedy decoder: embedding + cell + linear, tok = argmax, tokens = tokens.at[:, i].set(tok) in a lax.while_loop(i < max_len), max_len a graph input",
          [("start", np.array([2, 7, 5], dtype=I32)), ("h0", normal(g, 3, 8)), ("max_len", np.array(8, dtype=I32))])(_greedy_decode)



def x64_cases():
    """Cases traced with jax_enable_x64 and exported with enable_double_precision=True: the only way
    jax2onnx keeps int64 index inputs (it then also exports float64)."""
    F64, I64 = np.float64, np.int64
    g = r("x64")
    return [
        ("set_rows_x64_runtime", "x.at[idx].set(v) under jax_enable_x64: float64 data, int64 idx graph input",
         lambda x, idx, v: x.at[idx].set(v),
         [("x", g.standard_normal((6, 3))), ("idx", np.array([5, -2, 0], dtype=I64)),
          ("v", g.standard_normal((3, 3)))], ""),
        ("segment_sum_x64_runtime", "jax.ops.segment_sum under jax_enable_x64: float64 data, int64 ids",
         lambda data, ids: jax.ops.segment_sum(data, ids, num_segments=4),
         [("data", g.standard_normal((7, 2)).astype(F64)), ("ids", np.array([3, 0, 0, 2, 3, 3, 0], dtype=I64))], ""),
    ]


def export(w: Writer, name, idiom, fn, inputs, note, opsets, *, x64: bool) -> None:
    names = [n for n, _ in inputs]
    arrays = [a for _, a in inputs]
    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in arrays]
    eager = fn(*[jnp.asarray(a) for a in arrays])
    eager_outs = [np.asarray(o) for o in (eager if isinstance(eager, (tuple, list)) else (eager,))]
    for opset in opsets:
        case_name = f"{name}__opset{opset}"
        path = f"jax2onnx opset {opset}" + (" enable_double_precision (jax_enable_x64)" if x64 else "")
        try:
            model = to_onnx(fn, specs, model_name=name, opset=opset, input_names=names,
                            enable_double_precision=x64)
        except Exception as e:  # noqa: BLE001 - converter refusals are recorded
            w.skipped(case_name, path, f"{type(e).__name__}: {e}")
            continue
        if not isinstance(model, onnx.ModelProto):
            raise TypeError(f"{case_name}: to_onnx returned {type(model)}")
        if name in LOOP_CASES and not any(n.op_type == "Loop" for n in all_nodes(model.graph)):
            w.skipped(case_name, path, "jax2onnx wrote no Loop node for the loop")
            continue
        notes = graph_flags(model) + (f"; {note}" if note else "")
        w.case(case_name, model, dict(zip(names, arrays)), eager_outs, idiom=idiom, path=path, notes=notes)


def main(selected: str | None = None) -> None:
    versions = {"jax": jax.__version__, "jax2onnx": importlib.metadata.version("jax2onnx")}
    w = Writer("jax2onnx", versions, select=selected)
    for name, idiom, fn, inputs, note in CASES:
        if selected and selected not in name:
            continue
        opsets = OPSETS + ((23,) if name in ALSO_OPSET_23 or name in LOOP_CASES else ())
        export(w, name, idiom, fn, inputs, note, opsets, x64=False)
    jax.config.update("jax_enable_x64", True)
    try:
        for name, idiom, fn, inputs, note in x64_cases():
            if selected and selected not in name:
                continue
            export(w, name, idiom, fn, inputs, note, OPSETS, x64=True)
    finally:
        jax.config.update("jax_enable_x64", False)
    w.finish(order=[c[0] for c in CASES] + [c[0] for c in x64_cases()])


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
