"""TensorFlow -> tf2onnx cases for the exporter corpus.

Run with the venv pinned in requirements-tf.txt:

    python gen/tf_cases.py [idiom-substring]

Writes `<exporters>/tf2onnx/<idiom>__opset<N>/...` (the directory is wiped first; with an
idiom-name substring, only those idioms' cases are rewritten). Expected outputs
are TensorFlow's own eager outputs (the undecorated Python function run eagerly), never an ONNX
reference. Inputs come from a RNG seeded with the CRC32 of the idiom name, so reruns are identical.
"""
from __future__ import annotations

import os
import re
import sys
import zlib

# tf2onnx's optimizers iterate over sets of strings, so node/initializer names depend on Python's
# hash randomization: pin it (re-exec once) so that reruns write byte-identical models.
if os.environ.get("PYTHONHASHSEED") != "0":
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable, *sys.argv])

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnx.defs  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf2onnx  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Writer, all_nodes, deviation_notes, f32, graph_inputs, idiom_registry, unique_rows  # noqa: E402

tf.random.set_seed(0)
tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)

OPSETS = (13, 16, 18)
# (name, fn, [(input name, dtype, shape)], make_inputs(rng) -> dict, notes)
IDIOMS, idiom = idiom_registry()


# --- tensor_scatter_nd_update -------------------------------------------------------------------


def _tsnu_rows_2d(data, indices, updates):
    return tf.tensor_scatter_nd_update(data, indices, updates)


@idiom("tsnu_rows_2d_runtime_idx", _tsnu_rows_2d, [("data", tf.float32, [6, 4]), ("indices", tf.int32, [3, 1]), ("updates", tf.float32, [3, 4])],
       "tensor_scatter_nd_update, k=1 (whole rows), unique runtime indices")
def _(rng):
    return {"data": f32(rng, 6, 4), "indices": unique_rows(rng, 3, 6).astype(np.int32).reshape(3, 1), "updates": f32(rng, 3, 4)}

def _tsnu_elements_2d(data, indices, updates):
    return tf.tensor_scatter_nd_update(data, indices, updates)


@idiom("tsnu_elements_2d_runtime_idx", _tsnu_elements_2d, [("data", tf.float32, [5, 6]), ("indices", tf.int64, [4, 2]), ("updates", tf.float32, [4])],
       "tensor_scatter_nd_update, k=2 (single elements), unique runtime int64 indices")
def _(rng):
    flat = unique_rows(rng, 4, 30)
    return {"data": f32(rng, 5, 6), "indices": np.stack([flat // 6, flat % 6], 1).astype(np.int64), "updates": f32(rng, 4)}

def _tsnu_3d_const(data, updates):
    # k=2 on 3-D data: each index picks a [5] vector; indices are constants in the function.
    return tf.tensor_scatter_nd_update(data, tf.constant([[0, 1], [2, 3], [1, 0]], tf.int32), updates)


@idiom("tsnu_slices_3d_const_idx", _tsnu_3d_const, [("data", tf.float32, [3, 4, 5]), ("updates", tf.float32, [3, 5])],
       "tensor_scatter_nd_update, k=2 on 3-D data (slices of the last axis), constant indices")
def _(rng):
    return {"data": f32(rng, 3, 4, 5), "updates": f32(rng, 3, 5)}

# --- reductions ---------------------------------------------------------------------------------


def _tsn_add_dups(data, indices, updates):
    return tf.tensor_scatter_nd_add(data, indices, updates)


@idiom("tsn_add_rows_dup_idx", _tsn_add_dups, [("data", tf.float32, [6, 3]), ("indices", tf.int32, [5, 1]), ("updates", tf.float32, [5, 3])],
       "tensor_scatter_nd_add, k=1, runtime indices with duplicates (summed)")
def _(rng):
    return {"data": f32(rng, 6, 3), "indices": np.array([[1], [4], [1], [0], [4]], np.int32), "updates": f32(rng, 5, 3)}

def _tsn_add_int32(data, indices, updates):
    return tf.tensor_scatter_nd_add(data, indices, updates)


@idiom("tsn_add_int32_elements", _tsn_add_int32, [("data", tf.int32, [4, 5]), ("indices", tf.int32, [6, 2]), ("updates", tf.int32, [6])],
       "tensor_scatter_nd_add on int32 data, k=2, runtime indices with duplicates")
def _(rng):
    idx = np.array([[0, 0], [3, 4], [0, 0], [2, 1], [3, 4], [1, 2]], np.int32)
    return {"data": rng.integers(-50, 50, (4, 5)).astype(np.int32), "indices": idx,
            "updates": rng.integers(-20, 20, 6).astype(np.int32)}

def _tsn_sub_const(data, updates):
    return tf.tensor_scatter_nd_sub(data, tf.constant([[3], [0], [3], [2]], tf.int64), updates)


@idiom("tsn_sub_rows_const_dup_idx", _tsn_sub_const, [("data", tf.float32, [5, 4]), ("updates", tf.float32, [4, 4])],
       "tensor_scatter_nd_sub, k=1, constant indices with duplicates")
def _(rng):
    return {"data": f32(rng, 5, 4), "updates": f32(rng, 4, 4)}

def _tsn_max(data, indices, updates):
    return tf.tensor_scatter_nd_max(data, indices, updates)


@idiom("tsn_max_rows_dup_idx", _tsn_max, [("data", tf.float32, [6, 3]), ("indices", tf.int32, [5, 1]), ("updates", tf.float32, [5, 3])],
       "tensor_scatter_nd_max, k=1, runtime indices with duplicates")
def _(rng):
    return {"data": f32(rng, 6, 3), "indices": np.array([[2], [5], [2], [0], [2]], np.int32), "updates": f32(rng, 5, 3)}

def _tsn_min(data, indices, updates):
    return tf.tensor_scatter_nd_min(data, indices, updates)


@idiom("tsn_min_elements_dup_idx", _tsn_min, [("data", tf.float32, [4, 4]), ("indices", tf.int32, [6, 2]), ("updates", tf.float32, [6])],
       "tensor_scatter_nd_min, k=2, runtime indices with duplicates")
def _(rng):
    idx = np.array([[1, 1], [3, 0], [1, 1], [0, 2], [3, 0], [1, 1]], np.int32)
    return {"data": f32(rng, 4, 4), "indices": idx, "updates": f32(rng, 6)}

def _scatter_nd_zeros(indices, updates):
    return tf.scatter_nd(indices, updates, tf.constant([4, 4], tf.int32))


@idiom("scatter_nd_into_zeros_dup_idx", _scatter_nd_zeros, [("indices", tf.int32, [5, 2]), ("updates", tf.float32, [5])],
       "tf.scatter_nd into zeros of a constant shape, duplicate indices (eager sums them); tf2onnx emits ScatterND"
       " without reduction, so duplicates are not summed in the ONNX model (exporter bug, kept on purpose)")
def _(rng):
    idx = np.array([[0, 3], [2, 2], [0, 3], [3, 1], [2, 2]], np.int32)
    return {"indices": idx, "updates": f32(rng, 5)}

@idiom("scatter_nd_into_zeros_unique_idx", _scatter_nd_zeros, [("indices", tf.int32, [5, 2]), ("updates", tf.float32, [5])],
       "tf.scatter_nd into zeros of a constant shape, unique runtime indices")
def _(rng):
    flat = unique_rows(rng, 5, 16)
    return {"indices": np.stack([flat // 4, flat % 4], 1).astype(np.int32), "updates": f32(rng, 5)}


# --- KV cache -----------------------------------------------------------------------------------


def _kv_cache_meshgrid(cache, new, pos):
    # cache [B=1, H=4, S=16, D=8], new [1, 4, 1, 8], pos scalar: cache[:, :, pos, :] = new[:, :, 0, :]
    b, h = tf.meshgrid(tf.range(1), tf.range(4), indexing="ij")  # [1, 4] each
    p = tf.fill(tf.shape(b), pos)
    indices = tf.stack([b, h, p], axis=-1)  # [1, 4, 3]
    return tf.tensor_scatter_nd_update(cache, indices, new[:, :, 0, :])


@idiom("kv_cache_update_meshgrid", _kv_cache_meshgrid, [("cache", tf.float32, [1, 4, 16, 8]), ("new", tf.float32, [1, 4, 1, 8]), ("pos", tf.int32, [])],
       "KV-cache write at a runtime position along axis 2, indices built in-graph with meshgrid/range/stack")
def _(rng):
    return {"cache": f32(rng, 1, 4, 16, 8), "new": f32(rng, 1, 4, 1, 8), "pos": np.array(11, np.int32)}

def _kv_cache_transpose(cache, new, pos):
    # Sequence axis first, scatter whole rows, transpose back.
    seq_first = tf.transpose(cache, [2, 0, 1, 3])  # [16, 1, 4, 8]
    upd = tf.transpose(new, [2, 0, 1, 3])  # [1, 1, 4, 8]
    out = tf.tensor_scatter_nd_update(seq_first, tf.reshape(pos, [1, 1]), upd)
    return tf.transpose(out, [1, 2, 0, 3])


@idiom("kv_cache_update_transpose", _kv_cache_transpose, [("cache", tf.float32, [1, 4, 16, 8]), ("new", tf.float32, [1, 4, 1, 8]), ("pos", tf.int32, [])],
       "KV-cache write: transpose sequence axis first, tensor_scatter_nd_update one row at a runtime position, transpose back")
def _(rng):
    return {"cache": f32(rng, 1, 4, 16, 8), "new": f32(rng, 1, 4, 1, 8), "pos": np.array(5, np.int32)}

# --- higher-level idioms ------------------------------------------------------------------------


def _sparse_to_dense(indices, values):
    sp = tf.sparse.SparseTensor(indices, values, dense_shape=tf.constant([5, 6], tf.int64))
    return tf.sparse.to_dense(sp)


@idiom("sparse_to_dense", _sparse_to_dense, [("indices", tf.int64, [6, 2]), ("values", tf.float32, [6])],
       "tf.sparse.to_dense of a SparseTensor built from runtime indices (sorted, unique) and values")
def _(rng):
    flat = np.sort(unique_rows(rng, 6, 30))
    return {"indices": np.stack([flat // 6, flat % 6], 1).astype(np.int64), "values": f32(rng, 6)}

def _one_hot_scatter(labels):
    n = tf.shape(labels)[0]
    indices = tf.stack([tf.range(n), labels], axis=1)
    zeros = tf.zeros(tf.stack([n, 5]), tf.float32)
    return tf.tensor_scatter_nd_update(zeros, indices, tf.ones(tf.shape(labels), tf.float32))


@idiom("one_hot_via_scatter", _one_hot_scatter, [("labels", tf.int32, [6])],
       "one-hot (depth 5) by tensor_scatter_nd_update of ones into zeros at (row, label)")
def _(rng):
    return {"labels": rng.integers(0, 5, 6).astype(np.int32)}

def _topk_mask(x):
    _, top = tf.math.top_k(x, k=3)  # [3, 3]
    rows = tf.broadcast_to(tf.range(3)[:, None], [3, 3])
    indices = tf.stack([rows, top], axis=-1)  # [3, 3, 2]
    return tf.tensor_scatter_nd_update(tf.zeros_like(x), indices, tf.ones([3, 3], tf.float32))


@idiom("topk_mask", _topk_mask, [("x", tf.float32, [3, 8])],
       "top-k (k=3) mask: top_k indices -> tensor_scatter_nd_update of ones into zeros")
def _(rng):
    # distinct values, so top-k has no ties
    return {"x": rng.permutation(24).reshape(3, 8).astype(np.float32) * 0.25 - 3.0}

def _bool_mask_assign(x, mask, v):
    return tf.tensor_scatter_nd_update(x, tf.where(mask), tf.boolean_mask(v, mask))


@idiom("boolean_mask_assign", _bool_mask_assign, [("x", tf.float32, [4, 5]), ("mask", tf.bool, [4, 5]), ("v", tf.float32, [4, 5])],
       "x[mask] = v[mask] as tensor_scatter_nd_update(x, where(mask), boolean_mask(v, mask)); data-dependent shapes")
def _(rng):
    return {"x": f32(rng, 4, 5), "mask": rng.random((4, 5)) < 0.4, "v": f32(rng, 4, 5)}

def _segment_sum(data, ids):
    return tf.math.unsorted_segment_sum(data, ids, num_segments=5)


@idiom("unsorted_segment_sum", _segment_sum, [("data", tf.float32, [7, 3]), ("ids", tf.int32, [7])],
       "tf.math.unsorted_segment_sum, 5 segments (segment 3 empty -> zeros)")
def _(rng):
    return {"data": f32(rng, 7, 3), "ids": np.array([0, 4, 1, 0, 2, 4, 0], np.int32)}

def _segment_max(data, ids):
    return tf.math.unsorted_segment_max(data, ids, num_segments=4)


@idiom("unsorted_segment_max", _segment_max, [("data", tf.float32, [7, 3]), ("ids", tf.int32, [7])],
       "tf.math.unsorted_segment_max, 4 segments, every segment non-empty")
def _(rng):
    return {"data": f32(rng, 7, 3), "ids": np.array([2, 0, 3, 1, 0, 2, 3], np.int32)}


def _segment_min(data, ids):
    return tf.math.unsorted_segment_min(data, ids, num_segments=4)


@idiom("unsorted_segment_min", _segment_min, [("data", tf.float32, [7, 3]), ("ids", tf.int32, [7])],
       "tf.math.unsorted_segment_min, 4 segments, every segment non-empty")
def _(rng):
    return {"data": f32(rng, 7, 3), "ids": np.array([1, 3, 0, 2, 3, 1, 0], np.int32)}


# --- loops writing into a carried tensor (issue 22) ---------------------------------------------
# Each must export as an ONNX `Loop` (a graph without one is listed as not exported).
LOOP_IDIOMS = set()


def loop_idiom(name, fn, specs, notes=""):
    LOOP_IDIOMS.add(name)
    return idiom(name, fn, specs, notes)


def _while_rows(x, n):
    def body(i, h, buf):
        h = tf.tanh(x[i] + 0.5 * h)
        return i + 1, h, tf.tensor_scatter_nd_update(buf, tf.reshape(i, [1, 1]), h[None])

    _, _, buf = tf.while_loop(lambda i, h, buf: i < n, body, (tf.constant(0), tf.zeros_like(x[0]), tf.zeros_like(x)))
    return buf


@loop_idiom("loop_while_tsnu_rows", _while_rows, [("x", tf.float32, [7, 4]), ("n", tf.int32, [])],
            "tf.while_loop(i < n): h = tanh(x[i] + h/2); buf = tensor_scatter_nd_update(buf, [[i]], [h]) (run-time n)")
def _(rng):
    return {"x": f32(rng, 7, 4), "n": np.array(5, np.int32)}


def _autograph_for_range(x, idx, n):
    buf = tf.zeros([4, 6])
    for i in tf.range(n):
        buf = tf.tensor_scatter_nd_update(buf, idx[i][None], x[i][None] * tf.cast(i + 1, tf.float32))
    return buf


@loop_idiom("loop_autograph_for_range_tsnu_elements", _autograph_for_range,
            [("x", tf.float32, [6]), ("idx", tf.int32, [6, 2]), ("n", tf.int32, [])],
            "AutoGraph `for i in tf.range(n)`: buf = tensor_scatter_nd_update(buf, [idx[i]], [x[i] * (i+1)]) (k=2, single elements; a repeated index overwritten by the later step)")
def _(rng):
    return {"x": f32(rng, 6), "idx": np.array([[0, 1], [3, 5], [2, 2], [0, 1], [1, 4], [3, 0]], np.int32),
            "n": np.array(5, np.int32)}


def _while_data_cond(x, limit):
    def cond(i, s, out):
        return tf.logical_and(i < tf.shape(x)[0], tf.reduce_sum(s) < limit)

    def body(i, s, out):
        s = s + tf.abs(x[i])
        return i + 1, s, tf.tensor_scatter_nd_update(out, [[i]], s[None])

    i, _, out = tf.while_loop(cond, body, (tf.constant(0), tf.zeros_like(x[0]), tf.zeros_like(x)))
    return out, i


@loop_idiom("loop_while_tsnu_data_cond", _while_data_cond, [("x", tf.float32, [8, 3]), ("limit", tf.float32, [])],
            "tf.while_loop with a data-dependent stop (running sum past limit): out = tensor_scatter_nd_update(out, [[i]], [s]); also returns the step count")
def _(rng):
    return {"x": f32(rng, 8, 3), "limit": np.array(9.0, np.float32)}


def _while_tsn_add(hist, idx, v, n):
    def body(i, hist):
        return i + 1, tf.tensor_scatter_nd_add(hist, idx[i][None, None], v[i][None])

    _, hist = tf.while_loop(lambda i, hist: i < n, body, (tf.constant(0), hist))
    return hist


@loop_idiom("loop_while_tsn_add_histogram", _while_tsn_add,
            [("hist", tf.float32, [5, 2]), ("idx", tf.int32, [6]), ("v", tf.float32, [6, 2]), ("n", tf.int32, [])],
            "tf.while_loop(i < n): hist = tensor_scatter_nd_add(hist, [[idx[i]]], [v[i]]) (rows hit more than once across steps)")
def _(rng):
    return {"hist": f32(rng, 5, 2), "idx": np.array([3, 0, 3, 4, 3, 1], np.int32), "v": f32(rng, 6, 2),
            "n": np.array(6, np.int32)}


_GREEDY_RNG = np.random.default_rng(zlib.crc32(b"loop_greedy_decode_tsnu"))
# numpy weights, made graph constants inside the function (captured eager tensors would become
# extra graph inputs in tf2onnx's loop body).
_GREEDY = {k: _GREEDY_RNG.standard_normal(shape).astype(np.float32) * 0.8
           for k, shape in (("embed", (12, 8)), ("cell", (16, 8)), ("proj", (8, 12)))}


def _greedy_decode(start, h0, max_len):
    """Embedding + recurrent cell + projection; tok = argmax; tokens[:, i] = tok, for max_len steps
    into a preallocated int32 [batch, 10] buffer."""
    w = {k: tf.constant(v) for k, v in _GREEDY.items()}

    def body(i, tok, h, tokens):
        e = tf.gather(w["embed"], tok)
        h = tf.tanh(tf.matmul(tf.concat([e, h], 1), w["cell"]))
        tok = tf.argmax(tf.matmul(h, w["proj"]), -1, output_type=tf.int32)
        rows = tf.range(tf.shape(tok)[0])
        tokens = tf.tensor_scatter_nd_update(tokens, tf.stack([rows, tf.fill(tf.shape(rows), i)], 1), tok)
        return i + 1, tok, h, tokens

    tokens = tf.zeros([tf.shape(start)[0], 10], tf.int32)
    _, _, _, tokens = tf.while_loop(lambda i, *_: i < max_len, body, (tf.constant(0), start, h0, tokens))
    return tokens


@loop_idiom("loop_greedy_decode_tsnu", _greedy_decode, [("start", tf.int32, [3]), ("h0", tf.float32, [3, 8]), ("max_len", tf.int32, [])],
            "greedy decoder: embedding + cell + linear, tok = argmax, tokens = tensor_scatter_nd_update(tokens, [[b, i]], tok) for a run-time max_len")
def _(rng):
    return {"start": np.array([2, 7, 5], np.int32), "h0": f32(rng, 3, 8), "max_len": np.array(8, np.int32)}


def _while_tensor_array(x, n):
    def body(i, h, ta):
        h = tf.tanh(x[i] + 0.5 * h)
        return i + 1, h, ta.write(i, h)

    ta = tf.TensorArray(tf.float32, size=n)
    _, h, ta = tf.while_loop(lambda i, h, ta: i < n, body, (tf.constant(0), tf.zeros_like(x[0]), ta))
    return ta.stack(), h


@loop_idiom("loop_while_tensor_array", _while_tensor_array, [("x", tf.float32, [7, 4]), ("n", tf.int32, [])],
            "tf.while_loop(i < n) writing each step's h with TensorArray.write(i, h), then stack() (tf2onnx: a scan output)")
def _(rng):
    return {"x": f32(rng, 7, 4), "n": np.array(5, np.int32)}


# --- driver -------------------------------------------------------------------------------------


def unconverted_ops(model, opset):
    """Ops tf2onnx left as TF ops: it does not raise on them, it copies them into the ONNX graph."""
    versions = {imp.domain or "": imp.version for imp in model.opset_import}
    bad = set()
    for node in all_nodes(model.graph):
        domain = node.domain if node.domain != "ai.onnx" else ""
        if not onnx.defs.has(node.op_type, versions.get(domain, opset), domain):
            bad.add(f"{domain + '.' if domain else ''}{node.op_type}")
    return sorted(bad)


GENERATED = re.compile(r"^(.*?)__(\d+)((?::\d+)?)$")


def subgraphs(graph):
    """The graphs nested in `graph`'s nodes (Loop/If bodies), depth first, not `graph` itself."""
    for node in graph.node:
        for attr in node.attribute:
            for g in ([attr.g] if attr.type == onnx.AttributeProto.GRAPH else []) + list(attr.graphs):
                yield g
                yield from subgraphs(g)


def canonicalize(model):
    """tf2onnx's constant folding and deduplication of equal constants run in a run-dependent order
    (the graphs are equivalent, the names and initializer order are not). Renumber every generated
    `<prefix>__<N>` name (nodes, tensors, initializers, and the inputs and outputs of Loop/If bodies)
    by first appearance in node order, rename generated initializers `const__<N>`, and sort the
    initializers of each graph by first use, so that reruns write byte-identical models."""
    graph = model.graph
    bodies = list(subgraphs(graph))
    order = []
    for node in all_nodes(graph):
        order += [node.name, *node.input, *node.output]
    order += [o.name for o in graph.output]
    for body in bodies:
        order += [i.name for i in body.input] + [o.name for o in body.output]
    numbering = {}
    for name in order:
        m = GENERATED.match(name)
        if m:
            numbering.setdefault(f"{m.group(1)}__{m.group(2)}", len(numbering) + 1)

    # Which of several equal constants survives deduplication (`const_axes__N` or `const_starts__M`)
    # varies too, so generated initializers get a neutral prefix.
    initializer_names = {i.name for g in [graph, *bodies] for i in g.initializer}

    def new(name):
        m = GENERATED.match(name)
        if not m or f"{m.group(1)}__{m.group(2)}" not in numbering:
            return name
        prefix = "const" if name in initializer_names else m.group(1)
        return f"{prefix}__{numbering[m.group(1) + '__' + m.group(2)]}{m.group(3)}"

    for node in all_nodes(graph):
        node.name = new(node.name)
        for i, name in enumerate(node.input):
            node.input[i] = new(name)
        for i, name in enumerate(node.output):
            node.output[i] = new(name)
    for vi in [*graph.output, *graph.value_info]:
        vi.name = new(vi.name)
    for body in bodies:
        for vi in [*body.input, *body.output, *body.value_info]:
            vi.name = new(vi.name)
    for g in [graph, *bodies]:
        for init in g.initializer:
            init.name = new(init.name)
    first_use = {}
    for node in all_nodes(graph):
        for name in node.input:
            first_use.setdefault(name, len(first_use))
    for g in [graph, *bodies]:
        inits = sorted(g.initializer, key=lambda t: (first_use.get(t.name, len(first_use)), t.name))
        del g.initializer[:]
        g.initializer.extend(inits)
    return model


def main(selected=None):
    w = Writer("tf2onnx", {"tensorflow": tf.__version__, "tf2onnx": tf2onnx.__version__}, select=selected)
    for name, fn, specs, make_inputs, notes in IDIOMS:
        if selected and selected not in name:
            continue
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        values = make_inputs(rng)
        # Expected outputs: the plain Python function run eagerly by TensorFlow.
        eager = fn(*[tf.constant(values[n], dtype=dt) for n, dt, _ in specs])
        eager = list(eager) if isinstance(eager, (tuple, list)) else [eager]
        eager = [e.numpy() for e in eager]
        sig = [tf.TensorSpec(shape, dt, name=n) for n, dt, shape in specs]
        for opset in OPSETS:
            case = f"{name}__opset{opset}"
            path = f"tf2onnx opset {opset}"
            try:
                model, _ = tf2onnx.convert.from_function(tf.function(fn), input_signature=sig, opset=opset)
            except Exception as e:  # noqa: BLE001 - the converter refused: recorded
                w.skipped(case, path, f"{type(e).__name__}: {e}")
                continue
            model = canonicalize(model)
            bad = unconverted_ops(model, opset)
            if bad:
                w.skipped(case, path, f"tf2onnx left unconverted TF op(s) {', '.join(bad)} in the graph at opset {opset}")
                continue
            if name in LOOP_IDIOMS and not any(n.op_type == "Loop" for n in all_nodes(model.graph)):
                w.skipped(case, path, "tf2onnx unrolled the loop (no Loop node in the graph)")
                continue
            case_notes = "; ".join(([notes] if notes else []) + deviation_notes(model, opset, " (tf2onnx deviation, kept on purpose)"))
            w.case(case, model, graph_inputs(model, values), eager, idiom=name, path=path, notes=case_notes)
    w.finish(order=[i[0] for i in IDIOMS])


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
