#!/usr/bin/env python3
"""Golden cases for the scatter gradient ops, computed with PyTorch autograd (generation only).

The ops live in the ONNX domain `tract_onnx_scatter.training`, version 1:

    ScatterElementsGrad(data, indices, updates, grad_output) -> (grad_data, grad_updates)
        axis: int (default 0), reduction: string (none|add|mul|max|min|mean, default none),
        include_self: int (default 1), lda_coeff: float (default 1.0, multiplies both outputs)
    ScatterNDGrad(data, indices, updates, grad_output) -> (grad_data, grad_updates)
        reduction: string (none|add|mul|max|min, default none), include_self, lda_coeff

They are the vector-Jacobian products of the forward scatters, with PyTorch as the reference:
ScatterElements is `Tensor.scatter` (none) / `Tensor.scatter_reduce(reduce=sum|prod|amax|amin|mean,
include_self=...)`; ScatterND is the same along dim 0 of the data viewed as
[prod(data.shape[:k]), *data.shape[k:]], with linear tuple indices expanded over the slice and the
updates viewed as [n_tuples, *slice]. Negative indices are normalized before torch is called and
stay negative in the ONNX inputs. Expected outputs are `torch.autograd.grad(out, (data, updates),
grad_output)` in the case's dtype, times `lda_coeff`.

Every case is also checked against a central finite difference of sum(out * grad_output) in f64
(`fd_check` in each case.toml, totals in SUMMARY.md). Two places where autograd is a convention,
not the derivative, are checked as such instead:
  * reduction none with duplicate targets: the forward is last-in-row-major-order-wins, but
    PyTorch's rule gives every duplicate update grad_output gathered at its target (the overwritten
    ones included; the finite difference there is 0);
  * max/min ties among three or more elements: PyTorch splits the gradient evenly among all
    elements equal to the result (self included when include_self=1); a one-element central
    difference gives 1/2 there, so the group is checked with a joint perturbation (sum of the
    group's gradients) plus the even split. Two-way ties agree with the plain central difference.
Known PyTorch quirk avoided: with include_self=0, amax/amin backward still counts a data element
that happens to equal the result in the tie split (so a tied update gets 1/2 instead of 1). No case
has a scattered data element equal to its max/min result with include_self=0 (asserted).

Usage (torch from PyPI is several GB: keep the venv outside the repository):
    $VENVS/torch/bin/pip install -r onnx-testdata/autograd/gen/requirements-autograd.txt
    $VENVS/torch/bin/python onnx-testdata/autograd/gen/autograd_cases.py [--out DIR]
It deletes and rewrites onnx-testdata/autograd/ (except gen/), deterministically: every case draws
from its own numpy Generator seeded by the CRC32 of its name.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import zlib
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

DOMAIN = "tract_onnx_scatter.training"
DOMAIN_VERSION = 1
DEFAULT_OPSET = 18
IR_VERSION = 8

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

TORCH_REDUCE = {"add": "sum", "mul": "prod", "max": "amax", "min": "amin", "mean": "mean"}
SE_REDUCTIONS = ["none", "add", "mul", "max", "min", "mean"]
ND_REDUCTIONS = ["none", "add", "mul", "max", "min"]
DTYPES = {"f32": np.float32, "f64": np.float64}
ONNX_TYPE = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
             np.dtype(np.int64): TensorProto.INT64, np.dtype(np.int32): TensorProto.INT32}

FD_H = 1e-5
FD_RTOL = 1e-6
FD_ATOL = 1e-7
# case dtype result vs f64 autograd
DT_RTOL = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-12}
DT_ATOL = {np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-12}


@dataclass
class Case:
    name: str
    op: str  # "ScatterElementsGrad" | "ScatterNDGrad"
    data: np.ndarray
    indices: np.ndarray
    updates: np.ndarray
    grad_output: np.ndarray
    reduction: str = "none"
    include_self: int = 1
    axis: int = 0
    lda_coeff: float = 1.0
    write_attrs: bool = True
    covers: str = ""
    fd_check: str = ""
    outputs: list = field(default_factory=list)


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


# ------------------------------------------------------------------ index geometry


def targets(c: Case) -> np.ndarray:
    """Linear data index written by each update element, updates in row-major order."""
    idx = c.indices.astype(np.int64)
    if c.op == "ScatterElementsGrad":
        ax = c.axis % c.data.ndim
        s = c.data.shape[ax]
        out = np.empty(idx.size, dtype=np.int64)
        for e, p in enumerate(np.ndindex(*idx.shape)):
            t = list(p)
            v = int(idx[p])
            assert -s <= v < s, (c.name, v)
            t[ax] = v % s
            out[e] = np.ravel_multi_index(t, c.data.shape)
        return out
    k = idx.shape[-1]
    lead = c.data.shape[:k]
    slice_size = int(np.prod(c.data.shape[k:], dtype=np.int64))
    tuples = idx.reshape(-1, k)
    out = []
    for tup in tuples:
        for j, (v, d) in enumerate(zip(tup, lead)):
            assert -d <= v < d, (c.name, tup)
        lin = np.ravel_multi_index([int(v) % d for v, d in zip(tup, lead)], lead) if k else 0
        out.extend(lin * slice_size + s for s in range(slice_size))
    return np.array(out, dtype=np.int64)


def torch_forward(c: Case, d: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """The forward scatter through torch ops (differentiable); indices normalized."""
    red = c.reduction
    if c.op == "ScatterElementsGrad":
        ax = c.axis % c.data.ndim
        idx = torch.from_numpy(np.mod(c.indices.astype(np.int64), c.data.shape[ax]))
        if red == "none":
            return d.scatter(ax, idx, u)
        return d.scatter_reduce(ax, idx, u, TORCH_REDUCE[red], include_self=bool(c.include_self))
    idx = c.indices.astype(np.int64)
    k = idx.shape[-1]
    lead = c.data.shape[:k]
    sl = tuple(c.data.shape[k:])
    tuples = idx.reshape(-1, k)
    n = tuples.shape[0]
    norm = np.mod(tuples, np.array(lead, dtype=np.int64)) if n else tuples
    lin = np.ravel_multi_index(norm.T, lead) if n else np.zeros(0, dtype=np.int64)
    lin = torch.from_numpy(np.asarray(lin, dtype=np.int64))
    p = int(np.prod(lead, dtype=np.int64))
    dv = d.reshape(p, *sl)
    uv = u.reshape(n, *sl)
    ix = lin.reshape(n, *([1] * len(sl))).expand(n, *sl).contiguous()
    if red == "none":
        out = dv.scatter(0, ix, uv)
    else:
        out = dv.scatter_reduce(0, ix, uv, TORCH_REDUCE[red], include_self=bool(c.include_self))
    return out.reshape(c.data.shape)


def forward_f64(c: Case, d: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Deterministic forward in f64 (none: last update in row-major order wins)."""
    if c.reduction == "none":
        out = d.copy().ravel()
        for e, t in enumerate(targets(c)):
            out[t] = u.ravel()[e]
        return out.reshape(d.shape)
    with torch.no_grad():
        return torch_forward(c, torch.from_numpy(d), torch.from_numpy(u)).numpy()


def autograd(c: Case, dtype) -> tuple[np.ndarray, np.ndarray]:
    d = torch.from_numpy(c.data.astype(dtype)).requires_grad_(True)
    u = torch.from_numpy(c.updates.astype(dtype)).requires_grad_(True)
    g = torch.from_numpy(c.grad_output.astype(dtype))
    out = torch_forward(c, d, u)
    gd, gu = torch.autograd.grad(out, (d, u), g, allow_unused=True)
    gd = gd.numpy() if gd is not None else np.zeros_like(c.data, dtype=dtype)
    gu = gu.numpy() if gu is not None else np.zeros_like(c.updates, dtype=dtype)
    lda = dtype(c.lda_coeff)
    return (gd * lda).astype(dtype), (gu * lda).astype(dtype)


# ------------------------------------------------------------------ finite-difference check


def groups(c: Case):
    """Per target: list of ('d', linear) / ('u', linear) contributors, with self first."""
    by_t: dict[int, list] = {}
    for e, t in enumerate(targets(c)):
        by_t.setdefault(int(t), []).append(("u", e))
    for t in by_t:
        if c.include_self and c.reduction != "none":
            by_t[t].insert(0, ("d", t))
    return by_t


def fd_check(c: Case) -> str:
    """Compares f64 autograd (times lda) with a central difference; returns a short verdict or raises."""
    d0 = c.data.astype(np.float64)
    u0 = c.updates.astype(np.float64)
    g = c.grad_output.astype(np.float64)
    lda = float(c.lda_coeff)
    ag_d, ag_u = autograd(c, np.float64)

    def loss(d, u):
        return float(np.sum(forward_f64(c, d, u) * g)) * lda

    def fd(kind, i):
        d, u = d0.copy(), u0.copy()
        arr = d if kind == "d" else u
        arr.ravel()[i] += FD_H
        lp = loss(d, u)
        arr.ravel()[i] -= 2 * FD_H
        lm = loss(d, u)
        return (lp - lm) / (2 * FD_H)

    def fd_joint(members):
        d, u = d0.copy(), u0.copy()
        for kind, i in members:
            (d if kind == "d" else u).ravel()[i] += FD_H
        lp = loss(d, u)
        for kind, i in members:
            (d if kind == "d" else u).ravel()[i] -= 2 * FD_H
        lm = loss(d, u)
        return (lp - lm) / (2 * FD_H)

    def ag(kind, i):
        return float((ag_d if kind == "d" else ag_u).ravel()[i])

    def ok(a, b):
        return abs(a - b) <= FD_ATOL + FD_RTOL * max(abs(a), abs(b))

    explained: dict[tuple, str] = {}
    notes = []
    tg = targets(c)
    gr = groups(c)
    if c.reduction == "none":
        last = {}
        for e, t in enumerate(tg):
            last[int(t)] = e
        losers = [e for e, t in enumerate(tg) if last[int(t)] != e]
        for e in losers:
            # PyTorch convention: grad_output gathered at the target, though the update is overwritten
            want = float(g.ravel()[tg[e]]) * lda
            if not ok(ag("u", e), want):
                raise AssertionError(f"{c.name}: none duplicate u[{e}] autograd {ag('u', e)} != gathered {want}")
            explained[("u", e)] = "convention"
        if losers:
            notes.append(f"{len(losers)} overwritten duplicate update(s): PyTorch gathers (finite difference 0)")
    if c.reduction in ("max", "min"):
        pick = max if c.reduction == "max" else min
        n_groups = 0
        for t, members in gr.items():
            vals = [(d0 if k == "d" else u0).ravel()[i] for k, i in members]
            res = pick(vals)
            if not c.include_self:
                assert d0.ravel()[t] != res, f"{c.name}: include_self=0 and data equals the {c.reduction} result at {t} (PyTorch quirk)"
            tied = [m for m, v in zip(members, vals) if v == res]
            if len(tied) >= 3:
                n_groups += 1
                s = sum(ag(*m) for m in tied)
                j = fd_joint(tied)
                if not ok(s, j):
                    raise AssertionError(f"{c.name}: tie group at {t}: sum of autograd {s} != joint finite difference {j}")
                share = float(g.ravel()[t]) * lda / len(tied)
                for m in tied:
                    if not ok(ag(*m), share):
                        raise AssertionError(f"{c.name}: tie group at {t}: {m} autograd {ag(*m)} != even share {share}")
                    explained[m] = "tie"
        if n_groups:
            notes.append(f"{n_groups} tie group(s) of 3+ checked jointly and for the even split")
    n = 0
    for kind, arr in (("d", d0), ("u", u0)):
        for i in range(arr.size):
            f = fd(kind, i)
            a = ag(kind, i)
            n += 1
            if (kind, i) in explained:
                if explained[(kind, i)] == "convention" and not ok(f, 0.0):
                    raise AssertionError(f"{c.name}: overwritten u[{i}] finite difference {f} != 0")
                continue
            if not ok(f, a):
                raise AssertionError(f"{c.name}: {kind}[{i}] autograd {a} vs finite difference {f}")
    # the case's dtype result against f64 autograd
    for got, want in zip(c.outputs, (ag_d, ag_u)):
        dt = got.dtype
        if not np.allclose(got.astype(np.float64), want, rtol=DT_RTOL[dt], atol=DT_ATOL[dt]):
            raise AssertionError(f"{c.name}: {dt} autograd differs from f64 autograd")
    return "ok (" + "; ".join([f"{n} elements"] + notes) + ")"


# ------------------------------------------------------------------ writing


def make_model(c: Case) -> onnx.ModelProto:
    attrs = {}
    if c.write_attrs:
        if c.op == "ScatterElementsGrad":
            attrs["axis"] = int(c.axis)
        attrs["reduction"] = c.reduction
        attrs["include_self"] = int(c.include_self)
        attrs["lda_coeff"] = float(c.lda_coeff)
    node = helper.make_node(c.op, ["data", "indices", "updates", "grad_output"],
                            ["grad_data", "grad_updates"], domain=DOMAIN, **attrs)
    ft = ONNX_TYPE[c.data.dtype]
    inputs = [
        helper.make_tensor_value_info("data", ft, list(c.data.shape)),
        helper.make_tensor_value_info("indices", ONNX_TYPE[c.indices.dtype], list(c.indices.shape)),
        helper.make_tensor_value_info("updates", ft, list(c.updates.shape)),
        helper.make_tensor_value_info("grad_output", ft, list(c.grad_output.shape)),
    ]
    outputs = [
        helper.make_tensor_value_info("grad_data", ft, list(c.data.shape)),
        helper.make_tensor_value_info("grad_updates", ft, list(c.updates.shape)),
    ]
    graph = helper.make_graph([node], c.name, inputs, outputs)
    model = helper.make_model(graph, producer_name="tract-onnx-scatter-autograd", ir_version=IR_VERSION,
                              opset_imports=[helper.make_opsetid("", DEFAULT_OPSET),
                                             helper.make_opsetid(DOMAIN, DOMAIN_VERSION)])
    return model


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    s = str(v).replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")
    return f'"{s}"'


def write_case(out_root: str, c: Case) -> None:
    case_dir = os.path.join(out_root, c.name)
    ds = os.path.join(case_dir, "test_data_set_0")
    os.makedirs(ds)
    onnx.save_model(make_model(c), os.path.join(case_dir, "model.onnx"))
    for i, (n, arr) in enumerate([("data", c.data), ("indices", c.indices), ("updates", c.updates),
                                  ("grad_output", c.grad_output)]):
        with open(os.path.join(ds, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(np.array(arr, order="C"), n).SerializeToString())
    for i, (n, arr) in enumerate(zip(["grad_data", "grad_updates"], c.outputs)):
        with open(os.path.join(ds, f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(np.array(arr, order="C"), n).SerializeToString())
    meta = {
        "op": c.op,
        "domain": DOMAIN,
        "domain_version": DOMAIN_VERSION,
        "reduction": c.reduction,
        "include_self": c.include_self,
    }
    if c.op == "ScatterElementsGrad":
        meta["axis"] = c.axis
    meta.update({
        "lda_coeff": float(c.lda_coeff),
        "attributes_written": c.write_attrs,
        "dtype": {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}[c.data.dtype],
        "index_dtype": str(c.indices.dtype),
        "data_shape": list(c.data.shape),
        "indices_shape": list(c.indices.shape),
        "updates_shape": list(c.updates.shape),
        "covers": c.covers,
        "torch_version": torch.__version__.split("+")[0],
        "fd_check": c.fd_check,
    })
    with open(os.path.join(case_dir, "case.toml"), "w") as f:
        for k, v in meta.items():
            f.write(f"{k} = {toml_value(v)}\n")


# ------------------------------------------------------------------ cases

CASES: list[Case] = []


def add(name, op, data, indices, updates, *, dtype, reduction="none", include_self=1, axis=0,
        lda_coeff=1.0, write_attrs=True, covers="", grad=None, index_dtype=np.int64):
    data = np.asarray(data, dtype=dtype)
    updates = np.asarray(updates, dtype=dtype)
    if grad is None:  # its own stream: never equal to a data drawn from rng_for(name)
        grad = rng_for(name + "/grad_output").standard_normal(data.shape)
    if reduction == "none":
        include_self = 1
    c = Case(name=name, op=op, data=data, indices=np.asarray(indices, dtype=index_dtype),
             updates=updates, grad_output=np.asarray(grad, dtype=dtype), reduction=reduction,
             include_self=include_self, axis=axis, lda_coeff=lda_coeff, write_attrs=write_attrs,
             covers=covers)
    assert c.indices.shape == c.updates.shape or op == "ScatterNDGrad"
    if any(x.name == name for x in CASES):
        raise RuntimeError(f"duplicate case name {name}")
    CASES.append(c)
    return c


def incl_tag(red, inc):
    if red == "none":
        return ""
    return "_include_self" if inc else "_exclude_self"


def combos(reductions):
    for red in reductions:
        for inc in ([1] if red == "none" else [0, 1]):
            for dt in DTYPES:
                yield red, inc, dt


def se_matrix():
    op = "ScatterElementsGrad"
    for red, inc, dt in combos(SE_REDUCTIONS):
        tag = f"{red}{incl_tag(red, inc)}_{dt}"
        dtype = DTYPES[dt]

        name = f"se_grad_{red}_axis0_r2{incl_tag(red, inc)}_{dt}"
        r = rng_for(name)
        idx = r.integers(0, 4, size=(3, 3))
        idx[1, 0] = idx[0, 0]  # a duplicate target
        add(name, op, r.standard_normal((4, 3)), idx, r.standard_normal((3, 3)), dtype=dtype,
            reduction=red, include_self=inc, axis=0,
            covers="axis 0, rank-2 data, non-negative indices, a duplicate target")

        name = f"se_grad_{red}_axisneg1_r3_negidx{incl_tag(red, inc)}_{dt}"
        r = rng_for(name)
        idx = r.integers(-4, 4, size=(2, 3, 5))  # 5 updates into 4 slots: duplicates
        add(name, op, r.standard_normal((2, 3, 4)), idx, r.standard_normal((2, 3, 5)), dtype=dtype,
            reduction=red, include_self=inc, axis=-1,
            covers="axis -1, rank-3 data, negative indices, duplicates (5 updates into 4 slots)")

        name = f"se_grad_{red}_r1_dups_negidx{incl_tag(red, inc)}_{dt}"
        r = rng_for(name)
        idx = r.integers(-5, 5, size=(7,))
        add(name, op, r.standard_normal((5,)), idx, r.standard_normal((7,)), dtype=dtype,
            reduction=red, include_self=inc, axis=0,
            covers="rank-1 data, negative indices, duplicates (7 updates into 5 slots)")

        if dt == "f32":
            name = f"se_grad_{red}_axis1_r3_smaller_index{incl_tag(red, inc)}_{dt}"
            r = rng_for(name)
            idx = r.integers(-3, 3, size=(2, 4, 3))  # index smaller than data on axes 0 and 2
            idx[1, 1, 0] = idx[1, 0, 0] - 3 if idx[1, 0, 0] >= 0 else idx[1, 0, 0] + 3  # same target, other sign
            add(name, op, r.standard_normal((3, 3, 4)), idx, r.standard_normal((2, 4, 3)), dtype=dtype,
                reduction=red, include_self=inc, axis=1,
                covers="axis 1 (positive, middle), rank-3 data, indices smaller than data on the other axes, "
                       "duplicates incl. the same target written as i and i-3")
        del tag


def nd_matrix():
    op = "ScatterNDGrad"
    for red, inc, dt in combos(ND_REDUCTIONS):
        dtype = DTYPES[dt]
        it = incl_tag(red, inc)

        name = f"snd_grad_{red}_k1_r2{it}_{dt}"
        r = rng_for(name)
        idx = r.integers(-5, 5, size=(4, 1))
        idx[3, 0] = idx[0, 0] - 5 if idx[0, 0] >= 0 else idx[0, 0]  # duplicate (maybe as a negative alias)
        add(name, op, r.standard_normal((5, 3)), idx, r.standard_normal((4, 3)), dtype=dtype,
            reduction=red, include_self=inc,
            covers="k=1 < rank 2 (row slices), negative indices, a duplicate tuple")

        name = f"snd_grad_{red}_k2_r2{it}_{dt}"
        r = rng_for(name)
        idx = np.stack([r.integers(-3, 3, size=6), r.integers(-4, 4, size=6)], axis=1)
        idx[5] = [idx[0, 0] - 3 if idx[0, 0] >= 0 else idx[0, 0] + 3, idx[0, 1]]  # same element, other sign
        add(name, op, r.standard_normal((3, 4)), idx, r.standard_normal((6,)), dtype=dtype,
            reduction=red, include_self=inc,
            covers="k=rank=2 (single elements), negative components, a duplicate tuple spelled with another sign")

        name = f"snd_grad_{red}_k2_r3_batched{it}_{dt}"
        r = rng_for(name)
        idx = np.stack([r.integers(-2, 2, size=(2, 2)), r.integers(-3, 3, size=(2, 2))], axis=-1)
        idx[1, 1] = idx[0, 0]
        add(name, op, r.standard_normal((2, 3, 4)), idx, r.standard_normal((2, 2, 4)), dtype=dtype,
            reduction=red, include_self=inc,
            covers="k=2 < rank 3 (slices of 4), rank-3 indices [2,2,2] (batched tuples), a duplicate tuple")

        name = f"snd_grad_{red}_k1_r1{it}_{dt}"
        r = rng_for(name)
        idx = r.integers(-6, 6, size=(5, 1))
        idx[4, 0] = idx[1, 0]
        add(name, op, r.standard_normal((6,)), idx, r.standard_normal((5,)), dtype=dtype,
            reduction=red, include_self=inc,
            covers="k=rank=1, rank-1 data, negative indices, a duplicate")

        if dt == "f32":
            name = f"snd_grad_{red}_k3_r3{it}_{dt}"
            r = rng_for(name)
            idx = np.stack([r.integers(-2, 2, size=5), r.integers(-3, 3, size=5), r.integers(-2, 2, size=5)], axis=1)
            idx[4] = idx[2]
            add(name, op, r.standard_normal((2, 3, 2)), idx, r.standard_normal((5,)), dtype=dtype,
                reduction=red, include_self=inc,
                covers="k=rank=3, rank-3 data, negative components, a duplicate tuple")


def se_specials():
    op = "ScatterElementsGrad"
    for dt, dtype in DTYPES.items():
        # ---- max/min ties (small integers: exact in f32)
        for red in ("max", "min"):
            s = 1 if red == "max" else -1
            # include_self: column 0 data==update tie, column 1 two updates tie, column 2 a 3-way tie
            # (data and two updates), column 3 no tie
            data = s * np.array([[3, 1, 2, 0], [1, 0, 5, 2], [0, 2, 1, 1]])
            idx = np.array([[0, 1, 2, 0], [1, -2, 1, 1], [2, 0, -1, -1]])
            upd = s * np.array([[3, 4, 1, 1], [0, 4, 3, 4], [-1, -1, 1, 3]])
            add(f"se_grad_{red}_ties_include_self_{dt}", op, data, idx, upd, dtype=dtype, reduction=red,
                include_self=1, covers="ties split evenly, include_self=1: data vs update at [0,0] (1/2), "
                                       "update vs update at [1,1] (1/2), data vs two updates at [2,2] (1/3)")
            # exclude_self: ties only among updates; data never equals the result
            data = s * np.array([[-9, -9, -9], [-9, -9, -9]])
            idx = np.array([[0, 1, 1], [0, -1, 0], [1, 1, 0]])
            upd = s * np.array([[2, 1, 5], [2, 3, 5], [1, 3, 0]])
            add(f"se_grad_{red}_ties_exclude_self_{dt}", op, data, idx, upd, dtype=dtype, reduction=red,
                include_self=0, covers="2-way ties between updates, include_self=0 (data never equal to the result)")
        # ---- 3-way ties
        data = np.array([[2, 0], [1, 1]])
        idx = np.array([[0, 1], [0, 1], [1, 1]])
        upd = np.array([[2, 1], [2, 1], [0, 1]])
        add(f"se_grad_max_ties_three_way_include_self_{dt}", op, data, idx, upd, dtype=dtype, reduction="max",
            include_self=1, covers="3-way tie data+2 updates (col 0, split 1/3) and 4-way tie data+3 updates (col 1, split 1/4)")
        data = np.array([[7, 7], [7, 7]])
        idx = np.array([[0, 1], [0, 1], [0, 1]])
        upd = np.array([[-1, 0], [-1, 2], [-1, 0]])
        add(f"se_grad_min_ties_three_way_exclude_self_{dt}", op, data, idx, upd, dtype=dtype, reduction="min",
            include_self=0, covers="3-way tie among updates at [0,0] (split 1/3), 2-way at [1,1], include_self=0")
        # ---- mul with zeros
        data = np.array([[2, 1.5, -1, 0.5], [-0.5, 3, 2, 1], [1, 2, 0, -2]])
        idx = np.array([[0, 1, 2, 0], [0, 1, 2, 1], [1, -2, 0, -1]])
        upd = np.array([[0, 0, 1.5, 2], [2, 0, -2, 0.5], [3, 2, 0.5, -1]])
        for inc in (0, 1):
            add(f"se_grad_mul_zeros{incl_tag('mul', inc)}_{dt}", op, data, idx, upd, dtype=dtype, reduction="mul",
                include_self=inc, covers="col 0: one zero update; col 1: two zero updates at one position; "
                                          "col 2: zero in data (at [2,2]); col 3: no zero")
        # ---- int32 indices
    r_names = [("add", 1, "f32"), ("max", 0, "f64"), ("none", 1, "f32"), ("mean", 0, "f32")]
    for red, inc, dt in r_names:
        name = f"se_grad_{red}_int32_indices{incl_tag(red, inc)}_{dt}"
        r = rng_for(name)
        add(name, op, r.standard_normal((3, 4)), r.integers(-4, 4, size=(3, 5)), r.standard_normal((3, 5)),
            dtype=DTYPES[dt], reduction=red, include_self=inc, axis=-1, index_dtype=np.int32,
            covers="int32 indices, axis -1, negative indices, duplicates")
    # ---- lda_coeff
    for red, inc, dt, lda in [("add", 1, "f32", 0.5), ("mean", 1, "f64", -2.0), ("none", 1, "f32", 3.0),
                              ("mul", 0, "f64", 0.25), ("min", 1, "f32", -1.5)]:
        name = f"se_grad_{red}_lda_coeff{incl_tag(red, inc)}_{dt}"
        r = rng_for(name)
        add(name, op, r.standard_normal((4, 2)), r.integers(-4, 4, size=(5, 2)), r.standard_normal((5, 2)),
            dtype=DTYPES[dt], reduction=red, include_self=inc, axis=0, lda_coeff=lda,
            covers=f"lda_coeff={lda} scales both outputs")
    data = np.array([[1, 4], [2, 2]])
    add("se_grad_max_ties_lda_coeff_include_self_f32", op, data, np.array([[0, 1], [1, 1]]),
        np.array([[1, 2], [0, 2]]), dtype=np.float32, reduction="max", include_self=1, lda_coeff=0.25,
        covers="lda_coeff=0.25 with a 2-way data/update tie (col 0) and a 3-way tie (col 1)")
    # ---- empty updates
    for red, inc, dt in [("add", 1, "f32"), ("max", 0, "f64"), ("none", 1, "f32"), ("mean", 0, "f32")]:
        name = f"se_grad_{red}_empty_updates{incl_tag(red, inc)}_{dt}"
        r = rng_for(name)
        add(name, op, r.standard_normal((3, 4)), np.zeros((0, 4)), np.zeros((0, 4)), dtype=DTYPES[dt],
            reduction=red, include_self=inc, axis=0,
            covers="no update (indices [0,4]): grad_data = grad_output * lda, grad_updates empty")
    # ---- defaults (no attributes written)
    name = "se_grad_defaults_no_attributes_f32"
    r = rng_for(name)
    add(name, op, r.standard_normal((4, 3)), r.integers(-4, 4, size=(2, 3)), r.standard_normal((2, 3)),
        dtype=np.float32, write_attrs=False,
        covers="no attributes on the node: axis 0, reduction none, include_self 1, lda_coeff 1.0")


def nd_specials():
    op = "ScatterNDGrad"
    for dt, dtype in DTYPES.items():
        for red in ("max", "min"):
            s = 1 if red == "max" else -1
            data = s * np.array([[3, 1, 2], [1, 0, 5]])
            idx = np.array([[0, 0], [-2, 1], [0, 1], [1, -1], [1, 2], [1, 0]])
            upd = s * np.array([3, 4, 4, 5, 1, -2])
            add(f"snd_grad_{red}_ties_include_self_{dt}", op, data, idx, upd, dtype=dtype, reduction=red,
                include_self=1, covers="2-way ties: data vs update at [0,0] and [1,2], update vs update at [0,1]")
            data = s * np.array([[-9, -9], [-9, -9], [-9, -9]])
            idx = np.array([[0], [-3], [2], [1]])
            upd = s * np.array([[1, 2], [1, 3], [0, 0], [4, 0]])
            add(f"snd_grad_{red}_ties_exclude_self_{dt}", op, data, idx, upd, dtype=dtype, reduction=red,
                include_self=0, covers="k=1 row slices: 2-way tie between updates in row 0 col 0, include_self=0")
        data = np.array([[2, 1], [0, 3]])
        idx = np.array([[0], [0], [1]])
        upd = np.array([[2, 0], [2, 1], [3, 3]])
        add(f"snd_grad_max_ties_three_way_include_self_{dt}", op, data, idx, upd, dtype=dtype, reduction="max",
            include_self=1, covers="3-way tie data+2 updates at [0,0] (split 1/3); 2-way ties at [0,1], [1,1]")
        data = np.array([[2, 0, 0]])
        idx = np.array([[0, 1], [0, -2], [0, 1], [0, 0]])
        upd = np.array([-1, -1, -1, 5])
        add(f"snd_grad_min_ties_three_way_exclude_self_{dt}", op, data, idx, upd, dtype=dtype, reduction="min",
            include_self=0, covers="k=rank=2, 3-way tie among updates at [0,1] (split 1/3), include_self=0")
        data = np.array([[2, 1.5, -1], [0, 3, 2], [1, 2, 0.5]])
        idx = np.array([[0], [0], [1], [-1]])
        upd = np.array([[0, 0, 2], [3, 0, -0.5], [2, 0.5, 1], [1.5, -2, 0]])
        for inc in (0, 1):
            add(f"snd_grad_mul_zeros{incl_tag('mul', inc)}_{dt}", op, data, idx, upd, dtype=dtype,
                reduction="mul", include_self=inc,
                covers="row 0: two zero updates at [0,1], one at [0,0]; row 1: zero in data at [1,0]; "
                       "row 2: one zero update at [2,2]")
    for red, inc, dt in [("add", 1, "f32"), ("min", 0, "f64"), ("none", 1, "f64")]:
        name = f"snd_grad_{red}_int32_indices{incl_tag(red, inc)}_{dt}"
        r = rng_for(name)
        idx = np.stack([r.integers(-3, 3, size=5), r.integers(-2, 2, size=5)], axis=1)
        idx[4] = idx[0]
        add(name, op, r.standard_normal((3, 2, 2)), idx, r.standard_normal((5, 2)), dtype=DTYPES[dt],
            reduction=red, include_self=inc, index_dtype=np.int32,
            covers="int32 indices, k=2 < rank 3, negative components, a duplicate")
    for red, inc, dt, lda in [("add", 0, "f64", 0.5), ("mul", 1, "f32", -2.0), ("none", 1, "f32", 0.75),
                              ("max", 1, "f64", 4.0)]:
        name = f"snd_grad_{red}_lda_coeff{incl_tag(red, inc)}_{dt}"
        r = rng_for(name)
        idx = r.integers(-4, 4, size=(3, 1))
        add(name, op, r.standard_normal((4, 3)), idx, r.standard_normal((3, 3)), dtype=DTYPES[dt],
            reduction=red, include_self=inc, lda_coeff=lda, covers=f"lda_coeff={lda} scales both outputs")
    for red, inc, dt in [("add", 1, "f32"), ("mul", 0, "f64"), ("none", 1, "f32")]:
        name = f"snd_grad_{red}_empty_updates{incl_tag(red, inc)}_{dt}"
        r = rng_for(name)
        add(name, op, r.standard_normal((3, 4)), np.zeros((0, 1)), np.zeros((0, 4)), dtype=DTYPES[dt],
            reduction=red, include_self=inc,
            covers="no tuple (indices [0,1], updates [0,4]): grad_data = grad_output * lda, grad_updates empty")
    name = "snd_grad_defaults_no_attributes_f32"
    r = rng_for(name)
    add(name, op, r.standard_normal((4, 3)), r.integers(-4, 4, size=(2, 1)), r.standard_normal((2, 3)),
        dtype=np.float32, write_attrs=False,
        covers="no attributes on the node: reduction none, include_self 1, lda_coeff 1.0")


# ------------------------------------------------------------------ main


def summary(cases: list[Case]) -> str:
    counts = Counter()
    for c in cases:
        counts[(c.op, c.reduction, c.include_self, "f32" if c.data.dtype == np.float32 else "f64")] += 1
    v = f"torch {torch.__version__.split('+')[0]}, onnx {onnx.__version__}, numpy {np.__version__}"
    lines = [
        "# Autograd golden cases for ScatterElementsGrad / ScatterNDGrad",
        "",
        f"Generated by `gen/autograd_cases.py` with {v}:",
        "",
        "```sh",
        "$VENVS/torch/bin/pip install -r onnx-testdata/autograd/gen/requirements-autograd.txt",
        "$VENVS/torch/bin/python onnx-testdata/autograd/gen/autograd_cases.py",
        "```",
        "",
        f"Domain `{DOMAIN}` version {DOMAIN_VERSION} (plus default domain {DEFAULT_OPSET}), ir_version {IR_VERSION}.",
        "Node inputs `data, indices, updates, grad_output`; outputs `grad_data, grad_updates`. Attributes:",
        "`axis` (INT, ScatterElementsGrad only), `reduction` (STRING), `include_self` (INT), `lda_coeff` (FLOAT).",
        "Expected outputs: `torch.autograd.grad` in the case's dtype, times `lda_coeff`.",
        "",
        f"{len(cases)} cases; every one agrees with a central finite difference in f64 "
        "(see the module docstring for the two conventions checked as such: overwritten duplicates under `none`,",
        "and 3+-way max/min ties). Per-case verdicts are in each `case.toml` (`fd_check`).",
        "",
        "| op | reduction | include_self | f32 | f64 | total |",
        "|---|---|---|---|---|---|",
    ]
    keys = sorted({k[:3] for k in counts}, key=lambda k: (k[0], (SE_REDUCTIONS).index(k[1]), k[2]))
    for op, red, inc in keys:
        a, b = counts[(op, red, inc, "f32")], counts[(op, red, inc, "f64")]
        lines.append(f"| {op} | {red} | {inc} | {a} | {b} | {a + b} |")
    per_op = Counter(c.op for c in cases)
    lines.append("")
    lines.append(", ".join(f"{op}: {n}" for op, n in sorted(per_op.items())) + f"; total {len(cases)}.")
    lines += ["", "## Cases", "", "| case | covers | fd_check |", "|---|---|---|"]
    for c in sorted(cases, key=lambda c: c.name):
        lines.append(f"| {c.name} | {c.covers} | {c.fd_check} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=ROOT, help="output directory (its case directories are deleted first)")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(False)
    torch.set_num_threads(1)
    se_matrix()
    se_specials()
    nd_matrix()
    nd_specials()
    out_root = os.path.abspath(args.out)
    os.makedirs(out_root, exist_ok=True)
    for entry in os.listdir(out_root):
        if entry == "gen":
            continue
        p = os.path.join(out_root, entry)
        shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
    failures = []
    for c in CASES:
        c.outputs = list(autograd(c, c.data.dtype.type))
        try:
            c.fd_check = fd_check(c)
        except AssertionError as e:
            failures.append(str(e))
            print(f"FD FAIL {e}", flush=True)
            continue
        write_case(out_root, c)
    if failures:
        print(f"{len(failures)} case(s) disagree with the finite difference; none written for them", file=sys.stderr)
        sys.exit(1)
    with open(os.path.join(out_root, "SUMMARY.md"), "w") as f:
        f.write(summary(CASES))
    n_conv = sum("overwritten" in c.fd_check for c in CASES)
    n_tie = sum("tie group" in c.fd_check for c in CASES)
    print(f"{len(CASES)} cases written to {out_root}; finite-difference check: {len(CASES)}/{len(CASES)} agree "
          f"({n_conv} with the none-duplicate convention, {n_tie} with 3+-way tie groups)")


if __name__ == "__main__":
    main()
