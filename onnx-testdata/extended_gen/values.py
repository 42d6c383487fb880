"""Element types and input values: the dtype table, integer wrap-around, building
arrays from flat Python lists, and the random values / shapes the generators draw
from each case's own RNG (see cases.rng_for).  Shared by every op family and by
the oracles (kind, wrap_int).
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as np
from onnx import TensorProto


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


def rand_shape(rng, rank, maxel=48, lo=1, hi=4):
    while True:
        sh = [rng.randint(lo, hi) for _ in range(rank)]
        if int(np.prod(sh)) <= maxel:
            return sh


def idx_arr(vals, shape, idt):
    return np.array(vals, dtype=DTYPES[idt][0]).reshape(shape)
