"""The shared case machinery and writing code.  A Case is one node test; make_case
runs the oracle (or takes a load-time error), checks the name against the result
(error cases end in _err_<word>) and registers the case.  Cases are registered in
the order the generators run; each draws from its own RNG seeded by crc32(name).
build_model / write_case write one case in the ONNX node-test layout.
"""
from __future__ import annotations

import os
import random
import re
import zlib

from onnx import helper, numpy_helper

from .oracle import OracleError
from .values import DTYPES


# --------------------------------------------------------------------------
# case model
# --------------------------------------------------------------------------
class Case:
    def __init__(self, name, nodes_fn=None):
        self.name = name
        self.op = None
        self.domain = ""
        self.opset = None
        self.attrs = {}
        self.inputs = []  # (name, array, elem_type, is_initializer)
        self.out_name = "output"
        self.out_type = None
        self.expected = None  # np array
        self.error = None  # expected word
        self.write_inputs = True
        self.tags = set()
        self.omit_inputs_slots = 0  # trailing optional inputs omitted


CASES = []
NAMES = set()


def rng_for(name):
    return random.Random(zlib.crc32(name.encode()))


def add_case(c):
    assert c.name not in NAMES, c.name
    assert c.name == c.name.lower(), c.name
    assert re.fullmatch(r"[a-z0-9_\-]+", c.name), c.name
    NAMES.add(c.name)
    CASES.append(c)


def make_case(name, op, opset, attrs, inputs, out_type, compute, domain="", load_error=None, write_inputs=None):
    """inputs: list of (name, array, elem_type, is_init). compute() -> array or OracleError."""
    c = Case(name)
    c.op, c.opset, c.attrs, c.inputs, c.out_type, c.domain = op, opset, attrs, inputs, out_type, domain
    if load_error is not None:
        c.error = load_error
        c.write_inputs = False if write_inputs is None else write_inputs
    else:
        try:
            c.expected = compute()
        except OracleError as e:
            c.error = e.args[0]
            c.write_inputs = True
    if c.error is not None:
        suffix = "_err_" + c.error.replace(" ", "-")
        if not c.name.endswith(suffix):
            raise AssertionError(f"{c.name}: oracle says error '{c.error}' but name lacks {suffix}")
    elif "_err_" in c.name:
        raise AssertionError(f"{c.name}: named as error but oracle computed a value")
    add_case(c)
    return c


def io(name, arr, dt, init=False):
    return (name, arr, DTYPES[dt][1], init)


# --------------------------------------------------------------------------
# model building / writing
# --------------------------------------------------------------------------
def ir_version_for(opset):
    if opset <= 18:
        return 8
    return 10


def build_model(c):
    graph_inputs, inits, node_inputs = [], [], []
    for (nm, arr, et, is_init) in c.inputs:
        node_inputs.append(nm)
        if is_init:
            t = numpy_helper.from_array(arr, nm)
            inits.append(t)
        else:
            graph_inputs.append(helper.make_tensor_value_info(nm, et, list(arr.shape)))
    node = helper.make_node(c.op, node_inputs, [c.out_name], domain=c.domain, **c.attrs)
    out = helper.make_tensor_value_info(c.out_name, c.out_type, None)
    graph = helper.make_graph([node], c.name, graph_inputs, [out], initializer=inits)
    opsets = [helper.make_opsetid("", c.opset)]
    if c.domain:
        opsets.append(helper.make_opsetid(c.domain, 1))
    m = helper.make_model(graph, opset_imports=opsets, producer_name="tract-onnx-scatter-generate",
                          ir_version=ir_version_for(c.opset))
    return m


def runtime_inputs(c):
    return [(nm, arr) for (nm, arr, et, is_init) in c.inputs if not is_init]


def write_case(c, model, out):
    d = os.path.join(out, c.name)
    os.makedirs(d)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    if c.error is None or c.write_inputs:
        ds = os.path.join(d, "test_data_set_0")
        os.makedirs(ds)
        for i, (nm, arr) in enumerate(runtime_inputs(c)):
            with open(os.path.join(ds, f"input_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(arr, nm).SerializeToString())
        if c.error is None:
            with open(os.path.join(ds, "output_0.pb"), "wb") as f:
                f.write(numpy_helper.from_array(c.expected, c.out_name).SerializeToString())
    if c.error is not None:
        with open(os.path.join(d, "expected_error.txt"), "w") as f:
            f.write(c.error)
