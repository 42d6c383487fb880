#!/usr/bin/env python3
"""Generate the extended golden corpus for tract-onnx-scatter.

Writes onnx-testdata/extended/<case>/ in the ONNX node-test layout:
  model.onnx
  test_data_set_0/input_<i>.pb   (graph inputs that are not initializers, in order)
  test_data_set_0/output_0.pb    (valid cases)
  expected_error.txt             (error cases: a word the error must contain)

Expected values come from the plain-loop oracle below (our contract), NOT from
onnxruntime.  onnxruntime (CPU, 1 thread) and onnx.reference.ReferenceEvaluator
are only used as cross-checks; disagreements are written to
extended/ORT_DISAGREEMENTS.md.

Deterministic: every case draws from its own RNG seeded by crc32(case name).
Usage: .venv/bin/python onnx-testdata/generate.py
"""
from __future__ import annotations

import math
import os
import random
import re
import shutil
import sys
import warnings
import zlib
from collections import Counter, OrderedDict

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "extended")
OV_DOMAIN = "org.openvinotoolkit"


class OracleError(Exception):
    """The contract says this is an error; args[0] is the expected word."""


# --------------------------------------------------------------------------
# element types
# --------------------------------------------------------------------------
DTYPES = OrderedDict(
    [
        ("bool", (np.bool_, TensorProto.BOOL)),
        ("i8", (np.int8, TensorProto.INT8)),
        ("i16", (np.int16, TensorProto.INT16)),
        ("i32", (np.int32, TensorProto.INT32)),
        ("i64", (np.int64, TensorProto.INT64)),
        ("u8", (np.uint8, TensorProto.UINT8)),
        ("u16", (np.uint16, TensorProto.UINT16)),
        ("u32", (np.uint32, TensorProto.UINT32)),
        ("u64", (np.uint64, TensorProto.UINT64)),
        ("f16", (np.float16, TensorProto.FLOAT16)),
        ("f32", (np.float32, TensorProto.FLOAT)),
        ("f64", (np.float64, TensorProto.DOUBLE)),
        ("str", (object, TensorProto.STRING)),
    ]
)
INT_BITS = {"i8": 8, "i16": 16, "i32": 32, "i64": 64, "u8": 8, "u16": 16, "u32": 32, "u64": 64}
FLOATS = ("f16", "f32", "f64")
STR_ALPHABET = ["a", "b", "z", "A", "é", "ß", "日", "0", " ", "ab"]


def kind(dt):
    if dt == "bool":
        return "bool"
    if dt == "str":
        return "str"
    if dt in FLOATS:
        return "float"
    return "int"


def wrap_int(v, dt):
    bits = INT_BITS[dt]
    v &= (1 << bits) - 1
    if dt.startswith("i") and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def np_arr(values, dt, shape):
    """Build an array of element type dt from a flat python list."""
    npt = DTYPES[dt][0]
    if dt == "str":
        a = np.empty(len(values), dtype=object)
        for i, v in enumerate(values):
            a[i] = v
        return a.reshape(shape)
    return np.array(values, dtype=npt).reshape(shape)


def rand_values(rng, dt, n, special=False):
    k = kind(dt)
    if k == "bool":
        return [rng.random() < 0.5 for _ in range(n)]
    if k == "str":
        return ["".join(rng.choice(STR_ALPHABET) for _ in range(rng.randint(0, 3))) for _ in range(n)]
    if k == "float":
        return [rng.randint(-16, 16) / 4.0 for _ in range(n)]
    bits = INT_BITS[dt]
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if dt.startswith("i") else (0, (1 << bits) - 1)
    out = []
    for _ in range(n):
        if special and rng.random() < 0.3:
            out.append(rng.choice([lo, hi, lo + 1, hi - 1]))
        else:
            out.append(rng.randint(max(lo, -9), min(hi, 9)))
    return out


# --------------------------------------------------------------------------
# the reduction contract (one step: acc (+) update)
# --------------------------------------------------------------------------
def to_dt(v, dt):
    """Round a python / numpy value to the element type dt (as numpy scalar)."""
    if dt == "f16":
        return np.float16(v)
    if dt == "f32":
        return np.float32(v)
    if dt == "f64":
        return np.float64(v)
    return v


def reduce_step(acc, upd, red, dt):
    k = kind(dt)
    if red == "none":
        return upd
    if k == "bool":
        if red in ("add", "max", "sum"):
            return bool(acc) or bool(upd)
        if red in ("mul", "min", "prod"):
            return bool(acc) and bool(upd)
        raise OracleError("reduction")
    if k == "str":
        if red in ("add", "sum"):
            return acc + upd
        if red == "max":
            return upd if upd.encode() > acc.encode() else acc
        if red == "min":
            return upd if upd.encode() < acc.encode() else acc
        raise OracleError("reduction")
    if k == "int":
        a, u = int(acc), int(upd)
        if red in ("add", "sum"):
            return wrap_int(a + u, dt)
        if red in ("mul", "prod"):
            return wrap_int(a * u, dt)
        if red == "max":
            return u if u > a else a
        if red == "min":
            return u if u < a else a
        raise OracleError("reduction")
    # floats: compute in f32 for f16 (then round), in the type itself otherwise
    with np.errstate(all="ignore"):
        if dt == "f16":
            a, u = np.float32(acc), np.float32(upd)
        elif dt == "f32":
            a, u = np.float32(acc), np.float32(upd)
        else:
            a, u = np.float64(acc), np.float64(upd)
        if red in ("add", "sum"):
            return to_dt(a + u, dt)
        if red in ("mul", "prod"):
            return to_dt(a * u, dt)
        if red in ("max", "min"):
            if math.isnan(float(a)):
                return to_dt(a, dt)
            if math.isnan(float(u)):
                return to_dt(u, dt)
            if red == "max":
                return to_dt(u if u > a else a, dt)
            return to_dt(u if u < a else a, dt)
    raise OracleError("reduction")


def copy_arr(a):
    return a.copy()


def norm_index(v, size):
    v = int(v)
    if v < -size or v > size - 1:
        raise OracleError("out of bounds")
    return v + size if v < 0 else v


# --------------------------------------------------------------------------
# plain-loop oracles
# --------------------------------------------------------------------------
def oracle_scatter_elements(data, indices, updates, axis, red, dt):
    r = data.ndim
    if r < 1:
        raise OracleError("rank")
    if indices.ndim != r:
        raise OracleError("rank")
    if updates.shape != indices.shape:
        raise OracleError("shape")
    if not (-r <= axis <= r - 1):
        raise OracleError("axis")
    ax = axis + r if axis < 0 else axis
    for d in range(r):
        if d != ax and indices.shape[d] > data.shape[d]:
            raise OracleError("shape")
    out = copy_arr(data)
    s = data.shape[ax]
    # validate all indices first (no partial writes matter, but be explicit)
    for pos in np.ndindex(*indices.shape):
        norm_index(indices[pos], s)
    for pos in np.ndindex(*indices.shape):
        tgt = list(pos)
        tgt[ax] = norm_index(indices[pos], s)
        tgt = tuple(tgt)
        out[tgt] = reduce_step(out[tgt], updates[pos], red, dt)
    return out


def oracle_scatter_nd(data, indices, updates, red, dt):
    r = data.ndim
    if r < 1:
        raise OracleError("rank")
    if indices.ndim < 1:
        raise OracleError("rank")
    k = indices.shape[-1]
    if k > r:
        raise OracleError("rank")
    exp = tuple(indices.shape[:-1]) + tuple(data.shape[k:])
    if tuple(updates.shape) != exp:
        raise OracleError("shape")
    out = copy_arr(data)
    batch = indices.shape[:-1]
    for bpos in np.ndindex(*batch):
        for j in range(k):
            norm_index(indices[bpos + (j,)], data.shape[j])
    for bpos in np.ndindex(*batch):
        base = tuple(norm_index(indices[bpos + (j,)], data.shape[j]) for j in range(k))
        for tail in np.ndindex(*data.shape[k:]):
            tgt = base + tail
            out[tgt] = reduce_step(out[tgt], updates[bpos + tail], red, dt)
    return out


def oracle_tensor_scatter(past, update, write_indices, mode, axis):
    r = past.ndim
    if mode not in ("linear", "circular"):
        raise OracleError("mode")
    if r < 2:
        raise OracleError("rank")
    if update.ndim != r:
        raise OracleError("rank")
    if not (-r <= axis <= r - 1):
        raise OracleError("axis")
    ax = axis + r if axis < 0 else axis
    if ax == 0:
        raise OracleError("axis")
    for d in range(r):
        if d != ax and past.shape[d] != update.shape[d]:
            raise OracleError("shape")
    if update.shape[ax] > past.shape[ax]:
        raise OracleError("shape")
    batch = past.shape[0]
    if write_indices is None:
        wi = [0] * batch
    else:
        if write_indices.shape != (batch,):
            raise OracleError("shape")
        wi = [int(v) for v in write_indices]
    maxs, seq = past.shape[ax], update.shape[ax]
    if mode == "linear":
        for b in range(batch):
            if seq > 0 and (wi[b] < 0 or wi[b] + seq > maxs):
                raise OracleError("out of bounds")
    out = copy_arr(past)
    for prefix in np.ndindex(*past.shape[:ax]):
        b = prefix[0]
        for s in range(seq):
            p = wi[b] + s
            if mode == "circular":
                p = p % maxs
            for tail in np.ndindex(*past.shape[ax + 1:]):
                out[prefix + (p,) + tail] = update[prefix + (s,) + tail]
    return out


def oracle_ov(data, indices, updates, axis, red, use_init, dt):
    """OpenVINO ScatterElementsUpdate-12."""
    r = data.ndim
    if red not in ("none", "sum", "prod", "min", "max", "mean"):
        raise OracleError("reduction")
    if kind(dt) == "bool" and red == "mean":
        raise OracleError("reduction")
    if indices.ndim != r:
        raise OracleError("rank")
    if updates.shape != indices.shape:
        raise OracleError("shape")
    if not (-r <= axis <= r - 1):
        raise OracleError("axis")
    ax = axis + r if axis < 0 else axis
    for d in range(r):
        if d != ax and indices.shape[d] > data.shape[d]:
            raise OracleError("shape")
    s = data.shape[ax]
    for pos in np.ndindex(*indices.shape):
        norm_index(indices[pos], s)
    out = copy_arr(data)
    if red == "none":
        for pos in np.ndindex(*indices.shape):
            tgt = list(pos)
            tgt[ax] = norm_index(indices[pos], s)
            out[tuple(tgt)] = updates[pos]
        return out
    # group the updates per target position, in row-major order of indices
    groups = OrderedDict()
    for pos in np.ndindex(*indices.shape):
        tgt = list(pos)
        tgt[ax] = norm_index(indices[pos], s)
        groups.setdefault(tuple(tgt), []).append(updates[pos])
    step = {"sum": "add", "prod": "mul", "min": "min", "max": "max", "mean": "add"}[red]
    for tgt, vals in groups.items():
        if use_init:
            acc, rest = data[tgt], vals
        else:
            acc, rest = vals[0], vals[1:]
        for v in rest:
            acc = reduce_step(acc, v, step, dt)
        if red == "mean":
            n = len(vals) + (1 if use_init else 0)
            if kind(dt) == "int":
                acc = wrap_int(int(acc) // n, dt)
            else:
                with np.errstate(all="ignore"):
                    wide = np.float64 if dt == "f64" else np.float32
                    acc = to_dt(wide(acc) / wide(n), dt)
        out[tgt] = acc
    return out


# --------------------------------------------------------------------------
# case model
# --------------------------------------------------------------------------
class Case:
    def __init__(self, name, nodes_fn=None):
        self.name = name
        self.op = None
        self.domain = ""
        self.opset = None
        self.attrs = {}
        self.inputs = []  # (name, array, elem_type, is_initializer)
        self.out_name = "output"
        self.out_type = None
        self.expected = None  # np array
        self.error = None  # expected word
        self.write_inputs = True
        self.tags = set()
        self.omit_inputs_slots = 0  # trailing optional inputs omitted


CASES = []
NAMES = set()


def rng_for(name):
    return random.Random(zlib.crc32(name.encode()))


def add_case(c):
    assert c.name not in NAMES, c.name
    assert c.name == c.name.lower(), c.name
    assert re.fullmatch(r"[a-z0-9_\-]+", c.name), c.name
    NAMES.add(c.name)
    CASES.append(c)


def make_case(name, op, opset, attrs, inputs, out_type, compute, domain="", load_error=None, write_inputs=None):
    """inputs: list of (name, array, elem_type, is_init). compute() -> array or OracleError."""
    c = Case(name)
    c.op, c.opset, c.attrs, c.inputs, c.out_type, c.domain = op, opset, attrs, inputs, out_type, domain
    if load_error is not None:
        c.error = load_error
        c.write_inputs = False if write_inputs is None else write_inputs
    else:
        try:
            c.expected = compute()
        except OracleError as e:
            c.error = e.args[0]
            c.write_inputs = True
    if c.error is not None:
        suffix = "_err_" + c.error.replace(" ", "-")
        if not c.name.endswith(suffix):
            raise AssertionError(f"{c.name}: oracle says error '{c.error}' but name lacks {suffix}")
    elif "_err_" in c.name:
        raise AssertionError(f"{c.name}: named as error but oracle computed a value")
    add_case(c)
    return c


def io(name, arr, dt, init=False):
    return (name, arr, DTYPES[dt][1], init)


# --------------------------------------------------------------------------
# validation contract (load-time)
# --------------------------------------------------------------------------
def eff(opset):
    return min(opset, 18)


def load_error_for(op, opset, attrs):
    """Return the expected word of a load-time error, or None."""
    if op == "Scatter":
        if opset >= 11:
            return "deprecated"
        allowed = {"axis"}
        reds = None
    elif op == "ScatterElements":
        if opset < 11:
            return "opset"
        allowed = {"axis"} if eff(opset) < 16 else {"axis", "reduction"}
        reds = None if eff(opset) < 16 else (["none", "add", "mul"] if eff(opset) < 18 else ["none", "add", "mul", "max", "min"])
    elif op == "ScatterND":
        if opset < 11:
            return "opset"
        allowed = set() if eff(opset) < 16 else {"reduction"}
        reds = None if eff(opset) < 16 else (["none", "add", "mul"] if eff(opset) < 18 else ["none", "add", "mul", "max", "min"])
    else:
        raise ValueError(op)
    for a in sorted(attrs):
        if a not in allowed:
            return a
    if "reduction" in attrs and attrs["reduction"] not in reds:
        return "reduction"
    return None


SE_OPS = [("Scatter", 9), ("Scatter", 10), ("ScatterElements", 11), ("ScatterElements", 13),
          ("ScatterElements", 16), ("ScatterElements", 18)]
ND_OPS = [("ScatterND", 11), ("ScatterND", 13), ("ScatterND", 16), ("ScatterND", 18)]
OPNAME = {"Scatter": "scatter", "ScatterElements": "scatter_elements", "ScatterND": "scatter_nd",
          "TensorScatter": "tensor_scatter", "ScatterElementsUpdate": "ov_scatter_elements_update"}


def legal_reductions(op, opset):
    if op == "Scatter" or eff(opset) < 16:
        return [None]
    if eff(opset) < 18:
        return ["none", "add", "mul"]
    return ["none", "add", "mul", "max", "min"]


def se_case(name, op, opset, dt, data, indices, updates, axis, red, idt="i64", idx_init=False,
            extra_attrs=None, upd_dt=None, force_load_error=None, write_inputs=None):
    attrs = {}
    if axis is not None:
        attrs["axis"] = axis
    if red is not None:
        attrs["reduction"] = red
    if extra_attrs:
        attrs.update(extra_attrs)
    upd_dt = upd_dt or dt
    inputs = [io("data", data, dt), io("indices", indices, idt, idx_init), io("updates", updates, upd_dt)]
    lerr = force_load_error or load_error_for(op, opset, attrs)

    def compute():
        if upd_dt != dt:
            raise OracleError("type")
        if idt not in ("i32", "i64"):
            raise OracleError("type")
        if dt == "str" and red == "mul":
            raise OracleError("reduction")
        return oracle_scatter_elements(data, indices, updates, 0 if axis is None else axis,
                                       red or "none", dt)

    return make_case(name, op, opset, attrs, inputs, DTYPES[dt][1], compute, load_error=lerr,
                     write_inputs=write_inputs)


def nd_case(name, opset, dt, data, indices, updates, red, idt="i64", idx_init=False, extra_attrs=None,
            upd_dt=None, force_load_error=None, write_inputs=None):
    attrs = {}
    if red is not None:
        attrs["reduction"] = red
    if extra_attrs:
        attrs.update(extra_attrs)
    upd_dt = upd_dt or dt
    inputs = [io("data", data, dt), io("indices", indices, idt, idx_init), io("updates", updates, upd_dt)]
    lerr = force_load_error or load_error_for("ScatterND", opset, attrs)

    def compute():
        if upd_dt != dt:
            raise OracleError("type")
        if idt not in ("i32", "i64"):
            raise OracleError("type")
        if dt == "str" and red == "mul":
            raise OracleError("reduction")
        return oracle_scatter_nd(data, indices, updates, red or "none", dt)

    return make_case(name, "ScatterND", opset, attrs, inputs, DTYPES[dt][1], compute, load_error=lerr,
                     write_inputs=write_inputs)


def rand_shape(rng, rank, maxel=48, lo=1, hi=4):
    while True:
        sh = [rng.randint(lo, hi) for _ in range(rank)]
        if int(np.prod(sh)) <= maxel:
            return sh


def idx_arr(vals, shape, idt):
    return np.array(vals, dtype=DTYPES[idt][0]).reshape(shape)


def gen_se_inputs(rng, dt, rank, ax, long_axis=False, dup=True, special=False):
    dshape = rand_shape(rng, rank)
    s = dshape[ax]
    ishape = [rng.randint(1, dshape[d]) for d in range(rank)]
    ishape[ax] = s + rng.randint(1, 2) if long_axis else rng.randint(1, s + (1 if dup else 0))
    n = int(np.prod(ishape))
    ivals = [rng.randint(-s, s - 1) for _ in range(n)]
    data = np_arr(rand_values(rng, dt, int(np.prod(dshape)), special), dt, dshape)
    upd = np_arr(rand_values(rng, dt, n, special), dt, ishape)
    return data, ivals, ishape, upd


# --------------------------------------------------------------------------
# ScatterElements / Scatter: cover
# --------------------------------------------------------------------------
def gen_scatter_elements():
    counter = 0
    for (op, opset) in SE_OPS:
        for red in legal_reductions(op, opset):
            for dt in DTYPES:
                for variant in range(2 if opset in (9, 18) and dt in ("f32", "i64", "str") else 1):
                    counter += 1
                    rank = (counter + variant * 2) % 5 + 1
                    ax = (counter // 5 + variant) % rank
                    neg = (counter + variant) % 2 == 1
                    axis = ax - rank if neg else ax
                    idt = "i32" if (counter // 2 + variant) % 2 else "i64"
                    idx_init = (counter % 7 == 3)
                    long_axis = (counter % 4 == 1)
                    rtag = red if red is not None else "noreduction"
                    if dt == "str" and red == "mul":
                        name = f"{OPNAME[op]}_{opset}_{dt}_r{rank}_axis{axis}_{rtag}_v{variant}_err_reduction"
                    else:
                        name = f"{OPNAME[op]}_{opset}_{dt}_r{rank}_axis{axis}_{rtag}_{idt}{'_constidx' if idx_init else ''}{'_longaxis' if long_axis else ''}_v{variant}"
                    rng = rng_for(name)
                    data, ivals, ishape, upd = gen_se_inputs(rng, dt, rank, ax, long_axis, special=True)
                    # omit the axis attribute sometimes (default 0) when axis == 0
                    a = None if (axis == 0 and counter % 3 == 0) else axis
                    se_case(name, op, opset, dt, data, idx_arr(ivals, ishape, idt), upd, a, red, idt, idx_init)


def gen_se_specials():
    # per dtype: empty indices and zero-size data on the legal reductions of 18
    for i, dt in enumerate(DTYPES):
        for (op, opset) in [[("ScatterElements", 18), ("Scatter", 9), ("ScatterElements", 11)][i % 3]]:
            red = "add" if opset == 18 and dt != "str" else ("none" if opset == 18 else None)
            rt = red or "noreduction"
            name = f"{OPNAME[op]}_{opset}_{dt}_r2_axis1_{rt}_empty_indices"
            rng = rng_for(name)
            data = np_arr(rand_values(rng, dt, 6), dt, [2, 3])
            se_case(name, op, opset, dt, data, idx_arr([], [2, 0], "i64"), np_arr([], dt, [2, 0]), 1, red)
        name = f"scatter_elements_18_{dt}_r3_axis-2_none_zero_size_data"
        rng = rng_for(name)
        data = np_arr([], dt, [2, 0, 3])
        se_case(name, "ScatterElements", 18, dt, data, idx_arr([], [2, 0, 3], "i32"), np_arr([], dt, [2, 0, 3]), -2, "none", "i32")
    # zero-size data on a non-axis dim
    for opset, red in [(13, None), (16, "mul"), (18, "max")]:
        name = f"scatter_elements_{opset}_f32_r2_axis0_{red or 'noreduction'}_zero_size_data_nonaxis"
        se_case(name, "ScatterElements", opset, "f32", np_arr([], "f32", [3, 0]),
                idx_arr([], [2, 0], "i64"), np_arr([], "f32", [2, 0]), 0, red)
    # empty indices with a zero along the axis only
    name = "scatter_elements_18_i32_r3_axis-1_min_empty_indices_axis"
    rng = rng_for(name)
    se_case(name, "ScatterElements", 18, "i32", np_arr(rand_values(rng, "i32", 24), "i32", [2, 3, 4]),
            idx_arr([], [1, 2, 0], "i64"), np_arr([], "i32", [1, 2, 0]), -1, "min")

    # duplicate indices, every reduction, ordered fold
    for dt in ["i32", "f32", "f16", "str", "bool", "u8"]:
        for red in ["none", "add", "mul", "max", "min"]:
            if dt == "str" and red == "mul":
                continue
            name = f"scatter_elements_18_{dt}_r1_axis0_{red}_duplicates"
            rng = rng_for(name)
            data = np_arr(rand_values(rng, dt, 3), dt, [3])
            ivals = [1, -2, 1, 0, -3, 2, 1]
            se_case(name, "ScatterElements", 18, dt, data, idx_arr(ivals, [7], "i64"),
                    np_arr(rand_values(rng, dt, 7), dt, [7]), 0, red)
    # duplicates in older opsets (last write wins)
    for op, opset in [("Scatter", 9), ("Scatter", 10), ("ScatterElements", 11), ("ScatterElements", 13)]:
        name = f"{OPNAME[op]}_{opset}_f32_r2_axis-1_noreduction_duplicates_negative"
        data = np_arr([float(i) for i in range(6)], "f32", [2, 3])
        ivals = [0, -3, 2, -1, -1, 1, 1, 1]
        se_case(name, op, opset, "f32", data, idx_arr(ivals, [2, 4], "i32"),
                np_arr([10.0 + i for i in range(8)], "f32", [2, 4]), -1, None, "i32")
    # constant (initializer) indices with every op version
    for op, opset in SE_OPS:
        for red in legal_reductions(op, opset):
            name = f"{OPNAME[op]}_{opset}_i64_r3_axis-3_{red or 'noreduction'}_constidx_neg_dup"
            rng = rng_for(name)
            data, ivals, ishape, upd = gen_se_inputs(rng, "i64", 3, 0, long_axis=True)
            se_case(name, op, opset, "i64", data, idx_arr(ivals, ishape, "i64"), upd, -3, red, "i64", True)
    # indices longer than the data along the axis, each rank
    for rank in range(1, 6):
        for neg in (False, True):
            ax = rank - 1 if not neg else 0
            axis = ax - rank if neg else ax
            name = f"scatter_elements_18_f64_r{rank}_axis{axis}_add_longaxis_rank{rank}"
            rng = rng_for(name)
            data, ivals, ishape, upd = gen_se_inputs(rng, "f64", rank, ax, long_axis=True)
            se_case(name, "ScatterElements", 18, "f64", data, idx_arr(ivals, ishape, "i32"), upd, axis, "add", "i32")
    # integer wrap-around
    wraps = [("i8", "add", [127], [1]), ("i8", "add", [-128], [-1]), ("i8", "mul", [64], [2]),
             ("i8", "mul", [-128], [-1]), ("u8", "add", [255], [1]), ("u8", "mul", [16], [16]),
             ("i16", "add", [32767], [1]), ("i16", "mul", [-32768], [-1]), ("u16", "add", [65535], [2]),
             ("i32", "add", [2147483647], [1]), ("i32", "mul", [65536], [65536]),
             ("u32", "add", [4294967295], [1]), ("u32", "mul", [65536], [65537]),
             ("i64", "add", [9223372036854775807], [1]), ("i64", "mul", [-9223372036854775808], [-1]),
             ("u64", "add", [18446744073709551615], [1]), ("u64", "mul", [4294967296], [4294967297])]
    for i, (dt, red, d, u) in enumerate(wraps):
        for opset in (16, 18):
            name = f"scatter_elements_{opset}_{dt}_r1_axis0_{red}_wraparound_{i}"
            se_case(name, "ScatterElements", opset, dt, np_arr(d + [5], dt, [2]), idx_arr([0, 0], [2], "i64"),
                    np_arr(u + [0 if red == "add" else 1], dt, [2]), 0, red)
    # NaN / Inf in float reductions
    nan, inf = float("nan"), float("inf")
    for dt in FLOATS:
        for red in ["add", "mul", "max", "min", "none"]:
            name = f"scatter_elements_18_{dt}_r2_axis1_{red}_nan_inf"
            data = np_arr([nan, 1.0, -inf, inf, 0.0, -0.0, 2.0, nan], dt, [2, 4])
            ivals = [0, 1, 2, 3, 0, 1, 2, 3, 3]
            # row 0 and 1 are updated; row 1 gets more positions (duplicates on col 3)
            data = np_arr([nan, 1.0, -inf, inf, 0.0, -0.0, 2.0, nan], dt, [2, 4])
            idx = idx_arr([0, 1, 2, 3, 0, 1, 2, 3], [2, 4], "i64")
            upd = np_arr([1.0, nan, inf, -inf, -0.0, 0.0, nan, 3.0], dt, [2, 4])
            se_case(name, "ScatterElements", 18, dt, data, idx, upd, 1, red)
        for red in ["max", "min"]:
            name = f"scatter_elements_18_{dt}_r1_axis0_{red}_nan_then_value"
            se_case(name, "ScatterElements", 18, dt, np_arr([1.0, nan, 0.0], dt, [3]),
                    idx_arr([0, 0, 1, 2, 2], [5], "i64"), np_arr([nan, 5.0, 7.0, -0.0, 0.0], dt, [5]), 0, red)
    for dt in FLOATS:
        name = f"scatter_elements_16_{dt}_r1_axis0_add_inf_minus_inf"
        se_case(name, "ScatterElements", 16, dt, np_arr([inf, 0.0], dt, [2]), idx_arr([0, 1, 1], [3], "i64"),
                np_arr([-inf, inf, -inf], dt, [3]), 0, "add")
        name = f"scatter_elements_16_{dt}_r1_axis0_mul_inf_times_zero"
        se_case(name, "ScatterElements", 16, dt, np_arr([inf, 0.0], dt, [2]), idx_arr([0, 1], [2], "i64"),
                np_arr([0.0, -inf], dt, [2]), 0, "mul")
    # rounding after every update
    name = "scatter_elements_18_f16_r1_axis0_add_round_each_step"
    se_case(name, "ScatterElements", 18, "f16", np_arr([2048.0, 1.0], "f16", [2]), idx_arr([0, 0, 0], [3], "i64"),
            np_arr([1.0, 1.0, 1.0], "f16", [3]), 0, "add")
    name = "scatter_elements_18_f32_r1_axis0_add_round_each_step"
    se_case(name, "ScatterElements", 18, "f32", np_arr([16777216.0, 1.0], "f32", [2]), idx_arr([0, 0], [2], "i64"),
            np_arr([1.0, 1.0], "f32", [2]), 0, "add")
    name = "scatter_elements_18_f16_r1_axis0_mul_overflow_inf"
    se_case(name, "ScatterElements", 18, "f16", np_arr([300.0, 1.0], "f16", [2]), idx_arr([0, 0], [2], "i64"),
            np_arr([300.0, 0.5], "f16", [2]), 0, "mul")
    # string specials: concat order, bytewise compare on non-ascii
    name = "scatter_elements_18_str_r1_axis0_add_concat_order"
    se_case(name, "ScatterElements", 18, "str", np_arr(["x", "", "日"], "str", [3]), idx_arr([0, 0, 2, 0], [4], "i32"),
            np_arr(["a", "b", "本", "c"], "str", [4]), 0, "add", "i32")
    for red in ("max", "min"):
        name = f"scatter_elements_18_str_r1_axis0_{red}_bytewise"
        se_case(name, "ScatterElements", 18, "str", np_arr(["z", "é", "", "ab"], "str", [4]),
                idx_arr([0, 1, 1, 2, 3, 3], [6], "i64"), np_arr(["é", "日", "e", "", "abc", "a"], "str", [6]), 0, red)
    # bool reductions
    for red in ["add", "mul", "max", "min"]:
        name = f"scatter_elements_18_bool_r2_axis0_{red}_truth_table"
        data = np_arr([False, False, True, True], "bool", [1, 4])
        idx = idx_arr([0, 0, 0, 0], [1, 4], "i64")
        upd = np_arr([False, True, False, True], "bool", [1, 4])
        se_case(name, "ScatterElements", 18, "bool", data, idx, upd, 0, red)
    # opset above 18 behaves as 18; 17 as 16
    for opset, red in [(17, "mul"), (17, "none"), (20, "max"), (22, "min"), (24, "add")]:
        name = f"scatter_elements_{opset}_f32_r2_axis-1_{red}_later_opset"
        rng = rng_for(name)
        data, ivals, ishape, upd = gen_se_inputs(rng, "f32", 2, 1)
        se_case(name, "ScatterElements", opset, "f32", data, idx_arr(ivals, ishape, "i64"), upd, -1, red)
    # reduction attribute explicitly "none" vs absent at 16
    name = "scatter_elements_16_i32_r2_axis0_absent_reduction_attr"
    rng = rng_for(name)
    data, ivals, ishape, upd = gen_se_inputs(rng, "i32", 2, 0)
    se_case(name, "ScatterElements", 16, "i32", data, idx_arr(ivals, ishape, "i64"), upd, 0, None)


def gen_se_errors():
    for op, opset in [("Scatter", 9), ("ScatterElements", 11), ("ScatterElements", 18)]:
        pre = f"{OPNAME[op]}_{opset}"
        red = "add" if opset == 18 else None
        dt = "f32"
        data = np_arr([float(i) for i in range(12)], dt, [3, 4])
        upd2 = np_arr([1.0, 2.0], dt, [1, 2])
        for idt in ("i32", "i64"):
            for what, vals in [("index_eq_s", [0, 3]), ("index_eq_neg_s_minus_1", [-4, 0])]:
                se_case(f"{pre}_{idt}_{what}_axis0_err_out-of-bounds", op, opset, dt, data,
                        idx_arr([vals[1], vals[0]], [1, 2], idt), upd2, 0, red, idt)
            se_case(f"{pre}_{idt}_index_eq_s_axis-1_err_out-of-bounds", op, opset, dt, data,
                    idx_arr([4, 0], [1, 2], idt), upd2, -1, red, idt)
            info = np.iinfo(DTYPES[idt][0])
            for what, v in [("index_min", int(info.min)), ("index_max", int(info.max))]:
                se_case(f"{pre}_{idt}_{what}_err_out-of-bounds", op, opset, dt, data,
                        idx_arr([0, v], [1, 2], idt), upd2, 1, red, idt)
        se_case(f"{pre}_const_index_out_of_range_err_out-of-bounds", op, opset, dt, data,
                idx_arr([1, 5], [1, 2], "i64"), upd2, 1, red, "i64", True)
        se_case(f"{pre}_axis_eq_r_err_axis", op, opset, dt, data, idx_arr([0, 1], [1, 2], "i64"), upd2, 2, red)
        se_case(f"{pre}_axis_eq_neg_r_minus_1_err_axis", op, opset, dt, data, idx_arr([0, 1], [1, 2], "i64"), upd2, -3, red)
        se_case(f"{pre}_indices_rank_lt_data_rank_err_rank", op, opset, dt, data, idx_arr([0, 1], [2], "i64"),
                np_arr([1.0, 2.0], dt, [2]), 0, red)
        se_case(f"{pre}_indices_rank_gt_data_rank_err_rank", op, opset, dt, data, idx_arr([0, 1], [1, 2, 1], "i64"),
                np_arr([1.0, 2.0], dt, [1, 2, 1]), 0, red)
        se_case(f"{pre}_data_rank0_err_rank", op, opset, dt, np_arr([1.0], dt, []), idx_arr([0], [], "i64"),
                np_arr([2.0], dt, []), 0, red)
        se_case(f"{pre}_updates_shape_ne_indices_shape_err_shape", op, opset, dt, data, idx_arr([0, 1], [1, 2], "i64"),
                np_arr([1.0, 2.0, 3.0], dt, [1, 3]), 0, red)
        se_case(f"{pre}_updates_rank_ne_indices_rank_err_shape", op, opset, dt, data, idx_arr([0, 1], [1, 2], "i64"),
                np_arr([1.0, 2.0], dt, [2]), 0, red)
        se_case(f"{pre}_nonaxis_indices_dim_gt_data_dim_err_shape", op, opset, dt, data,
                idx_arr([0] * 5, [1, 5], "i64"), np_arr([1.0] * 5, dt, [1, 5]), 0, red)
        se_case(f"{pre}_data_updates_type_mismatch_err_type", op, opset, dt, data, idx_arr([0, 1], [1, 2], "i64"),
                np_arr([1.0, 2.0], "f64", [1, 2]), 0, red, upd_dt="f64")
        se_case(f"{pre}_int_data_float_updates_err_type", op, opset, "i32", np_arr(list(range(12)), "i32", [3, 4]),
                idx_arr([0, 1], [1, 2], "i64"), np_arr([1.0, 2.0], "f32", [1, 2]), 0, red, upd_dt="f32")
        se_case(f"{pre}_float_indices_err_type", op, opset, dt, data,
                np.array([[0.0, 1.0]], dtype=np.float32), upd2, 0, red, "f32")
        se_case(f"{pre}_int16_indices_err_type", op, opset, dt, data,
                np.array([[0, 1]], dtype=np.int16), upd2, 0, red, "i16")
        se_case(f"{pre}_unknown_attr_foo_err_foo", op, opset, dt, data, idx_arr([0, 1], [1, 2], "i64"), upd2, 0, red,
                extra_attrs={"foo": 1})
    data = np_arr([1.0, 2.0, 3.0], "f32", [3])
    idx = idx_arr([0], [1], "i64")
    upd = np_arr([5.0], "f32", [1])
    for opset in (11, 13):
        se_case(f"scatter_elements_{opset}_reduction_add_err_reduction", "ScatterElements", opset, "f32", data, idx, upd, 0, "add")
        se_case(f"scatter_elements_{opset}_reduction_none_err_reduction", "ScatterElements", opset, "f32", data, idx, upd, 0, "none")
    for opset in (16, 17):
        for red in ("max", "min"):
            se_case(f"scatter_elements_{opset}_reduction_{red}_err_reduction", "ScatterElements", opset, "f32", data, idx, upd, 0, red)
    for opset in (16, 18):
        se_case(f"scatter_elements_{opset}_reduction_foo_err_reduction", "ScatterElements", opset, "f32", data, idx, upd, 0, "foo")
    se_case("scatter_elements_18_reduction_uppercase_add_err_reduction", "ScatterElements", 18, "f32", data, idx, upd, 0, "Add")
    for opset in (11, 13, 18):
        se_case(f"scatter_{opset}_deprecated_err_deprecated", "Scatter", opset, "f32", data, idx, upd, 0, None)
    se_case("scatter_9_reduction_attr_err_reduction", "Scatter", 9, "f32", data, idx, upd, 0, "add")
    se_case("scatter_elements_10_below_first_version_err_opset", "ScatterElements", 10, "f32", data, idx, upd, 0, None)
    se_case("scatter_elements_9_below_first_version_err_opset", "ScatterElements", 9, "f32", data, idx, upd, 0, None)
    sd = np_arr(["a", "b"], "str", [2])
    for opset in (16, 18):
        se_case(f"scatter_elements_{opset}_str_mul_err_reduction", "ScatterElements", opset, "str", sd,
                idx_arr([1], [1], "i64"), np_arr(["c"], "str", [1]), 0, "mul")
    se_case("scatter_elements_18_str_mul_empty_indices_err_reduction", "ScatterElements", 18, "str", sd,
            idx_arr([], [0], "i64"), np_arr([], "str", [0]), 0, "mul")


# --------------------------------------------------------------------------
# ScatterND
# --------------------------------------------------------------------------
def gen_nd_inputs(rng, dt, rank, k, q, special=False, dup=True):
    dshape = rand_shape(rng, rank, maxel=36)
    bshape = [rng.randint(1, 3) for _ in range(q - 1)]
    while int(np.prod(bshape)) * int(np.prod(dshape[k:])) > 60:
        bshape = [max(1, b - 1) for b in bshape]
    nb = int(np.prod(bshape)) if bshape else 1
    ivals = []
    for _ in range(nb):
        for j in range(k):
            ivals.append(rng.randint(-dshape[j], dshape[j] - 1))
    ishape = bshape + [k]
    ushape = bshape + dshape[k:]
    data = np_arr(rand_values(rng, dt, int(np.prod(dshape)), special), dt, dshape)
    upd = np_arr(rand_values(rng, dt, int(np.prod(ushape)), special), dt, ushape)
    return data, ivals, ishape, upd


def gen_scatter_nd():
    counter = 0
    for (op, opset) in ND_OPS:
        for red in legal_reductions(op, opset):
            for dt in DTYPES:
                for variant in range(2 if opset in (11, 18) and dt in ("f32", "i64", "str") else 1):
                    counter += 1
                    rank = (counter + 2 * variant) % 5 + 1
                    kmode = (counter + variant) % 4  # 0: k==r, 1: k<r, 2: k==0, 3: batched q>=3
                    if kmode == 0:
                        k, q, kt = rank, 1 + (counter % 2), "keqr"
                    elif kmode == 1:
                        k, q, kt = rng_for(str(counter)).randint(0, rank - 1), 2, "kltr"
                        if rank == 1:
                            k = 0
                    elif kmode == 2:
                        k, q, kt = 0, 2, "k0"
                    else:
                        k, q, kt = rng_for(str(counter)).randint(1, rank), 3 + (counter % 2), "batched"
                    if kt == "kltr" and k == 0:
                        kt = "k0"
                    idt = "i32" if (counter // 3 + variant) % 2 else "i64"
                    idx_init = (counter % 7 == 5)
                    rtag = red if red is not None else "noreduction"
                    if dt == "str" and red == "mul":
                        name = f"scatter_nd_{opset}_{dt}_r{rank}_k{k}_q{q}_{rtag}_v{variant}_err_reduction"
                    else:
                        name = f"scatter_nd_{opset}_{dt}_r{rank}_k{k}_q{q}_{kt}_{rtag}_{idt}{'_constidx' if idx_init else ''}_v{variant}"
                    rng = rng_for(name)
                    data, ivals, ishape, upd = gen_nd_inputs(rng, dt, rank, k, q, special=True)
                    nd_case(name, opset, dt, data, idx_arr(ivals, ishape, idt), upd, red, idt, idx_init)


def gen_nd_specials():
    # every rank x k combination on f32 / add at 18, plus i64 at 11
    for rank in range(1, 6):
        for k in range(0, rank + 1):
            for opset, red, dt in [[(18, "add", "f32"), (11, None, "i16"), (16, "mul", "u32")][(rank + k) % 3]]:
                q = 2 if (rank + k) % 2 else 3
                name = f"scatter_nd_{opset}_{dt}_r{rank}_k{k}_q{q}_{red or 'noreduction'}_rank_k_grid"
                rng = rng_for(name)
                data, ivals, ishape, upd = gen_nd_inputs(rng, dt, rank, k, q)
                nd_case(name, opset, dt, data, idx_arr(ivals, ishape, "i64"), upd, red)
    # explicit duplicates
    for dt in ["i32", "f32", "f16", "str", "bool", "i8"]:
        for red in ["none", "add", "mul", "max", "min"]:
            if dt == "str" and red == "mul":
                continue
            name = f"scatter_nd_18_{dt}_r2_k1_q2_{red}_duplicates"
            rng = rng_for(name)
            data = np_arr(rand_values(rng, dt, 6), dt, [3, 2])
            ivals = [1, -2, 0, 2, -1, 1]
            nd_case(name, 18, dt, data, idx_arr(ivals, [6, 1], "i64"), np_arr(rand_values(rng, dt, 12), dt, [6, 2]), red)
    # negative indices per component, k == r
    name = "scatter_nd_13_f32_r3_k3_q2_noreduction_negative_components"
    data = np_arr([float(i) for i in range(24)], "f32", [2, 3, 4])
    nd_case(name, 13, "f32", data, idx_arr([-1, -3, -4, 0, -1, 3, -2, 2, -1], [3, 3], "i32"),
            np_arr([100.0, 200.0, 300.0], "f32", [3]), None, "i32")
    # k == 0: the whole data updated by every batch entry
    for red in ["none", "add", "mul", "max", "min"]:
        name = f"scatter_nd_18_i32_r2_k0_q2_{red}_k0_whole_tensor_repeated"
        data = np_arr([1, 2, 3, 4], "i32", [2, 2])
        nd_case(name, 18, "i32", data, idx_arr([], [3, 0], "i64"),
                np_arr([5, -6, 7, 8, 2, 2, -3, 0, 9, 1, 1, 1], "i32", [3, 2, 2]), red)
    name = "scatter_nd_11_f32_r2_k0_q1_noreduction_k0_single"
    nd_case(name, 11, "f32", np_arr([1.0, 2.0], "f32", [1, 2]), idx_arr([], [0], "i64"),
            np_arr([7.0, 8.0], "f32", [1, 2]), None)
    # empty indices / zero-size data
    for i, dt in enumerate(DTYPES):
        for opset in [(11, 18)[i % 2]]:
            red = None if opset == 11 else "none"
            name = f"scatter_nd_{opset}_{dt}_r2_k1_q2_{red or 'noreduction'}_empty_indices"
            rng = rng_for(name)
            data = np_arr(rand_values(rng, dt, 6), dt, [2, 3])
            nd_case(name, opset, dt, data, idx_arr([], [0, 1], "i64"), np_arr([], dt, [0, 3]), red)
        name = f"scatter_nd_16_{dt}_r2_k2_q2_{'add' if dt != 'str' else 'none'}_zero_size_data"
        nd_case(name, 16, dt, np_arr([], dt, [0, 3]), idx_arr([], [0, 2], "i64"), np_arr([], dt, [0]),
                "add" if dt != "str" else "none")
    name = "scatter_nd_18_f32_r2_k1_q2_add_zero_size_trailing_dim"
    nd_case(name, 18, "f32", np_arr([], "f32", [3, 0]), idx_arr([2, -1, 0], [3, 1], "i64"), np_arr([], "f32", [3, 0]), "add")
    name = "scatter_nd_13_f32_r3_k1_q3_noreduction_empty_batch_dim"
    nd_case(name, 13, "f32", np_arr([1.0] * 8, "f32", [2, 2, 2]), idx_arr([], [2, 0, 1], "i64"),
            np_arr([], "f32", [2, 0, 2, 2]), None)
    # constant indices on every version
    for op, opset in ND_OPS:
        for red in legal_reductions(op, opset):
            name = f"scatter_nd_{opset}_f64_r3_k2_q3_{red or 'noreduction'}_constidx_neg_dup"
            rng = rng_for(name)
            data, ivals, ishape, upd = gen_nd_inputs(rng, "f64", 3, 2, 3)
            ivals[-2:] = ivals[:2]  # a duplicate
            nd_case(name, opset, "f64", data, idx_arr(ivals, ishape, "i64"), upd, red, "i64", True)
    # wrap-around
    for dt, red, d, u in [("i8", "add", 127, 1), ("u8", "add", 255, 1), ("i16", "mul", 256, 128),
                          ("i32", "mul", -2147483648, -1), ("u64", "add", 18446744073709551615, 3),
                          ("i64", "add", 9223372036854775807, 1), ("u32", "mul", 4294967295, 4294967295)]:
        name = f"scatter_nd_18_{dt}_r1_k1_q2_{red}_wraparound"
        nd_case(name, 18, dt, np_arr([d, 1], dt, [2]), idx_arr([0, 0], [2, 1], "i64"),
                np_arr([u, 1 if red == "mul" else 0], dt, [2]), red)
    # NaN / Inf
    nan, inf = float("nan"), float("inf")
    for dt in FLOATS:
        for red in ["add", "mul", "max", "min"]:
            name = f"scatter_nd_18_{dt}_r2_k2_q2_{red}_nan_inf"
            data = np_arr([nan, 1.0, -inf, inf, 0.0, -0.0], dt, [2, 3])
            idx = idx_arr([0, 0, 0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 2], [7, 2], "i64")
            upd = np_arr([1.0, nan, 2.0, inf, -0.0, 0.0, nan], dt, [7])
            nd_case(name, 18, dt, data, idx, upd, red)
    name = "scatter_nd_18_f16_r1_k1_q2_add_round_each_step"
    nd_case(name, 18, "f16", np_arr([2048.0], "f16", [1]), idx_arr([0, 0, 0], [3, 1], "i64"),
            np_arr([1.0, 1.0, 1.0], "f16", [3]), "add")
    for opset, red in [(17, "mul"), (21, "max"), (24, "min")]:
        name = f"scatter_nd_{opset}_f32_r2_k1_q2_{red}_later_opset"
        rng = rng_for(name)
        data, ivals, ishape, upd = gen_nd_inputs(rng, "f32", 2, 1, 2)
        nd_case(name, opset, "f32", data, idx_arr(ivals, ishape, "i64"), upd, red)
    name = "scatter_nd_18_str_r1_k1_q2_add_concat_order"
    nd_case(name, 18, "str", np_arr(["x", "y"], "str", [2]), idx_arr([0, 1, 0, -2], [4, 1], "i32"),
            np_arr(["1", "2", "3", "4"], "str", [4]), "add", "i32")


def gen_nd_errors():
    dt = "f32"
    data = np_arr([float(i) for i in range(6)], dt, [2, 3])
    for opset, red in [(11, None), (18, "add")]:
        pre = f"scatter_nd_{opset}"
        for idt in ("i32", "i64"):
            info = np.iinfo(DTYPES[idt][0])
            for what, iv in [("component_eq_d", [0, 3]), ("component_eq_neg_d_minus_1", [-3, 0]),
                             ("component_out_flat_inside", [0, 4]), ("component_neg_out_flat_inside", [1, -4]),
                             ("index_min", [int(info.min), 0]), ("index_max", [0, int(info.max)])]:
                nd_case(f"{pre}_{idt}_{what}_err_out-of-bounds", opset, dt, data, idx_arr(iv, [1, 2], idt),
                        np_arr([9.0], dt, [1]), red, idt)
        nd_case(f"{pre}_k1_eq_d_err_out-of-bounds", opset, dt, data, idx_arr([2], [1, 1], "i64"),
                np_arr([9.0, 9.0, 9.0], dt, [1, 3]), red)
        nd_case(f"{pre}_const_index_out_of_range_err_out-of-bounds", opset, dt, data, idx_arr([5], [1, 1], "i64"),
                np_arr([9.0, 9.0, 9.0], dt, [1, 3]), red, "i64", True)
        nd_case(f"{pre}_k_gt_r_err_rank", opset, dt, data, idx_arr([0, 0, 0], [1, 3], "i64"), np_arr([9.0], dt, [1]), red)
        nd_case(f"{pre}_indices_rank0_err_rank", opset, dt, data, idx_arr([0], [], "i64"), np_arr([9.0] * 6, dt, [2, 3]), red)
        nd_case(f"{pre}_data_rank0_err_rank", opset, dt, np_arr([1.0], dt, []), idx_arr([], [1, 0], "i64"),
                np_arr([9.0], dt, [1]), red)
        nd_case(f"{pre}_updates_shape_wrong_trailing_err_shape", opset, dt, data, idx_arr([0], [1, 1], "i64"),
                np_arr([9.0, 9.0], dt, [1, 2]), red)
        nd_case(f"{pre}_updates_shape_wrong_batch_err_shape", opset, dt, data, idx_arr([0, 1], [2, 1], "i64"),
                np_arr([9.0] * 3, dt, [1, 3]), red)
        nd_case(f"{pre}_updates_rank_wrong_err_shape", opset, dt, data, idx_arr([0, 1, 1, 1], [2, 2], "i64"),
                np_arr([9.0, 9.0], dt, [2, 1]), red)
        nd_case(f"{pre}_data_updates_type_mismatch_err_type", opset, dt, data, idx_arr([0, 1], [1, 2], "i64"),
                np_arr([9.0], "f16", [1]), red, upd_dt="f16")
        nd_case(f"{pre}_float_indices_err_type", opset, dt, data, np.array([[0.0, 1.0]], dtype=np.float64),
                np_arr([9.0], dt, [1]), red, "f64")
        nd_case(f"{pre}_uint8_indices_err_type", opset, dt, data, np.array([[0, 1]], dtype=np.uint8),
                np_arr([9.0], dt, [1]), red, "u8")
        nd_case(f"{pre}_unknown_attr_foo_err_foo", opset, dt, data, idx_arr([0, 1], [1, 2], "i64"),
                np_arr([9.0], dt, [1]), red, extra_attrs={"foo": "bar"})
    idx = idx_arr([0, 1], [1, 2], "i64")
    upd = np_arr([9.0], dt, [1])
    for opset in (11, 13):
        nd_case(f"scatter_nd_{opset}_reduction_add_err_reduction", opset, dt, data, idx, upd, "add")
        nd_case(f"scatter_nd_{opset}_reduction_none_err_reduction", opset, dt, data, idx, upd, "none")
    for opset in (16, 17):
        for red in ("max", "min"):
            nd_case(f"scatter_nd_{opset}_reduction_{red}_err_reduction", opset, dt, data, idx, upd, red)
    for opset in (16, 18):
        nd_case(f"scatter_nd_{opset}_reduction_foo_err_reduction", opset, dt, data, idx, upd, "foo")
    nd_case("scatter_nd_10_below_first_version_err_opset", 10, dt, data, idx, upd, None)
    sd = np_arr(["a", "b"], "str", [2])
    for opset in (16, 18):
        nd_case(f"scatter_nd_{opset}_str_mul_err_reduction", opset, "str", sd, idx_arr([1], [1, 1], "i64"),
                np_arr(["c"], "str", [1]), "mul")


# --------------------------------------------------------------------------
# TensorScatter (opset 24)
# --------------------------------------------------------------------------
def ts_case(name, opset, dt, past, update, wi, mode, axis, extra_attrs=None, wi_dt="i64", upd_dt=None,
            wi_init=False):
    attrs = {}
    if mode is not None:
        attrs["mode"] = mode
    if axis is not None:
        attrs["axis"] = axis
    if extra_attrs:
        attrs.update(extra_attrs)
    upd_dt = upd_dt or dt
    inputs = [("past_cache", past, DTYPES[dt][1], False), ("update", update, DTYPES[upd_dt][1], False)]
    if wi is not None:
        inputs.append(("write_indices", wi, DTYPES[wi_dt][1], wi_init))
    lerr = None
    if opset < 24:
        lerr = "opset"
    else:
        for a in sorted(attrs):
            if a not in ("mode", "axis"):
                lerr = a
                break
        if lerr is None and attrs.get("mode", "linear") not in ("linear", "circular"):
            lerr = "mode"

    def compute():
        if upd_dt != dt or (wi is not None and wi_dt != "i64"):
            raise OracleError("type")
        return oracle_tensor_scatter(past, update, wi, mode or "linear", -2 if axis is None else axis)

    c = make_case(name, "TensorScatter", opset, attrs, inputs, DTYPES[dt][1], compute, load_error=lerr)
    c.out_name = "present"
    return c


def gen_tensor_scatter():
    counter = 0
    for dt in ["f32", "f16", "i32", "i64", "u8", "f64", "bool", "str", "i8"]:
        for rank in (3, 4):
            for axis in (-2, 1, 2, -1):
                ax = axis + rank if axis < 0 else axis
                for mode in ("linear", "circular"):
                    counter += 1
                    use_wi = counter % 3 != 0
                    if (dt != "f32" and counter % 3) or (dt == "f32" and counter % 2 == 0 and rank == 4):
                        continue  # thinner cover on the other types
                    name = f"tensor_scatter_24_{dt}_r{rank}_axis{axis}_{mode}{'_nowi' if not use_wi else ''}"
                    rng = rng_for(name)
                    shape = [rng.randint(1, 3) for _ in range(rank)]
                    shape[0] = rng.randint(1, 3)
                    shape[ax] = rng.randint(2, 5)
                    maxs = shape[ax]
                    seq = rng.randint(1, maxs)
                    ushape = list(shape)
                    ushape[ax] = seq
                    past = np_arr(rand_values(rng, dt, int(np.prod(shape))), dt, shape)
                    upd = np_arr(rand_values(rng, dt, int(np.prod(ushape))), dt, ushape)
                    wi = None
                    if use_wi:
                        if mode == "linear":
                            wv = [rng.randint(0, maxs - seq) for _ in range(shape[0])]
                        else:
                            wv = [rng.randint(0, 2 * maxs) for _ in range(shape[0])]
                        wi = np.array(wv, dtype=np.int64)
                    ts_case(name, 24, dt, past, upd, wi, None if (mode == "linear" and counter % 4 == 1) else mode,
                            None if (axis == -2 and counter % 2) else axis)
    # specific
    past = np_arr([float(i) for i in range(2 * 5 * 2)], "f32", [2, 5, 2])
    upd = np_arr([100.0 + i for i in range(2 * 3 * 2)], "f32", [2, 3, 2])
    ts_case("tensor_scatter_24_f32_r3_axis1_circular_wraps_around", 24, "f32", past, upd,
            np.array([3, 4], dtype=np.int64), "circular", 1)
    ts_case("tensor_scatter_24_f32_r3_axis1_circular_index_beyond_2x", 24, "f32", past, upd,
            np.array([11, 0], dtype=np.int64), "circular", 1)
    ts_case("tensor_scatter_24_f32_r3_axis1_linear_exact_end", 24, "f32", past, upd,
            np.array([2, 0], dtype=np.int64), "linear", 1)
    ts_case("tensor_scatter_24_f32_r3_axis1_linear_full_seq", 24, "f32", past,
            np_arr([7.0] * 20, "f32", [2, 5, 2]), None, "linear", 1)
    ts_case("tensor_scatter_24_f32_r3_axis1_linear_seq0", 24, "f32", past, np_arr([], "f32", [2, 0, 2]),
            np.array([5, 0], dtype=np.int64), "linear", 1)
    ts_case("tensor_scatter_24_f32_r3_axis1_const_write_indices", 24, "f32", past, upd,
            np.array([1, 2], dtype=np.int64), "linear", 1, wi_init=True)
    ts_case("tensor_scatter_25_f32_r3_axis1_later_opset", 25, "f32", past, upd,
            np.array([1, 0], dtype=np.int64), "linear", 1)
    # errors
    e = "tensor_scatter_24_f32_r3_axis1"
    ts_case(f"{e}_linear_past_end_err_out-of-bounds", 24, "f32", past, upd, np.array([0, 3], dtype=np.int64), "linear", 1)
    ts_case(f"{e}_linear_negative_write_index_err_out-of-bounds", 24, "f32", past, upd,
            np.array([-1, 0], dtype=np.int64), "linear", 1)
    ts_case(f"{e}_default_mode_past_end_err_out-of-bounds", 24, "f32", past, upd, np.array([9, 0], dtype=np.int64), None, 1)
    ts_case(f"{e}_mode_foo_err_mode", 24, "f32", past, upd, None, "foo", 1)
    ts_case(f"{e}_nonaxis_dim_mismatch_err_shape", 24, "f32", past, np_arr([1.0] * 9, "f32", [3, 3, 1]),
            None, "linear", 1)
    ts_case(f"{e}_update_longer_than_cache_err_shape", 24, "f32", past, np_arr([1.0] * 24, "f32", [2, 6, 2]),
            None, "circular", 1)
    ts_case(f"{e}_write_indices_wrong_len_err_shape", 24, "f32", past, upd, np.array([0, 0, 0], dtype=np.int64),
            "linear", 1)
    ts_case(f"{e}_update_rank_mismatch_err_rank", 24, "f32", past, np_arr([1.0] * 6, "f32", [2, 3]), None, "linear", 1)
    ts_case(f"{e}_type_mismatch_err_type", 24, "f32", past, np_arr([1.0] * 12, "f64", [2, 3, 2]), None, "linear", 1,
            upd_dt="f64")
    ts_case(f"{e}_write_indices_int32_err_type", 24, "f32", past, upd, np.array([0, 0], dtype=np.int32), "linear", 1,
            wi_dt="i32")
    ts_case("tensor_scatter_24_f32_r3_axis0_err_axis", 24, "f32", past, upd, None, "linear", 0)
    ts_case("tensor_scatter_24_f32_r3_axis-3_err_axis", 24, "f32", past, upd, None, "linear", -3)
    ts_case("tensor_scatter_24_f32_r3_axis3_err_axis", 24, "f32", past, upd, None, "linear", 3)
    ts_case("tensor_scatter_23_below_first_version_err_opset", 23, "f32", past, upd, None, "linear", 1)
    ts_case("tensor_scatter_18_below_first_version_err_opset", 18, "f32", past, upd, None, None, None)
    ts_case("tensor_scatter_24_unknown_attr_foo_err_foo", 24, "f32", past, upd, None, "linear", 1, extra_attrs={"foo": 1})


# --------------------------------------------------------------------------
# OpenVINO ScatterElementsUpdate-12 (custom domain)
# --------------------------------------------------------------------------
def ov_case(name, dt, data, indices, updates, axis_val, red, use_init, idt="i64", axis_dt="i64",
            axis_shape=(), axis_init=True, extra_attrs=None, upd_dt=None):
    attrs = {}
    if red is not None:
        attrs["reduction"] = red
    if use_init is not None:
        attrs["use_init_val"] = use_init
    if extra_attrs:
        attrs.update(extra_attrs)
    upd_dt = upd_dt or dt
    axis_arr = np.array(axis_val, dtype=DTYPES[axis_dt][0]).reshape(axis_shape)
    inputs = [io("data", data, dt), io("indices", indices, idt), io("updates", updates, upd_dt),
              io("axis", axis_arr, axis_dt, axis_init)]
    lerr = None
    for a in sorted(attrs):
        if a not in ("reduction", "use_init_val"):
            lerr = a
            break
    if lerr is None and attrs.get("reduction", "none") not in ("none", "sum", "prod", "min", "max", "mean"):
        lerr = "reduction"

    def compute():
        if upd_dt != dt or idt not in ("i32", "i64"):
            raise OracleError("type")
        return oracle_ov(data, indices, updates, int(axis_val), red or "none", 1 if use_init is None else use_init, dt)

    c = make_case(name, "ScatterElementsUpdate", 18, attrs, inputs, DTYPES[dt][1], compute, domain=OV_DOMAIN,
                  load_error=lerr)
    return c


def gen_ov():
    d = np_arr([2, 3, 4, 6], "i32", [4])
    u = np_arr([10, 20, 30, 40, 70, 60], "i32", [6])
    c = ov_case("ov_scatter_elements_update_i32_r1_axis0_sum_init1_spec_example", "i32", d,
                idx_arr([1, 0, 0, -2, -1, 2], [6], "i64"), u, 0, "sum", 1)
    assert c.expected.tolist() == [52, 13, 104, 76], c.expected
    c = ov_case("ov_scatter_elements_update_i32_r1_axis0_sum_init0_spec_example", "i32", d,
                idx_arr([1, 0, 0, 2, 3, 2], [6], "i64"), u, 0, "sum", 0)
    assert c.expected.tolist() == [50, 10, 100, 70], c.expected
    # sanity checks of the oracle (hand-computed)
    c = ov_case("ov_scatter_elements_update_i32_r1_axis0_mean_init1_floor", "i32", np_arr([-3, 5, 0, 7], "i32", [4]),
                idx_arr([0, 0, 1, 2], [4], "i64"), np_arr([-4, 2, -2, 1], "i32", [4]), 0, "mean", 1)
    assert c.expected.tolist() == [-2, 1, 0, 7], c.expected  # (-3-4+2)/3=-5/3 -> -2 ; (5-2)/2 -> 1 ; (0+1)/2 -> 0
    c = ov_case("ov_scatter_elements_update_i32_r1_axis0_mean_init0_floor", "i32", np_arr([-3, 5, 0, 7], "i32", [4]),
                idx_arr([0, 0, 1, 2], [4], "i64"), np_arr([-4, 1, -3, 1], "i32", [4]), 0, "mean", 0)
    assert c.expected.tolist() == [-2, -3, 1, 7], c.expected  # (-4+1)/2=-1.5 -> -2
    # cover: reductions x use_init_val x dtypes x axis forms
    counter = 0
    for dt in ["i32", "i64", "i8", "u8", "f32", "f16", "f64", "bool"]:
        for red in ["none", "sum", "prod", "min", "max", "mean"]:
            for use_init in (1, 0):
                counter += 1
                if dt == "bool" and red == "mean":
                    continue
                if dt not in ("i32", "f32") and (counter % 3 != 0):
                    continue
                rank = 1 + counter % 3
                ax = counter % rank
                neg = (counter // 3) % 2 == 1
                axis = ax - rank if neg else ax
                axis_dt = "i32" if counter % 2 else "i64"
                axis_shape = () if counter % 4 < 2 else (1,)
                axis_init = counter % 5 != 0
                idt = "i64" if (counter // 2) % 2 else "i32"
                name = (f"ov_scatter_elements_update_{dt}_r{rank}_axis{axis}_{red}_init{use_init}_{idt}"
                        f"_axis{axis_dt}{'s' if axis_shape == () else '1'}{'' if axis_init else '_axisinput'}")
                rng = rng_for(name)
                data, ivals, ishape, upd = gen_se_inputs(rng, dt, rank, ax)
                ov_case(name, dt, data, idx_arr(ivals, ishape, idt), upd, axis, red, use_init, idt, axis_dt,
                        axis_shape, axis_init)
    # 2-D with axis 1 and -1
    data = np_arr([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "f32", [2, 3])
    idx = idx_arr([0, 0, 2, -1, 1, 1], [2, 3], "i64")
    upd = np_arr([10.0, 20.0, 30.0, 40.0, 50.0, 5.0], "f32", [2, 3])
    for axis in (1, -1):
        for red in ["sum", "prod", "min", "max", "mean", "none"]:
            for ui in (1, 0):
                ov_case(f"ov_scatter_elements_update_f32_r2_axis{axis}_{red}_init{ui}_2d", "f32", data, idx, upd,
                        axis, red, ui, axis_init=(axis == 1))
    # defaults: no attributes at all (none), reduction without use_init_val (defaults to 1)
    ov_case("ov_scatter_elements_update_f32_r2_axis1_default_attrs", "f32", data, idx, upd, 1, None, None)
    ov_case("ov_scatter_elements_update_f32_r2_axis1_mean_default_init", "f32", data, idx, upd, 1, "mean", None)
    ov_case("ov_scatter_elements_update_i64_r2_axis0_mean_negative_floor", "i64",
            np_arr([-7, 3, 0, -1], "i64", [2, 2]), idx_arr([1, 1, 1, 0], [2, 2], "i64"),
            np_arr([-2, -2, 4, 1], "i64", [2, 2]), 0, "mean", 1)
    ov_case("ov_scatter_elements_update_f16_r1_axis0_mean_init0", "f16", np_arr([1.0, 2.0, 3.0], "f16", [3]),
            idx_arr([2, 2, 2, 0], [4], "i64"), np_arr([1.0, 2.0, 4.0, 0.5], "f16", [4]), 0, "mean", 0)
    nan = float("nan")
    ov_case("ov_scatter_elements_update_f32_r1_axis0_max_nan_init0", "f32", np_arr([nan, 2.0, 3.0], "f32", [3]),
            idx_arr([0, 1, 1], [3], "i64"), np_arr([1.0, nan, 4.0], "f32", [3]), 0, "max", 0)
    ov_case("ov_scatter_elements_update_i32_r1_axis0_sum_empty_indices", "i32", d, idx_arr([], [0], "i64"),
            np_arr([], "i32", [0]), 0, "sum", 0)
    # errors
    b = np_arr([True, False], "bool", [2])
    for ui in (1, 0):
        ov_case(f"ov_scatter_elements_update_bool_mean_init{ui}_err_reduction", "bool", b, idx_arr([0], [1], "i64"),
                np_arr([True], "bool", [1]), 0, "mean", ui)
    ov_case("ov_scatter_elements_update_reduction_foo_err_reduction", "i32", d, idx_arr([0], [1], "i64"),
            np_arr([1], "i32", [1]), 0, "foo", 1)
    ov_case("ov_scatter_elements_update_reduction_add_err_reduction", "i32", d, idx_arr([0], [1], "i64"),
            np_arr([1], "i32", [1]), 0, "add", 1)
    ov_case("ov_scatter_elements_update_axis_eq_r_err_axis", "i32", d, idx_arr([0], [1], "i64"),
            np_arr([1], "i32", [1]), 1, "sum", 1)
    ov_case("ov_scatter_elements_update_axis_input_neg_r_minus_1_err_axis", "i32", d, idx_arr([0], [1], "i64"),
            np_arr([1], "i32", [1]), -2, "sum", 1, axis_init=False)
    ov_case("ov_scatter_elements_update_index_eq_s_err_out-of-bounds", "i32", d, idx_arr([4], [1], "i64"),
            np_arr([1], "i32", [1]), 0, "sum", 1)
    ov_case("ov_scatter_elements_update_index_neg_s_minus_1_err_out-of-bounds", "i32", d, idx_arr([-5], [1], "i32"),
            np_arr([1], "i32", [1]), 0, "max", 0, idt="i32")
    ov_case("ov_scatter_elements_update_type_mismatch_err_type", "i32", d, idx_arr([0], [1], "i64"),
            np_arr([1.0], "f32", [1]), 0, "sum", 1, upd_dt="f32")
    ov_case("ov_scatter_elements_update_shape_mismatch_err_shape", "i32", d, idx_arr([0, 1], [2], "i64"),
            np_arr([1], "i32", [1]), 0, "sum", 1)
    ov_case("ov_scatter_elements_update_unknown_attr_foo_err_foo", "i32", d, idx_arr([0], [1], "i64"),
            np_arr([1], "i32", [1]), 0, "sum", 1, extra_attrs={"foo": 1})


# --------------------------------------------------------------------------
# model building / writing
# --------------------------------------------------------------------------
def ir_version_for(opset):
    if opset <= 18:
        return 8
    return 10


def build_model(c):
    graph_inputs, inits, node_inputs = [], [], []
    for (nm, arr, et, is_init) in c.inputs:
        node_inputs.append(nm)
        if is_init:
            t = numpy_helper.from_array(arr, nm)
            inits.append(t)
        else:
            graph_inputs.append(helper.make_tensor_value_info(nm, et, list(arr.shape)))
    node = helper.make_node(c.op, node_inputs, [c.out_name], domain=c.domain, **c.attrs)
    out = helper.make_tensor_value_info(c.out_name, c.out_type, None)
    graph = helper.make_graph([node], c.name, graph_inputs, [out], initializer=inits)
    opsets = [helper.make_opsetid("", c.opset)]
    if c.domain:
        opsets.append(helper.make_opsetid(c.domain, 1))
    m = helper.make_model(graph, opset_imports=opsets, producer_name="tract-onnx-scatter-generate",
                          ir_version=ir_version_for(c.opset))
    return m


def runtime_inputs(c):
    return [(nm, arr) for (nm, arr, et, is_init) in c.inputs if not is_init]


def write_case(c, model):
    d = os.path.join(OUT, c.name)
    os.makedirs(d)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    if c.error is None or c.write_inputs:
        ds = os.path.join(d, "test_data_set_0")
        os.makedirs(ds)
        for i, (nm, arr) in enumerate(runtime_inputs(c)):
            with open(os.path.join(ds, f"input_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(arr, nm).SerializeToString())
        if c.error is None:
            with open(os.path.join(ds, "output_0.pb"), "wb") as f:
                f.write(numpy_helper.from_array(c.expected, c.out_name).SerializeToString())
    if c.error is not None:
        with open(os.path.join(d, "expected_error.txt"), "w") as f:
            f.write(c.error)


# --------------------------------------------------------------------------
# cross-checks
# --------------------------------------------------------------------------
def same(expected, got):
    got = np.asarray(got)
    if tuple(got.shape) != tuple(expected.shape):
        return False
    if expected.dtype == object:
        return [str(x) for x in expected.ravel()] == [x.decode() if isinstance(x, bytes) else str(x) for x in got.ravel()]
    if got.dtype != expected.dtype:
        return False
    if expected.dtype.kind == "f":
        e = expected.astype(np.float64)
        g = got.astype(np.float64)
        with np.errstate(all="ignore"):
            return bool(np.all((np.isnan(e) & np.isnan(g)) | (e == g) |
                               (np.abs(e - g) <= 1e-7 + 1e-3 * np.abs(e))))
    return bool(np.array_equal(expected, got))


def fmt(a, limit=120):
    if a is None:
        return "-"
    if isinstance(a, str):
        s = " ".join(a.split())
    else:
        a = np.asarray(a)
        s = np.array2string(a.ravel(), separator=",", threshold=40, max_line_width=10_000)
        s = s.replace("\n", " ")
    s = s.replace("|", "\\|")
    return s if len(s) <= limit else s[: limit - 3] + "..."


def shadow(c):
    """A model for the cross-checkers.  onnxruntime and the ONNX spec only take
    int64 indices for ScatterND; our contract also takes int32 with the same
    meaning, so a ScatterND case with int32 indices is checked through an
    otherwise identical model with int64 indices.  Returns (model, feeds, note)."""
    if c.op == "ScatterND" and any(nm == "indices" and et == TensorProto.INT32 for (nm, _, et, _) in c.inputs):
        s2 = Case(c.name)
        s2.__dict__.update(c.__dict__)
        s2.inputs = [(nm, arr.astype(np.int64), TensorProto.INT64, ini) if nm == "indices" else (nm, arr, et, ini)
                     for (nm, arr, et, ini) in c.inputs]
        return build_model(s2), {nm: arr for nm, arr in runtime_inputs(s2)}, True
    return build_model(c), {nm: arr for nm, arr in runtime_inputs(c)}, False


def clean_msg(msg):
    msg = " ".join(str(msg).split())
    for marker in ("Status Message: ", "] : "):
        if marker in msg:
            msg = msg.split(marker)[-1]
    return msg


def run_ort(sess_mod, c, model, feeds):
    so = sess_mod.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 4
    so.graph_optimization_level = sess_mod.GraphOptimizationLevel.ORT_DISABLE_ALL
    try:
        sess = sess_mod.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001
        return "load_error", clean_msg(e)
    try:
        out = sess.run(None, feeds)[0]
        return "ok", out
    except Exception as e:  # noqa: BLE001
        return "run_error", clean_msg(e)


def run_ref(c, model, feeds):
    from onnx.reference import ReferenceEvaluator
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"):
                ev = ReferenceEvaluator(model)
                out = ev.run(None, feeds)[0]
        return "ok", out
    except Exception as e:  # noqa: BLE001
        return "error", f"{type(e).__name__}: {e}"


UNSUPPORTED_MARKERS = ("NOT_IMPLEMENTED", "Could not find an implementation", "not supported", "Unsupported",
                       "is not a registered function/op", "No Op registered", "Unrecognized attribute",
                       "not implemented", "NotImplemented")


def classify_valid_error(msg):
    return "unsupported"


def reason_for(c, who, status, got):
    """A short explanation for a disagreement, from the case's character."""
    n = c.name
    attrs = c.attrs
    red = attrs.get("reduction")
    if c.error is not None:
        if "_err_foo" in n:
            return f"{who} ignores unknown attributes; our contract rejects them at load"
        if c.error == "deprecated":
            return f"{who} still accepts Scatter at opset >= 11; our contract rejects it as deprecated"
        if c.error == "reduction":
            r = str(attrs.get("reduction"))
            if "str" in n and r == "mul":
                return f"{who} only fails when a string mul is actually applied (here no index); our contract rejects string mul at load"
            if r not in ("none", "add", "mul", "max", "min"):
                return f"{who} treats the unknown reduction '{r}' as none; our contract rejects it"
            if c.opset < 16:
                return f"{who} accepts the reduction attribute at opset {c.opset} where the op does not define it"
            return f"{who} accepts reduction '{r}' at opset {c.opset}; it was only added in opset 18"
        if c.error == "opset":
            return f"{who} runs the op below its first version; our contract rejects it"
        if c.error == "out of bounds":
            return f"{who} does not bound-check this index; our contract requires an error"
        if c.error == "type":
            return f"{who} accepts the type mismatch (no silent promotion in our contract)"
        return f"{who} accepts an input our contract rejects ({c.error})"
    if status != "ok":
        return f"{who} fails on a case our contract defines: {fmt(got, 100)}"
    if "nan" in n and red in ("max", "min"):
        extra = ""
        try:
            e, g = c.expected.astype(np.float64), np.asarray(got).astype(np.float64)
            if np.any((e == 0) & (g == 0) & (np.signbit(e) != np.signbit(g))):
                extra = "; on a tie (0.0 vs -0.0) it also takes the update where our contract keeps the existing value"
        except Exception:  # noqa: BLE001
            pass
        return f"{who} max/min does not propagate NaN from both sides (our contract: NaN wins){extra}"
    if "round_each_step" in n:
        return f"{who} accumulates without rounding to the element type after every update"
    if red in ("max", "min") and c.inputs[0][1].dtype.kind == "f":
        return f"{who} picks the other of two equal values (signed zero); our contract keeps the existing value"
    if "duplicates" in n or "dup" in n or "longaxis" in n:
        return f"{who} applies duplicate indices in another order; our contract folds in row-major order"
    return f"{who} computes a different value"


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    gen_scatter_elements()
    gen_se_specials()
    gen_se_errors()
    gen_scatter_nd()
    gen_nd_specials()
    gen_nd_errors()
    gen_tensor_scatter()
    gen_ov()

    import onnxruntime as ort
    ort.set_default_logger_severity(4)

    stats = Counter()
    by_op = Counter()
    ort_stats = Counter()
    ref_stats = Counter()
    ort_dis, ref_dis, ort_unsup, ref_err_dis = [], [], [], []
    for c in sorted(CASES, key=lambda c: c.name):
        model = build_model(c)
        write_case(c, model)
        kind_ = "error" if c.error is not None else "valid"
        stats[kind_] += 1
        by_op[(c.op, kind_)] += 1
        # --- onnxruntime
        if c.domain:
            ort_stats["unsupported"] += 1
            ref_stats["unsupported"] += 1
            continue
        smodel, feeds, shadowed = shadow(c)
        ort_stats["via int64 shadow"] += shadowed
        status, got = run_ort(ort, c, smodel, feeds)
        ours = c.expected if c.error is None else f"error: {c.error}"
        if c.error is None:
            if status == "ok" and same(c.expected, got):
                ort_stats["agreed"] += 1
            elif status == "ok":
                ort_stats["disagreed"] += 1
                ort_dis.append((c.name, fmt(ours), fmt(got), reason_for(c, "onnxruntime", status, got)))
            else:
                ort_stats["unsupported"] += 1
                ort_unsup.append((c.name, fmt(got, 160)))
        else:
            if status != "ok":
                ort_stats["agreed"] += 1
            else:
                ort_stats["disagreed"] += 1
                ort_dis.append((c.name, fmt(ours), fmt(got), reason_for(c, "onnxruntime", status, got)))
        # --- reference evaluator
        rstatus, rgot = run_ref(c, smodel, feeds)
        if c.error is None:
            if rstatus == "ok" and same(c.expected, rgot):
                ref_stats["agreed"] += 1
            elif rstatus == "ok":
                ref_stats["disagreed"] += 1
                ref_dis.append((c.name, fmt(ours), fmt(rgot), reason_for(c, "ReferenceEvaluator", rstatus, rgot)))
            else:
                ref_stats["unsupported"] += 1
        else:
            if rstatus != "ok":
                ref_stats["agreed"] += 1
            else:
                ref_stats["disagreed"] += 1
                ref_err_dis.append((c.name, c.error))

    write_report(ort, ort_stats, ref_stats, ort_dis, ref_dis, ort_unsup, ref_err_dis)

    total = 0
    nfiles = 0
    for root, _, files in os.walk(OUT):
        for f in files:
            total += os.path.getsize(os.path.join(root, f))
            nfiles += 1
    print(f"cases: {len(CASES)} (valid {stats['valid']}, error {stats['error']}); files {nfiles}; "
          f"bytes {total}")
    for (op, k), n in sorted(by_op.items()):
        print(f"  {op:24s} {k:6s} {n}")
    print(f"onnxruntime {ort.__version__}: " + ", ".join(f"{k} {ort_stats[k]}" for k in ("agreed", "disagreed", "unsupported")))
    print(f"ReferenceEvaluator: " + ", ".join(f"{k} {ref_stats[k]}" for k in ("agreed", "disagreed", "unsupported")))


def write_report(ort, ort_stats, ref_stats, ort_dis, ref_dis, ort_unsup, ref_err_dis):
    lines = [
        "# Disagreements between our contract and other implementations",
        "",
        "Generated by `onnx-testdata/generate.py`; do not edit by hand.",
        "The corpus always keeps OUR contract's value (see `onnx-testdata/README-corpus.md`).",
        "",
        f"onnxruntime {ort.__version__} (CPU, 1 thread, optimizations off), onnx {onnx.__version__} "
        f"ReferenceEvaluator, numpy {np.__version__}.",
        "Floats compared with rtol 1e-3, atol 1e-7, NaN == NaN. "
        "Cases in the custom domain `org.openvinotoolkit` are oracle-only (counted as unsupported).",
        f"ScatterND cases with int32 indices ({ort_stats['via int64 shadow']}) are checked through the same model "
        "with int64 indices: the ONNX spec and onnxruntime only take int64 there, our contract takes both.",
        "",
        "| checker | agreed | disagreed | unsupported |",
        "| --- | --- | --- | --- |",
        f"| onnxruntime | {ort_stats['agreed']} | {ort_stats['disagreed']} | {ort_stats['unsupported']} |",
        f"| ReferenceEvaluator | {ref_stats['agreed']} | {ref_stats['disagreed']} | {ref_stats['unsupported']} |",
        "",
        "## onnxruntime disagreements",
        "",
        "| case | ours | onnxruntime | why |",
        "| --- | --- | --- | --- |",
    ]
    for row in ort_dis:
        lines.append("| " + " | ".join(f"`{row[0]}`" if i == 0 else row[i] for i in range(4)) + " |")
    lines += ["", "## onnxruntime could not run (valid cases; not a disagreement)", "",
              "| case | onnxruntime error |", "| --- | --- |"]
    for name, msg in ort_unsup:
        lines.append(f"| `{name}` | {msg} |")
    lines += ["", "## ReferenceEvaluator disagreements", "",
              "| case | ours | ReferenceEvaluator | why |", "| --- | --- | --- | --- |"]
    for row in ref_dis:
        lines.append("| " + " | ".join(f"`{row[0]}`" if i == 0 else row[i] for i in range(4)) + " |")
    lines += ["", "## Error cases the ReferenceEvaluator ran without error", "",
              "The reference evaluator does little input validation; each of these is an error in our contract.", "",
              "| case | our error |", "| --- | --- |"]
    for name, word in ref_err_dis:
        lines.append(f"| `{name}` | {word} |")
    with open(os.path.join(OUT, "ORT_DISAGREEMENTS.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
