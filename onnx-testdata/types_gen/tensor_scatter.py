"""Cases for TensorScatter (opset 24; no reduction attribute): linear and circular
KV-cache writes x {bf16, c64, c128}, ranks 2-4, positive and negative axes (never
the batch axis 0), with and without write_indices (circular ones past max_seq).
"""
from __future__ import annotations

from onnx import helper

from . import oracle
from .cases import Case, add_case, rng_for
from .values import DTYPES, TYPES, idx, rand_arr


def ts_case(name, dt, past, update, wi, mode, axis):
    c = Case(name, "TensorScatter", dt, 24)
    et = DTYPES[dt][1]
    attrs = {"mode": mode}
    if axis is not None:
        attrs["axis"] = axis
    ins = ["past_cache", "update"] + (["write_indices"] if wi is not None else [])
    c.nodes = [helper.make_node("TensorScatter", ins, ["present_cache"], name="tensor_scatter_node", **attrs)]
    c.inputs = [("past_cache", past, et), ("update", update, et)]
    if wi is not None:
        c.inputs.append(("write_indices", wi, 7))
    c.outputs = [("present_cache", et)]
    c.oracle = lambda: [oracle.tensor_scatter(past, update, wi, mode, -2 if axis is None else axis)]
    return add_case(c)


def gen_tensor_scatter():
    counter = 0
    for dt in TYPES:
        for mode in ("linear", "circular"):
            for (rank, axis) in ((2, -1), (3, None), (4, 1), (4, -2)):
                counter += 1
                use_wi = counter % 4 != 0
                atag = "default" if axis is None else str(axis)
                name = f"tensor_scatter_24_{mode}_{dt}_rank{rank}_axis{atag}{'' if use_wi else '_no_write_indices'}"
                rng = rng_for(name)
                ax = (-2 if axis is None else axis) % rank
                shape = [rng.randint(1, 3) for _ in range(rank)]
                shape[0] = rng.randint(1, 3)
                shape[ax] = rng.randint(3, 5)
                maxs = shape[ax]
                ushape = list(shape)
                ushape[ax] = rng.randint(1, maxs - 1) if mode == "linear" else rng.randint(1, maxs)
                seq = ushape[ax]
                wi = None
                if use_wi:
                    if mode == "linear":
                        wi = idx([rng.randint(0, maxs - seq) for _ in range(shape[0])], [shape[0]])
                    else:
                        wi = idx([rng.randint(0, 2 * maxs + 1) for _ in range(shape[0])], [shape[0]])
                ts_case(name, dt, rand_arr(rng, dt, shape), rand_arr(rng, dt, ushape), wi, mode, axis)
