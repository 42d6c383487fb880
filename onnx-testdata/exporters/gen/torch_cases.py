#!/usr/bin/env python3
"""PyTorch scatter idioms through both PyTorch exporters (generation only).

Every idiom is exported with the TorchScript exporter (`dynamo=False`) at opsets 11 to 17 and with
the dynamo exporter (`dynamo=True`) at its default opset, each export its own case directory
`torch/<idiom>__ts<opset>` or `torch/<idiom>__dynamo<opset>`. Expected outputs are PyTorch eager's.
An exporter that refuses an idiom at some opset is listed in `torch/SUMMARY.md`, not written.

Usage (torch from PyPI is several GB: keep the venv outside the repository):
    python3 -m venv /root/venvs/torch
    /root/venvs/torch/bin/pip install -r onnx-testdata/exporters/gen/requirements-torch.txt
    /root/venvs/torch/bin/python onnx-testdata/exporters/gen/torch_cases.py [idiom-substring]
"""
from __future__ import annotations

import io
import os
import sys
import warnings
import zlib
from collections import OrderedDict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

from common import Writer, all_nodes  # noqa: E402

TS_OPSETS = range(11, 18)
DYNAMO_OPSETS = [None, 18]


def rng(name: str) -> torch.Generator:
    g = torch.Generator()
    g.manual_seed(zlib.crc32(name.encode()))
    return g


def randn(g, *shape):
    return torch.randn(*shape, generator=g)


def randint(g, lo, hi, *shape):
    return torch.randint(lo, hi, shape, generator=g)


# Each idiom: (name, module, ordered inputs by forward-argument name, description, options).
IDIOMS: list[tuple[str, nn.Module, OrderedDict, str, dict]] = []

# Loop idioms (issue 22): TorchScript at the opsets of torch-models/, the module `torch.jit.script`ed
# first (tracing would unroll the loop); an export without a `Loop` node is listed as not exported.
LOOP_TS_OPSETS = (13, 16, 17)


def idiom(name: str, description: str, *, ts_opsets=TS_OPSETS, script: bool = False, loop: bool = False):
    """`script`: the TorchScript exporter gets `torch.jit.script(module)` (eager and dynamo get the
    module itself); `loop`: an export whose graph has no `Loop` node is a refusal."""

    def register(make):
        g = rng(name)
        module, inputs = make(g)
        options = {"ts_opsets": ts_opsets, "script": script, "loop": loop}
        IDIOMS.append((name, module.eval(), OrderedDict(inputs), description, options))
        return make

    return register


class Fn(nn.Module):
    """A module from a function; `buffers` become constants of the exported graph."""

    def __init__(self, fn, **buffers):
        super().__init__()
        self.fn = fn
        for k, v in buffers.items():
            self.register_buffer(k, v)

    def forward(self, *args):
        return self.fn(self, *args)


def module(fn, names, **buffers):
    """`fn(self, *inputs)` wrapped so that forward's argument names are `names`
    (the dynamo exporter names graph inputs after them)."""
    args = ", ".join(names)
    src = f"def forward(self, {args}):\n    return self.fn(self, {args})\n"
    scope: dict = {}
    exec(src, scope)  # noqa: S102 - fixed template, names come from this file
    cls = type("M", (Fn,), {"forward": scope["forward"]})
    return cls(fn, **buffers)


# ---------------------------------------------------------------- index_put (x[i] = v)


@idiom("index_put_negative_rows", "x[idx] = v with constant negative row indices")
def _(g):
    def f(self, x, v):
        x = x.clone()
        x[self.idx] = v
        return x

    return module(f, ["x", "v"], idx=torch.tensor([-1, 0, -3])), {
        "x": randn(g, 5, 4),
        "v": randn(g, 3, 4),
    }


@idiom("index_put_runtime_rows", "x[idx] = v with run-time row indices (some negative)")
def _(g):
    def f(self, x, idx, v):
        x = x.clone()
        x[idx] = v
        return x

    return module(f, ["x", "idx", "v"]), {
        "x": randn(g, 6, 3),
        "idx": torch.tensor([-2, 1, 3]),
        "v": randn(g, 3, 3),
    }


@idiom("index_put_accumulate", "x.index_put_((idx,), v, accumulate=True) with duplicates")
def _(g):
    def f(self, x, idx, v):
        return x.clone().index_put_((idx,), v, accumulate=True)

    return module(f, ["x", "idx", "v"]), {
        "x": randn(g, 5, 3),
        "idx": torch.tensor([0, 2, 0, 4, 2]),
        "v": randn(g, 5, 3),
    }


@idiom("index_put_2d_advanced", "x[i, j] = v (2-D advanced indexing)")
def _(g):
    def f(self, x, i, j, v):
        x = x.clone()
        x[i, j] = v
        return x

    return module(f, ["x", "i", "j", "v"]), {
        "x": randn(g, 4, 5, 2),
        "i": torch.tensor([0, 3, 1]),
        "j": torch.tensor([4, 0, -1]),
        "v": randn(g, 3, 2),
    }


@idiom("index_put_int64_data", "integer data: x[idx] = v on int64")
def _(g):
    def f(self, x, idx, v):
        x = x.clone()
        x[idx] = v
        return x

    return module(f, ["x", "idx", "v"]), {
        "x": randint(g, -100, 100, 6, 2),
        "idx": torch.tensor([5, 0]),
        "v": randint(g, -100, 100, 2, 2),
    }


@idiom("bool_mask_assign", "x[mask] = v[mask] (boolean-mask assignment with a value tensor)")
def _(g):
    def f(self, x, mask, v):
        x = x.clone()
        x[mask] = v[mask]
        return x

    return module(f, ["x", "mask", "v"]), {
        "x": randn(g, 4, 5),
        "mask": randn(g, 4, 5) > 0.3,
        "v": randn(g, 4, 5),
    }


# ---------------------------------------------------------------- scatter family


@idiom("scatter_src", "x.scatter(1, idx, src)")
def _(g):
    def f(self, x, idx, src):
        return x.scatter(1, idx, src)

    return module(f, ["x", "idx", "src"]), {
        "x": randn(g, 3, 5),
        "idx": torch.tensor([[4, 0], [1, 2], [3, 3]]),
        "src": randn(g, 3, 2),
    }


@idiom("scatter_value", "x.scatter(-1, idx, 2.5) with a scalar value")
def _(g):
    def f(self, x, idx):
        return x.scatter(-1, idx, 2.5)

    return module(f, ["x", "idx"]), {
        "x": randn(g, 2, 3, 4),
        "idx": torch.tensor([[[3], [0], [1]], [[2], [2], [0]]]),
    }


@idiom("scatter_add", "x.scatter_add(0, idx, src) with duplicates")
def _(g):
    def f(self, x, idx, src):
        return x.scatter_add(0, idx, src)

    return module(f, ["x", "idx", "src"]), {
        "x": randn(g, 4, 3),
        "idx": torch.tensor([[0, 1, 3], [0, 1, 0], [2, 1, 0]]),
        "src": randn(g, 3, 3),
    }


def scatter_reduce_idiom(reduce: str, include_self: bool):
    name = f"scatter_reduce_{reduce}_{'self' if include_self else 'noself'}"

    @idiom(name, f"x.scatter_reduce(1, idx, src, '{reduce}', include_self={include_self})")
    def _(g):
        def f(self, x, idx, src):
            return x.scatter_reduce(1, idx, src, reduce, include_self=include_self)

        return module(f, ["x", "idx", "src"]), {
            "x": randn(g, 3, 4),
            "idx": torch.tensor([[0, 1, 0, 3, 1], [2, 2, 2, 0, 1], [3, 0, 1, 3, 3]]),
            "src": randn(g, 3, 5),
        }


for _r in ["sum", "prod", "amax", "amin", "mean"]:
    for _s in [True, False]:
        scatter_reduce_idiom(_r, _s)


@idiom("one_hot_scatter", "torch.zeros(n, c).scatter_(1, labels.unsqueeze(1), 1.0)")
def _(g):
    def f(self, labels):
        return torch.zeros(labels.shape[0], 6).scatter_(1, labels.unsqueeze(1), 1.0)

    return module(f, ["labels"]), {"labels": torch.tensor([5, 0, 2, 2, 1])}


@idiom("index_add", "x.index_add(0, idx, src) with duplicates")
def _(g):
    def f(self, x, idx, src):
        return x.index_add(0, idx, src)

    return module(f, ["x", "idx", "src"]), {
        "x": randn(g, 5, 3),
        "idx": torch.tensor([4, 0, 4, 1]),
        "src": randn(g, 4, 3),
    }


@idiom("topk_mask", "zeros_like(x).scatter_(-1, x.topk(k).indices, 1.0)")
def _(g):
    def f(self, x):
        idx = x.topk(3, dim=-1).indices
        return torch.zeros_like(x).scatter_(-1, idx, 1.0)

    return module(f, ["x"]), {"x": randn(g, 4, 8)}


# ---------------------------------------------------------------- KV caches


@idiom("kv_index_copy", "HF StaticCache: cache.index_copy_(2, cache_position, k)")
def _(g):
    def f(self, cache, cache_position, k):
        return cache.clone().index_copy_(2, cache_position, k)

    return module(f, ["cache", "cache_position", "k"]), {
        "cache": randn(g, 1, 4, 16, 8),
        "cache_position": torch.tensor([5, 6]),
        "k": randn(g, 1, 4, 2, 8),
    }


@idiom("kv_slice_assign_runtime_pos", "cache[:, :, pos] = k at a run-time position")
def _(g):
    def f(self, cache, pos, k):
        cache = cache.clone()
        cache[:, :, pos] = k
        return cache

    return module(f, ["cache", "pos", "k"]), {
        "cache": randn(g, 1, 4, 16, 8),
        "pos": torch.tensor(9),
        "k": randn(g, 1, 4, 8),
    }


# ---------------------------------------------------------------- slices and detection heads


@idiom("slice_assign", "x[:, 2:5] = y")
def _(g):
    def f(self, x, y):
        x = x.clone()
        x[:, 2:5] = y
        return x

    return module(f, ["x", "y"]), {"x": randn(g, 3, 7), "y": randn(g, 3, 3)}


@idiom("yolov5_detect_head", "YOLOv5 Detect: y[..., 0:2] = (y[..., 0:2]*2 + grid)*stride; y[..., 2:4] = (y[..., 2:4]*2)**2*anchor_grid")
def _(g):
    na, ny, nx, no = 3, 4, 4, 7
    yv, xv = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing="ij")
    grid = torch.stack((xv, yv), 2).expand(1, na, ny, nx, 2).float() - 0.5
    anchor_grid = (torch.tensor([[10.0, 13], [16, 30], [33, 23]]) * 1.0).view(1, na, 1, 1, 2).expand(1, na, ny, nx, 2).contiguous()

    def f(self, x):
        y = x.sigmoid()
        y[..., 0:2] = (y[..., 0:2] * 2 + self.grid) * 8.0
        y[..., 2:4] = (y[..., 2:4] * 2) ** 2 * self.anchor_grid
        return y.view(1, -1, no)

    return module(f, ["x"], grid=grid.contiguous(), anchor_grid=anchor_grid), {"x": randn(g, 1, na, ny, nx, no)}


def chained_slices_idiom(count: int, shape: tuple[int, ...], read: bool):
    """`count` slices of the last axis assigned in sequence (`y[..., 0:2]`, `y[..., 2:4]`,
    `y[..., 4:6]`), the dynamo exporter's chained `Transpose -> ScatterND -> Transpose` blocks (issue
    24). With `read`, every assignment after the first reads the first one's result (`y[..., 0:2]`),
    so a `Slice` of an earlier block's output feeds a later block."""
    rank = len(shape)
    name = f"chained_slices{count}_{rank}d" + ("_read" if read else "")
    steps = "; ".join(
        f"y[..., {2 * i}:{2 * i + 2}] = " + (f"y[..., 0:2] * v{i}" if read and i > 0 else f"v{i} * {i + 2}")
        for i in range(count)
    )

    @idiom(name, f"y = x.clone(); {steps} ({rank}-D)")
    def _(g):
        def f(self, x, *values):
            y = x.clone()
            for i, v in enumerate(values):
                y[..., 2 * i : 2 * i + 2] = y[..., 0:2] * v if read and i > 0 else v * float(i + 2)
            return y

        names = ["x"] + [f"v{i}" for i in range(count)]
        inputs = {"x": randn(g, *shape)}
        for i in range(count):
            inputs[f"v{i}"] = randn(g, *shape[:-1], 2)
        return module(f, names), inputs


for _count in (2, 3):
    for _shape in ((2, 3, 4, 8), (1, 3, 4, 4, 9)):
        for _read in (False, True):
            chained_slices_idiom(_count, _shape, _read)


@idiom("strided_keypoints", "kpt[..., 0::3] = kpt[..., 0::3] * 2 + grid_x (YOLO pose keypoints)")
def _(g):
    def f(self, kpt, grid_x):
        kpt = kpt.clone()
        kpt[..., 0::3] = kpt[..., 0::3] * 2.0 + grid_x
        kpt[..., 2::3] = kpt[..., 2::3].sigmoid()
        return kpt

    return module(f, ["kpt", "grid_x"]), {"kpt": randn(g, 2, 5, 12), "grid_x": randn(g, 2, 5, 1)}


@idiom("pointpillars_canvas", "canvas[:, indices] = pillars.t() (PointPillars scatter)")
def _(g):
    def f(self, pillars, coords):
        canvas = torch.zeros(pillars.shape[1], 6 * 5)
        indices = coords[:, 0] * 5 + coords[:, 1]
        canvas[:, indices] = pillars.t()
        return canvas.view(1, pillars.shape[1], 6, 5)

    return module(f, ["pillars", "coords"]), {
        "pillars": randn(g, 7, 4),
        "coords": torch.tensor([[0, 0], [5, 4], [2, 3], [1, 1], [3, 0], [4, 2], [0, 4]]),
    }


# ---------------------------------------------------------------- graph and sparse idioms


@idiom("segment_sum", "torch_scatter-style: zeros.scatter_add_(0, index.unsqueeze(-1).expand_as(src), src)")
def _(g):
    def f(self, src, index):
        out = torch.zeros(4, src.shape[1])
        return out.scatter_add_(0, index.unsqueeze(-1).expand_as(src), src)

    return module(f, ["src", "index"]), {"src": randn(g, 9, 3), "index": torch.tensor([0, 1, 0, 3, 3, 3, 1, 0, 2])}


@idiom("gnn_index_add", "GNN message passing: out.index_add_(0, dst, x[src] * w)")
def _(g):
    def f(self, x, w, src, dst):
        messages = x[src] * w.unsqueeze(-1)
        return torch.zeros_like(x).index_add_(0, dst, messages)

    return module(f, ["x", "w", "src", "dst"]), {
        "x": randn(g, 5, 3),
        "w": randn(g, 8),
        "src": torch.tensor([0, 1, 2, 3, 4, 0, 2, 4]),
        "dst": torch.tensor([1, 2, 3, 4, 0, 2, 2, 1]),
    }


def gnn_reduce_idiom(reduce: str):
    name = f"gnn_scatter_reduce_{reduce}"

    @idiom(name, f"GNN aggregation: zeros.scatter_reduce_(0, dst expanded, x[src], '{reduce}', include_self=False)")
    def _(g):
        def f(self, x, src, dst):
            messages = x[src]
            index = dst.unsqueeze(-1).expand_as(messages)
            return torch.zeros_like(x).scatter_reduce_(0, index, messages, reduce, include_self=False)

        return module(f, ["x", "src", "dst"]), {
            "x": randn(g, 5, 3),
            "src": torch.tensor([0, 1, 2, 3, 4, 0, 2, 4]),
            "dst": torch.tensor([1, 2, 3, 4, 0, 2, 2, 1]),
        }


for _r in ["mean", "amax"]:
    gnn_reduce_idiom(_r)


@idiom("sparse_to_dense", "dense = zeros(h, w); dense[rows, cols] = vals")
def _(g):
    def f(self, rows, cols, vals):
        dense = torch.zeros(5, 6)
        dense[rows, cols] = vals
        return dense

    return module(f, ["rows", "cols", "vals"]), {
        "rows": torch.tensor([0, 4, 2, 1]),
        "cols": torch.tensor([5, 0, 3, 3]),
        "vals": randn(g, 4),
    }


# ---------------------------------------------------------------- loops writing into a carried buffer (issue 22)


class RowsLoop(nn.Module):
    """A recurrence over the first `n` rows (run-time trip count): `buf[i] = h` (index_put_ with the
    loop index), the rows past `n` stay zero."""

    def forward(self, x, n):
        buf = torch.zeros(x.shape[0], x.shape[1])
        h = torch.zeros(x.shape[1])
        for i in range(int(n)):
            h = torch.tanh(x[i] + 0.5 * h)
            buf[i] = h
        return buf


@idiom("loop_for_index_put_rows", "torch.jit.script: for i in range(n): h = tanh(x[i] + h/2); buf[i] = h (run-time n)",
       ts_opsets=LOOP_TS_OPSETS, script=True, loop=True)
def _(g):
    return RowsLoop(), {"x": randn(g, 7, 4), "n": torch.tensor(5)}


class WhileCumsum(nn.Module):
    """A data-dependent `while`: write running sums `out[i] = s` until `n` rows or the sum passes
    `limit`; also returns how many rows were written."""

    def forward(self, x, n, limit):
        out = torch.zeros(x.shape[0], x.shape[1])
        s = torch.zeros(x.shape[1])
        i = 0
        while i < int(n) and bool(s.sum() < limit):
            s = s + x[i].abs()
            out[i] = s
            i += 1
        return out, torch.tensor(i)


@idiom("loop_while_index_put_cond", "torch.jit.script: while i < n and s.sum() < limit: s += |x[i]|; out[i] = s (data-dependent stop)",
       ts_opsets=LOOP_TS_OPSETS, script=True, loop=True)
def _(g):
    return WhileCumsum(), {"x": randn(g, 8, 3), "n": torch.tensor(7), "limit": torch.tensor(9.0)}


class ScatterColumns(nn.Module):
    """Per step `i`, `buf.scatter_(1, idx[:, i:i+1], src[:, i:i+1])`: each row gets one column
    written per step (ScatterElements on a loop-carried buffer); later steps overwrite earlier ones."""

    def forward(self, buf, idx, src, n):
        buf = buf.clone()
        for i in range(int(n)):
            buf.scatter_(1, idx[:, i : i + 1], src[:, i : i + 1] * float(i + 1))
        return buf


@idiom("loop_for_scatter_columns", "torch.jit.script: for i in range(n): buf.scatter_(1, idx[:, i:i+1], src[:, i:i+1] * (i+1))",
       ts_opsets=LOOP_TS_OPSETS, script=True, loop=True)
def _(g):
    return ScatterColumns(), {
        "buf": randn(g, 3, 6),
        "idx": torch.tensor([[0, 5, 2, 0, 4], [1, 1, 3, 5, 0], [4, 2, 2, 1, 3]]),
        "src": randn(g, 3, 5),
        "n": torch.tensor(4),
    }


class AccumulateLoop(nn.Module):
    """Per step, `hist.index_put_((idx[i:i+1],), v[i:i+1], accumulate=True)`: a histogram built
    one update at a time, rows hit more than once across iterations."""

    def forward(self, hist, idx, v, n):
        hist = hist.clone()
        for i in range(int(n)):
            hist.index_put_((idx[i : i + 1],), v[i : i + 1], accumulate=True)
        return hist


@idiom("loop_for_index_put_accumulate", "torch.jit.script: for i in range(n): hist.index_put_((idx[i:i+1],), v[i:i+1], accumulate=True)",
       ts_opsets=LOOP_TS_OPSETS, script=True, loop=True)
def _(g):
    return AccumulateLoop(), {
        "hist": randn(g, 5, 2),
        "idx": torch.tensor([3, 0, 3, 4, 3, 1]),
        "v": randn(g, 6, 2),
        "n": torch.tensor(6),
    }


class GreedyDecoder(nn.Module):
    """A tiny greedy decoder: embedding + recurrent cell + output projection; each step's argmax
    token is written into a preallocated int64 buffer, `tokens[:, i] = tok`, for `max_len` steps
    (a run-time input, at most `CAP`). With `eos`, a `while` stops once every row has emitted EOS
    (finished rows keep emitting EOS, the rest of the buffer stays PAD)."""

    def __init__(self, g, vocab: int, dim: int, eos: bool):
        super().__init__()
        self.eos = eos
        self.CAP, self.PAD, self.EOS = 10, 0, 1
        self.embed = nn.Embedding(vocab, dim)
        self.cell = nn.Linear(2 * dim, dim)
        self.proj = nn.Linear(dim, vocab)
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.randn(p.shape, generator=g) * 0.8)
        # With `eos`, EOS gets likelier step by step: `i * eos_drift` is added to the logits.
        drift = torch.zeros(vocab)
        if eos:
            drift[self.EOS] = 0.6
        self.register_buffer("eos_drift", drift)

    def forward(self, start, h0, max_len):
        tokens = torch.full((start.shape[0], self.CAP), self.PAD, dtype=torch.long)
        tok = start
        h = h0
        done = torch.zeros(start.shape[0], dtype=torch.bool)
        i = 0
        while i < int(max_len) and not (self.eos and bool(done.all())):
            h = torch.tanh(self.cell(torch.cat([self.embed(tok), h], 1)))
            logits = self.proj(h) + float(i) * self.eos_drift
            tok = logits.argmax(-1)
            if self.eos:
                tok = torch.where(done, torch.full_like(tok, self.EOS), tok)
                done = done | (tok == self.EOS)
            tokens[:, i] = tok
            i += 1
        return tokens


@idiom("loop_greedy_decode_for_max_len", "greedy decoder (torch.jit.script): embedding + cell + linear, tok = argmax, tokens[:, i] = tok for a run-time max_len",
       ts_opsets=LOOP_TS_OPSETS, script=True, loop=True)
def _(g):
    return GreedyDecoder(g, 12, 8, eos=False), {
        "start": torch.tensor([2, 7, 5]),
        "h0": randn(g, 3, 8),
        "max_len": torch.tensor(8),
    }


@idiom("loop_greedy_decode_while_eos", "greedy decoder (torch.jit.script): tokens[:, i] = tok while i < max_len and not all rows hit EOS (finished rows keep EOS)",
       ts_opsets=LOOP_TS_OPSETS, script=True, loop=True)
def _(g):
    return GreedyDecoder(g, 12, 8, eos=True), {
        "start": torch.tensor([2, 7, 5]),
        "h0": randn(g, 3, 8),
        "max_len": torch.tensor(10),
    }


class WhileLoopHop(nn.Module):
    """`torch._higher_order_ops.while_loop` (the loop torch.export keeps): a carried step counter and
    buffer, `buf.index_put((i,), tanh(x[i] + h))` per step while `i < n`."""

    def forward(self, x, n):
        from torch._higher_order_ops.while_loop import while_loop

        def cond_fn(i, h, buf):
            return i < n

        def body_fn(i, h, buf):
            row = i.reshape(1)
            h = torch.tanh(x.index_select(0, row) + 0.5 * h)
            return i + 1, h, buf.index_put((row,), h)

        i0 = torch.zeros((), dtype=torch.int64)
        _, _, out = while_loop(cond_fn, body_fn, (i0, torch.zeros(1, x.shape[1]), torch.zeros_like(x)))
        return out


@idiom("loop_while_loop_hop_index_put", "torch._higher_order_ops.while_loop (torch.export): buf.index_put((i,), h) while i < n",
       ts_opsets=LOOP_TS_OPSETS, loop=True)
def _(g):
    return WhileLoopHop(), {"x": randn(g, 6, 3), "n": torch.tensor(4)}


# ---------------------------------------------------------------- export


def export_ts(mod, inputs: OrderedDict, opset: int) -> onnx.ModelProto:
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            mod,
            tuple(v.clone() for v in inputs.values()),
            buf,
            opset_version=opset,
            input_names=list(inputs),
            dynamo=False,
        )
    return onnx.load_from_string(buf.getvalue())


def export_dynamo(mod, inputs: OrderedDict, opset: int | None) -> onnx.ModelProto:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.onnx.export(
            mod, tuple(v.clone() for v in inputs.values()), dynamo=True, verbose=False, opset_version=opset
        )
    return program.model_proto


def eager(mod, inputs: OrderedDict) -> list[np.ndarray]:
    with torch.no_grad():
        out = mod(*[v.clone() for v in inputs.values()])
    outs = out if isinstance(out, (tuple, list)) else [out]
    return [o.detach().numpy() for o in outs]


def has_loop(model: onnx.ModelProto) -> bool:
    return any(n.op_type == "Loop" for n in all_nodes(model.graph))


def main(selected: str | None) -> None:
    import onnxscript

    torch.manual_seed(0)
    w = Writer("torch", {"torch": torch.__version__, "onnxscript": onnxscript.__version__}, select=selected)
    for name, mod, inputs, description, options in IDIOMS:
        if selected and selected not in name:
            continue
        expected = eager(mod, inputs)
        feeds = {k: v.numpy() for k, v in inputs.items()}
        unrolled = "the exporter unrolled the loop (no Loop node in the graph)"
        for opset in options["ts_opsets"]:
            case = f"{name}__ts{opset}"
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ts_mod = torch.jit.script(mod) if options["script"] else mod
                model = export_ts(ts_mod, inputs, opset)
            except Exception as e:  # noqa: BLE001 - a refusal is data
                w.skipped(case, f"torchscript opset {opset}", f"{type(e).__name__}: {e}")
                continue
            if options["loop"] and not has_loop(model):
                w.skipped(case, f"torchscript opset {opset}", unrolled)
                continue
            w.case(case, model, feeds, expected, idiom=description, path=f"torchscript opset {opset}")
        # The dynamo exporter's default opset, and 18 (the first with every scatter reduction).
        for opset in DYNAMO_OPSETS:
            label = "default" if opset is None else str(opset)
            try:
                model = export_dynamo(mod, inputs, opset)
            except Exception as e:  # noqa: BLE001
                if options["loop"]:
                    # torch.export's own reason, not the ONNX exporter's wrapper ("Failed to export ...").
                    while e.__cause__ is not None:
                        e = e.__cause__
                w.skipped(f"{name}__dynamo{label}", f"dynamo opset {label}", f"{type(e).__name__}: {e}")
                continue
            got = next(i.version for i in model.opset_import if i.domain in ("", "ai.onnx"))
            if options["loop"] and not has_loop(model):
                w.skipped(f"{name}__dynamo{got}", f"dynamo opset {got}", unrolled)
                continue
            w.case(f"{name}__dynamo{got}", model, feeds, expected, idiom=description, path=f"dynamo opset {got}")
    w.finish(order=[i[0] for i in IDIOMS])


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
