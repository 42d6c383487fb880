"""Cases for ScatterND (opsets 11, 13, 16, 18): every op version x admitted reduction
x {bf16, c64, c128}, data ranks 1-3, index depths 1..rank (element and slab
updates), negative indices, duplicates; the duplicates that round per step; and
complex max / min, which are load errors.
"""
from __future__ import annotations

import numpy as np

from .cases import rng_for
from .common import bf16_in_schema, ND_OPS, reductions, scatter_case
from .values import TYPES, arr, idx, is_complex, rand_arr, rand_shape


def nd_inputs(rng, dt, rank, k):
    dshape = rand_shape(rng, rank)
    batch = [rng.randint(1, 3) for _ in range(rng.randint(1, 2))]
    nb = int(np.prod(batch))
    ivals = []
    for _ in range(nb):
        ivals += [rng.randint(-dshape[j], dshape[j] - 1) for j in range(k)]
    ushape = batch + dshape[k:]
    return rand_arr(rng, dt, dshape), idx(ivals, batch + [k]), rand_arr(rng, dt, ushape)


def gen_scatter_nd():
    counter = 0
    for (op, opset) in ND_OPS:
        for red in reductions(op, opset):
            for dt in TYPES:
                if is_complex(dt) and red in ("max", "min"):
                    name = f"scatter_nd_{opset}_{red}_{dt}_no_order_on_complex_err_reduction"
                    rng = rng_for(name)
                    data, indices, updates = nd_inputs(rng, dt, 2, 1)
                    scatter_case(name, op, opset, dt, data, indices, updates, red=red)
                    continue
                if dt == "bf16" and not bf16_in_schema(op, opset):
                    # The plugin, like tract, does not check element types
                    # against the op version's schema: no case.
                    continue
                for variant in range(3 if red is None else 2):
                    counter += 1
                    rank = (counter + variant) % 3 + 1
                    k = (counter // 3 + variant) % rank + 1
                    rtag = red or "noreduction"
                    name = f"scatter_nd_{opset}_{rtag}_{dt}_rank{rank}_depth{k}_v{variant}"
                    rng = rng_for(name)
                    data, indices, updates = nd_inputs(rng, dt, rank, k)
                    scatter_case(name, op, opset, dt, data, indices, updates, red=red)


def gen_nd_rounding():
    for opset in (16, 18):
        name = f"scatter_nd_{opset}_add_bf16_duplicates_round_per_step"
        scatter_case(name, "ScatterND", opset, "bf16", arr([1.0], "bf16", [1]), idx([0, -1, 0, -1], [4, 1]),
                     arr([2.0 ** -8] * 4, "bf16", [4]), red="add", checks=[(0, 0, 1.0)])
        # slabs: rows of a [3, 2] tensor, two duplicate row indices per step
        name = f"scatter_nd_{opset}_add_bf16_duplicates_round_per_step_slabs"
        data = arr([1.0, 2.0, 3.0, 4.0, -1.0, 8.0], "bf16", [3, 2])
        upd = arr([2.0 ** -8, 2.0 ** -7] * 4, "bf16", [4, 2])
        scatter_case(name, "ScatterND", opset, "bf16", data, idx([0, -3, 0, -3], [4, 1]), upd, red="add",
                     checks=[(0, 0, 1.0), (0, 1, 2.0)])
        name = f"scatter_nd_{opset}_mul_bf16_duplicates_round_per_step"
        scatter_case(name, "ScatterND", opset, "bf16", arr([[1.0, 3.0]], "bf16", [1, 2]),
                     idx([0, 0, -1, -2, 0, 0, 0, -2], [4, 2]), arr([1.03125] * 4, "bf16", [4]), red="mul",
                     checks=[(0, 0, 1.125), (0, 1, 3.0)])
        for dt, e in (("c64", 2.0 ** -25), ("c128", 2.0 ** -54)):
            name = f"scatter_nd_{opset}_add_{dt}_duplicates_round_per_step"
            scatter_case(name, "ScatterND", opset, dt, arr([1 + 1j, 2, 3j], dt, [3]), idx([-3, 0, 0, -3], [4, 1]),
                         arr([complex(e, e)] * 4, dt, [4]), red="add", checks=[(0, 0, 1 + 1j)])
