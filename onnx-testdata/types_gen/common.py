"""Helpers shared by the op-family generators: the op versions and the reductions
each admits, a one-node scatter case builder, and the rounding-per-step cases.
"""
from __future__ import annotations

from onnx import helper

from . import oracle
from .cases import Case, add_case
from .values import DTYPES, is_complex

SE_OPS = [("Scatter", 9), ("Scatter", 10), ("ScatterElements", 11), ("ScatterElements", 13),
          ("ScatterElements", 16), ("ScatterElements", 18)]
ND_OPS = [("ScatterND", 11), ("ScatterND", 13), ("ScatterND", 16), ("ScatterND", 18)]
SLUG = {"Scatter": "scatter", "ScatterElements": "scatter_elements", "ScatterND": "scatter_nd",
        "TensorScatter": "tensor_scatter"}


def bf16_in_schema(op, opset):
    """bfloat16 joined ScatterElements / ScatterND at 13; Scatter (9, deprecated at 11) never had it."""
    return op != "Scatter" and opset >= 13


def reductions(op, opset):
    """The reduction attribute values op-opset admits; [None] = no reduction attribute."""
    if op == "Scatter" or opset < 16:
        return [None]
    if opset < 18:
        return ["none", "add", "mul"]
    return ["none", "add", "mul", "max", "min"]


def scatter_case(name, op, opset, dt, data, indices, updates, axis=None, red=None, checks=()):
    """One Scatter / ScatterElements / ScatterND node.  Complex with max/min is a load error."""
    c = Case(name, op, dt, opset)
    attrs = {}
    if axis is not None:
        attrs["axis"] = axis
    if red is not None:
        attrs["reduction"] = red
    et = DTYPES[dt][1]
    c.nodes = [helper.make_node(op, ["data", "indices", "updates"], ["output"], name=f"{SLUG[op]}_node", **attrs)]
    c.inputs = [("data", data, et), ("indices", indices, 7), ("updates", updates, et)]
    c.outputs = [("output", et)]
    c.checks = list(checks)
    if is_complex(dt) and red in ("max", "min"):
        c.error = "reduction"
        return add_case(c)
    if dt == "bf16" and not bf16_in_schema(op, opset):
        c.error = "type"
        return add_case(c)
    if op == "Scatter":
        # onnx.reference has no Scatter: run the same node as ScatterElements-11 (same semantics)
        from .cases import build_model
        node = helper.make_node("ScatterElements", ["data", "indices", "updates"], ["output"], **attrs)
        c.ref_model = build_model(c, nodes=[node], opset=11)
    if op == "ScatterND":
        c.oracle = lambda: [oracle.scatter_nd(data, indices, updates, red, dt)]
    else:
        c.oracle = lambda: [oracle.scatter_elements(data, indices, updates, axis or 0, red, dt)]
    return add_case(c)
