#!/usr/bin/env python3
"""Times onnxruntime on the scatter benchmark workloads.

Called by `cargo xtask bench` (crates/scatter-bench), which writes one
directory per workload: model.onnx and one <input name>.npy per graph input
(data.npy, indices.npy, updates.npy for the one-node scatter models), and
optionally feedback.txt, lines "<output> <input>": that output is fed back
as that input of the next run (the GTCRN caches, the KV cache of the
exported kv_step_* models), and optionally position.txt, "<input> <limit>":
that int64 [1] input is set to call % limit before each call (the KV write
position of kv_step_*, updated in place outside the timed call). Single-threaded CPU session
(intra_op_num_threads=1, inter_op_num_threads=1, sequential), inputs and
preallocated outputs bound with io binding so no allocation or conversion
is timed (fed-back values alternate between two preallocated buffers,
rebound between runs, outside the timed call), one warm-up run, then runs
until --budget seconds (at least --min-runs, at most --max-runs).
Prints one line per workload: "<name> <median seconds> <runs>".

Setup: python3 -m venv .venv && .venv/bin/pip install -r onnx-testdata/requirements.txt
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np
import onnxruntime as ort


def session(model_path):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Errors only: TensorScatter warns on every run that it copies
    # past_cache (its in-place path needs the output bound to the input).
    so.log_severity_level = 3
    return ort.InferenceSession(
        model_path, sess_options=so, providers=["CPUExecutionProvider"]
    )


def time_workload(path, budget, min_runs, max_runs):
    sess = session(os.path.join(path, "model.onnx"))
    arrays = {
        i.name: np.load(os.path.join(path, i.name + ".npy")) for i in sess.get_inputs()
    }
    feedback = []
    feedback_path = os.path.join(path, "feedback.txt")
    if os.path.isfile(feedback_path):
        with open(feedback_path) as f:
            feedback = [tuple(line.split()) for line in f if line.strip()]
    position = None
    position_path = os.path.join(path, "position.txt")
    if os.path.isfile(position_path):
        with open(position_path) as f:
            name, limit = f.read().split()
            position = (name, int(limit))
    # One plain run gives the output shapes and types to preallocate.
    output_names = [o.name for o in sess.get_outputs()]
    first = dict(zip(output_names, sess.run(output_names, arrays)))
    inputs = {
        name: ort.OrtValue.ortvalue_from_numpy(array, "cpu", 0)
        for name, array in arrays.items()
    }
    outputs = {
        name: ort.OrtValue.ortvalue_from_shape_and_type(
            array.shape, array.dtype, "cpu", 0
        )
        for name, array in first.items()
    }
    binding = sess.io_binding()

    def bind():
        for name, value in inputs.items():
            binding.bind_ortvalue_input(name, value)
        for name, value in outputs.items():
            binding.bind_ortvalue_output(name, value)

    def swap():
        # The fed-back output becomes the input; the old input buffer
        # receives the next output.
        for out, inp in feedback:
            inputs[inp], outputs[out] = outputs[out], inputs[inp]
        bind()

    calls = 0

    def advance():
        nonlocal calls
        if position is not None:
            name, limit = position
            inputs[name].update_inplace(np.array([calls % limit], dtype=np.int64))
        calls += 1

    bind()
    advance()
    sess.run_with_iobinding(binding)  # warm-up: output pages touched
    samples = []
    start = time.perf_counter()
    while len(samples) < max_runs and (
        len(samples) < min_runs or time.perf_counter() - start < budget
    ):
        if feedback:
            swap()
        advance()
        t = time.perf_counter()
        sess.run_with_iobinding(binding)
        samples.append(time.perf_counter() - t)
    return statistics.median(samples), len(samples)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", help="directory of workload directories")
    parser.add_argument("--budget", type=float, default=1.5)
    parser.add_argument("--min-runs", type=int, default=5)
    parser.add_argument("--max-runs", type=int, default=2000)
    args = parser.parse_args()
    for name in sorted(os.listdir(args.dir)):
        path = os.path.join(args.dir, name)
        if not os.path.isfile(os.path.join(path, "model.onnx")):
            continue
        median, runs = time_workload(path, args.budget, args.min_runs, args.max_runs)
        print(f"{name} {median:.9e} {runs}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
