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
(intra_op_num_threads=1, or --threads N, inter_op_num_threads=1, sequential), inputs and
preallocated outputs bound with io binding so no allocation or conversion
is timed (fed-back values alternate between two preallocated buffers,
rebound between runs, outside the timed call), one warm-up run, then runs
until --budget seconds (at least --min-runs, at most --max-runs).
Prints one line per workload: "<name> <median seconds> <runs>".
With --serve instead of a directory, times rounds on request (serve()):
`cargo xtask bench` pairs each with its own engines' rounds.

Setup: python3 -m venv .venv && .venv/bin/pip install -r onnx-testdata/requirements.txt
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np
import onnxruntime as ort


def session(model_path, threads):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Errors only: TensorScatter warns on every run that it copies
    # past_cache (its in-place path needs the output bound to the input).
    so.log_severity_level = 3
    return ort.InferenceSession(
        model_path, sess_options=so, providers=["CPUExecutionProvider"]
    )


class Workload:
    """One workload's session, inputs and preallocated outputs, bound with
    io binding; kept across timing rounds (fed-back values and the write
    position carry on from one round to the next)."""

    def __init__(self, path, threads):
        self.sess = session(os.path.join(path, "model.onnx"), threads)
        arrays = {
            i.name: np.load(os.path.join(path, i.name + ".npy"))
            for i in self.sess.get_inputs()
        }
        self.feedback = []
        feedback_path = os.path.join(path, "feedback.txt")
        if os.path.isfile(feedback_path):
            with open(feedback_path) as f:
                self.feedback = [tuple(line.split()) for line in f if line.strip()]
        self.position = None
        position_path = os.path.join(path, "position.txt")
        if os.path.isfile(position_path):
            with open(position_path) as f:
                name, limit = f.read().split()
                self.position = (name, int(limit))
        # One plain run gives the output shapes and types to preallocate.
        output_names = [o.name for o in self.sess.get_outputs()]
        first = dict(zip(output_names, self.sess.run(output_names, arrays)))
        self.inputs = {
            name: ort.OrtValue.ortvalue_from_numpy(array, "cpu", 0)
            for name, array in arrays.items()
        }
        self.outputs = {
            name: ort.OrtValue.ortvalue_from_shape_and_type(
                array.shape, array.dtype, "cpu", 0
            )
            for name, array in first.items()
        }
        self.binding = self.sess.io_binding()
        self.calls = 0

    def bind(self):
        for name, value in self.inputs.items():
            self.binding.bind_ortvalue_input(name, value)
        for name, value in self.outputs.items():
            self.binding.bind_ortvalue_output(name, value)

    def swap(self):
        # The fed-back output becomes the input; the old input buffer
        # receives the next output.
        for out, inp in self.feedback:
            self.inputs[inp], self.outputs[out] = self.outputs[out], self.inputs[inp]
        self.bind()

    def advance(self):
        if self.position is not None:
            name, limit = self.position
            self.inputs[name].update_inplace(
                np.array([self.calls % limit], dtype=np.int64)
            )
        self.calls += 1

    def call(self):
        """One call, its preparation (swap, position) outside the time."""
        if self.feedback and self.calls > 0:
            self.swap()
        elif self.calls == 0:
            self.bind()
        self.advance()
        t = time.perf_counter()
        self.sess.run_with_iobinding(self.binding)
        return time.perf_counter() - t

    def time(self, budget, min_runs, max_runs):
        """One warm-up call (output pages touched), then calls until
        `budget` seconds: (median seconds, runs)."""
        self.call()
        samples = []
        start = time.perf_counter()
        while len(samples) < max_runs and (
            len(samples) < min_runs or time.perf_counter() - start < budget
        ):
            samples.append(self.call())
        return statistics.median(samples), len(samples)


def serve(threads):
    """Timing rounds on request, for a caller pairing them with its own:
    reads lines "<budget s> <min runs> <max runs> <workload dir>", prints
    "<median seconds> <runs>" for each; the last workload's session stays
    loaded between rounds."""
    current = (None, None)
    for line in sys.stdin:
        budget, min_runs, max_runs, path = line.rstrip("\n").split(" ", 3)
        if current[0] != path:
            current = (None, None)  # free the previous workload first
            current = (path, Workload(path, threads))
        median, runs = current[1].time(float(budget), int(min_runs), int(max_runs))
        print(f"{median:.9e} {runs}", flush=True)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?", help="directory of workload directories")
    parser.add_argument(
        "--serve", action="store_true", help="time rounds on request (see serve())"
    )
    parser.add_argument(
        "--threads", type=int, default=1, help="the session's intra_op_num_threads"
    )
    parser.add_argument("--budget", type=float, default=1.5)
    parser.add_argument("--min-runs", type=int, default=5)
    parser.add_argument("--max-runs", type=int, default=2000)
    args = parser.parse_args()
    if args.serve:
        return serve(args.threads)
    if args.dir is None:
        parser.error("a directory of workloads, or --serve")
    for name in sorted(os.listdir(args.dir)):
        path = os.path.join(args.dir, name)
        if not os.path.isfile(os.path.join(path, "model.onnx")):
            continue
        median, runs = Workload(path, args.threads).time(
            args.budget, args.min_runs, args.max_runs
        )
        print(f"{name} {median:.9e} {runs}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
