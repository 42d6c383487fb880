"""Cross-checks against onnxruntime (CPU, 1 thread, optimizations off) and
onnx.reference.ReferenceEvaluator, and the ORT_DISAGREEMENTS.md report.  They
never decide an expected value: the corpus keeps our oracle's.  ScatterND cases
with int32 indices are run through an int64 shadow model.
"""
from __future__ import annotations

import os
import warnings

import numpy as np
import onnx
from onnx import TensorProto

from .cases import Case, build_model, runtime_inputs


# --------------------------------------------------------------------------
# cross-checks
# --------------------------------------------------------------------------
def same(expected, got):
    got = np.asarray(got)
    if tuple(got.shape) != tuple(expected.shape):
        return False
    if expected.dtype == object:
        return [str(x) for x in expected.ravel()] == [x.decode() if isinstance(x, bytes) else str(x) for x in got.ravel()]
    if got.dtype != expected.dtype:
        return False
    if expected.dtype.kind == "f":
        e = expected.astype(np.float64)
        g = got.astype(np.float64)
        with np.errstate(all="ignore"):
            return bool(np.all((np.isnan(e) & np.isnan(g)) | (e == g) |
                               (np.abs(e - g) <= 1e-7 + 1e-3 * np.abs(e))))
    return bool(np.array_equal(expected, got))


def fmt(a, limit=120):
    if a is None:
        return "-"
    if isinstance(a, str):
        s = " ".join(a.split())
    else:
        a = np.asarray(a)
        s = np.array2string(a.ravel(), separator=",", threshold=40, max_line_width=10_000)
        s = s.replace("\n", " ")
    s = s.replace("|", "\\|")
    return s if len(s) <= limit else s[: limit - 3] + "..."


def shadow(c):
    """A model for the cross-checkers.  onnxruntime and the ONNX spec only take
    int64 indices for ScatterND; our contract also takes int32 with the same
    meaning, so a ScatterND case with int32 indices is checked through an
    otherwise identical model with int64 indices.  Returns (model, feeds, note)."""
    if c.op == "ScatterND" and any(nm == "indices" and et == TensorProto.INT32 for (nm, _, et, _) in c.inputs):
        s2 = Case(c.name)
        s2.__dict__.update(c.__dict__)
        s2.inputs = [(nm, arr.astype(np.int64), TensorProto.INT64, ini) if nm == "indices" else (nm, arr, et, ini)
                     for (nm, arr, et, ini) in c.inputs]
        return build_model(s2), {nm: arr for nm, arr in runtime_inputs(s2)}, True
    return build_model(c), {nm: arr for nm, arr in runtime_inputs(c)}, False


def clean_msg(msg):
    msg = " ".join(str(msg).split())
    for marker in ("Status Message: ", "] : "):
        if marker in msg:
            msg = msg.split(marker)[-1]
    return msg


def run_ort(sess_mod, c, model, feeds):
    so = sess_mod.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 4
    so.graph_optimization_level = sess_mod.GraphOptimizationLevel.ORT_DISABLE_ALL
    try:
        sess = sess_mod.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001
        return "load_error", clean_msg(e)
    try:
        out = sess.run(None, feeds)[0]
        return "ok", out
    except Exception as e:  # noqa: BLE001
        return "run_error", clean_msg(e)


def run_ref(c, model, feeds):
    from onnx.reference import ReferenceEvaluator
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"):
                ev = ReferenceEvaluator(model)
                out = ev.run(None, feeds)[0]
        return "ok", out
    except Exception as e:  # noqa: BLE001
        return "error", f"{type(e).__name__}: {e}"


UNSUPPORTED_MARKERS = ("NOT_IMPLEMENTED", "Could not find an implementation", "not supported", "Unsupported",
                       "is not a registered function/op", "No Op registered", "Unrecognized attribute",
                       "not implemented", "NotImplemented")


def classify_valid_error(msg):
    return "unsupported"


def reason_for(c, who, status, got):
    """A short explanation for a disagreement, from the case's character."""
    n = c.name
    attrs = c.attrs
    red = attrs.get("reduction")
    if c.error is not None:
        if "_err_foo" in n:
            return f"{who} ignores unknown attributes; our contract rejects them at load"
        if c.error == "deprecated":
            return f"{who} still accepts Scatter at opset >= 11; our contract rejects it as deprecated"
        if c.error == "reduction":
            r = str(attrs.get("reduction"))
            if "str" in n and r == "mul":
                return f"{who} only fails when a string mul is actually applied (here no index); our contract rejects string mul at load"
            if r not in ("none", "add", "mul", "max", "min"):
                return f"{who} treats the unknown reduction '{r}' as none; our contract rejects it"
            if c.opset < 16:
                return f"{who} accepts the reduction attribute at opset {c.opset} where the op does not define it"
            return f"{who} accepts reduction '{r}' at opset {c.opset}; it was only added in opset 18"
        if c.error == "opset":
            return f"{who} runs the op below its first version; our contract rejects it"
        if c.error == "out of bounds":
            return f"{who} does not bound-check this index; our contract requires an error"
        if c.error == "type":
            return f"{who} accepts the type mismatch (no silent promotion in our contract)"
        return f"{who} accepts an input our contract rejects ({c.error})"
    if status != "ok":
        return f"{who} fails on a case our contract defines: {fmt(got, 100)}"
    if "nan" in n and red in ("max", "min"):
        extra = ""
        try:
            e, g = c.expected.astype(np.float64), np.asarray(got).astype(np.float64)
            if np.any((e == 0) & (g == 0) & (np.signbit(e) != np.signbit(g))):
                extra = "; on a tie (0.0 vs -0.0) it also takes the update where our contract keeps the existing value"
        except Exception:  # noqa: BLE001
            pass
        return f"{who} max/min does not propagate NaN from both sides (our contract: NaN wins){extra}"
    if "round_each_step" in n:
        return f"{who} accumulates without rounding to the element type after every update"
    if red in ("max", "min") and c.inputs[0][1].dtype.kind == "f":
        return f"{who} picks the other of two equal values (signed zero); our contract keeps the existing value"
    if "duplicates" in n or "dup" in n or "longaxis" in n:
        return f"{who} applies duplicate indices in another order; our contract folds in row-major order"
    return f"{who} computes a different value"


def write_report(out, ort, ort_stats, ref_stats, ort_dis, ref_dis, ort_unsup, ref_err_dis):
    lines = [
        "# Disagreements between our contract and other implementations",
        "",
        "Generated by `onnx-testdata/generate.py`; do not edit by hand.",
        "The corpus always keeps OUR contract's value (see `onnx-testdata/README-corpus.md`).",
        "",
        f"onnxruntime {ort.__version__} (CPU, 1 thread, optimizations off), onnx {onnx.__version__} "
        f"ReferenceEvaluator, numpy {np.__version__}.",
        "Floats compared with rtol 1e-3, atol 1e-7, NaN == NaN. "
        "Cases in the custom domain `org.openvinotoolkit` are oracle-only (counted as unsupported).",
        f"ScatterND cases with int32 indices ({ort_stats['via int64 shadow']}) are checked through the same model "
        "with int64 indices: the ONNX spec and onnxruntime only take int64 there, our contract takes both.",
        "",
        "| checker | agreed | disagreed | unsupported |",
        "| --- | --- | --- | --- |",
        f"| onnxruntime | {ort_stats['agreed']} | {ort_stats['disagreed']} | {ort_stats['unsupported']} |",
        f"| ReferenceEvaluator | {ref_stats['agreed']} | {ref_stats['disagreed']} | {ref_stats['unsupported']} |",
        "",
        "## onnxruntime disagreements",
        "",
        "| case | ours | onnxruntime | why |",
        "| --- | --- | --- | --- |",
    ]
    for row in ort_dis:
        lines.append("| " + " | ".join(f"`{row[0]}`" if i == 0 else row[i] for i in range(4)) + " |")
    lines += ["", "## onnxruntime could not run (valid cases; not a disagreement)", "",
              "| case | onnxruntime error |", "| --- | --- |"]
    for name, msg in ort_unsup:
        lines.append(f"| `{name}` | {msg} |")
    lines += ["", "## ReferenceEvaluator disagreements", "",
              "| case | ours | ReferenceEvaluator | why |", "| --- | --- | --- | --- |"]
    for row in ref_dis:
        lines.append("| " + " | ".join(f"`{row[0]}`" if i == 0 else row[i] for i in range(4)) + " |")
    lines += ["", "## Error cases the ReferenceEvaluator ran without error", "",
              "The reference evaluator does little input validation; each of these is an error in our contract.", "",
              "| case | our error |", "| --- | --- |"]
    for name, word in ref_err_dis:
        lines.append(f"| `{name}` | {word} |")
    with open(os.path.join(out, "ORT_DISAGREEMENTS.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
