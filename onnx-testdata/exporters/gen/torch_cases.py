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

from common import Writer  # noqa: E402

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


# Each idiom: (name, module, ordered inputs by forward-argument name, description).
IDIOMS: list[tuple[str, nn.Module, OrderedDict, str]] = []


def idiom(name: str, description: str):
    def register(make):
        g = rng(name)
        module, inputs = make(g)
        IDIOMS.append((name, module.eval(), OrderedDict(inputs), description))
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


def main(selected: str | None) -> None:
    import onnxscript

    torch.manual_seed(0)
    w = Writer("torch", {"torch": torch.__version__, "onnxscript": onnxscript.__version__})
    for name, mod, inputs, description in IDIOMS:
        if selected and selected not in name:
            continue
        expected = eager(mod, inputs)
        feeds = {k: v.numpy() for k, v in inputs.items()}
        for opset in TS_OPSETS:
            case = f"{name}__ts{opset}"
            try:
                model = export_ts(mod, inputs, opset)
            except Exception as e:  # noqa: BLE001 - a refusal is data
                w.skipped(case, f"torchscript opset {opset}", f"{type(e).__name__}: {e}")
                continue
            w.case(case, model, feeds, expected, idiom=description, path=f"torchscript opset {opset}")
        # The dynamo exporter's default opset, and 18 (the first with every scatter reduction).
        for opset in DYNAMO_OPSETS:
            label = "default" if opset is None else str(opset)
            try:
                model = export_dynamo(mod, inputs, opset)
            except Exception as e:  # noqa: BLE001
                w.skipped(f"{name}__dynamo{label}", f"dynamo opset {label}", f"{type(e).__name__}: {e}")
                continue
            got = next(i.version for i in model.opset_import if i.domain in ("", "ai.onnx"))
            w.case(f"{name}__dynamo{got}", model, feeds, expected, idiom=description, path=f"dynamo opset {got}")
    w.finish()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
