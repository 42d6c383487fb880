"""PaddlePaddle -> paddle2onnx cases for the exporter corpus.

Run with the venv pinned in requirements-paddle.txt:

    python gen/paddle_cases.py [idiom-substring]

Writes `<exporters>/paddle2onnx/<idiom>__opset<N>/...` (the directory is wiped first; with an
idiom-name substring, only those idioms' cases are rewritten). Expected outputs
are Paddle's own dynamic-graph (eager) outputs (the layer called on tensors before any conversion),
never an ONNX reference. Inputs come from a RNG seeded with the CRC32 of the idiom name, so reruns are
identical.

Export route, per idiom and opset: `paddle.jit.to_static(layer, input_spec=[InputSpec(shape, dtype, name)],
full_graph=True)`, `paddle.jit.save` (Paddle 3 writes a PIR `model.json`, plus `model.pdiparams` only when
the layer has parameters), then `paddle2onnx.export(model.json, params, opset_version=N,
auto_upgrade_opset=False, optimize_tool="none")`:

- `auto_upgrade_opset=False`: by default paddle2onnx silently raises the opset to the lowest one every
  op needs (13 -> 16 for most scatter ops), which would duplicate the opset-16 cases; without the
  upgrade a too-low opset is a refusal, recorded in SUMMARY.md.
- `optimize_tool="none"`: the model as paddle2onnx's C++ converter writes it (with its own optimizer,
  `enable_optimize=True`). The default, Polygraphy constant folding, would pip-install
  onnx-graphsurgeon at run time (POLYGRAPHY_AUTOINSTALL_DEPS=1) and run onnxruntime on the graph.

On a refusal paddle2onnx's C++ converter prints the reason and calls abort(), so each conversion runs
in a forked child whose stdout/stderr go to a log; the reason recorded in SUMMARY.md comes from that
(verbose) log.
"""
from __future__ import annotations

import os
import re
import sys
import tempfile
import zlib

if os.environ.get("PYTHONHASHSEED") != "0":
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable, *sys.argv])

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("GLOG_minloglevel", "2")
os.environ["P2O_KEEP_TEMP_MODEL"] = "0"

import warnings  # noqa: E402

warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import paddle  # noqa: E402
import paddle2onnx  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Writer, all_nodes, deviation_notes, f32, graph_inputs, idiom_registry, unique_rows  # noqa: E402

paddle.set_device("cpu")
paddle.seed(0)

OPSETS = (13, 16, 18)
# (name, fn, [(input name, dtype, shape)], make_inputs(rng) -> dict, notes)
IDIOMS, idiom = idiom_registry()


def FnLayer(fn):
    """A parameterless layer whose forward is `fn` (a static method, so that to_static sees fn's own
    signature, which maps the InputSpecs to arguments)."""
    return type("FnLayer", (paddle.nn.Layer,), {"forward": staticmethod(fn)})()


# --- paddle.scatter -----------------------------------------------------------------------------


def _scatter_overwrite(x, index, updates):
    return paddle.scatter(x, index, updates, overwrite=True)


@idiom("scatter_overwrite_rows_runtime_idx", _scatter_overwrite,
       [("x", "float32", [6, 4]), ("index", "int64", [3]), ("updates", "float32", [3, 4])],
       "paddle.scatter(overwrite=True) of whole rows of 2-D x, unique runtime int64 indices")
def _(rng):
    return {"x": f32(rng, 6, 4), "index": unique_rows(rng, 3, 6).astype(np.int64), "updates": f32(rng, 3, 4)}


def _scatter_overwrite_const(x, updates):
    return paddle.scatter(x, paddle.to_tensor([4, 0, 2], dtype="int32"), updates, overwrite=True)


@idiom("scatter_overwrite_rows_const_idx", _scatter_overwrite_const,
       [("x", "float32", [5, 3]), ("updates", "float32", [3, 3])],
       "paddle.scatter(overwrite=True) of whole rows, constant unique int32 indices")
def _(rng):
    return {"x": f32(rng, 5, 3), "updates": f32(rng, 3, 3)}


def _scatter_accumulate(x, index, updates):
    return paddle.scatter(x, index, updates, overwrite=False)


@idiom("scatter_accumulate_rows_dup_idx", _scatter_accumulate,
       [("x", "float32", [6, 3]), ("index", "int64", [5]), ("updates", "float32", [5, 3])],
       "paddle.scatter(overwrite=False): the indexed rows are zeroed, then the updates summed into them;"
       " runtime indices with duplicates. paddle2onnx: Where(ScatterND(zeros, index, updates, add) == 0, x, sum)")
def _(rng):
    return {"x": f32(rng, 6, 3), "index": np.array([1, 4, 1, 0, 4], np.int64), "updates": f32(rng, 5, 3)}


@idiom("scatter_accumulate_rows_cancelling_updates", _scatter_accumulate,
       [("x", "float32", [5, 3]), ("index", "int64", [4]), ("updates", "float32", [4, 3])],
       "paddle.scatter(overwrite=False) where the two updates sent to row 2 cancel: eager gives zeros in"
       " that row. paddle2onnx lowers overwrite=False to Where(ScatterND(zeros, index, updates,"
       " reduction='add') == 0, x, sum), so a row whose sum is exactly 0 keeps x: exporter bug, kept on"
       " purpose")
def _(rng):
    u = f32(rng, 4, 3)
    u[3] = -u[1]
    return {"x": f32(rng, 5, 3), "index": np.array([0, 2, 4, 2], np.int64), "updates": u}


# --- scatter_nd_add / scatter_nd ------------------------------------------------------------------


def _scatter_nd_add(x, index, updates):
    return paddle.scatter_nd_add(x, index, updates)


@idiom("scatter_nd_add_rows_dup_idx", _scatter_nd_add,
       [("x", "float32", [5, 4]), ("index", "int64", [5, 1]), ("updates", "float32", [5, 4])],
       "paddle.scatter_nd_add, k=1 (whole rows), runtime indices with duplicates (summed)")
def _(rng):
    return {"x": f32(rng, 5, 4), "index": np.array([[3], [0], [3], [2], [3]], np.int64), "updates": f32(rng, 5, 4)}


def _scatter_nd_add_const(x, updates):
    index = paddle.to_tensor([[0, 0], [3, 4], [0, 0], [2, 1], [3, 4], [1, 2]], dtype="int64")
    return paddle.scatter_nd_add(x, index, updates)


@idiom("scatter_nd_add_elements_const_dup_idx", _scatter_nd_add_const,
       [("x", "float32", [4, 5]), ("updates", "float32", [6])],
       "paddle.scatter_nd_add, k=2 (single elements), constant indices with duplicates (summed)")
def _(rng):
    return {"x": f32(rng, 4, 5), "updates": f32(rng, 6)}


def _scatter_nd_zeros(index, updates):
    return paddle.scatter_nd(index, updates, [4, 4])


@idiom("scatter_nd_into_zeros_dup_idx", _scatter_nd_zeros,
       [("index", "int64", [5, 2]), ("updates", "float32", [5])],
       "paddle.scatter_nd(index, updates, shape=[4, 4]) into zeros, k=2, runtime indices with duplicates (summed)")
def _(rng):
    return {"index": np.array([[0, 3], [2, 2], [0, 3], [3, 1], [2, 2]], np.int64), "updates": f32(rng, 5)}


# --- put_along_axis -----------------------------------------------------------------------------


def _pab(reduce, include_self=True):
    def fn(arr, indices, values):
        return paddle.put_along_axis(arr, indices, values, 1, reduce=reduce, include_self=include_self, broadcast=False)

    return fn


PAB_SPECS = [("arr", "float32", [3, 6]), ("indices", "int64", [3, 4]), ("values", "float32", [3, 4])]


@idiom("put_along_axis_assign", _pab("assign"), PAB_SPECS,
       "paddle.put_along_axis(axis=1, reduce='assign', broadcast=False), runtime indices unique within each row")
def _(rng):
    return {"arr": f32(rng, 3, 6), "indices": np.stack([unique_rows(rng, 4, 6) for _ in range(3)]).astype(np.int64),
            "values": f32(rng, 3, 4)}


DUP_IDX = np.array([[0, 2, 0, 5], [1, 1, 1, 3], [4, 0, 4, 4]], np.int64)


@idiom("put_along_axis_add_dup_idx", _pab("add"), PAB_SPECS,
       "paddle.put_along_axis(axis=1, reduce='add'), runtime indices with duplicates (summed into arr)")
def _(rng):
    return {"arr": f32(rng, 3, 6), "indices": DUP_IDX, "values": f32(rng, 3, 4)}


@idiom("put_along_axis_mul_dup_idx", _pab("mul"), PAB_SPECS,
       "paddle.put_along_axis(axis=1, reduce='mul'), runtime indices with duplicates (multiplied into arr)."
       " The PIR op keeps reduce='mul' and paddle2onnx only recognizes 'multiply', so it silently emits"
       " ScatterElements reduction='none' (assign): exporter bug, kept on purpose")
def _(rng):
    return {"arr": f32(rng, 3, 6), "indices": DUP_IDX, "values": f32(rng, 3, 4)}


@idiom("put_along_axis_multiply_dup_idx", _pab("multiply"), PAB_SPECS,
       "paddle.put_along_axis(axis=1, reduce='multiply') (the spelling paddle2onnx recognizes), runtime"
       " indices with duplicates (multiplied into arr)")
def _(rng):
    return {"arr": f32(rng, 3, 6), "indices": DUP_IDX, "values": f32(rng, 3, 4)}


@idiom("put_along_axis_amax_dup_idx", _pab("amax"), PAB_SPECS,
       "paddle.put_along_axis(axis=1, reduce='amax', include_self=True), runtime indices with duplicates")
def _(rng):
    return {"arr": f32(rng, 3, 6), "indices": DUP_IDX, "values": f32(rng, 3, 4)}


@idiom("put_along_axis_amin_dup_idx", _pab("amin"), PAB_SPECS,
       "paddle.put_along_axis(axis=1, reduce='amin', include_self=True), runtime indices with duplicates")
def _(rng):
    return {"arr": f32(rng, 3, 6), "indices": DUP_IDX, "values": f32(rng, 3, 4)}


@idiom("put_along_axis_mean_dup_idx", _pab("mean"), PAB_SPECS,
       "paddle.put_along_axis(axis=1, reduce='mean', include_self=True), runtime indices with duplicates"
       " (mean over arr's element and every value sent to it)")
def _(rng):
    return {"arr": f32(rng, 3, 6), "indices": DUP_IDX, "values": f32(rng, 3, 4)}


@idiom("put_along_axis_add_exclude_self", _pab("add", include_self=False), PAB_SPECS,
       "paddle.put_along_axis(axis=1, reduce='add', include_self=False): indexed elements become the sum of"
       " the values sent to them; runtime indices with duplicates")
def _(rng):
    return {"arr": f32(rng, 3, 6), "indices": DUP_IDX, "values": f32(rng, 3, 4)}


# --- index_add / index_put / setitem ------------------------------------------------------------


def _index_add(x, index, value):
    return paddle.index_add(x, index, 0, value)


@idiom("index_add_rows_dup_idx", _index_add,
       [("x", "float32", [5, 3]), ("index", "int64", [4]), ("value", "float32", [4, 3])],
       "paddle.index_add(x, index, axis=0, value), runtime indices with duplicates (summed)")
def _(rng):
    return {"x": f32(rng, 5, 3), "index": np.array([4, 1, 4, 0], np.int64), "value": f32(rng, 4, 3)}


def _index_put(x, i, v):
    return paddle.index_put(x, (i,), v)


@idiom("index_put_rows_negative_idx", _index_put,
       [("x", "float32", [5, 4]), ("i", "int64", [2]), ("v", "float32", [2, 4])],
       "paddle.index_put(x, (i,), v) with runtime negative row indices (-1 and 1)")
def _(rng):
    return {"x": f32(rng, 5, 4), "i": np.array([-1, 1], np.int64), "v": f32(rng, 2, 4)}


def _index_put_accumulate(x, i, j, v):
    return paddle.index_put(x, (i, j), v, accumulate=True)


@idiom("index_put_2d_accumulate_dup_idx", _index_put_accumulate,
       [("x", "float32", [4, 5]), ("i", "int64", [5]), ("j", "int64", [5]), ("v", "float32", [5])],
       "paddle.index_put(x, (i, j), v, accumulate=True): element-wise 2-D advanced indexing, duplicate"
       " (i, j) pairs summed")
def _(rng):
    return {"x": f32(rng, 4, 5), "i": np.array([0, 3, 0, 2, 3], np.int64), "j": np.array([1, 4, 1, 0, 4], np.int64),
            "v": f32(rng, 5)}


def _setitem_rows(x, v):
    y = x.clone()
    y[paddle.to_tensor([-1, 2], dtype="int64")] = v
    return y


@idiom("setitem_rows_const_negative_idx", _setitem_rows,
       [("x", "float32", [5, 3]), ("v", "float32", [2, 3])],
       "y = x.clone(); y[paddle.to_tensor([-1, 2])] = v (advanced-index assignment, constant negative index)")
def _(rng):
    return {"x": f32(rng, 5, 3), "v": f32(rng, 2, 3)}


def _setitem_mask(x, mask, v):
    y = x.clone()
    y[mask] = v[mask]
    return y


@idiom("bool_mask_assign", _setitem_mask,
       [("x", "float32", [4, 5]), ("mask", "bool", [4, 5]), ("v", "float32", [4, 5])],
       "y = x.clone(); y[mask] = v[mask] with a runtime bool mask (data-dependent number of elements)."
       " paddle2onnx lowers the bool index_put to Where(mask, Expand(Compress(v, mask), Shape(x)), x), which"
       " is only valid when the selected values broadcast to x (a scalar or one element): exporter bug, kept"
       " on purpose (onnxruntime rejects the Expand)")
def _(rng):
    return {"x": f32(rng, 4, 5), "mask": rng.random((4, 5)) < 0.4, "v": f32(rng, 4, 5)}


def _setitem_mask_scalar(x, mask):
    y = x.clone()
    y[mask] = 0.5
    return y


@idiom("bool_mask_assign_scalar", _setitem_mask_scalar,
       [("x", "float32", [4, 5]), ("mask", "bool", [4, 5])],
       "y = x.clone(); y[mask] = 0.5 with a runtime bool mask (masked_fill-style)")
def _(rng):
    return {"x": f32(rng, 4, 5), "mask": rng.random((4, 5)) < 0.4}


def _setitem_slice(x, y):
    z = x.clone()
    z[:, 1:3] = y
    return z


@idiom("slice_assign_columns", _setitem_slice,
       [("x", "float32", [4, 5]), ("y", "float32", [4, 2])],
       "z = x.clone(); z[:, 1:3] = y (slice assignment)")
def _(rng):
    return {"x": f32(rng, 4, 5), "y": f32(rng, 4, 2)}


# --- KV cache -----------------------------------------------------------------------------------


def _kv_cache_put_along_axis(cache, k, pos):
    # cache [1, 4, 16, 8], k [1, 4, 1, 8], pos [1] int64: cache[:, :, pos, :] = k
    idx = paddle.expand(paddle.reshape(pos, [1, 1, 1, 1]), [1, 4, 1, 8])
    return paddle.put_along_axis(cache, idx, k, 2, broadcast=False)


KV_SPECS = [("cache", "float32", [1, 4, 16, 8]), ("k", "float32", [1, 4, 1, 8]), ("pos", "int64", [1])]


@idiom("kv_cache_update_put_along_axis", _kv_cache_put_along_axis, KV_SPECS,
       "KV-cache write at a runtime position along axis 2: put_along_axis with pos expanded to k's shape")
def _(rng):
    return {"cache": f32(rng, 1, 4, 16, 8), "k": f32(rng, 1, 4, 1, 8), "pos": np.array([11], np.int64)}


def _kv_cache_scatter_transpose(cache, k, pos):
    seq_first = paddle.transpose(cache, [2, 0, 1, 3])  # [16, 1, 4, 8]
    upd = paddle.transpose(k, [2, 0, 1, 3])  # [1, 1, 4, 8]
    out = paddle.scatter(seq_first, pos, upd, overwrite=True)
    return paddle.transpose(out, [1, 2, 0, 3])


@idiom("kv_cache_update_scatter_transpose", _kv_cache_scatter_transpose, KV_SPECS,
       "KV-cache write: transpose the sequence axis first, paddle.scatter one row at a runtime position,"
       " transpose back")
def _(rng):
    return {"cache": f32(rng, 1, 4, 16, 8), "k": f32(rng, 1, 4, 1, 8), "pos": np.array([5], np.int64)}


def _kv_cache_setitem(cache, k, pos):
    out = cache.clone()
    out[:, :, pos] = k
    return out


@idiom("kv_cache_update_setitem", _kv_cache_setitem, KV_SPECS,
       "KV-cache write by advanced-index assignment out[:, :, pos] = k, pos a runtime [1] int64 tensor")
def _(rng):
    return {"cache": f32(rng, 1, 4, 16, 8), "k": f32(rng, 1, 4, 1, 8), "pos": np.array([14], np.int64)}


# --- higher-level idioms ------------------------------------------------------------------------


def _one_hot(labels):
    zeros = paddle.zeros([labels.shape[0], 5], dtype="float32")
    return paddle.put_along_axis(zeros, paddle.unsqueeze(labels, 1), 1.0, 1)


@idiom("one_hot_put_along_axis", _one_hot, [("labels", "int64", [6])],
       "one-hot (depth 5): put_along_axis of the scalar 1.0 into zeros at labels[:, None] along axis 1")
def _(rng):
    return {"labels": rng.integers(0, 5, 6).astype(np.int64)}


def _topk_mask(x):
    vals, top = paddle.topk(x, k=3, axis=1)
    return paddle.put_along_axis(paddle.zeros_like(x), top, paddle.ones_like(vals), 1, broadcast=False)


@idiom("topk_mask_put_along_axis", _topk_mask, [("x", "float32", [3, 8])],
       "top-k (k=3) mask: paddle.topk indices -> put_along_axis of ones into zeros")
def _(rng):
    # distinct values, so top-k has no ties
    return {"x": rng.permutation(24).reshape(3, 8).astype(np.float32) * 0.25 - 3.0}


# --- decode loops writing into a carried buffer (issue 22) ------------------------------------
# dygraph-to-static turns a Python loop over a tensor bound into a while op, paddle2onnx writes a Loop;
# a model without a Loop node is listed as not exported.
LOOP_IDIOMS = set()


def loop_idiom(name, fn, specs, notes=""):
    LOOP_IDIOMS.add(name)
    return idiom(name, fn, specs, notes)


def _for_range_put_rows(x, n):
    buf = paddle.zeros_like(x)
    h = paddle.zeros_like(x[0])
    for i in range(n):
        h = paddle.tanh(x[i] + 0.5 * h)
        index = paddle.full([1, x.shape[1]], i, dtype="int64")
        buf = paddle.put_along_axis(buf, index, h.unsqueeze(0), 0)
    return buf


@loop_idiom("loop_for_range_put_along_axis_rows", _for_range_put_rows, [("x", "float32", [7, 4]), ("n", "int64", [])],
            "to_static `for i in range(n)` (n a run-time tensor): h = tanh(x[i] + h/2); buf = put_along_axis(buf, full([1, F], i), h[None], 0)")
def _(rng):
    return {"x": f32(rng, 7, 4), "n": np.array(5, np.int64)}


def _while_scatter_data_cond(x, n, limit):
    out = paddle.zeros_like(x)
    s = paddle.zeros_like(x[0])
    i = paddle.zeros([1], dtype="int64")
    while i < n and s.sum() < limit:
        s = s + paddle.abs(paddle.gather(x, i)[0])
        out = paddle.scatter(out, i, s.unsqueeze(0), overwrite=True)
        i = i + 1
    return out, i


@loop_idiom("loop_while_scatter_data_cond", _while_scatter_data_cond,
            [("x", "float32", [8, 3]), ("n", "int64", [1]), ("limit", "float32", [1])],
            "to_static `while i < n and s.sum() < limit`: s += |x[i]|; out = paddle.scatter(out, i, s[None]) (data-dependent stop); also returns the step count")
def _(rng):
    return {"x": f32(rng, 8, 3), "n": np.array([7], np.int64), "limit": np.array([9.0], np.float32)}


_GREEDY_RNG = np.random.default_rng(zlib.crc32(b"loop_greedy_decode_put_along_axis"))
_GREEDY = {k: _GREEDY_RNG.standard_normal(shape).astype(np.float32) * 0.8
           for k, shape in (("embed", (12, 8)), ("cell", (16, 8)), ("proj", (8, 12)))}


def _greedy_decode(start, h0, max_len):
    """Embedding + recurrent cell + projection; tok = argmax; put_along_axis writes tok at column i of
    a preallocated int64 [batch, 10] buffer, for max_len steps (PaddleOCR-style decode loop)."""
    w = {k: paddle.to_tensor(v) for k, v in _GREEDY.items()}
    tokens = paddle.zeros([start.shape[0], 10], dtype="int64")
    tok = start
    h = h0
    for i in range(max_len):
        e = paddle.gather(w["embed"], tok)
        h = paddle.tanh(paddle.matmul(paddle.concat([e, h], 1), w["cell"]))
        tok = paddle.argmax(paddle.matmul(h, w["proj"]), -1)
        col = paddle.full([start.shape[0], 1], i, dtype="int64")
        tokens = paddle.put_along_axis(tokens, col, tok.unsqueeze(1), 1)
    return tokens


@loop_idiom("loop_greedy_decode_put_along_axis", _greedy_decode,
            [("start", "int64", [3]), ("h0", "float32", [3, 8]), ("max_len", "int64", [])],
            "greedy decoder: embedding + cell + linear, tok = argmax, tokens = put_along_axis(tokens, full([B, 1], i), tok[:, None], 1) for i in range(max_len), max_len a run-time tensor")
def _(rng):
    return {"start": np.array([2, 7, 5], np.int64), "h0": f32(rng, 3, 8), "max_len": np.array(8, np.int64)}


def _for_range_setitem(x, n):
    out = paddle.zeros_like(x)
    for i in range(n):
        out[i] = paddle.tanh(x[i]) * 2.0
    return out


@loop_idiom("loop_for_range_setitem_rows", _for_range_setitem, [("x", "float32", [6, 3]), ("n", "int64", [])],
            "to_static `for i in range(n)`: out[i] = tanh(x[i]) * 2 (setitem with the loop index)")
def _(rng):
    return {"x": f32(rng, 6, 3), "n": np.array(4, np.int64)}


# --- driver -------------------------------------------------------------------------------------


ANSI = re.compile(r"\x1b\[[0-9;]*m")


TRIVIAL_PIR_OPS = {"pd_op.data", "pd_op.fetch", "builtin.shadow_output", "pd_op.full_int_array", "pd_op.full",
                   "pd_op.assign", "pd_op.assign_value_", "builtin.combine", "builtin.parameter"}


def refusal_reason(log, status, pir_ops):
    """What the converter printed before it aborted (its verbose log names the op behind an opset
    refusal; for unsupported operators it prints no name, so the program's non-trivial ops are listed)."""
    parts = []
    for line in log.splitlines():
        line = ANSI.sub("", line).strip()
        if not line.startswith("[ERROR]") and not any(
            k in line for k in ("requires opset_version", "Not support", "Only support")
        ):
            continue
        line = line.replace("[ERROR]", "").replace("[Paddle2ONNX]", "").strip()
        if line and line not in parts:
            parts.append(line)
    if any("unsupported operators" in p for p in parts):
        parts.append("Non-trivial ops in the PIR program: " + ", ".join(pir_ops) + ".")
    return " ".join(parts[:3]) if parts else f"paddle2onnx returned no model ({status})"


def pir_ops(prefix):
    """Non-trivial op names of the PIR program paddle.jit.save wrote at `prefix` (`<prefix>.json`, where
    an op is `{"#": "<dialect id>.<name>", ...}` with dialect 0 = builtin, 1 = pd_op), in order, no repeats."""
    import json

    dialects = {"0": "builtin", "1": "pd_op"}
    names = []

    def walk(obj):
        if isinstance(obj, dict):
            for block in obj.get("blocks", []):
                for op in block.get("ops", []):
                    d, _, n = op["#"].partition(".")
                    name = f"{dialects.get(d, d)}.{n}"
                    if name not in TRIVIAL_PIR_OPS and name not in names:
                        names.append(name)
                    for region in op.get("regions", []):
                        walk(region)
        elif isinstance(obj, list):
            for v in obj:
                walk(v)

    try:
        with open(prefix + ".json") as f:
            walk(json.load(f)["program"]["regions"])
    except (OSError, KeyError, ValueError):
        return ["?"]
    return names


def convert_in_child(model_file, params_file, opset, out_file, log_file):
    """paddle2onnx.export in a forked child: on some refusals its C++ converter calls abort()."""
    pid = os.fork()
    if pid == 0:  # child
        code = 1
        try:
            fd = os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            data = paddle2onnx.export(
                model_file, params_file, save_file=None, opset_version=opset, auto_upgrade_opset=False,
                optimize_tool="none", verbose=True,
            )
            if data:
                with open(out_file, "wb") as f:
                    f.write(data)
                code = 0
        except BaseException:  # noqa: BLE001 - the log has paddle2onnx's own message
            import traceback

            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}"
    return f"exit {os.WEXITSTATUS(status)}"


def export(fn, specs, opset):
    """to_static + jit.save + paddle2onnx.export; returns (ModelProto or None, refusal reason)."""
    with tempfile.TemporaryDirectory() as d:
        layer = paddle.jit.to_static(
            FnLayer(fn), input_spec=[paddle.static.InputSpec(shape, dt, n) for n, dt, shape in specs], full_graph=True
        )
        prefix = os.path.join(d, "model")
        paddle.jit.save(layer, prefix)
        model_file = prefix + ".json" if os.path.exists(prefix + ".json") else prefix + ".pdmodel"
        params_file = prefix + ".pdiparams" if os.path.exists(prefix + ".pdiparams") else ""
        out_file, log_file = os.path.join(d, "model.onnx"), os.path.join(d, "log.txt")
        sys.stdout.flush()
        sys.stderr.flush()
        status = convert_in_child(model_file, params_file, opset, out_file, log_file)
        if not os.path.exists(out_file):
            with open(log_file, errors="replace") as f:
                return None, refusal_reason(f.read(), status, pir_ops(prefix))
        return onnx.load_model(out_file), ""


def main(selected=None):
    w = Writer("paddle2onnx", {"paddlepaddle": paddle.__version__, "paddle2onnx": paddle2onnx.__version__},
               select=selected)
    for name, fn, specs, make_inputs, notes in IDIOMS:
        if selected and selected not in name:
            continue
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        values = make_inputs(rng)
        # Expected outputs: the layer run eagerly (dynamic graph) on the inputs.
        eager = FnLayer(fn)(*[paddle.to_tensor(values[n], dtype=dt) for n, dt, _ in specs])
        eager = list(eager) if isinstance(eager, (tuple, list)) else [eager]
        eager = [e.numpy() for e in eager]
        for opset in OPSETS:
            case = f"{name}__opset{opset}"
            path = f"paddle2onnx opset {opset}"
            model, why = export(fn, specs, opset)
            if model is None:
                w.skipped(case, path, why)
                continue
            if name in LOOP_IDIOMS and not any(n.op_type == "Loop" for n in all_nodes(model.graph)):
                w.skipped(case, path, "paddle2onnx wrote no Loop node for the loop")
                continue
            case_notes = "; ".join(([notes] if notes else []) + deviation_notes(model, opset))
            w.case(case, model, graph_inputs(model, values), eager, idiom=name, path=path, notes=case_notes)
    w.finish(order=[i[0] for i in IDIOMS])


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
