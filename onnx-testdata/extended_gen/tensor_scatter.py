"""Cases for TensorScatter (opset 24): linear and circular KV-cache writes over
element types, ranks and axes, with and without write_indices, plus the specials
and the error cases.  Its load-time checks (opset, attributes, mode) are in
ts_case.
"""
from __future__ import annotations

import numpy as np

from .cases import make_case, rng_for
from .oracle import OracleError, oracle_tensor_scatter
from .values import DTYPES, np_arr, rand_values


# --------------------------------------------------------------------------
# TensorScatter (opset 24)
# --------------------------------------------------------------------------
def ts_case(name, opset, dt, past, update, wi, mode, axis, extra_attrs=None, wi_dt="i64", upd_dt=None,
            wi_init=False):
    attrs = {}
    if mode is not None:
        attrs["mode"] = mode
    if axis is not None:
        attrs["axis"] = axis
    if extra_attrs:
        attrs.update(extra_attrs)
    upd_dt = upd_dt or dt
    inputs = [("past_cache", past, DTYPES[dt][1], False), ("update", update, DTYPES[upd_dt][1], False)]
    if wi is not None:
        inputs.append(("write_indices", wi, DTYPES[wi_dt][1], wi_init))
    lerr = None
    if opset < 24:
        lerr = "opset"
    else:
        for a in sorted(attrs):
            if a not in ("mode", "axis"):
                lerr = a
                break
        if lerr is None and attrs.get("mode", "linear") not in ("linear", "circular"):
            lerr = "mode"

    def compute():
        if upd_dt != dt or (wi is not None and wi_dt != "i64"):
            raise OracleError("type")
        return oracle_tensor_scatter(past, update, wi, mode or "linear", -2 if axis is None else axis)

    c = make_case(name, "TensorScatter", opset, attrs, inputs, DTYPES[dt][1], compute, load_error=lerr)
    c.out_name = "present"
    return c


def gen_tensor_scatter():
    counter = 0
    for dt in ["f32", "f16", "i32", "i64", "u8", "f64", "bool", "str", "i8"]:
        for rank in (3, 4):
            for axis in (-2, 1, 2, -1):
                ax = axis + rank if axis < 0 else axis
                for mode in ("linear", "circular"):
                    counter += 1
                    use_wi = counter % 3 != 0
                    if (dt != "f32" and counter % 3) or (dt == "f32" and counter % 2 == 0 and rank == 4):
                        continue  # thinner cover on the other types
                    name = f"tensor_scatter_24_{dt}_r{rank}_axis{axis}_{mode}{'_nowi' if not use_wi else ''}"
                    rng = rng_for(name)
                    shape = [rng.randint(1, 3) for _ in range(rank)]
                    shape[0] = rng.randint(1, 3)
                    shape[ax] = rng.randint(2, 5)
                    maxs = shape[ax]
                    seq = rng.randint(1, maxs)
                    ushape = list(shape)
                    ushape[ax] = seq
                    past = np_arr(rand_values(rng, dt, int(np.prod(shape))), dt, shape)
                    upd = np_arr(rand_values(rng, dt, int(np.prod(ushape))), dt, ushape)
                    wi = None
                    if use_wi:
                        if mode == "linear":
                            wv = [rng.randint(0, maxs - seq) for _ in range(shape[0])]
                        else:
                            wv = [rng.randint(0, 2 * maxs) for _ in range(shape[0])]
                        wi = np.array(wv, dtype=np.int64)
                    ts_case(name, 24, dt, past, upd, wi, None if (mode == "linear" and counter % 4 == 1) else mode,
                            None if (axis == -2 and counter % 2) else axis)
    # specific
    past = np_arr([float(i) for i in range(2 * 5 * 2)], "f32", [2, 5, 2])
    upd = np_arr([100.0 + i for i in range(2 * 3 * 2)], "f32", [2, 3, 2])
    ts_case("tensor_scatter_24_f32_r3_axis1_circular_wraps_around", 24, "f32", past, upd,
            np.array([3, 4], dtype=np.int64), "circular", 1)
    ts_case("tensor_scatter_24_f32_r3_axis1_circular_index_beyond_2x", 24, "f32", past, upd,
            np.array([11, 0], dtype=np.int64), "circular", 1)
    ts_case("tensor_scatter_24_f32_r3_axis1_linear_exact_end", 24, "f32", past, upd,
            np.array([2, 0], dtype=np.int64), "linear", 1)
    ts_case("tensor_scatter_24_f32_r3_axis1_linear_full_seq", 24, "f32", past,
            np_arr([7.0] * 20, "f32", [2, 5, 2]), None, "linear", 1)
    ts_case("tensor_scatter_24_f32_r3_axis1_linear_seq0", 24, "f32", past, np_arr([], "f32", [2, 0, 2]),
            np.array([5, 0], dtype=np.int64), "linear", 1)
    ts_case("tensor_scatter_24_f32_r3_axis1_const_write_indices", 24, "f32", past, upd,
            np.array([1, 2], dtype=np.int64), "linear", 1, wi_init=True)
    ts_case("tensor_scatter_25_f32_r3_axis1_later_opset", 25, "f32", past, upd,
            np.array([1, 0], dtype=np.int64), "linear", 1)
    # errors
    e = "tensor_scatter_24_f32_r3_axis1"
    ts_case(f"{e}_linear_past_end_err_out-of-bounds", 24, "f32", past, upd, np.array([0, 3], dtype=np.int64), "linear", 1)
    ts_case(f"{e}_linear_negative_write_index_err_out-of-bounds", 24, "f32", past, upd,
            np.array([-1, 0], dtype=np.int64), "linear", 1)
    ts_case(f"{e}_default_mode_past_end_err_out-of-bounds", 24, "f32", past, upd, np.array([9, 0], dtype=np.int64), None, 1)
    ts_case(f"{e}_mode_foo_err_mode", 24, "f32", past, upd, None, "foo", 1)
    ts_case(f"{e}_nonaxis_dim_mismatch_err_shape", 24, "f32", past, np_arr([1.0] * 9, "f32", [3, 3, 1]),
            None, "linear", 1)
    ts_case(f"{e}_update_longer_than_cache_err_shape", 24, "f32", past, np_arr([1.0] * 24, "f32", [2, 6, 2]),
            None, "circular", 1)
    ts_case(f"{e}_write_indices_wrong_len_err_shape", 24, "f32", past, upd, np.array([0, 0, 0], dtype=np.int64),
            "linear", 1)
    ts_case(f"{e}_update_rank_mismatch_err_rank", 24, "f32", past, np_arr([1.0] * 6, "f32", [2, 3]), None, "linear", 1)
    ts_case(f"{e}_type_mismatch_err_type", 24, "f32", past, np_arr([1.0] * 12, "f64", [2, 3, 2]), None, "linear", 1,
            upd_dt="f64")
    ts_case(f"{e}_write_indices_int32_err_type", 24, "f32", past, upd, np.array([0, 0], dtype=np.int32), "linear", 1,
            wi_dt="i32")
    ts_case("tensor_scatter_24_f32_r3_axis0_err_axis", 24, "f32", past, upd, None, "linear", 0)
    ts_case("tensor_scatter_24_f32_r3_axis-3_err_axis", 24, "f32", past, upd, None, "linear", -3)
    ts_case("tensor_scatter_24_f32_r3_axis3_err_axis", 24, "f32", past, upd, None, "linear", 3)
    ts_case("tensor_scatter_23_below_first_version_err_opset", 23, "f32", past, upd, None, "linear", 1)
    ts_case("tensor_scatter_18_below_first_version_err_opset", 18, "f32", past, upd, None, None, None)
    ts_case("tensor_scatter_24_unknown_attr_foo_err_foo", 24, "f32", past, upd, None, "linear", 1, extra_attrs={"foo": 1})
