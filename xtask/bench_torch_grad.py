#!/usr/bin/env python3
"""Times PyTorch autograd on the scatter gradient rows of the benchmark.

Called by `cargo xtask bench` (crates/scatter-bench), which writes one
directory per gradient row (the `*_grad` cases; onnxruntime cannot run the
plugin's training domain): data.npy, indices.npy, updates.npy and
grad_output.npy (the grad node's inputs, as xtask/bench_ort.py gets them),
model.onnx (unused here) and grad.txt, lines "<key> <value>": op
(ScatterElements | ScatterND, the forward op), axis, reduction (ONNX
spelling), include_self (0 | 1), lda_coeff.

The forward is built from PyTorch ops the way a PyTorch user writes it,
data and updates with requires_grad:
  * ScatterElements: `data.scatter(axis, indices, updates)` (none),
    `data.scatter_add(...)` (add with include_self), else
    `data.scatter_reduce(axis, indices, updates, sum|prod|amax|amin|mean,
    include_self=...)`; indices normalized (negative ones wrapped).
  * ScatterND: data viewed as [prod(data.shape[:k]), *data.shape[k:]],
    each index tuple as its linear row; `torch.index_put(view, (rows,),
    updates view, accumulate=...)` for none and add (with include_self),
    else `scatter_reduce` along dim 0 with the rows expanded over the slice.
Gradients are `torch.autograd.grad(out, (data, updates), grad_output *
lda_coeff)` (the scale outside the timed part; both outputs are linear in
it).

CPU, `torch.set_num_threads(1)` and one inter-op thread. Two timings per
row, each one warm-up call then calls until --budget seconds (at least
--min-runs, at most --max-runs): *backward*, `torch.autograd.grad(...,
retain_graph=True)` on one forward graph built once outside the timed
part, and *forward+backward*, the forward and `torch.autograd.grad` per
call. Each timed call includes freeing its gradients (as the Rust runner
drops its outputs inside the timed call).

Prints one line per row: "<name> <backward median seconds> <runs>
<forward+backward median seconds> <runs> <aliased>", the first three
fields as xtask/bench_ort.py prints them; aliased is 1 when PyTorch's
grad_data is grad_output itself (no copy: its scatter_add backward passes
the incoming gradient through), else 0.

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

TORCH_REDUCE = {"add": "sum", "mul": "prod", "max": "amax", "min": "amin", "mean": "mean"}


def read_meta(path):
    meta = {}
    with open(path) as f:
        for line in f:
            if line.strip():
                key, value = line.split(None, 1)
                meta[key] = value.strip()
    return meta


def forward_fn(meta, shape, indices):
    """The forward scatter as a function of (data, updates), differentiable."""
    op = meta["op"]
    red = meta["reduction"]
    include_self = meta.get("include_self", "1") == "1"
    if op == "ScatterElements":
        ax = int(meta["axis"]) % len(shape)
        idx = torch.from_numpy(np.mod(indices, shape[ax]).astype(np.int64))
        if red == "none":
            return lambda d, u: d.scatter(ax, idx, u)
        if red == "add" and include_self:
            return lambda d, u: d.scatter_add(ax, idx, u)
        return lambda d, u: d.scatter_reduce(
            ax, idx, u, TORCH_REDUCE[red], include_self=include_self
        )
    if op != "ScatterND":
        raise ValueError(f"unknown op {op!r}")
    k = indices.shape[-1]
    lead = tuple(shape[:k])
    sl = tuple(shape[k:])
    tuples = indices.reshape(-1, k)
    n = tuples.shape[0]
    rows = np.ravel_multi_index(np.mod(tuples, np.array(lead)).T, lead)
    rows = torch.from_numpy(np.asarray(rows, dtype=np.int64))
    p = int(np.prod(lead, dtype=np.int64))
    if red == "none" or (red == "add" and include_self):
        accumulate = red == "add"
        return lambda d, u: torch.index_put(
            d.reshape(p, *sl), (rows,), u.reshape(n, *sl), accumulate=accumulate
        ).reshape(shape)
    expanded = rows.reshape(n, *([1] * len(sl))).expand(n, *sl).contiguous()
    return lambda d, u: d.reshape(p, *sl).scatter_reduce(
        0, expanded, u.reshape(n, *sl), TORCH_REDUCE[red], include_self=include_self
    ).reshape(shape)


def time_calls(call, budget, min_runs, max_runs):
    call()  # warm-up
    samples = []
    start = time.perf_counter()
    while len(samples) < max_runs and (
        len(samples) < min_runs or time.perf_counter() - start < budget
    ):
        t = time.perf_counter()
        call()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples), len(samples)


def time_row(path, budget, min_runs, max_runs):
    meta = read_meta(os.path.join(path, "grad.txt"))
    load = lambda name: np.load(os.path.join(path, name + ".npy"))  # noqa: E731
    data, indices, updates, grad_output = (
        load(n) for n in ("data", "indices", "updates", "grad_output")
    )
    lda = float(meta.get("lda_coeff", "1"))
    if lda != 1.0:
        grad_output = (grad_output * np.float32(lda)).astype(np.float32)
    forward = forward_fn(meta, data.shape, indices)
    d = torch.from_numpy(data).requires_grad_(True)
    u = torch.from_numpy(updates).requires_grad_(True)
    g = torch.from_numpy(grad_output)

    out = forward(d, u)
    gd, _ = torch.autograd.grad(out, (d, u), g, retain_graph=True)
    aliased = int(gd.data_ptr() == g.data_ptr())
    del gd

    def backward():
        torch.autograd.grad(out, (d, u), g, retain_graph=True)

    backward_median, backward_runs = time_calls(backward, budget, min_runs, max_runs)
    del out

    def forward_backward():
        torch.autograd.grad(forward(d, u), (d, u), g)

    both_median, both_runs = time_calls(forward_backward, budget, min_runs, max_runs)
    return backward_median, backward_runs, both_median, both_runs, aliased


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", help="directory of gradient row directories")
    parser.add_argument("--budget", type=float, default=1.5)
    parser.add_argument("--min-runs", type=int, default=5)
    parser.add_argument("--max-runs", type=int, default=2000)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    for name in sorted(os.listdir(args.dir)):
        path = os.path.join(args.dir, name)
        if not os.path.isfile(os.path.join(path, "grad.txt")):
            continue
        bwd, bwd_runs, both, both_runs, aliased = time_row(
            path, args.budget, args.min_runs, args.max_runs
        )
        print(f"{name} {bwd:.9e} {bwd_runs} {both:.9e} {both_runs} {aliased}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
