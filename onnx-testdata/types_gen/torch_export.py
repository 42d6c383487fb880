"""PyTorch bf16 exports: small nn.Modules using scatter_add, index_put (accumulate
True and False) and index_copy, moved to bfloat16 with model.to(torch.bfloat16),
exported with fixed input shapes by the TorchScript exporter (dynamo=False, opsets
16 and 17) and the dynamo exporter (dynamo=True, its default opset and 18).
Expected outputs are PyTorch eager's bf16 outputs (written as BFLOAT16 tensors).
The ONNX reference and onnxruntime run every export as cross-checks only.

Runs in the torch venv (~/venvs/torch), as a subprocess of the main generator:
  cd onnx-testdata && ~/venvs/torch/bin/python -m types_gen.torch_export OUT RESULTS.json
It writes OUT/torch_<idiom>__<path><opset>/ and a JSON list of results (exported or
failed, with the message; reference / onnxruntime vs eager).
"""
from __future__ import annotations

import io
import json
import os
import sys
import warnings
import zlib

import ml_dtypes
import numpy as np
import onnx
import torch
from torch import nn

from .cases import write_case
from .crosscheck import first_line, run_ort
from .oracle import same

BF = torch.bfloat16
TS_OPSETS = (16, 17)
DYNAMO_OPSETS = (None, 18)


def gen(name):
    return torch.Generator().manual_seed(zlib.crc32(name.encode()))


def bf(g, *shape, scale=64, hi=255):
    """k/scale values (|k| <= hi), exact in bf16."""
    return (torch.randint(-hi, hi + 1, shape, generator=g).to(torch.float32) / scale).to(BF)


class ScatterAdd(nn.Module):
    """(x * scale).scatter_add(1, index, src): a bf16 parameter, duplicates along dim 1."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor([1.0, 0.5, 2.0, -1.0, 0.25]))

    def forward(self, x, index, src):
        return (x * self.scale).scatter_add(1, index, src)


class ScatterAddPlain(nn.Module):
    def forward(self, x, index, src):
        return x.scatter_add(0, index, src)


class IndexPutAccumulate(nn.Module):
    def forward(self, x, rows, v):
        return x.index_put((rows,), v, accumulate=True)


class IndexPut2dAccumulate(nn.Module):
    def forward(self, x, rows, cols, v):
        return x.index_put((rows, cols), v, accumulate=True)


class IndexPutAssign(nn.Module):
    def forward(self, x, rows, v):
        return x.index_put((rows,), v, accumulate=False)


class IndexCopy(nn.Module):
    """index_copy along dim 1 of a bf16 buffer-like input, plus a bf16 parameter."""

    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.tensor([0.5, -0.25, 1.0]))

    def forward(self, x, index, src):
        return x.index_copy(1, index, src) + self.bias.reshape(3, 1)


def idioms():
    out = []

    g = gen("scatter_add")
    out.append(("scatter_add_dim1_duplicates", ScatterAdd(),
                {"x": bf(g, 3, 5, scale=8, hi=15), "index": torch.tensor([[0, 4, 0, 2], [1, 1, 3, 1], [4, 0, 4, 4]]),
                 "src": bf(g, 3, 4, scale=8, hi=15)}))
    out.append(("scatter_add_duplicates_round_per_step", ScatterAddPlain(),
                {"x": torch.tensor([1.0, 5.0, 2.0], dtype=BF), "index": torch.tensor([0, 0, 0, 0, 2, 2, 2, 2]),
                 "src": torch.full([8], 2.0 ** -8, dtype=BF)}))
    g = gen("index_put_accumulate")
    out.append(("index_put_accumulate_rows_duplicates", IndexPutAccumulate(),
                {"x": bf(g, 4, 3), "rows": torch.tensor([2, 0, 2, -1, 0]), "v": bf(g, 5, 3)}))
    out.append(("index_put_accumulate_duplicates_round_per_step", IndexPutAccumulate(),
                {"x": torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=BF), "rows": torch.tensor([0, 0, 0, 0]),
                 "v": torch.tensor([[2.0 ** -8, 2.0 ** -7]] * 4, dtype=BF)}))
    g = gen("index_put_2d")
    out.append(("index_put_accumulate_2d_points", IndexPut2dAccumulate(),
                {"x": bf(g, 3, 4), "rows": torch.tensor([0, 2, 0, 1, 2]), "cols": torch.tensor([3, 1, 3, 0, -3]),
                 "v": bf(g, 5)}))
    g = gen("index_put_assign")
    out.append(("index_put_assign_rows", IndexPutAssign(),
                {"x": bf(g, 5, 2), "rows": torch.tensor([3, -1, 0]), "v": bf(g, 3, 2)}))
    g = gen("index_copy")
    out.append(("index_copy_dim1", IndexCopy(),
                {"x": bf(g, 3, 6), "index": torch.tensor([4, 1, 5]), "src": bf(g, 3, 3)}))
    return out


def to_np(t):
    if t.dtype == BF:
        return t.contiguous().view(torch.int16).numpy().view(ml_dtypes.bfloat16).copy()
    return t.numpy().copy()


def export_ts(mod, inputs, opset):
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(mod, tuple(v.clone() for v in inputs.values()), buf, opset_version=opset,
                          input_names=list(inputs), output_names=["output"], dynamo=False)
    return onnx.load_from_string(buf.getvalue())


def export_dynamo(mod, inputs, opset):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prog = torch.onnx.export(mod, tuple(v.clone() for v in inputs.values()), dynamo=True, verbose=False,
                                 opset_version=opset)
    return prog.model_proto


def compare(got, expected):
    if len(got) != len(expected):
        return f"{len(got)} outputs, eager has {len(expected)}"
    for i, (a, b) in enumerate(zip(got, expected)):
        if not same(np.asarray(a), b):
            return f"output {i}: {np.asarray(a).astype(np.float32).ravel().tolist()} vs eager {b.astype(np.float32).ravel().tolist()}"
    return "match"


def cross(model, feeds):
    from onnx.reference import ReferenceEvaluator
    try:
        ref = ReferenceEvaluator(model).run(None, feeds)
    except Exception as e:  # noqa: BLE001
        ref = "error: " + first_line(e)
    status, ortv = run_ort(model.SerializeToString(), feeds)
    if status != "ok":
        ortv = "refused: " + ortv
    return ref, ortv


def main(out, results_path):
    import onnxscript

    torch.manual_seed(0)
    results = []
    for idiom, mod, inputs in idioms():
        mod = mod.to(BF).eval()
        with torch.no_grad():
            y = mod(*[v.clone() for v in inputs.values()])
        expected = [to_np(y)]
        assert expected[0].dtype == ml_dtypes.bfloat16
        paths = [("ts", o) for o in TS_OPSETS] + [("dynamo", o) for o in DYNAMO_OPSETS]
        for kind, opset in paths:
            label = f"{kind}{'default' if opset is None else opset}"
            try:
                model = export_ts(mod, inputs, opset) if kind == "ts" else export_dynamo(mod, inputs, opset)
            except Exception as e:  # noqa: BLE001 - a refusal is data
                msg = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
                results.append({"idiom": idiom, "path": label, "status": "failed", "message": msg[:400]})
                continue
            got_opset = next(i.version for i in model.opset_import if i.domain in ("", "ai.onnx"))
            name = f"torch_{idiom}_bf16__{kind}{got_opset}"
            ginputs = [i.name for i in model.graph.input]
            inits = {i.name for i in model.graph.initializer}
            ginputs = [n for n in ginputs if n not in inits]
            by_pos = list(inputs.items())
            # TorchScript names inputs after input_names; dynamo after forward's parameters: same order
            feeds = {}
            for n, (_, t) in zip(ginputs, by_pos):
                feeds[n] = to_np(t)
            ref, ortv = cross(model, feeds)
            ops = sorted({n.op_type for n in model.graph.node})
            outs = [(model.graph.output[0].name, expected[0])]
            write_case(out, name, model.SerializeToString(), list(feeds.items()), outs)
            results.append({
                "idiom": idiom, "path": label, "status": "exported", "name": name, "opset": got_opset,
                "ops": ops, "unused_inputs": len(by_pos) - len(ginputs),
                "ref_vs_eager": ref if isinstance(ref, str) else compare(ref, expected),
                "ort_vs_eager": ortv if isinstance(ortv, str) else compare(ortv, expected),
                "eager": expected[0].astype(np.float32).ravel().tolist(),
            })
    meta = {"torch": torch.__version__, "onnxscript": onnxscript.__version__, "onnx": onnx.__version__,
            "ml_dtypes": ml_dtypes.__version__, "numpy": np.__version__}
    with open(results_path, "w") as f:
        json.dump({"versions": meta, "results": results}, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
