"""The shared case machinery: a Case is one node-test directory (one node or a small
graph); add_case registers it (names are unique lower-case slugs; error cases end in
_err_<word>).  build_model / write_case write one case in the ONNX node-test layout.
Cases are registered in generator order and written sorted by name; each draws from
its own RNG seeded by crc32(name).
"""
from __future__ import annotations

import os
import random
import re
import zlib

from onnx import helper, numpy_helper


class Case:
    def __init__(self, name, family, dt, opset):
        self.name = name
        self.family = family  # README table row, e.g. "ScatterElements"
        self.dt = dt  # bf16 / c64 / c128
        self.opset = opset
        self.nodes = []  # NodeProto
        self.inputs = []  # (name, array, elem_type): graph inputs, written as input_<i>.pb
        self.inits = []  # (name, array): initializers
        self.outputs = []  # (name, elem_type)
        self.ref_model = None  # model to run in ReferenceEvaluator instead of this one (Scatter 9/10)
        self.oracle = None  # () -> list of arrays (per-step rounding), checked against the reference
        self.checks = []  # (output index, flat position, expected python float): asserted on the reference
        self.error = None  # word the load error must contain
        self.expected = None  # list of arrays


CASES = []
NAMES = set()


def rng_for(name):
    return random.Random(zlib.crc32(name.encode()))


def add_case(c):
    assert c.name not in NAMES, c.name
    assert re.fullmatch(r"[a-z0-9_\-]+", c.name), c.name
    assert (c.error is not None) == ("_err_" in c.name), c.name
    if c.error is not None:
        assert c.name.endswith("_err_" + c.error.replace(" ", "-")), c.name
    NAMES.add(c.name)
    CASES.append(c)
    return c


def ir_version_for(opset):
    return 8 if opset <= 18 else 10


def build_model(c, out_shapes=None, nodes=None, opset=None):
    opset = opset or c.opset
    graph_inputs = [helper.make_tensor_value_info(nm, et, list(a.shape)) for (nm, a, et) in c.inputs]
    inits = [numpy_helper.from_array(a, nm) for (nm, a) in c.inits]
    outs = [helper.make_tensor_value_info(nm, et, None if out_shapes is None else list(out_shapes[i]))
            for i, (nm, et) in enumerate(c.outputs)]
    graph = helper.make_graph(nodes or c.nodes, c.name, graph_inputs, outs, initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             producer_name="tract-onnx-scatter-generate-types",
                             ir_version=ir_version_for(opset))


def type_dir(name):
    """The subdirectory of a case: `complex/` or `bfloat16/`, one suite each."""
    return "complex" if re.search(r"(^|_)(c64|c128|complex)(_|$)", name) else "bfloat16"


def write_case(out, name, model_bytes, inputs, outputs, error=None):
    """inputs: [(name, array)]; outputs: [(name, array)] (empty for error cases)."""
    d = os.path.join(out, type_dir(name), name)
    os.makedirs(d)  # the type directory too
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(model_bytes)
    if error is None:
        ds = os.path.join(d, "test_data_set_0")
        os.makedirs(ds)
        for i, (nm, a) in enumerate(inputs):
            with open(os.path.join(ds, f"input_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(a, nm).SerializeToString())
        for i, (nm, a) in enumerate(outputs):
            with open(os.path.join(ds, f"output_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(a, nm).SerializeToString())
    else:
        with open(os.path.join(d, "expected_error.txt"), "w") as f:
            f.write(error)
