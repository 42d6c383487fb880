#!/usr/bin/env python3
"""Small multi-layer, real-model-like PyTorch models through both PyTorch exporters, with DYNAMIC
(symbolic) dimensions (generation only).

Unlike `torch_cases.py` (one idiom per model, static shapes), every model here is a few layers of a
real architecture (PaiNN, GIN, a message-passing layer, a speech/TTS-style encoder, a causal
attention block with a KV cache), and is exported with named symbolic dimensions:

- TorchScript exporter (`dynamo=False`) at opsets 13, 16 and 17, with `dynamic_axes` naming the
  dimensions ("num_nodes", "num_edges", "num_graphs", "batch", "sequence_length");
- dynamo exporter (`dynamo=True`) at its default opset and at 18, with `dynamic_shapes` of
  `torch.export.Dim(<same names>)`. Where it refuses the dynamic dimensions, the refusal is listed
  and the model is also exported with static shapes as `<model>__dynamo<opset>_static`.

Each export is its own case directory `torch-models/<model>__ts<opset>` or
`torch-models/<model>__dynamo<opset>`; the inputs are concrete seeded tensors, the expected outputs
PyTorch eager's. An export the exporter refuses is listed in `torch-models/SUMMARY.md`, not written.
The graph inputs of every written model are checked to carry the intended `dim_param` names.

`gnn_zeros_default_dtype` is also written as `gnn_zeros_default_dtype_novalue__<path>`: the same
export with the `value` attribute removed from every ConstantOfShape whose value is a float32 zero
(ONNX's default, so the meaning is unchanged; graph tools such as onnxslim or onnx-graphsurgeon drop
default attributes), and as `gnn_zeros_default_dtype_novalue_static__<path>` from a static export,
where the ConstantOfShape's shape input is a constant.

Usage (torch from PyPI is several GB: keep the venv outside the repository; same pins as
torch_cases.py, see requirements-torch.txt):
    python3 -m venv /root/venvs/torch
    /root/venvs/torch/bin/pip install -r onnx-testdata/exporters/gen/requirements-torch.txt
    /root/venvs/torch/bin/python onnx-testdata/exporters/gen/torch_models.py
"""
from __future__ import annotations

import copy
import io
import math
import os
import sys
import tempfile
import warnings
import zlib
from collections import OrderedDict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import torch  # noqa: E402
from onnx import numpy_helper  # noqa: E402
from torch import nn  # noqa: E402

from common import Writer, all_nodes, deviation_notes, run_ort  # noqa: E402

SUITE = "torch-models"
TS_OPSETS = [13, 16, 17]
DYNAMO_OPSETS = [None, 18]


def rng(name: str) -> torch.Generator:
    g = torch.Generator()
    g.manual_seed(zlib.crc32(name.encode()))
    return g


def randn(g, *shape):
    return torch.randn(*shape, generator=g)


def randint(g, lo, hi, *shape):
    return torch.randint(lo, hi, shape, generator=g)


def random_edges(g, n: int, e: int) -> torch.Tensor:
    """`e` directed edges [2, e] (int64) between `n` nodes, no self-loops; with e > n, several
    edges share a destination (the scatter reductions see duplicates)."""
    src = randint(g, 0, n, e)
    dst = (src + randint(g, 1, n, e)) % n
    return torch.stack([src, dst])


# Each model: (name, module, ordered inputs by forward-argument name, output names,
# symbolic dims {input or output name: {axis: dim name}}, description).
MODELS: list[tuple[str, nn.Module, OrderedDict, list[str], dict, str]] = []


def model(name: str, description: str, outputs: list[str], dims: dict):
    """Registers `make(g) -> (module, inputs)`; the module's weights come from the global RNG
    seeded by the model's name (nn.Linear and friends draw from it)."""

    def register(make):
        torch.manual_seed(zlib.crc32(("weights/" + name).encode()))
        module, inputs = make(rng(name))
        MODELS.append((name, module.eval(), OrderedDict(inputs), outputs, dims, description))
        return make

    return register


def mlp(*sizes: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.SiLU())
    return nn.Sequential(*layers)


# ---------------------------------------------------------------- 1. PaiNN


def sin_rbf(d: torch.Tensor, n_rbf: int, cutoff: float) -> torch.Tensor:
    """PaiNN's radial basis sin(n pi d / rc) / d, n = 1..n_rbf, for distances d [E, 1]."""
    n = torch.arange(1, n_rbf + 1, dtype=d.dtype)
    return torch.sin(n * math.pi * d / cutoff) / d


def cosine_cutoff(d: torch.Tensor, cutoff: float) -> torch.Tensor:
    return 0.5 * (torch.cos(d * math.pi / cutoff) + 1.0) * (d < cutoff).to(d.dtype)


class PaiNNMessage(nn.Module):
    def __init__(self, f: int, n_rbf: int, cutoff: float):
        super().__init__()
        self.f, self.cutoff = f, cutoff
        self.phi = mlp(f, f, 3 * f)
        self.w = nn.Linear(n_rbf, 3 * f)

    def forward(self, s, v, src, dst, rbf, fcut, unit):
        f = self.f
        x = self.phi(s)[src] * self.w(rbf) * fcut  # [E, 3F]
        ds, dvv, dvs = torch.split(x, f, dim=-1)
        dv = dvv.unsqueeze(1) * v[src] + dvs.unsqueeze(1) * unit.unsqueeze(-1)  # [E, 3, F]
        # scalar messages: index_add_ into a [N, F] buffer; vector messages: scatter_add along
        # dim 0 with the destination expanded to [E, 3, F]
        s_agg = torch.zeros(s.shape[0], f, dtype=s.dtype).index_add_(0, dst, ds)
        v_agg = torch.zeros_like(v).scatter_add_(0, dst.view(-1, 1, 1).expand(-1, 3, f), dv)
        return s + s_agg, v + v_agg


class PaiNNUpdate(nn.Module):
    def __init__(self, f: int):
        super().__init__()
        self.f = f
        self.u = nn.Linear(f, f, bias=False)
        self.vlin = nn.Linear(f, f, bias=False)
        self.a = mlp(2 * f, f, 3 * f)

    def forward(self, s, v):
        uv, vv = self.u(v), self.vlin(v)  # [N, 3, F]
        vnorm = torch.sqrt(torch.sum(vv * vv, dim=1) + 1e-8)
        a = self.a(torch.cat([s, vnorm], dim=-1))
        avv, asv, ass = torch.split(a, self.f, dim=-1)
        s = s + asv * torch.sum(uv * vv, dim=1) + ass
        v = v + avv.unsqueeze(1) * uv
        return s, v


class PaiNN(nn.Module):
    def __init__(self, f: int = 8, n_rbf: int = 8, cutoff: float = 5.0, layers: int = 2):
        super().__init__()
        self.f, self.n_rbf, self.cutoff = f, n_rbf, cutoff
        self.messages = nn.ModuleList(PaiNNMessage(f, n_rbf, cutoff) for _ in range(layers))
        self.updates = nn.ModuleList(PaiNNUpdate(f) for _ in range(layers))

    def forward(self, s, edge_index, r_ij):
        src, dst = edge_index[0], edge_index[1]
        d = torch.sqrt(torch.sum(r_ij * r_ij, dim=-1, keepdim=True))  # [E, 1]
        unit = r_ij / d
        rbf = sin_rbf(d, self.n_rbf, self.cutoff)
        fcut = cosine_cutoff(d, self.cutoff)
        v = torch.zeros(s.shape[0], 3, self.f, dtype=s.dtype)  # vector features start at zero
        for msg, upd in zip(self.messages, self.updates):
            s, v = msg(s, v, src, dst, rbf, fcut, unit)
            s, v = upd(s, v)
        return s, v


@model(
    "painn_like",
    "PaiNN-style equivariant message passing, 2 interaction+update layers: sin RBF with cosine cutoff, "
    "scalar messages aggregated with zeros(N, F).index_add_(0, dst, .), vector messages with "
    "zeros_like(v).scatter_add_(0, dst expanded to [E, 3, F], .); N and E symbolic",
    ["s_out", "v_out"],
    {
        "s": {0: "num_nodes"},
        "edge_index": {1: "num_edges"},
        "r_ij": {0: "num_edges"},
        "s_out": {0: "num_nodes"},
        "v_out": {0: "num_nodes"},
    },
)
def _(g):
    n, e, f = 7, 20, 8
    r = randn(g, e, 3)
    r = r / r.norm(dim=-1, keepdim=True) * (0.5 + 4.0 * torch.rand(e, 1, generator=g))  # |r| in [0.5, 4.5)
    return PaiNN(f), {"s": randn(g, n, f), "edge_index": random_edges(g, n, e), "r_ij": r}


# ---------------------------------------------------------------- 2. GIN


class GINLayer(nn.Module):
    def __init__(self, f: int, eps: float, reduce: str):
        super().__init__()
        self.eps = nn.Parameter(torch.tensor(eps))
        self.mlp = nn.Sequential(nn.Linear(f, f), nn.ReLU(), nn.Linear(f, f))
        self.reduce = reduce

    def forward(self, x, src, dst):
        f = x.shape[1]
        index = dst.unsqueeze(-1).expand(-1, f)
        if self.reduce == "sum":
            out = torch.zeros_like(x).scatter_add_(0, index, x[src])
        elif self.reduce == "amax":
            out = torch.zeros_like(x).scatter_reduce_(0, index, x[src], "amax", include_self=False)
        elif self.reduce == "amax_self":
            out = torch.zeros_like(x).scatter_reduce_(0, index, x[src], "amax", include_self=True)
        else:
            raise ValueError(self.reduce)
        return torch.relu(self.mlp((1.0 + self.eps) * x + out))


class GIN(nn.Module):
    """`pool="mean"`: scatter_reduce 'mean' with include_self=False, and an 'amax' layer with
    include_self=False (what current code writes). `pool="sum_count"`: the torch_scatter-era
    formulation the TorchScript exporter accepts: mean = scatter_add of the features / scatter_add
    of ones clamped to 1, and the max layer with include_self=True into zeros."""

    def __init__(self, f_in: int = 5, f: int = 8, n_graph_attr: int = 2, pool: str = "mean"):
        super().__init__()
        self.pool = pool
        self.lin_in = nn.Linear(f_in, f)
        amax = "amax" if pool == "mean" else "amax_self"
        self.layers = nn.ModuleList([GINLayer(f, 0.1, "sum"), GINLayer(f, 0.2, amax), GINLayer(f, 0.0, "sum")])
        self.head = mlp(f + n_graph_attr, f, 1)

    def forward(self, x, edge_index, batch, graph_attr):
        src, dst = edge_index[0], edge_index[1]
        h = self.lin_in(x)
        for layer in self.layers:
            h = layer(h, src, dst)
        f = h.shape[1]
        index = batch.unsqueeze(-1).expand(-1, f)
        pooled = torch.zeros(graph_attr.shape[0], f, dtype=h.dtype)
        if self.pool == "mean":
            pooled = pooled.scatter_reduce(0, index, h, "mean", include_self=False)
        else:
            total = pooled.scatter_add(0, index, h)
            count = torch.zeros(graph_attr.shape[0], 1, dtype=h.dtype).scatter_add(
                0, batch.unsqueeze(-1), torch.ones_like(h[:, :1])
            )
            pooled = total / count.clamp(min=1.0)
        return h, self.head(torch.cat([pooled, graph_attr], dim=-1))


GIN_DIMS = {
    "x": {0: "num_nodes"},
    "edge_index": {1: "num_edges"},
    "batch": {0: "num_nodes"},
    "graph_attr": {0: "num_graphs"},
    "node_out": {0: "num_nodes"},
    "graph_out": {0: "num_graphs"},
}


def gin_inputs(g):
    n, e, n_graphs = 9, 24, 3
    return {
        "x": randn(g, n, 5),
        "edge_index": random_edges(g, n, e),
        "batch": torch.tensor([0, 0, 0, 1, 1, 1, 1, 2, 2]),
        "graph_attr": randn(g, n_graphs, 2),
    }


@model(
    "gin_like",
    "GIN-style stack, 3 layers: zeros_like(x).scatter_add_(0, dst expanded, x[src]) then "
    "MLP((1+eps)*x + agg), the middle layer aggregating with scatter_reduce_ 'amax' "
    "include_self=False; per-graph mean pool with scatter_reduce 'mean' include_self=False over a "
    "batch vector into zeros(num_graphs, F); N, E and the number of graphs symbolic",
    ["node_out", "graph_out"],
    GIN_DIMS,
)
def _(g):
    return GIN(pool="mean"), gin_inputs(g)


@model(
    "gin_like_sum_count_pool",
    "gin_like written the way the TorchScript exporter accepts (it refuses scatter_reduce 'mean' and "
    "include_self=False): mean pool = scatter_add of the features / scatter_add of ones clamped to 1, "
    "and the middle layer's scatter_reduce_ 'amax' with include_self=True into zeros; N, E and the "
    "number of graphs symbolic",
    ["node_out", "graph_out"],
    GIN_DIMS,
)
def _(g):
    return GIN(pool="sum_count"), gin_inputs(g)


# ---------------------------------------------------------------- 3. zeros of the default dtype


class ZerosDefaultDtypeMP(nn.Module):
    """Message passing whose aggregation buffer is `torch.zeros(x.shape[0], F)`: no dtype, a shape
    from a symbolic dimension, so the exporters write a ConstantOfShape of a run-time shape."""

    def __init__(self, f: int = 6):
        super().__init__()
        self.f = f
        self.msg = nn.Linear(f, f)
        self.root = nn.Linear(f, f)
        self.out = nn.Linear(f, f)

    def forward(self, x, edge_index, edge_weight):
        src, dst = edge_index[0], edge_index[1]
        messages = self.msg(x)[src] * edge_weight.unsqueeze(-1)
        agg = torch.zeros(x.shape[0], self.f)
        agg = agg.scatter_add_(0, dst.unsqueeze(-1).expand(-1, self.f), messages)
        h = torch.relu(self.root(x) + agg)
        return self.out(h)


@model(
    "gnn_zeros_default_dtype",
    "message passing: agg = torch.zeros(x.shape[0], F) (default dtype, shape from the symbolic "
    "num_nodes: a ConstantOfShape of a run-time shape) .scatter_add_(0, dst expanded, float32 "
    "messages), then relu(root(x) + agg) and a linear layer; N and E symbolic",
    ["y"],
    {"x": {0: "num_nodes"}, "edge_index": {1: "num_edges"}, "edge_weight": {0: "num_edges"}, "y": {0: "num_nodes"}},
)
def _(g):
    n, e = 6, 14
    return ZerosDefaultDtypeMP(), {
        "x": randn(g, n, 6),
        "edge_index": random_edges(g, n, e),
        "edge_weight": torch.rand(e, generator=g),
    }


# ---------------------------------------------------------------- 4. sequence slices by length


def sinusoidal_table(length: int, c: int) -> torch.Tensor:
    pos = torch.arange(length, dtype=torch.float32).unsqueeze(1)
    div = torch.exp(torch.arange(0, c, 2, dtype=torch.float32) * (-math.log(10000.0) / c))
    pe = torch.zeros(length, c)
    pe[:, 0::2] = torch.sin(pos * div)
    pe[:, 1::2] = torch.cos(pos * div)
    return pe.unsqueeze(0)


class SeqSliceByLength(nn.Module):
    """A speech/TTS-style encoder block on x [B, T, C]: positional table sliced by the run-time
    length, the previous frame by a slice to T - 1, a 1-D convolution, a length mask
    (arange(T) < lengths) with masked_fill, and the last frame written into a preallocated buffer
    of 64 frames at position T - 1, with `buf[:, T - 1] = v` (`write="setitem"`) or with
    `buf.index_copy_(1, full((1,), T - 1), v)` (`write="index_copy"`)."""

    MAX_LEN = 64

    def __init__(self, c: int = 8, write: str = "setitem"):
        super().__init__()
        self.write = write
        self.register_buffer("pe", sinusoidal_table(self.MAX_LEN, c))
        self.conv = nn.Conv1d(c, c, 3, padding=1)
        self.proj = nn.Linear(c, c)
        self.last = nn.Linear(c, c)

    def forward(self, x, lengths):
        b, t, c = x.shape
        h = x + self.pe[:, :t]
        prev = torch.cat([torch.zeros_like(h[:, :1]), h[:, : t - 1]], dim=1)  # frame t-1, zero at 0
        h = h + 0.5 * prev
        h = torch.relu(self.conv(h.transpose(1, 2))).transpose(1, 2)
        h = self.proj(h)
        mask = torch.arange(t).unsqueeze(0) < lengths.unsqueeze(1)  # [B, T]
        h = h.masked_fill(~mask.unsqueeze(-1), 0.0)
        buf = torch.zeros(b, self.MAX_LEN, c, dtype=h.dtype)
        last = self.last(h[:, -1])
        if self.write == "setitem":
            buf[:, t - 1] = last
        else:
            buf = buf.index_copy_(1, torch.full((1,), t - 1, dtype=torch.long), last.unsqueeze(1))
        return h, buf


SEQ_SLICE_DIMS = {
    "x": {0: "batch", 1: "sequence_length"},
    "lengths": {0: "batch"},
    "h": {0: "batch", 1: "sequence_length"},
    "buf": {0: "batch"},
}


def seq_slice_inputs(g):
    b, t, c = 2, 10, 8
    return {"x": randn(g, b, t, c), "lengths": torch.tensor([10, 6])}


@model(
    "seq_slice_by_length",
    "sequence encoder on x [B, T, C]: x + pe[:, :T] (buffer of 64), previous frame via h[:, :T-1] "
    "concatenated after a zero frame, Conv1d, length mask arange(T) < lengths with masked_fill, "
    "buf = zeros(B, 64, C); buf[:, T-1] = linear(last frame); B and T symbolic (torch.export "
    "specializes T on buf[:, T-1] = ..., so the dynamo exports are static)",
    ["h", "buf"],
    SEQ_SLICE_DIMS,
)
def _(g):
    return SeqSliceByLength(8, "setitem"), seq_slice_inputs(g)


@model(
    "seq_slice_by_length_index_copy",
    "seq_slice_by_length with the last frame written by buf.index_copy_(1, torch.full((1,), T-1), "
    "frame) instead of buf[:, T-1] = frame (torch.export keeps T symbolic for this form); B and T "
    "symbolic",
    ["h", "buf"],
    SEQ_SLICE_DIMS,
)
def _(g):
    return SeqSliceByLength(8, "index_copy"), seq_slice_inputs(g)


# ---------------------------------------------------------------- 5. attention with a KV cache


class CausalAttentionKVCache(nn.Module):
    """Causal self-attention over x [B, T, C] with a [T, T] mask from ones(T, T).triu(1), writing
    k and v into caches of 32 positions with cache[:, :, :T] = k; returns the output and both
    updated caches."""

    def __init__(self, c: int = 8, heads: int = 2):
        super().__init__()
        self.heads, self.d = heads, c // heads
        self.qkv = nn.Linear(c, 3 * c)
        self.o = nn.Linear(c, c)
        self.ln = nn.LayerNorm(c)

    def forward(self, x, k_cache, v_cache):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln(x)).split(c, dim=-1)
        q, k, v = (z.view(b, t, self.heads, self.d).transpose(1, 2) for z in (q, k, v))
        k_cache = k_cache.clone()
        v_cache = v_cache.clone()
        k_cache[:, :, :t] = k
        v_cache[:, :, :t] = v
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.d)
        causal = torch.ones(t, t).triu(1).bool()
        scores = scores.masked_fill(causal, float("-inf"))
        y = torch.softmax(scores, dim=-1) @ v
        y = y.transpose(1, 2).reshape(b, t, c)
        return x + self.o(y), k_cache, v_cache


@model(
    "seq_gather_scatter",
    "causal attention block on x [B, T, C]: mask ones(T, T).triu(1) with masked_fill(-inf), "
    "k_cache[:, :, :T] = k and v_cache[:, :, :T] = v into caches of 32 positions, returns the "
    "output and both caches; T symbolic",
    ["y", "k_cache_out", "v_cache_out"],
    {"x": {1: "sequence_length"}, "y": {1: "sequence_length"}},
)
def _(g):
    b, t, c, heads = 1, 5, 8, 2
    return CausalAttentionKVCache(c, heads), {
        "x": randn(g, b, t, c),
        "k_cache": randn(g, b, heads, 32, c // heads),
        "v_cache": randn(g, b, heads, 32, c // heads),
    }


# ---------------------------------------------------------------- export


DIM_BOUNDS = {"sequence_length": (2, 32)}


def export_ts(mod, inputs: OrderedDict, outputs: list[str], dims: dict | None, opset: int) -> onnx.ModelProto:
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            mod,
            tuple(v.clone() for v in inputs.values()),
            buf,
            opset_version=opset,
            input_names=list(inputs),
            output_names=outputs,
            dynamic_axes=dims or None,
            dynamo=False,
        )
    return onnx.load_from_string(buf.getvalue())


def dynamo_shapes(inputs: OrderedDict, dims: dict):
    """`dynamic_shapes` for torch.export: one `Dim` per name, shared between inputs."""
    made: dict[str, torch.export.Dim] = {}

    def dim(name):
        if name not in made:
            lo, hi = DIM_BOUNDS.get(name, (2, 1 << 16))
            made[name] = torch.export.Dim(name, min=lo, max=hi)
        return made[name]

    return {k: ({ax: dim(n) for ax, n in dims[k].items()} if k in dims else None) for k in inputs}


def export_dynamo(mod, inputs: OrderedDict, dims: dict | None, opset: int | None) -> onnx.ModelProto:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.onnx.export(
            mod,
            tuple(v.clone() for v in inputs.values()),
            dynamo=True,
            verbose=False,
            opset_version=opset,
            dynamic_shapes=dynamo_shapes(inputs, dims) if dims else None,
        )
    model = program.model_proto
    # Node metadata `pkg.torch.onnx.stack_trace` holds this script's absolute path and line
    # numbers: dropped so that the files do not change with the checkout's location or an edit
    # elsewhere in this script (debug metadata only; the graph is the exporter's).
    for node in all_nodes(model.graph):
        for prop in [p for p in node.metadata_props if p.key == "pkg.torch.onnx.stack_trace"]:
            node.metadata_props.remove(prop)
    return model


def dims_refusal(mod, inputs: OrderedDict, dims: dict, model: onnx.ModelProto) -> str | None:
    """None when the dynamo export's graph inputs carry the intended dim_params. Otherwise why not:
    torch.onnx.export falls back to a static graph when torch.export refuses a dynamic dimension
    (it specialized the dimension to the example's size), so ask torch.export for the reason."""
    try:
        check_dim_params("", model, inputs, dims)
        return None
    except RuntimeError as e:
        got = str(e)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.export.export(
                mod, tuple(v.clone() for v in inputs.values()), dynamic_shapes=dynamo_shapes(inputs, dims), strict=False
            )
        why = "torch.export accepts the dynamic shapes"
    except Exception as e:  # noqa: BLE001
        lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
        why = f"torch.export {type(e).__name__}: " + " ".join(
            [lines[0].split(" For more information")[0]]
            + [ln[2:].split(". If you")[0] for ln in lines[1:] if ln.startswith("- ")][:2]
        )
    return f"dynamic dims not kept ({got.split(': ', 1)[-1]}): {why}"


def onnx_opset(model: onnx.ModelProto) -> int:
    return next(i.version for i in model.opset_import if i.domain in ("", "ai.onnx"))


def eager(mod, inputs: OrderedDict) -> list[np.ndarray]:
    with torch.no_grad():
        out = mod(*[v.clone() for v in inputs.values()])
    outs = out if isinstance(out, (tuple, list)) else [out]
    return [o.detach().numpy() for o in outs]


def input_shapes(model: onnx.ModelProto) -> dict[str, list]:
    """Graph inputs (not initializers) -> dims, each an int or a dim_param name."""
    inits = {i.name for i in model.graph.initializer}
    shapes = {}
    for gi in model.graph.input:
        if gi.name in inits:
            continue
        shapes[gi.name] = [
            d.dim_param if d.HasField("dim_param") else (d.dim_value if d.HasField("dim_value") else "?")
            for d in gi.type.tensor_type.shape.dim
        ]
    return shapes


def check_dim_params(name: str, model: onnx.ModelProto, inputs: OrderedDict, dims: dict | None) -> None:
    """Raises unless each graph input's dims are the intended names (symbolic) or sizes (static)."""
    shapes = input_shapes(model)
    for k, shape in shapes.items():
        want = [
            (dims or {}).get(k, {}).get(ax, int(size)) for ax, size in enumerate(inputs[k].shape)
        ]
        if shape != want:
            raise RuntimeError(f"{name}: graph input {k} has dims {shape}, wanted {want}")


def is_float_zero_constant_of_shape(node: onnx.NodeProto) -> bool:
    """A ConstantOfShape whose `value` is a float32 +0.0 (scalar or one element): ONNX's default."""
    if node.op_type != "ConstantOfShape":
        return False
    for attr in node.attribute:
        if attr.name == "value":
            value = numpy_helper.to_array(attr.t).reshape(-1)
            return (
                attr.t.data_type == onnx.TensorProto.FLOAT
                and value.size == 1
                and value[0] == 0.0
                and not np.signbit(value[0])
            )
    return False


def strip_zero_value(model: onnx.ModelProto) -> tuple[onnx.ModelProto, int]:
    """A copy of `model` without the `value` attribute on every ConstantOfShape whose value is a
    float32 zero (scalar or one element), in the graph, subgraphs and functions; and how many."""
    model = copy.deepcopy(model)
    nodes = list(all_nodes(model.graph)) + [n for f in model.functions for n in f.node]
    stripped = 0
    for node in nodes:
        if is_float_zero_constant_of_shape(node):
            for attr in list(node.attribute):
                if attr.name == "value":
                    node.attribute.remove(attr)
            stripped += 1
    return model, stripped


def fold_zero_shapes(model: onnx.ModelProto, feeds: dict, outputs: list[np.ndarray]) -> tuple[onnx.ModelProto, int]:
    """`model` made static for the shapes of `feeds`, as a constant folder that keeps large tensors
    unfolded leaves it (onnxsim, onnx-graphsurgeon with a size threshold): graph inputs and outputs
    get the concrete sizes, the shape computation feeding each float32-zero ConstantOfShape is
    replaced by an int64 initializer (the ConstantOfShape itself stays), dead nodes are removed.
    Returns the model and how many ConstantOfShape nodes now have a constant shape."""
    targets = [n for n in model.graph.node if is_float_zero_constant_of_shape(n)]
    shape_names = sorted({n.input[0] for n in targets})
    probe = copy.deepcopy(model)
    for name in shape_names:
        probe.graph.output.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.INT64, None))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "probe.onnx")
        onnx.save_model(probe, path)
        inits = {i.name for i in model.graph.initializer}
        got = run_ort(path, {i.name: feeds[i.name] for i in model.graph.input if i.name not in inits})
    values = dict(zip(shape_names, got[len(model.graph.output):]))

    static = copy.deepcopy(model)
    del static.graph.value_info[:]
    for gi in static.graph.input:
        if gi.name in feeds:
            for d, size in zip(gi.type.tensor_type.shape.dim, feeds[gi.name].shape):
                d.Clear()
                d.dim_value = int(size)
    for go, out in zip(static.graph.output, outputs):
        for d, size in zip(go.type.tensor_type.shape.dim, out.shape):
            d.Clear()
            d.dim_value = int(size)
    renamed = {}
    for name in shape_names:
        renamed[name] = name + "_folded"
        static.graph.initializer.append(numpy_helper.from_array(np.asarray(values[name], dtype=np.int64), renamed[name]))
    for node in static.graph.node:
        if is_float_zero_constant_of_shape(node):
            node.input[0] = renamed[node.input[0]]
    # dead-node elimination (top-level graph: these models have no subgraphs)
    while True:
        used = {o.name for o in static.graph.output}
        for node in static.graph.node:
            used.update(node.input)
        dead = [n for n in static.graph.node if not any(o in used for o in n.output)]
        if not dead:
            break
        for n in dead:
            static.graph.node.remove(n)
    used = {i for n in static.graph.node for i in n.input}
    for init in list(static.graph.initializer):
        if init.name not in used:
            static.graph.initializer.remove(init)
    return static, len(targets)


def op_counts(model: onnx.ModelProto, kinds=("Scatter", "ConstantOfShape", "Slice", "Expand")) -> str:
    found: dict[str, int] = {}
    nodes = list(all_nodes(model.graph)) + [n for f in model.functions for n in f.node]
    for node in nodes:
        if any(k in node.op_type for k in kinds):
            found[node.op_type] = found.get(node.op_type, 0) + 1
    return ", ".join(f"{k}x{v}" for k, v in sorted(found.items())) or "-"


def main(selected: str | None) -> None:
    import onnxscript

    torch.manual_seed(0)
    w = Writer(SUITE, {"torch": torch.__version__, "onnxscript": onnxscript.__version__})
    report = []

    def write(case, model, feeds, expected, description, path, inputs, dims, notes=""):
        check_dim_params(case, model, inputs, dims)
        deviations = deviation_notes(model, onnx_opset(model), " (exporter deviation, kept on purpose)")
        notes = "; ".join(([notes] if notes else []) + deviations)
        w.case(case, model, feeds, expected, idiom=description, path=path, notes=notes)
        report.append((case, input_shapes(model), op_counts(model)))

    def write_novalue(case, model, feeds, expected, description, path, inputs, dims, notes=""):
        stripped, count = strip_zero_value(model)
        if count == 0:
            raise RuntimeError(f"{case}: no ConstantOfShape with a float32-zero value to strip")
        onnx.checker.check_model(stripped, full_check=True)
        print(f"{SUITE}/{case}: value attribute removed from {count} ConstantOfShape node(s)", flush=True)
        notes = (notes + "; " if notes else "") + (
            f"after export, the value attribute (a float32 zero, the ONNX default) removed from {count} ConstantOfShape node(s)"
        )
        write(case, stripped, feeds, expected, description + " [ConstantOfShape value attribute removed]", path,
              inputs, dims, notes=notes)

    for name, mod, inputs, outputs, dims, description in MODELS:
        if selected and selected not in name:
            continue
        expected = eager(mod, inputs)
        feeds = {k: v.numpy() for k, v in inputs.items()}
        novalue = name == "gnn_zeros_default_dtype"
        for opset in TS_OPSETS:
            case = f"{name}__ts{opset}"
            path = f"torchscript opset {opset}"
            try:
                model_ = export_ts(mod, inputs, outputs, dims, opset)
            except Exception as e:  # noqa: BLE001 - a refusal is data
                w.skipped(case, path, f"{type(e).__name__}: {e}")
                continue
            write(case, model_, feeds, expected, description, path, inputs, dims)
            if novalue:
                write_novalue(f"{name}_novalue__ts{opset}", model_, feeds, expected, description, path, inputs, dims)
                static, folded = fold_zero_shapes(model_, feeds, expected)
                write_novalue(
                    f"{name}_novalue_static__ts{opset}", static, feeds, expected,
                    description + " [static shapes, constant ConstantOfShape shape]", path + " static", inputs, None,
                    notes=f"made static after export: inputs fixed to the test shapes and the shape of {folded} "
                    "ConstantOfShape node(s) folded to an initializer, as onnxsim or onnx-graphsurgeon constant "
                    "folding with a size threshold leaves it (neither exporter writes a float ConstantOfShape of a "
                    "constant shape: TorchScript folds a static zeros buffer to a constant tensor, dynamo writes "
                    "Expand of a scalar)",
                )
        # The dynamo exporter's default opset, and 18 (the first with every scatter reduction).
        for opset in DYNAMO_OPSETS:
            label = "default" if opset is None else str(opset)
            try:
                model_ = export_dynamo(mod, inputs, dims, opset)
                label = str(onnx_opset(model_))
                refusal = dims_refusal(mod, inputs, dims, model_)
            except Exception as e:  # noqa: BLE001
                refusal = f"{type(e).__name__}: {e}"
            if refusal:
                w.skipped(f"{name}__dynamo{label}", f"dynamo opset {label} dynamic shapes", refusal)
                try:
                    model_ = export_dynamo(mod, inputs, None, opset)
                except Exception as e2:  # noqa: BLE001
                    w.skipped(f"{name}__dynamo{label}_static", f"dynamo opset {label} static", f"{type(e2).__name__}: {e2}")
                    continue
                got = onnx_opset(model_)
                write(f"{name}__dynamo{got}_static", model_, feeds, expected, description + " [exported with static shapes]",
                      f"dynamo opset {got} static", inputs, None,
                      notes="exported without dynamic shapes: the dynamic export was refused (see SUMMARY.md)")
                continue
            got = onnx_opset(model_)
            write(f"{name}__dynamo{got}", model_, feeds, expected, description, f"dynamo opset {got}", inputs, dims)
            if novalue:
                if strip_zero_value(model_)[1] == 0:
                    # Not an error of this script: the dynamo exporter writes torch.zeros(N, F) as
                    # Expand(0.0, shape), so there is no value attribute to remove.
                    ops = op_counts(model_, ("ConstantOfShape", "Expand"))
                    w.skipped(f"{name}_novalue__dynamo{got}", f"dynamo opset {got}",
                              f"no ConstantOfShape with a float32-zero value in the dynamo export ({ops}): "
                              "torch.zeros(N, F) is written as Expand(0.0, shape)")
                else:
                    write_novalue(f"{name}_novalue__dynamo{got}", model_, feeds, expected, description,
                                  f"dynamo opset {got}", inputs, dims)
    w.finish()
    print()
    for case, shapes, ops in report:
        print(f"{case}: inputs {shapes}; ops {ops}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
