#!/usr/bin/env python3
"""Full-size exports for `cargo xtask bench` (generation only): the static KV-cache update
`cache.index_copy_(2, pos, k)` on a 1x32x2048x128 f32 cache, the YOLOv5 Detect head on
1x3x80x80x85 (two slices of the last axis assigned in sequence) and the same head with a third
slice (`y[..., 4:6]`, keypoint-style offsets), each through the TorchScript exporter (opset 17)
and the dynamo exporter (its default opset). The models hold no cache: only the YOLO grids are
constants.

Writes crates/scatter-bench/models/<name>.onnx. Same venv as torch_cases.py.
"""
from __future__ import annotations

import io
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import onnx  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "crates", "scatter-bench", "models")


class KvIndexCopy(nn.Module):
    def forward(self, cache, pos, k):
        return cache.index_copy(2, pos, k)


class YoloDetect(nn.Module):
    def __init__(self, na=3, ny=80, nx=80, no=85, stride=8.0, third_slice=False):
        super().__init__()
        self.third_slice = third_slice
        yv, xv = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing="ij")
        grid = torch.stack((xv, yv), 2).expand(1, na, ny, nx, 2).float() - 0.5
        anchors = torch.tensor([[10.0, 13], [16, 30], [33, 23]]).view(1, na, 1, 1, 2)
        self.register_buffer("grid", grid.contiguous())
        self.register_buffer("anchor_grid", anchors.expand(1, na, ny, nx, 2).contiguous())
        self.no, self.stride = no, stride

    def forward(self, x):
        y = x.sigmoid()
        y[..., 0:2] = (y[..., 0:2] * 2 + self.grid) * self.stride
        y[..., 2:4] = (y[..., 2:4] * 2) ** 2 * self.anchor_grid
        if self.third_slice:
            y[..., 4:6] = (y[..., 4:6] * 2 - 0.5) * self.stride
        return y.view(1, -1, self.no)


def export(name, module, args, names, dynamo):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if dynamo:
            model = torch.onnx.export(module, args, dynamo=True, verbose=False).model_proto
        else:
            buf = io.BytesIO()
            torch.onnx.export(module, args, buf, opset_version=17, input_names=names, dynamo=False)
            model = onnx.load_from_string(buf.getvalue())
    path = os.path.join(OUT, f"{name}.onnx")
    onnx.save_model(model, path)
    opset = next(i.version for i in model.opset_import if i.domain in ("", "ai.onnx"))
    print(f"{path}: opset {opset}, {os.path.getsize(path)} bytes")


def main():
    os.makedirs(OUT, exist_ok=True)
    kv = (torch.zeros(1, 32, 2048, 128), torch.tensor([7]), torch.zeros(1, 32, 1, 128))
    yolo = (torch.zeros(1, 3, 80, 80, 85),)
    for dynamo, tag in [(False, "torchscript"), (True, "dynamo")]:
        export(f"kv_index_copy_{tag}", KvIndexCopy().eval(), kv, ["cache", "pos", "k"], dynamo)
        export(f"yolov5_head_{tag}", YoloDetect().eval(), yolo, ["x"], dynamo)
        export(f"yolov5_head3_{tag}", YoloDetect(third_slice=True).eval(), yolo, ["x"], dynamo)


if __name__ == "__main__":
    main()
