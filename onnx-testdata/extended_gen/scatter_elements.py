"""Cases for Scatter (opsets 9, 10) and ScatterElements (11, 13, 16, 18 and later):
the cover over op versions x reductions x element types, the specials (empty and
zero-size tensors, duplicates, wrap-around, NaN / Inf, rounding, strings, bools,
later opsets) and the error cases.
"""
from __future__ import annotations

import numpy as np

from .cases import io, make_case, rng_for
from .contract import OPNAME, SE_OPS, legal_reductions, load_error_for
from .oracle import OracleError, oracle_scatter_elements
from .values import DTYPES, FLOATS, idx_arr, np_arr, rand_shape, rand_values


def se_case(name, op, opset, dt, data, indices, updates, axis, red, idt="i64", idx_init=False,
            extra_attrs=None, upd_dt=None, force_load_error=None, write_inputs=None):
    attrs = {}
    if axis is not None:
        attrs["axis"] = axis
    if red is not None:
        attrs["reduction"] = red
    if extra_attrs:
        attrs.update(extra_attrs)
    upd_dt = upd_dt or dt
    inputs = [io("data", data, dt), io("indices", indices, idt, idx_init), io("updates", updates, upd_dt)]
    lerr = force_load_error or load_error_for(op, opset, attrs)

    def compute():
        if upd_dt != dt:
            raise OracleError("type")
        if idt not in ("i32", "i64"):
            raise OracleError("type")
        if dt == "str" and red == "mul":
            raise OracleError("reduction")
        return oracle_scatter_elements(data, indices, updates, 0 if axis is None else axis,
                                       red or "none", dt)

    return make_case(name, op, opset, attrs, inputs, DTYPES[dt][1], compute, load_error=lerr,
                     write_inputs=write_inputs)


def gen_se_inputs(rng, dt, rank, ax, long_axis=False, dup=True, special=False):
    dshape = rand_shape(rng, rank)
    s = dshape[ax]
    ishape = [rng.randint(1, dshape[d]) for d in range(rank)]
    ishape[ax] = s + rng.randint(1, 2) if long_axis else rng.randint(1, s + (1 if dup else 0))
    n = int(np.prod(ishape))
    ivals = [rng.randint(-s, s - 1) for _ in range(n)]
    data = np_arr(rand_values(rng, dt, int(np.prod(dshape)), special), dt, dshape)
    upd = np_arr(rand_values(rng, dt, n, special), dt, ishape)
    return data, ivals, ishape, upd


# --------------------------------------------------------------------------
# ScatterElements / Scatter: cover
# --------------------------------------------------------------------------
def gen_scatter_elements():
    counter = 0
    for (op, opset) in SE_OPS:
        for red in legal_reductions(op, opset):
            for dt in DTYPES:
                for variant in range(2 if opset in (9, 18) and dt in ("f32", "i64", "str") else 1):
                    counter += 1
                    rank = (counter + variant * 2) % 5 + 1
                    ax = (counter // 5 + variant) % rank
                    neg = (counter + variant) % 2 == 1
                    axis = ax - rank if neg else ax
                    idt = "i32" if (counter // 2 + variant) % 2 else "i64"
                    idx_init = (counter % 7 == 3)
                    long_axis = (counter % 4 == 1)
                    rtag = red if red is not None else "noreduction"
                    if dt == "str" and red == "mul":
                        name = f"{OPNAME[op]}_{opset}_{dt}_r{rank}_axis{axis}_{rtag}_v{variant}_err_reduction"
                    else:
                        name = f"{OPNAME[op]}_{opset}_{dt}_r{rank}_axis{axis}_{rtag}_{idt}{'_constidx' if idx_init else ''}{'_longaxis' if long_axis else ''}_v{variant}"
                    rng = rng_for(name)
                    data, ivals, ishape, upd = gen_se_inputs(rng, dt, rank, ax, long_axis, special=True)
                    # omit the axis attribute sometimes (default 0) when axis == 0
                    a = None if (axis == 0 and counter % 3 == 0) else axis
                    se_case(name, op, opset, dt, data, idx_arr(ivals, ishape, idt), upd, a, red, idt, idx_init)


def gen_se_specials():
    # per dtype: empty indices and zero-size data on the legal reductions of 18
    for i, dt in enumerate(DTYPES):
        for (op, opset) in [[("ScatterElements", 18), ("Scatter", 9), ("ScatterElements", 11)][i % 3]]:
            red = "add" if opset == 18 and dt != "str" else ("none" if opset == 18 else None)
            rt = red or "noreduction"
            name = f"{OPNAME[op]}_{opset}_{dt}_r2_axis1_{rt}_empty_indices"
            rng = rng_for(name)
            data = np_arr(rand_values(rng, dt, 6), dt, [2, 3])
            se_case(name, op, opset, dt, data, idx_arr([], [2, 0], "i64"), np_arr([], dt, [2, 0]), 1, red)
        name = f"scatter_elements_18_{dt}_r3_axis-2_none_zero_size_data"
        rng = rng_for(name)
        data = np_arr([], dt, [2, 0, 3])
        se_case(name, "ScatterElements", 18, dt, data, idx_arr([], [2, 0, 3], "i32"), np_arr([], dt, [2, 0, 3]), -2, "none", "i32")
    # zero-size data on a non-axis dim
    for opset, red in [(13, None), (16, "mul"), (18, "max")]:
        name = f"scatter_elements_{opset}_f32_r2_axis0_{red or 'noreduction'}_zero_size_data_nonaxis"
        se_case(name, "ScatterElements", opset, "f32", np_arr([], "f32", [3, 0]),
                idx_arr([], [2, 0], "i64"), np_arr([], "f32", [2, 0]), 0, red)
    # empty indices with a zero along the axis only
    name = "scatter_elements_18_i32_r3_axis-1_min_empty_indices_axis"
    rng = rng_for(name)
    se_case(name, "ScatterElements", 18, "i32", np_arr(rand_values(rng, "i32", 24), "i32", [2, 3, 4]),
            idx_arr([], [1, 2, 0], "i64"), np_arr([], "i32", [1, 2, 0]), -1, "min")

    # duplicate indices, every reduction, ordered fold
    for dt in ["i32", "f32", "f16", "str", "bool", "u8"]:
        for red in ["none", "add", "mul", "max", "min"]:
            if dt == "str" and red == "mul":
                continue
            name = f"scatter_elements_18_{dt}_r1_axis0_{red}_duplicates"
            rng = rng_for(name)
            data = np_arr(rand_values(rng, dt, 3), dt, [3])
            ivals = [1, -2, 1, 0, -3, 2, 1]
            se_case(name, "ScatterElements", 18, dt, data, idx_arr(ivals, [7], "i64"),
                    np_arr(rand_values(rng, dt, 7), dt, [7]), 0, red)
    # duplicates in older opsets (last write wins)
    for op, opset in [("Scatter", 9), ("Scatter", 10), ("ScatterElements", 11), ("ScatterElements", 13)]:
        name = f"{OPNAME[op]}_{opset}_f32_r2_axis-1_noreduction_duplicates_negative"
        data = np_arr([float(i) for i in range(6)], "f32", [2, 3])
        ivals = [0, -3, 2, -1, -1, 1, 1, 1]
        se_case(name, op, opset, "f32", data, idx_arr(ivals, [2, 4], "i32"),
                np_arr([10.0 + i for i in range(8)], "f32", [2, 4]), -1, None, "i32")
    # constant (initializer) indices with every op version
    for op, opset in SE_OPS:
        for red in legal_reductions(op, opset):
            name = f"{OPNAME[op]}_{opset}_i64_r3_axis-3_{red or 'noreduction'}_constidx_neg_dup"
            rng = rng_for(name)
            data, ivals, ishape, upd = gen_se_inputs(rng, "i64", 3, 0, long_axis=True)
            se_case(name, op, opset, "i64", data, idx_arr(ivals, ishape, "i64"), upd, -3, red, "i64", True)
    # indices longer than the data along the axis, each rank
    for rank in range(1, 6):
        for neg in (False, True):
            ax = rank - 1 if not neg else 0
            axis = ax - rank if neg else ax
            name = f"scatter_elements_18_f64_r{rank}_axis{axis}_add_longaxis_rank{rank}"
            rng = rng_for(name)
            data, ivals, ishape, upd = gen_se_inputs(rng, "f64", rank, ax, long_axis=True)
            se_case(name, "ScatterElements", 18, "f64", data, idx_arr(ivals, ishape, "i32"), upd, axis, "add", "i32")
    # integer wrap-around
    wraps = [("i8", "add", [127], [1]), ("i8", "add", [-128], [-1]), ("i8", "mul", [64], [2]),
             ("i8", "mul", [-128], [-1]), ("u8", "add", [255], [1]), ("u8", "mul", [16], [16]),
             ("i16", "add", [32767], [1]), ("i16", "mul", [-32768], [-1]), ("u16", "add", [65535], [2]),
             ("i32", "add", [2147483647], [1]), ("i32", "mul", [65536], [65536]),
             ("u32", "add", [4294967295], [1]), ("u32", "mul", [65536], [65537]),
             ("i64", "add", [9223372036854775807], [1]), ("i64", "mul", [-9223372036854775808], [-1]),
             ("u64", "add", [18446744073709551615], [1]), ("u64", "mul", [4294967296], [4294967297])]
    for i, (dt, red, d, u) in enumerate(wraps):
        for opset in (16, 18):
            name = f"scatter_elements_{opset}_{dt}_r1_axis0_{red}_wraparound_{i}"
            se_case(name, "ScatterElements", opset, dt, np_arr(d + [5], dt, [2]), idx_arr([0, 0], [2], "i64"),
                    np_arr(u + [0 if red == "add" else 1], dt, [2]), 0, red)
    # NaN / Inf in float reductions
    nan, inf = float("nan"), float("inf")
    for dt in FLOATS:
        for red in ["add", "mul", "max", "min", "none"]:
            name = f"scatter_elements_18_{dt}_r2_axis1_{red}_nan_inf"
            data = np_arr([nan, 1.0, -inf, inf, 0.0, -0.0, 2.0, nan], dt, [2, 4])
            ivals = [0, 1, 2, 3, 0, 1, 2, 3, 3]
            # row 0 and 1 are updated; row 1 gets more positions (duplicates on col 3)
            data = np_arr([nan, 1.0, -inf, inf, 0.0, -0.0, 2.0, nan], dt, [2, 4])
            idx = idx_arr([0, 1, 2, 3, 0, 1, 2, 3], [2, 4], "i64")
            upd = np_arr([1.0, nan, inf, -inf, -0.0, 0.0, nan, 3.0], dt, [2, 4])
            se_case(name, "ScatterElements", 18, dt, data, idx, upd, 1, red)
        for red in ["max", "min"]:
            name = f"scatter_elements_18_{dt}_r1_axis0_{red}_nan_then_value"
            se_case(name, "ScatterElements", 18, dt, np_arr([1.0, nan, 0.0], dt, [3]),
                    idx_arr([0, 0, 1, 2, 2], [5], "i64"), np_arr([nan, 5.0, 7.0, -0.0, 0.0], dt, [5]), 0, red)
    for dt in FLOATS:
        name = f"scatter_elements_16_{dt}_r1_axis0_add_inf_minus_inf"
        se_case(name, "ScatterElements", 16, dt, np_arr([inf, 0.0], dt, [2]), idx_arr([0, 1, 1], [3], "i64"),
                np_arr([-inf, inf, -inf], dt, [3]), 0, "add")
        name = f"scatter_elements_16_{dt}_r1_axis0_mul_inf_times_zero"
        se_case(name, "ScatterElements", 16, dt, np_arr([inf, 0.0], dt, [2]), idx_arr([0, 1], [2], "i64"),
                np_arr([0.0, -inf], dt, [2]), 0, "mul")
    # rounding after every update
    name = "scatter_elements_18_f16_r1_axis0_add_round_each_step"
    se_case(name, "ScatterElements", 18, "f16", np_arr([2048.0, 1.0], "f16", [2]), idx_arr([0, 0, 0], [3], "i64"),
            np_arr([1.0, 1.0, 1.0], "f16", [3]), 0, "add")
    name = "scatter_elements_18_f32_r1_axis0_add_round_each_step"
    se_case(name, "ScatterElements", 18, "f32", np_arr([16777216.0, 1.0], "f32", [2]), idx_arr([0, 0], [2], "i64"),
            np_arr([1.0, 1.0], "f32", [2]), 0, "add")
    name = "scatter_elements_18_f16_r1_axis0_mul_overflow_inf"
    se_case(name, "ScatterElements", 18, "f16", np_arr([300.0, 1.0], "f16", [2]), idx_arr([0, 0], [2], "i64"),
            np_arr([300.0, 0.5], "f16", [2]), 0, "mul")
    # string specials: concat order, bytewise compare on non-ascii
    name = "scatter_elements_18_str_r1_axis0_add_concat_order"
    se_case(name, "ScatterElements", 18, "str", np_arr(["x", "", "日"], "str", [3]), idx_arr([0, 0, 2, 0], [4], "i32"),
            np_arr(["a", "b", "本", "c"], "str", [4]), 0, "add", "i32")
    for red in ("max", "min"):
        name = f"scatter_elements_18_str_r1_axis0_{red}_bytewise"
        se_case(name, "ScatterElements", 18, "str", np_arr(["z", "é", "", "ab"], "str", [4]),
                idx_arr([0, 1, 1, 2, 3, 3], [6], "i64"), np_arr(["é", "日", "e", "", "abc", "a"], "str", [6]), 0, red)
    # bool reductions
    for red in ["add", "mul", "max", "min"]:
        name = f"scatter_elements_18_bool_r2_axis0_{red}_truth_table"
        data = np_arr([False, False, True, True], "bool", [1, 4])
        idx = idx_arr([0, 0, 0, 0], [1, 4], "i64")
        upd = np_arr([False, True, False, True], "bool", [1, 4])
        se_case(name, "ScatterElements", 18, "bool", data, idx, upd, 0, red)
    # ScatterElements at opsets 19 to 24 is its version 18; at 17, version 16
    for opset, red in [(17, "mul"), (17, "none"), (20, "max"), (22, "min"), (24, "add")]:
        name = f"scatter_elements_{opset}_f32_r2_axis-1_{red}_later_opset"
        rng = rng_for(name)
        data, ivals, ishape, upd = gen_se_inputs(rng, "f32", 2, 1)
        se_case(name, "ScatterElements", opset, "f32", data, idx_arr(ivals, ishape, "i64"), upd, -1, red)
    # reduction attribute explicitly "none" vs absent at 16
    name = "scatter_elements_16_i32_r2_axis0_absent_reduction_attr"
    rng = rng_for(name)
    data, ivals, ishape, upd = gen_se_inputs(rng, "i32", 2, 0)
    se_case(name, "ScatterElements", 16, "i32", data, idx_arr(ivals, ishape, "i64"), upd, 0, None)


def gen_se_errors():
    for op, opset in [("Scatter", 9), ("ScatterElements", 11), ("ScatterElements", 18)]:
        pre = f"{OPNAME[op]}_{opset}"
        red = "add" if opset == 18 else None
        dt = "f32"
        data = np_arr([float(i) for i in range(12)], dt, [3, 4])
        upd2 = np_arr([1.0, 2.0], dt, [1, 2])
        for idt in ("i32", "i64"):
            for what, vals in [("index_eq_s", [0, 3]), ("index_eq_neg_s_minus_1", [-4, 0])]:
                se_case(f"{pre}_{idt}_{what}_axis0_err_out-of-bounds", op, opset, dt, data,
                        idx_arr([vals[1], vals[0]], [1, 2], idt), upd2, 0, red, idt)
            se_case(f"{pre}_{idt}_index_eq_s_axis-1_err_out-of-bounds", op, opset, dt, data,
                    idx_arr([4, 0], [1, 2], idt), upd2, -1, red, idt)
            info = np.iinfo(DTYPES[idt][0])
            for what, v in [("index_min", int(info.min)), ("index_max", int(info.max))]:
                se_case(f"{pre}_{idt}_{what}_err_out-of-bounds", op, opset, dt, data,
                        idx_arr([0, v], [1, 2], idt), upd2, 1, red, idt)
        se_case(f"{pre}_const_index_out_of_range_err_out-of-bounds", op, opset, dt, data,
                idx_arr([1, 5], [1, 2], "i64"), upd2, 1, red, "i64", True)
        se_case(f"{pre}_axis_eq_r_err_axis", op, opset, dt, data, idx_arr([0, 1], [1, 2], "i64"), upd2, 2, red)
        se_case(f"{pre}_axis_eq_neg_r_minus_1_err_axis", op, opset, dt, data, idx_arr([0, 1], [1, 2], "i64"), upd2, -3, red)
        se_case(f"{pre}_indices_rank_lt_data_rank_err_rank", op, opset, dt, data, idx_arr([0, 1], [2], "i64"),
                np_arr([1.0, 2.0], dt, [2]), 0, red)
        se_case(f"{pre}_indices_rank_gt_data_rank_err_rank", op, opset, dt, data, idx_arr([0, 1], [1, 2, 1], "i64"),
                np_arr([1.0, 2.0], dt, [1, 2, 1]), 0, red)
        se_case(f"{pre}_data_rank0_err_rank", op, opset, dt, np_arr([1.0], dt, []), idx_arr([0], [], "i64"),
                np_arr([2.0], dt, []), 0, red)
        se_case(f"{pre}_updates_shape_ne_indices_shape_err_shape", op, opset, dt, data, idx_arr([0, 1], [1, 2], "i64"),
                np_arr([1.0, 2.0, 3.0], dt, [1, 3]), 0, red)
        se_case(f"{pre}_updates_rank_ne_indices_rank_err_shape", op, opset, dt, data, idx_arr([0, 1], [1, 2], "i64"),
                np_arr([1.0, 2.0], dt, [2]), 0, red)
        se_case(f"{pre}_nonaxis_indices_dim_gt_data_dim_err_shape", op, opset, dt, data,
                idx_arr([0] * 5, [1, 5], "i64"), np_arr([1.0] * 5, dt, [1, 5]), 0, red)
        se_case(f"{pre}_data_updates_type_mismatch_err_type", op, opset, dt, data, idx_arr([0, 1], [1, 2], "i64"),
                np_arr([1.0, 2.0], "f64", [1, 2]), 0, red, upd_dt="f64")
        se_case(f"{pre}_int_data_float_updates_err_type", op, opset, "i32", np_arr(list(range(12)), "i32", [3, 4]),
                idx_arr([0, 1], [1, 2], "i64"), np_arr([1.0, 2.0], "f32", [1, 2]), 0, red, upd_dt="f32")
        se_case(f"{pre}_float_indices_err_type", op, opset, dt, data,
                np.array([[0.0, 1.0]], dtype=np.float32), upd2, 0, red, "f32")
        se_case(f"{pre}_int16_indices_err_type", op, opset, dt, data,
                np.array([[0, 1]], dtype=np.int16), upd2, 0, red, "i16")
        se_case(f"{pre}_unknown_attr_foo_err_foo", op, opset, dt, data, idx_arr([0, 1], [1, 2], "i64"), upd2, 0, red,
                extra_attrs={"foo": 1})
    data = np_arr([1.0, 2.0, 3.0], "f32", [3])
    idx = idx_arr([0], [1], "i64")
    upd = np_arr([5.0], "f32", [1])
    for opset in (11, 13):
        se_case(f"scatter_elements_{opset}_reduction_add_err_reduction", "ScatterElements", opset, "f32", data, idx, upd, 0, "add")
        se_case(f"scatter_elements_{opset}_reduction_none_err_reduction", "ScatterElements", opset, "f32", data, idx, upd, 0, "none")
    for opset in (16, 17):
        for red in ("max", "min"):
            se_case(f"scatter_elements_{opset}_reduction_{red}_err_reduction", "ScatterElements", opset, "f32", data, idx, upd, 0, red)
    for opset in (16, 18):
        se_case(f"scatter_elements_{opset}_reduction_foo_err_reduction", "ScatterElements", opset, "f32", data, idx, upd, 0, "foo")
    se_case("scatter_elements_18_reduction_uppercase_add_err_reduction", "ScatterElements", 18, "f32", data, idx, upd, 0, "Add")
    for opset in (11, 13, 18):
        se_case(f"scatter_{opset}_deprecated_err_deprecated", "Scatter", opset, "f32", data, idx, upd, 0, None)
    se_case("scatter_9_reduction_attr_err_reduction", "Scatter", 9, "f32", data, idx, upd, 0, "add")
    se_case("scatter_elements_10_below_first_version_err_opset", "ScatterElements", 10, "f32", data, idx, upd, 0, None)
    se_case("scatter_elements_9_below_first_version_err_opset", "ScatterElements", 9, "f32", data, idx, upd, 0, None)
    sd = np_arr(["a", "b"], "str", [2])
    for opset in (16, 18):
        se_case(f"scatter_elements_{opset}_str_mul_err_reduction", "ScatterElements", opset, "str", sd,
                idx_arr([1], [1], "i64"), np_arr(["c"], "str", [1]), 0, "mul")
    se_case("scatter_elements_18_str_mul_empty_indices_err_reduction", "ScatterElements", 18, "str", sd,
            idx_arr([], [0], "i64"), np_arr([], "str", [0]), 0, "mul")
