"""The plain-loop oracles: our contract, written as the simplest loops over every
index, never taken from onnxruntime.  One reduction step (acc (+) update) per
element type, index normalisation, and one oracle per op (ScatterElements,
ScatterND, TensorScatter, OpenVINO ScatterElementsUpdate-12).  An oracle raises
OracleError with the word the expected error must contain.
"""
from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np

from .values import kind, wrap_int


class OracleError(Exception):
    """The contract says this is an error; args[0] is the expected word."""


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
