"""Cases for Scatter (opsets 9, 10) and ScatterElements (11, 13, 16, 18): every op
version x admitted reduction x {bf16, c64, c128}, ranks 1-3, negative axes and
indices, duplicates; the duplicates that round per step (bf16 and c64 add, bf16
mul); and complex max / min, which are load errors (no order on complex numbers).
"""
from __future__ import annotations

import numpy as np

from .cases import rng_for
from .common import bf16_in_schema, SE_OPS, SLUG, reductions, scatter_case
from .values import TYPES, arr, idx, is_complex, rand_arr, rand_shape


def se_inputs(rng, dt, rank, ax):
    dshape = rand_shape(rng, rank)
    s = dshape[ax]
    ishape = [rng.randint(1, dshape[d]) for d in range(rank)]
    ishape[ax] = rng.randint(1, s + 2)  # may exceed s: duplicates along the axis
    n = int(np.prod(ishape))
    ivals = [rng.randint(-s, s - 1) for _ in range(n)]  # negative indices too
    return rand_arr(rng, dt, dshape), idx(ivals, ishape), rand_arr(rng, dt, ishape)


def gen_scatter_elements():
    counter = 0
    for (op, opset) in SE_OPS:
        for red in reductions(op, opset):
            for dt in TYPES:
                if is_complex(dt) and red in ("max", "min"):
                    name = f"{SLUG[op]}_{opset}_{red}_{dt}_no_order_on_complex_err_reduction"
                    rng = rng_for(name)
                    data, indices, updates = se_inputs(rng, dt, 2, 1)
                    scatter_case(name, op, opset, dt, data, indices, updates, axis=-1, red=red)
                    continue
                if dt == "bf16" and not bf16_in_schema(op, opset):
                    # The plugin, like tract, does not check element types
                    # against the op version's schema: no case.
                    continue
                for variant in range(3 if red is None else 2):
                    counter += 1
                    rank = (counter + variant) % 3 + 1
                    ax = (counter // 3 + variant) % rank
                    axis = ax - rank if (counter + variant) % 2 else ax
                    rtag = red or "noreduction"
                    name = f"{SLUG[op]}_{opset}_{rtag}_{dt}_rank{rank}_axis{axis}_v{variant}"
                    rng = rng_for(name)
                    data, indices, updates = se_inputs(rng, dt, rank, ax)
                    # leave the axis attribute out (default 0) now and then
                    a = None if (axis == 0 and counter % 2 == 0) else axis
                    scatter_case(name, op, opset, dt, data, indices, updates, axis=a, red=red)


def gen_se_rounding():
    """Duplicates whose running value must be rounded after every update."""
    for opset in (16, 18):
        # bf16 add: 1.0 + 4 x 2^-8 -> 1.0 per step (each 1 + 2^-8 is a tie, to even), 1.015625 once
        name = f"scatter_elements_{opset}_add_bf16_duplicates_round_per_step"
        scatter_case(name, "ScatterElements", opset, "bf16", arr([1.0], "bf16", [1]), idx([0, 0, 0, 0], [4]),
                     arr([2.0 ** -8] * 4, "bf16", [4]), axis=0, red="add", checks=[(0, 0, 1.0)])
        # the same on a row of a rank-2 tensor, negative axis and negative indices
        name = f"scatter_elements_{opset}_add_bf16_duplicates_round_per_step_rank2_negative"
        data = arr([1.0, 2.0, -1.0, 4.0, 1.0, 2.0], "bf16", [2, 3])
        ind = idx([-3, 0, -3, 0, 2, -1, 2, -1], [2, 4])
        upd = arr([2.0 ** -8] * 4 + [2.0 ** -8] * 4, "bf16", [2, 4])
        scatter_case(name, "ScatterElements", opset, "bf16", data, ind, upd, axis=-1, red="add",
                     checks=[(0, 0, 1.0), (0, 5, 2.0)])
        # bf16 mul: 1.0 x 4 x 1.03125 -> 1.125 per step, 1.1328125 rounded once
        name = f"scatter_elements_{opset}_mul_bf16_duplicates_round_per_step"
        scatter_case(name, "ScatterElements", opset, "bf16", arr([1.0, 3.0], "bf16", [2]), idx([0, -2, 0, -2], [4]),
                     arr([1.03125] * 4, "bf16", [4]), axis=0, red="mul", checks=[(0, 0, 1.125), (0, 1, 3.0)])
        # complex64 add: (1+1j) + 4 x (2^-25 + 2^-25 j) -> 1+1j per step (ties to even), 1+2^-23 once
        name = f"scatter_elements_{opset}_add_c64_duplicates_round_per_step"
        e = 2.0 ** -25
        scatter_case(name, "ScatterElements", opset, "c64", arr([1 + 1j, 2], "c64", [2]), idx([-2, 0, 0, -2], [4]),
                     arr([complex(e, e)] * 4, "c64", [4]), axis=0, red="add", checks=[(0, 0, 1 + 1j)])
        name = f"scatter_elements_{opset}_add_c128_duplicates_round_per_step"
        e = 2.0 ** -54
        scatter_case(name, "ScatterElements", opset, "c128", arr([1 + 1j, 2], "c128", [2]), idx([-2, 0, 0, -2], [4]),
                     arr([complex(e, e)] * 4, "c128", [4]), axis=0, red="add", checks=[(0, 0, 1 + 1j)])
    # complex mul with duplicates on a rank-3 tensor (no rounding: exact dyadic values)
    for dt in ("c64", "c128"):
        name = f"scatter_elements_18_mul_{dt}_duplicates_rank3_axis-3"
        data = arr([complex(k % 3, (k % 2) - 0.5) for k in range(12)], dt, [2, 3, 2])
        ind = idx([-1, 0, 1, -2, 0, -1, 1, 1, 0, 0, -1, -1], [3, 2, 2])
        upd = arr([1j, 2, -1, 1 + 1j, 0.5, -1j, 2j, 1 - 1j, 3, 0.25j, -2, 1], dt, [3, 2, 2])
        scatter_case(name, "ScatterElements", 18, dt, data, ind, upd, axis=-3, red="mul")
