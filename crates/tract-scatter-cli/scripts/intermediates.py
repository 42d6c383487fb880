#!/usr/bin/env python3
"""A reference bundle for `tract-scatter compare MODEL --intermediates REF.npz`.

Runs MODEL with onnxruntime (graph optimizations off, so every tensor is
computed as the graph says) with every intermediate value of the main graph
made a graph output, and writes one .npz keyed by ONNX tensor name: the
model's inputs, every node output onnxruntime returns as a tensor, and the
model's outputs. float16 values are written as float32 (.npz readers of
tract-scatter have no float16); sequences, maps and strings are left out.

Inputs come from --inputs FILE.npz (keyed by input name), --data-set DIR
(input_<i>.pb), or are seeded random tensors (floats in [-1, 1), integers
in 0..4, booleans): tract-scatter reads the inputs from the bundle, so its
run and onnxruntime's see the same ones.

    pip install onnx onnxruntime numpy
    python3 intermediates.py model.onnx --output ref.npz [--inputs inputs.npz] [--set N=4]
    tract-scatter compare model.onnx --intermediates ref.npz
"""

import argparse
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper, shape_inference


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model", help="the ONNX model")
    p.add_argument("--output", "-o", required=True, help="the .npz to write")
    p.add_argument("--inputs", help=".npz of inputs keyed by input name")
    p.add_argument("--data-set", help="node-test data set directory (input_<i>.pb)")
    p.add_argument("--seed", type=int, default=0, help="seed of random inputs")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SYMBOL=N",
        help="value of a symbolic dimension of random inputs (others take 1)",
    )
    return p.parse_args()


def with_every_value_as_output(model):
    """The model with each node output of the main graph a graph output."""
    try:
        inferred = shape_inference.infer_shapes(model)
    except Exception as e:  # shape inference is a help, not a requirement
        print(f"shape inference failed ({e}); outputs without types", file=sys.stderr)
        inferred = model
    graph = inferred.graph
    known = {vi.name: vi for vi in list(graph.value_info) + list(graph.output)}
    present = {o.name for o in graph.output}
    for node in graph.node:
        for name in node.output:
            if name and name not in present:
                present.add(name)
                graph.output.append(
                    known.get(name) or onnx.helper.make_empty_tensor_value_info(name)
                )
    return inferred


ELEMENT_TYPES = {
    "tensor(float)": np.float32,
    "tensor(double)": np.float64,
    "tensor(float16)": np.float16,
    "tensor(int64)": np.int64,
    "tensor(int32)": np.int32,
    "tensor(int16)": np.int16,
    "tensor(int8)": np.int8,
    "tensor(uint64)": np.uint64,
    "tensor(uint32)": np.uint32,
    "tensor(uint16)": np.uint16,
    "tensor(uint8)": np.uint8,
    "tensor(bool)": np.bool_,
}


def random_input(arg, symbols, rng):
    dtype = ELEMENT_TYPES.get(arg.type)
    if dtype is None:
        sys.exit(f"error: cannot make a random {arg.type} input {arg.name!r}: pass it with --inputs")
    shape = [d if isinstance(d, int) else symbols.get(d, 1) for d in arg.shape]
    if np.issubdtype(dtype, np.floating):
        return rng.uniform(-1, 1, shape).astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    return rng.integers(0, 4, shape).astype(dtype)


def main():
    args = parse_args()
    model = onnx.load(args.model)
    symbols = {}
    for spec in args.set:
        name, _, n = spec.partition("=")
        symbols[name] = int(n)
    session = ort.InferenceSession(
        with_every_value_as_output(model).SerializeToString(),
        sess_options=_options(),
        providers=["CPUExecutionProvider"],
    )
    inputs = {}
    if args.data_set:
        for ix, arg in enumerate(session.get_inputs()):
            path = os.path.join(args.data_set, f"input_{ix}.pb")
            if os.path.exists(path):
                tensor = onnx.TensorProto()
                with open(path, "rb") as f:
                    tensor.ParseFromString(f.read())
                inputs[arg.name] = numpy_helper.to_array(tensor)
    if args.inputs:
        with np.load(args.inputs) as npz:
            inputs.update({name: npz[name] for name in npz.files})
    rng = np.random.default_rng(args.seed)
    for arg in session.get_inputs():
        if arg.name not in inputs:
            inputs[arg.name] = random_input(arg, symbols, rng)
    names = [o.name for o in session.get_outputs()]
    values = session.run(names, inputs)
    bundle = dict(inputs)
    skipped = []
    for name, value in zip(names, values):
        if not isinstance(value, np.ndarray) or value.dtype.kind in "OUS":
            skipped.append(name)
            continue
        bundle[name] = value.astype(np.float32) if value.dtype == np.float16 else value
    np.savez(args.output, **bundle)
    print(
        f"wrote {len(bundle)} tensors ({len(inputs)} inputs, {len(bundle) - len(inputs)} node outputs) "
        f"to {args.output}" + (f"; left out (not tensors): {', '.join(skipped)}" if skipped else "")
    )


def _options():
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return options


if __name__ == "__main__":
    main()
