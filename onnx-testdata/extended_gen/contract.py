"""The load-time validation contract of the ONNX scatter ops (Scatter,
ScatterElements, ScatterND): which attributes and reduction values each opset
accepts, and the op versions the generators cover.  Errors found here are
decided at load, so their cases ship no inputs.
"""
from __future__ import annotations


# --------------------------------------------------------------------------
# validation contract (load-time)
# --------------------------------------------------------------------------
def eff(opset):
    return min(opset, 18)


def load_error_for(op, opset, attrs):
    """Return the expected word of a load-time error, or None."""
    if op == "Scatter":
        if opset >= 11:
            return "deprecated"
        allowed = {"axis"}
        reds = None
    elif op == "ScatterElements":
        if opset < 11:
            return "opset"
        allowed = {"axis"} if eff(opset) < 16 else {"axis", "reduction"}
        reds = None if eff(opset) < 16 else (["none", "add", "mul"] if eff(opset) < 18 else ["none", "add", "mul", "max", "min"])
    elif op == "ScatterND":
        if opset < 11:
            return "opset"
        allowed = set() if eff(opset) < 16 else {"reduction"}
        reds = None if eff(opset) < 16 else (["none", "add", "mul"] if eff(opset) < 18 else ["none", "add", "mul", "max", "min"])
    else:
        raise ValueError(op)
    for a in sorted(attrs):
        if a not in allowed:
            return a
    if "reduction" in attrs and attrs["reduction"] not in reds:
        return "reduction"
    return None


SE_OPS = [("Scatter", 9), ("Scatter", 10), ("ScatterElements", 11), ("ScatterElements", 13),
          ("ScatterElements", 16), ("ScatterElements", 18)]
ND_OPS = [("ScatterND", 11), ("ScatterND", 13), ("ScatterND", 16), ("ScatterND", 18)]
OPNAME = {"Scatter": "scatter", "ScatterElements": "scatter_elements", "ScatterND": "scatter_nd",
          "TensorScatter": "tensor_scatter", "ScatterElementsUpdate": "ov_scatter_elements_update"}


def legal_reductions(op, opset):
    if op == "Scatter" or eff(opset) < 16:
        return [None]
    if eff(opset) < 18:
        return ["none", "add", "mul"]
    return ["none", "add", "mul", "max", "min"]
