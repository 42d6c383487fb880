"""onnxruntime runs (CPU, 1 thread), a cross-check only.  bfloat16 goes in and out
through OrtValues (onnxruntime's numpy bridge has no bfloat16): inputs as uint16 bits
tagged BFLOAT16, outputs copied out of the OrtValue's buffer.  A run returns
("ok", [arrays]) or ("refused", first line of the error).
"""
from __future__ import annotations

import ctypes

import ml_dtypes
import numpy as np

BF16 = ml_dtypes.bfloat16


def _in(ort, a):
    a = np.ascontiguousarray(a)
    if a.dtype == BF16:
        return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(a.view(np.uint16), 16)
    return ort.OrtValue.ortvalue_from_numpy(a)


def _out(v):
    if v.data_type() == "tensor(bfloat16)":
        shape = v.shape()
        n = int(np.prod(shape)) if shape else 1
        raw = ctypes.string_at(v.data_ptr(), 2 * n) if n else b""
        return np.frombuffer(raw, dtype=np.uint16).copy().view(BF16).reshape(shape)
    return v.numpy()


def first_line(e):
    s = str(e).strip().splitlines()
    return f"{type(e).__name__}: {s[0] if s else ''}"[:240]


def run_ort(model_bytes, feeds):
    import onnxruntime as ort
    ort.set_default_logger_severity(4)
    try:
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        so.log_severity_level = 4
        sess = ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])
        names = [o.name for o in sess.get_outputs()]
        res = sess.run_with_ort_values(names, {k: _in(ort, v) for k, v in feeds.items()})
        return "ok", [_out(v) for v in res]
    except Exception as e:  # noqa: BLE001 - a refusal is data
        return "refused", first_line(e)
