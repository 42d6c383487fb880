"""Plain-loop oracles with per-step rounding: every reduction step acc (+) update is
computed in a wider type and rounded back to the element type at once (bf16: in
float32, then rounded to bf16, round-to-nearest-even; complex64 / complex128: numpy
arithmetic in the type itself).  Index normalisation adds the axis size to a
negative index.  onnx's ReferenceEvaluator gives the expected values; these oracles
check every one of them (they agree, see types/README.md), and single_rounding()
shows what an accumulate-then-round-once kernel would give instead.
"""
from __future__ import annotations

import numpy as np

from .values import BF16, DTYPES, is_complex


def step(acc, upd, red, dt):
    """One reduction step, rounded to dt."""
    if red in (None, "none"):
        return upd
    if dt == "bf16":
        a, u = np.float32(acc), np.float32(upd)
        if red == "add":
            r = a + u
        elif red == "mul":
            r = a * u
        elif red == "max":
            r = u if (u > a or np.isnan(u)) else a
        elif red == "min":
            r = u if (u < a or np.isnan(u)) else a
        else:
            raise ValueError(red)
        return BF16(r)
    npt = DTYPES[dt][0]
    a, u = npt(acc), npt(upd)
    if red == "add":
        return npt(a + u)
    if red == "mul":
        return npt(a * u)
    raise ValueError(f"no order on complex numbers: reduction {red} is an error")


def norm(v, size):
    v = int(v)
    assert -size <= v < size, (v, size)
    return v + size if v < 0 else v


def scatter_elements(data, indices, updates, axis, red, dt):
    r = data.ndim
    ax = axis + r if axis < 0 else axis
    out = data.copy()
    for pos in np.ndindex(*indices.shape):
        tgt = list(pos)
        tgt[ax] = norm(indices[pos], data.shape[ax])
        tgt = tuple(tgt)
        out[tgt] = step(out[tgt], updates[pos], red, dt)
    return out


def scatter_nd(data, indices, updates, red, dt):
    k = indices.shape[-1]
    out = data.copy()
    for b in np.ndindex(*indices.shape[:-1]):
        base = tuple(norm(indices[b + (j,)], data.shape[j]) for j in range(k))
        for tail in np.ndindex(*data.shape[k:]):
            out[base + tail] = step(out[base + tail], updates[b + tail], red, dt)
    return out


def tensor_scatter(past, update, write_indices, mode, axis):
    r = past.ndim
    ax = axis + r if axis < 0 else axis
    wi = [0] * past.shape[0] if write_indices is None else [int(v) for v in write_indices]
    out = past.copy()
    for prefix in np.ndindex(*past.shape[:ax]):
        for s in range(update.shape[ax]):
            p = wi[prefix[0]] + s
            if mode == "circular":
                p %= past.shape[ax]
            for tail in np.ndindex(*past.shape[ax + 1:]):
                out[prefix + (p,) + tail] = update[prefix + (s,) + tail]
    return out


def single_rounding(start, updates, red):
    """bf16: fold the updates into start in float64, round to bf16 once (for the README)."""
    acc = float(start)
    for u in updates:
        acc = acc + float(u) if red == "add" else acc * float(u)
    return BF16(acc)


def per_step(start, updates, red):
    acc = BF16(start)
    for u in updates:
        acc = step(acc, u, red, "bf16")
    return acc


def same(a, b):
    """Bit-exact equality (NaN equal to NaN), dtype included."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype == BF16:
        return np.array_equal(a.view(np.uint16), b.view(np.uint16))
    if is_complex_dtype(a.dtype):
        return np.array_equal(a, b, equal_nan=True)
    return np.array_equal(a, b)


def is_complex_dtype(d):
    return np.issubdtype(d, np.complexfloating)


__all__ = ["step", "scatter_elements", "scatter_nd", "tensor_scatter", "single_rounding", "per_step",
           "same", "is_complex"]
