"""PyTorch recurrent models -> both PyTorch exporters, for the recurrent suite (generation only).

Run with the venv pinned in requirements-torch.txt:

    python gen/recurrent_torch.py [case-substring]

Writes `onnx-testdata/recurrent/torch/<model>__ts<opset>` (TorchScript exporter, `dynamo=False`,
`torch.jit.script` loops, `dynamic_axes` naming `batch` and `time`) and
`<model>__dynamo<opset>` (dynamo exporter, `dynamic_shapes` of `torch.export.Dim("batch"/"time")`,
the loops torch.export keeps: `while_loop` and `scan` higher-order ops). A model an exporter refuses
is listed in SUMMARY.md, not written; an export that comes out with static dims is written with
`_static` after the path. Two data sets of different batch and time each; expected outputs are
eager PyTorch's. `case.toml` records the Loop/Scan nodes (`loops`, gated) and ONNX LSTM/GRU/RNN
nodes (`rnn_ops`, reported: tract's own ops).
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
from recurrent_common import RECURRENT_ROOT, loop_meta  # noqa: E402

TS_OPSETS = (13, 17)
DYNAMO_OPSETS = (None, 18)
F = 4
U = 6
SIZES = ((2, 5), (3, 7))  # (batch, time) of the two data sets
DIMS = {"x": {0: "batch", 1: "time"}}

MODELS = []


def model(name, notes, ts=True, dynamo=True):
    def deco(build):
        MODELS.append((name, build, notes, ts, dynamo))
        return build

    return deco


# --- TorchScript loops (torch.jit.script) ------------------------------------------------------
# nn.RNNCell and nn.GRUCell script to a graph the TorchScript exporter refuses ("expected node type
# prim::ListConstruct"): the scripted models use these cells, written as users write their own.


class ElmanCell(nn.Module):
    def __init__(self, inputs, units):
        super().__init__()
        self.ih = nn.Linear(inputs, units)
        self.hh = nn.Linear(units, units)

    def forward(self, x, h):
        return torch.tanh(self.ih(x) + self.hh(h))


class GruCell(nn.Module):
    def __init__(self, inputs, units):
        super().__init__()
        self.ih = nn.Linear(inputs, 3 * units)
        self.hh = nn.Linear(units, 3 * units)

    def forward(self, x, h):
        xr, xz, xn = self.ih(x).chunk(3, 1)
        hr, hz, hn = self.hh(h).chunk(3, 1)
        r = torch.sigmoid(xr + hr)
        z = torch.sigmoid(xz + hz)
        n = torch.tanh(xn + r * hn)
        return (1.0 - z) * n + z * h


class ListRnn(nn.Module):
    """`outputs.append(h)` per step, then `torch.stack(outputs, 1)`: TorchScript carries the list
    through the Loop as a Sequence."""

    def __init__(self):
        super().__init__()
        self.units = U
        self.cell = ElmanCell(F, U)

    def forward(self, x):
        h = torch.zeros(x.size(0), self.units)
        outputs = []
        for t in range(x.size(1)):
            h = self.cell(x[:, t], h)
            outputs.append(h)
        return torch.stack(outputs, 1)


@model("scripted_rnn_cell_list", "torch.jit.script: RNNCell per step, outputs.append(h), torch.stack(outputs, 1)",
       dynamo=False)
def _():
    return torch.jit.script(ListRnn())


class ListGruCat(nn.Module):
    """A GRUCell loop appending `h.unsqueeze(0)`, then `torch.cat(outputs, 0)` and the last state."""

    def __init__(self):
        super().__init__()
        self.units = U
        self.cell = GruCell(F, U)

    def forward(self, x):
        h = torch.zeros(x.size(0), self.units)
        outputs = []
        for t in range(x.size(1)):
            h = self.cell(x[:, t], h)
            outputs.append(h.unsqueeze(0))
        return torch.cat(outputs, 0), h


@model("scripted_gru_cell_list_cat", "torch.jit.script: GRUCell per step, outputs.append(h.unsqueeze(0)),"
       " torch.cat(outputs, 0) and the last h", dynamo=False)
def _():
    return torch.jit.script(ListGruCat())


class ListLstmLen(nn.Module):
    """An LSTMCell loop building a list, read back by `len(outputs)` and `outputs[-1]`."""

    def __init__(self):
        super().__init__()
        self.units = U
        self.cell = nn.LSTMCell(F, U)

    def forward(self, x):
        h = torch.zeros(x.size(0), self.units)
        c = torch.zeros(x.size(0), self.units)
        outputs = []
        for t in range(x.size(1)):
            h, c = self.cell(x[:, t], (h, c))
            outputs.append(h)
        return outputs[-1] * float(len(outputs)), torch.stack(outputs, 0).sum(0)


@model("scripted_lstm_cell_list_len_last", "torch.jit.script: LSTMCell, outputs list read by len(), outputs[-1]"
       " and torch.stack", dynamo=False)
def _():
    return torch.jit.script(ListLstmLen())


class BufferGru(nn.Module):
    """A preallocated buffer written one step per iteration: `out[:, t] = h`."""

    def __init__(self):
        super().__init__()
        self.units = U
        self.cell = GruCell(F, U)

    def forward(self, x):
        h = torch.zeros(x.size(0), self.units)
        out = torch.zeros(x.size(0), x.size(1), self.units)
        for t in range(x.size(1)):
            h = self.cell(x[:, t], h)
            out[:, t] = h
        return out


@model("scripted_gru_cell_buffer", "torch.jit.script: GRUCell per step, out[:, t] = h into torch.zeros(b, T, U)",
       dynamo=False)
def _():
    return torch.jit.script(BufferGru())


class BiListRnn(nn.Module):
    """A bidirectional loop: forward cell over t, backward cell over T-1-t, the backward list stacked
    and flipped (`bwd.reverse()` on the list exports wrong: onnxruntime disagrees with eager)."""

    def __init__(self):
        super().__init__()
        self.units = U
        self.fwd = ElmanCell(F, U)
        self.bwd = ElmanCell(F, U)

    def forward(self, x):
        steps = x.size(1)
        h = torch.zeros(x.size(0), self.units)
        g = torch.zeros(x.size(0), self.units)
        fwd = []
        bwd = []
        for t in range(steps):
            h = self.fwd(x[:, t], h)
            fwd.append(h)
            g = self.bwd(x[:, steps - 1 - t], g)
            bwd.append(g)
        return torch.cat([torch.stack(fwd, 1), torch.stack(bwd, 1).flip(1)], 2)


@model("scripted_bidirectional_rnn_lists", "torch.jit.script: two RNNCells forward and backward, lists"
       " stacked (the backward one flipped) and concatenated", dynamo=False)
def _():
    return torch.jit.script(BiListRnn())


class WhileDecoder(nn.Module):
    """A data-dependent `while` decoding steps until every row's output goes negative or 2 * T steps."""

    def __init__(self):
        super().__init__()
        self.units = U
        self.cell = GruCell(F, F)
        self.out = nn.Linear(F, 1)

    def forward(self, x):
        h = x[:, 0]
        y = x[:, 0]
        outputs = []
        t = 0
        limit = 2 * x.size(1)
        while t < limit and bool((self.out(h) > -10.0).any()):
            h = self.cell(y, h)
            y = torch.tanh(h)
            outputs.append(self.out(h))
            t += 1
        return torch.cat(outputs, 1)


@model("scripted_while_decoder_list", "torch.jit.script: a while loop with a data-dependent stop appending"
       " each step's output, torch.cat along dim 1", dynamo=False)
def _():
    return torch.jit.script(WhileDecoder())


# --- ONNX LSTM/GRU ops (tract's own: reported, not gated) --------------------------------------


class NnLstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(F, U, batch_first=True)

    def forward(self, x):
        y, (h, c) = self.rnn(x)
        return y, h, c


@model("nn_lstm", "nn.LSTM(batch_first): the exporters write an ONNX LSTM op")
def _():
    return NnLstm()


class NnGruBi(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(F, U, batch_first=True, bidirectional=True)

    def forward(self, x):
        return self.rnn(x)[0]


@model("nn_gru_bidirectional", "nn.GRU(batch_first, bidirectional): an ONNX GRU op")
def _():
    return NnGruBi()


# --- torch.export loops (dynamo) ---------------------------------------------------------------


class WhileLoopGru(nn.Module):
    """`torch._higher_order_ops.while_loop` over the time axis: a GRUCell, each step's h written into
    a carried buffer with index_put."""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(F, U)

    def forward(self, x):
        from torch._higher_order_ops.while_loop import while_loop

        steps = x.shape[1]

        def cond_fn(i, h, buf):
            return i < steps

        def body_fn(i, h, buf):
            step = x.index_select(1, i.reshape(1)).squeeze(1)
            h = self.cell(step, h)
            return i + 1, h, buf.index_put((i.reshape(1),), h.unsqueeze(0))

        i0 = torch.zeros((), dtype=torch.int64)
        h0 = torch.zeros(x.shape[0], U)
        buf0 = torch.zeros(steps, x.shape[0], U)
        _, h, buf = while_loop(cond_fn, body_fn, (i0, h0, buf0))
        return buf.transpose(0, 1), h


@model("while_loop_gru_cell", "torch._higher_order_ops.while_loop over time: GRUCell, each h written into a"
       " carried [T, B, U] buffer", ts=False)
def _():
    return WhileLoopGru()


class ScanRnn(nn.Module):
    """`torch._higher_order_ops.scan` over the time axis: an Elman cell, every step's h stacked."""

    def __init__(self):
        super().__init__()
        self.w = nn.Linear(F, U)
        self.r = nn.Linear(U, U, bias=False)

    def forward(self, x):
        from torch._higher_order_ops.scan import scan

        def step(h, xt):
            h = torch.tanh(self.w(xt) + self.r(h))
            return h, h.clone()

        h0 = torch.zeros(x.shape[0], U)
        h, ys = scan(step, h0, x.transpose(0, 1))
        return ys.transpose(0, 1), h


@model("scan_elman_cell", "torch._higher_order_ops.scan over time: an Elman cell, every step's h stacked", ts=False)
def _():
    return ScanRnn()


class ScanGruReverse(nn.Module):
    """`scan(..., reverse=True)`: a backward GRU cell, as a bidirectional layer's second half."""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(F, U)

    def forward(self, x):
        from torch._higher_order_ops.scan import scan

        def step(h, xt):
            h = self.cell(xt, h)
            return h, h.clone()

        h0 = torch.zeros(x.shape[0], U)
        h, ys = scan(step, h0, x.transpose(0, 1), reverse=True)
        return ys.transpose(0, 1), h


@model("scan_gru_cell_reverse", "torch._higher_order_ops.scan(reverse=True): a backward GRUCell", ts=False)
def _():
    return ScanGruReverse()


# --- export ------------------------------------------------------------------------------------


def export_ts(mod, x, opset):
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(mod, (x.clone(),), buf, opset_version=opset, input_names=["x"], dynamic_axes=DIMS,
                          dynamo=False)
    return onnx.load_from_string(buf.getvalue())


def export_dynamo(mod, x, opset):
    batch = torch.export.Dim("batch", min=2, max=1 << 16)
    time = torch.export.Dim("time", min=2, max=1 << 16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.onnx.export(mod, (x.clone(),), dynamo=True, verbose=False, opset_version=opset,
                                    input_names=["x"], dynamic_shapes=({0: batch, 1: time},))
    model = program.model_proto
    # Debug metadata with this script's absolute path: dropped so files do not depend on the checkout.
    for node in all_nodes(model.graph):
        for prop in [p for p in node.metadata_props if p.key == "pkg.torch.onnx.stack_trace"]:
            node.metadata_props.remove(prop)
    return model


def symbolic(model) -> bool:
    """Whether the graph input `x` keeps symbolic batch and time dims."""
    dims = model.graph.input[0].type.tensor_type.shape.dim
    return len(dims) >= 2 and all(d.dim_param for d in dims[:2])


def inputs(name, k):
    g = torch.Generator()
    g.manual_seed(zlib.crc32(f"{name}/{k}".encode()))
    b, t = SIZES[k]
    return torch.randn(b, t, F, generator=g)


def eager(mod, x):
    with torch.no_grad():
        out = mod(x.clone())
    outs = out if isinstance(out, (tuple, list)) else [out]
    return [o.detach().numpy() for o in outs]


def main(selected=None):
    import onnxscript

    w = Writer("torch", {"torch": torch.__version__, "onnxscript": onnxscript.__version__}, select=selected,
               root=RECURRENT_ROOT)
    for name, build, notes, ts, dynamo in MODELS:
        if selected and selected not in name:
            continue
        torch.manual_seed(zlib.crc32(name.encode()))
        mod = build().eval()
        xs = [inputs(name, k) for k in range(len(SIZES))]
        sets = [({"x": x.numpy()}, eager(mod, x)) for x in xs]
        (x0, out0), *more = sets
        paths = [(f"__ts{o}", f"torchscript opset {o}", lambda o=o: export_ts(mod, xs[0], o)) for o in TS_OPSETS if ts]
        paths += [(None, f"dynamo opset {o or 'default'}", lambda o=o: export_dynamo(mod, xs[0], o))
                  for o in DYNAMO_OPSETS if dynamo]
        for suffix, path, export in paths:
            try:
                onnx_model = export()
            except Exception as e:  # noqa: BLE001 - a refusal is data
                first = str(e).strip().splitlines()[0] if str(e).strip() else ""
                w.skipped(f"{name}{suffix or '__dynamo'}", path, f"{type(e).__name__}: {first}")
                continue
            if suffix is None:
                opset = next(i.version for i in onnx_model.opset_import if i.domain in ("", "ai.onnx"))
                suffix = f"__dynamo{opset}"
            static = not symbolic(onnx_model)
            if static:
                suffix += "_static"  # the exporter specialized batch and time: the first data set only
            w.case(f"{name}{suffix}", onnx_model, x0, out0, idiom=name, path=path, notes=notes,
                   more_sets=[] if static else more, meta_extra=loop_meta(onnx_model))
    w.finish(order=[m[0] for m in MODELS])


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
