#!/usr/bin/env python3
"""Times onnxruntime on the scatter benchmark workloads.

Called by `cargo xtask bench` (crates/scatter-bench), which writes one
directory per workload: model.onnx, data.npy, indices.npy, updates.npy.
Single-threaded CPU session (intra_op_num_threads=1,
inter_op_num_threads=1, sequential), inputs and a preallocated output bound
with io binding so no allocation or conversion is timed, one warm-up run,
then runs until --budget seconds (at least --min-runs, at most --max-runs).
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
    return ort.InferenceSession(
        model_path, sess_options=so, providers=["CPUExecutionProvider"]
    )


def time_workload(path, budget, min_runs, max_runs):
    sess = session(os.path.join(path, "model.onnx"))
    binding = sess.io_binding()
    keep = []
    for name in ("data", "indices", "updates"):
        array = np.load(os.path.join(path, name + ".npy"))
        value = ort.OrtValue.ortvalue_from_numpy(array, "cpu", 0)
        keep.append(value)
        binding.bind_ortvalue_input(name, value)
    data = keep[0]
    output = ort.OrtValue.ortvalue_from_shape_and_type(
        data.shape(), np.float32, "cpu", 0
    )
    binding.bind_ortvalue_output("output", output)
    sess.run_with_iobinding(binding)  # warm-up: output pages touched
    samples = []
    start = time.perf_counter()
    while len(samples) < max_runs and (
        len(samples) < min_runs or time.perf_counter() - start < budget
    ):
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
