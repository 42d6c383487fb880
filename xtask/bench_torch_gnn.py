#!/usr/bin/env python3
"""Times PyTorch's own GNN message passing on the bench's GNN rows.

Called by `cargo xtask bench` (crates/scatter-bench), which writes one
directory per GNN row (gnn_*): data.npy [nodes, features] f32, indices.npy
[edges] int64 (each edge's destination; model.onnx broadcasts it along the
features as exporters write `scatter_add_`), updates.npy [edges, features]
f32, model.onnx (unused here) and an empty gnn.txt that marks the row.

The scatter-add along dim 0 as a PyTorch user writes it, on a fresh copy of
data each call (the plugin's one-shot run also writes a new output from
kept data):
  * index_add_: `data.clone().index_add_(0, destinations, updates)` with
    the [edges] destinations;
  * scatter_add_: `data.clone().scatter_add_(0, index, updates)` with the
    destinations expanded over the features (`expand`, no copy), as
    PyTorch Geometric's `scatter` broadcasts them.

CPU, one inter-op thread, `torch.set_num_threads(n)` for each n of
--threads (comma-separated). Each timing: one warm-up call, then calls
until --budget seconds (at least --min-runs, at most --max-runs); each
timed call includes freeing its output.

Prints one line per (row, op, threads): "<name> <op> <threads> <median
seconds> <runs>".

Setup: any Python with torch and numpy (`$TORCH_PYTHON`, e.g.
/root/venvs/torch/bin/python).
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np
import torch


def timed(f, budget, min_runs, max_runs):
    f()
    samples = []
    start = time.perf_counter()
    while len(samples) < max_runs and (
        len(samples) < min_runs or time.perf_counter() - start < budget
    ):
        t = time.perf_counter()
        f()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples), len(samples)


def ops(path):
    data = torch.from_numpy(np.load(os.path.join(path, "data.npy")))
    updates = torch.from_numpy(np.load(os.path.join(path, "updates.npy")))
    destinations = torch.from_numpy(np.load(os.path.join(path, "indices.npy")))
    if destinations.shape != updates.shape[:1]:
        sys.exit(f"{path}: indices {tuple(destinations.shape)}, expected [edges]")
    index = destinations.view(-1, 1).expand_as(updates)
    return {
        "index_add_": lambda: data.clone().index_add_(0, destinations, updates),
        "scatter_add_": lambda: data.clone().scatter_add_(0, index, updates),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", help="directory of row directories")
    parser.add_argument("--threads", default="1")
    parser.add_argument("--budget", type=float, default=1.5)
    parser.add_argument("--min-runs", type=int, default=5)
    parser.add_argument("--max-runs", type=int, default=2000)
    args = parser.parse_args()
    torch.set_num_interop_threads(1)
    threads = [int(t) for t in args.threads.split(",")]
    for name in sorted(os.listdir(args.dir)):
        path = os.path.join(args.dir, name)
        if not os.path.isfile(os.path.join(path, "gnn.txt")):
            continue
        row = ops(path)
        for n in threads:
            torch.set_num_threads(n)
            for op, f in row.items():
                median, runs = timed(
                    lambda: f(), args.budget, args.min_runs, args.max_runs
                )
                print(f"{name} {op} {n} {median:.9e} {runs}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
