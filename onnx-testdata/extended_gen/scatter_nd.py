"""Cases for ScatterND (opsets 11, 13, 16, 18 and later): the cover over op
versions x reductions x element types x index depth k and batch rank q, the
specials (rank x k grid, duplicates, k == 0, empty and zero-size tensors,
wrap-around, NaN / Inf, later opsets) and the error cases.
"""
from __future__ import annotations

import numpy as np

from .cases import io, make_case, rng_for
from .contract import ND_OPS, legal_reductions, load_error_for
from .oracle import OracleError, oracle_scatter_nd
from .values import DTYPES, FLOATS, idx_arr, np_arr, rand_shape, rand_values


def nd_case(name, opset, dt, data, indices, updates, red, idt="i64", idx_init=False, extra_attrs=None,
            upd_dt=None, force_load_error=None, write_inputs=None):
    attrs = {}
    if red is not None:
        attrs["reduction"] = red
    if extra_attrs:
        attrs.update(extra_attrs)
    upd_dt = upd_dt or dt
    inputs = [io("data", data, dt), io("indices", indices, idt, idx_init), io("updates", updates, upd_dt)]
    lerr = force_load_error or load_error_for("ScatterND", opset, attrs)

    def compute():
        if upd_dt != dt:
            raise OracleError("type")
        if idt not in ("i32", "i64"):
            raise OracleError("type")
        if dt == "str" and red == "mul":
            raise OracleError("reduction")
        return oracle_scatter_nd(data, indices, updates, red or "none", dt)

    return make_case(name, "ScatterND", opset, attrs, inputs, DTYPES[dt][1], compute, load_error=lerr,
                     write_inputs=write_inputs)


# --------------------------------------------------------------------------
# ScatterND
# --------------------------------------------------------------------------
def gen_nd_inputs(rng, dt, rank, k, q, special=False, dup=True):
    dshape = rand_shape(rng, rank, maxel=36)
    bshape = [rng.randint(1, 3) for _ in range(q - 1)]
    while int(np.prod(bshape)) * int(np.prod(dshape[k:])) > 60:
        bshape = [max(1, b - 1) for b in bshape]
    nb = int(np.prod(bshape)) if bshape else 1
    ivals = []
    for _ in range(nb):
        for j in range(k):
            ivals.append(rng.randint(-dshape[j], dshape[j] - 1))
    ishape = bshape + [k]
    ushape = bshape + dshape[k:]
    data = np_arr(rand_values(rng, dt, int(np.prod(dshape)), special), dt, dshape)
    upd = np_arr(rand_values(rng, dt, int(np.prod(ushape)), special), dt, ushape)
    return data, ivals, ishape, upd


def gen_scatter_nd():
    counter = 0
    for (op, opset) in ND_OPS:
        for red in legal_reductions(op, opset):
            for dt in DTYPES:
                for variant in range(2 if opset in (11, 18) and dt in ("f32", "i64", "str") else 1):
                    counter += 1
                    rank = (counter + 2 * variant) % 5 + 1
                    kmode = (counter + variant) % 4  # 0: k==r, 1: k<r, 2: k==0, 3: batched q>=3
                    if kmode == 0:
                        k, q, kt = rank, 1 + (counter % 2), "keqr"
                    elif kmode == 1:
                        k, q, kt = rng_for(str(counter)).randint(0, rank - 1), 2, "kltr"
                        if rank == 1:
                            k = 0
                    elif kmode == 2:
                        k, q, kt = 0, 2, "k0"
                    else:
                        k, q, kt = rng_for(str(counter)).randint(1, rank), 3 + (counter % 2), "batched"
                    if kt == "kltr" and k == 0:
                        kt = "k0"
                    idt = "i32" if (counter // 3 + variant) % 2 else "i64"
                    idx_init = (counter % 7 == 5)
                    rtag = red if red is not None else "noreduction"
                    if dt == "str" and red == "mul":
                        name = f"scatter_nd_{opset}_{dt}_r{rank}_k{k}_q{q}_{rtag}_v{variant}_err_reduction"
                    else:
                        name = f"scatter_nd_{opset}_{dt}_r{rank}_k{k}_q{q}_{kt}_{rtag}_{idt}{'_constidx' if idx_init else ''}_v{variant}"
                    rng = rng_for(name)
                    data, ivals, ishape, upd = gen_nd_inputs(rng, dt, rank, k, q, special=True)
                    nd_case(name, opset, dt, data, idx_arr(ivals, ishape, idt), upd, red, idt, idx_init)


def gen_nd_specials():
    # every rank x k combination on f32 / add at 18, plus i64 at 11
    for rank in range(1, 6):
        for k in range(0, rank + 1):
            for opset, red, dt in [[(18, "add", "f32"), (11, None, "i16"), (16, "mul", "u32")][(rank + k) % 3]]:
                q = 2 if (rank + k) % 2 else 3
                name = f"scatter_nd_{opset}_{dt}_r{rank}_k{k}_q{q}_{red or 'noreduction'}_rank_k_grid"
                rng = rng_for(name)
                data, ivals, ishape, upd = gen_nd_inputs(rng, dt, rank, k, q)
                nd_case(name, opset, dt, data, idx_arr(ivals, ishape, "i64"), upd, red)
    # explicit duplicates
    for dt in ["i32", "f32", "f16", "str", "bool", "i8"]:
        for red in ["none", "add", "mul", "max", "min"]:
            if dt == "str" and red == "mul":
                continue
            name = f"scatter_nd_18_{dt}_r2_k1_q2_{red}_duplicates"
            rng = rng_for(name)
            data = np_arr(rand_values(rng, dt, 6), dt, [3, 2])
            ivals = [1, -2, 0, 2, -1, 1]
            nd_case(name, 18, dt, data, idx_arr(ivals, [6, 1], "i64"), np_arr(rand_values(rng, dt, 12), dt, [6, 2]), red)
    # negative indices per component, k == r
    name = "scatter_nd_13_f32_r3_k3_q2_noreduction_negative_components"
    data = np_arr([float(i) for i in range(24)], "f32", [2, 3, 4])
    nd_case(name, 13, "f32", data, idx_arr([-1, -3, -4, 0, -1, 3, -2, 2, -1], [3, 3], "i32"),
            np_arr([100.0, 200.0, 300.0], "f32", [3]), None, "i32")
    # k == 0: the whole data updated by every batch entry
    for red in ["none", "add", "mul", "max", "min"]:
        name = f"scatter_nd_18_i32_r2_k0_q2_{red}_k0_whole_tensor_repeated"
        data = np_arr([1, 2, 3, 4], "i32", [2, 2])
        nd_case(name, 18, "i32", data, idx_arr([], [3, 0], "i64"),
                np_arr([5, -6, 7, 8, 2, 2, -3, 0, 9, 1, 1, 1], "i32", [3, 2, 2]), red)
    name = "scatter_nd_11_f32_r2_k0_q1_noreduction_k0_single"
    nd_case(name, 11, "f32", np_arr([1.0, 2.0], "f32", [1, 2]), idx_arr([], [0], "i64"),
            np_arr([7.0, 8.0], "f32", [1, 2]), None)
    # empty indices / zero-size data
    for i, dt in enumerate(DTYPES):
        for opset in [(11, 18)[i % 2]]:
            red = None if opset == 11 else "none"
            name = f"scatter_nd_{opset}_{dt}_r2_k1_q2_{red or 'noreduction'}_empty_indices"
            rng = rng_for(name)
            data = np_arr(rand_values(rng, dt, 6), dt, [2, 3])
            nd_case(name, opset, dt, data, idx_arr([], [0, 1], "i64"), np_arr([], dt, [0, 3]), red)
        name = f"scatter_nd_16_{dt}_r2_k2_q2_{'add' if dt != 'str' else 'none'}_zero_size_data"
        nd_case(name, 16, dt, np_arr([], dt, [0, 3]), idx_arr([], [0, 2], "i64"), np_arr([], dt, [0]),
                "add" if dt != "str" else "none")
    name = "scatter_nd_18_f32_r2_k1_q2_add_zero_size_trailing_dim"
    nd_case(name, 18, "f32", np_arr([], "f32", [3, 0]), idx_arr([2, -1, 0], [3, 1], "i64"), np_arr([], "f32", [3, 0]), "add")
    name = "scatter_nd_13_f32_r3_k1_q3_noreduction_empty_batch_dim"
    nd_case(name, 13, "f32", np_arr([1.0] * 8, "f32", [2, 2, 2]), idx_arr([], [2, 0, 1], "i64"),
            np_arr([], "f32", [2, 0, 2, 2]), None)
    # constant indices on every version
    for op, opset in ND_OPS:
        for red in legal_reductions(op, opset):
            name = f"scatter_nd_{opset}_f64_r3_k2_q3_{red or 'noreduction'}_constidx_neg_dup"
            rng = rng_for(name)
            data, ivals, ishape, upd = gen_nd_inputs(rng, "f64", 3, 2, 3)
            ivals[-2:] = ivals[:2]  # a duplicate
            nd_case(name, opset, "f64", data, idx_arr(ivals, ishape, "i64"), upd, red, "i64", True)
    # wrap-around
    for dt, red, d, u in [("i8", "add", 127, 1), ("u8", "add", 255, 1), ("i16", "mul", 256, 128),
                          ("i32", "mul", -2147483648, -1), ("u64", "add", 18446744073709551615, 3),
                          ("i64", "add", 9223372036854775807, 1), ("u32", "mul", 4294967295, 4294967295)]:
        name = f"scatter_nd_18_{dt}_r1_k1_q2_{red}_wraparound"
        nd_case(name, 18, dt, np_arr([d, 1], dt, [2]), idx_arr([0, 0], [2, 1], "i64"),
                np_arr([u, 1 if red == "mul" else 0], dt, [2]), red)
    # NaN / Inf
    nan, inf = float("nan"), float("inf")
    for dt in FLOATS:
        for red in ["add", "mul", "max", "min"]:
            name = f"scatter_nd_18_{dt}_r2_k2_q2_{red}_nan_inf"
            data = np_arr([nan, 1.0, -inf, inf, 0.0, -0.0], dt, [2, 3])
            idx = idx_arr([0, 0, 0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 2], [7, 2], "i64")
            upd = np_arr([1.0, nan, 2.0, inf, -0.0, 0.0, nan], dt, [7])
            nd_case(name, 18, dt, data, idx, upd, red)
    name = "scatter_nd_18_f16_r1_k1_q2_add_round_each_step"
    nd_case(name, 18, "f16", np_arr([2048.0], "f16", [1]), idx_arr([0, 0, 0], [3, 1], "i64"),
            np_arr([1.0, 1.0, 1.0], "f16", [3]), "add")
    for opset, red in [(17, "mul"), (21, "max"), (24, "min")]:
        name = f"scatter_nd_{opset}_f32_r2_k1_q2_{red}_later_opset"
        rng = rng_for(name)
        data, ivals, ishape, upd = gen_nd_inputs(rng, "f32", 2, 1, 2)
        nd_case(name, opset, "f32", data, idx_arr(ivals, ishape, "i64"), upd, red)
    name = "scatter_nd_18_str_r1_k1_q2_add_concat_order"
    nd_case(name, 18, "str", np_arr(["x", "y"], "str", [2]), idx_arr([0, 1, 0, -2], [4, 1], "i32"),
            np_arr(["1", "2", "3", "4"], "str", [4]), "add", "i32")


def gen_nd_errors():
    dt = "f32"
    data = np_arr([float(i) for i in range(6)], dt, [2, 3])
    for opset, red in [(11, None), (18, "add")]:
        pre = f"scatter_nd_{opset}"
        for idt in ("i32", "i64"):
            info = np.iinfo(DTYPES[idt][0])
            for what, iv in [("component_eq_d", [0, 3]), ("component_eq_neg_d_minus_1", [-3, 0]),
                             ("component_out_flat_inside", [0, 4]), ("component_neg_out_flat_inside", [1, -4]),
                             ("index_min", [int(info.min), 0]), ("index_max", [0, int(info.max)])]:
                nd_case(f"{pre}_{idt}_{what}_err_out-of-bounds", opset, dt, data, idx_arr(iv, [1, 2], idt),
                        np_arr([9.0], dt, [1]), red, idt)
        nd_case(f"{pre}_k1_eq_d_err_out-of-bounds", opset, dt, data, idx_arr([2], [1, 1], "i64"),
                np_arr([9.0, 9.0, 9.0], dt, [1, 3]), red)
        nd_case(f"{pre}_const_index_out_of_range_err_out-of-bounds", opset, dt, data, idx_arr([5], [1, 1], "i64"),
                np_arr([9.0, 9.0, 9.0], dt, [1, 3]), red, "i64", True)
        nd_case(f"{pre}_k_gt_r_err_rank", opset, dt, data, idx_arr([0, 0, 0], [1, 3], "i64"), np_arr([9.0], dt, [1]), red)
        nd_case(f"{pre}_indices_rank0_err_rank", opset, dt, data, idx_arr([0], [], "i64"), np_arr([9.0] * 6, dt, [2, 3]), red)
        nd_case(f"{pre}_data_rank0_err_rank", opset, dt, np_arr([1.0], dt, []), idx_arr([], [1, 0], "i64"),
                np_arr([9.0], dt, [1]), red)
        nd_case(f"{pre}_updates_shape_wrong_trailing_err_shape", opset, dt, data, idx_arr([0], [1, 1], "i64"),
                np_arr([9.0, 9.0], dt, [1, 2]), red)
        nd_case(f"{pre}_updates_shape_wrong_batch_err_shape", opset, dt, data, idx_arr([0, 1], [2, 1], "i64"),
                np_arr([9.0] * 3, dt, [1, 3]), red)
        nd_case(f"{pre}_updates_rank_wrong_err_shape", opset, dt, data, idx_arr([0, 1, 1, 1], [2, 2], "i64"),
                np_arr([9.0, 9.0], dt, [2, 1]), red)
        nd_case(f"{pre}_data_updates_type_mismatch_err_type", opset, dt, data, idx_arr([0, 1], [1, 2], "i64"),
                np_arr([9.0], "f16", [1]), red, upd_dt="f16")
        nd_case(f"{pre}_float_indices_err_type", opset, dt, data, np.array([[0.0, 1.0]], dtype=np.float64),
                np_arr([9.0], dt, [1]), red, "f64")
        nd_case(f"{pre}_uint8_indices_err_type", opset, dt, data, np.array([[0, 1]], dtype=np.uint8),
                np_arr([9.0], dt, [1]), red, "u8")
        nd_case(f"{pre}_unknown_attr_foo_err_foo", opset, dt, data, idx_arr([0, 1], [1, 2], "i64"),
                np_arr([9.0], dt, [1]), red, extra_attrs={"foo": "bar"})
    idx = idx_arr([0, 1], [1, 2], "i64")
    upd = np_arr([9.0], dt, [1])
    for opset in (11, 13):
        nd_case(f"scatter_nd_{opset}_reduction_add_err_reduction", opset, dt, data, idx, upd, "add")
        nd_case(f"scatter_nd_{opset}_reduction_none_err_reduction", opset, dt, data, idx, upd, "none")
    for opset in (16, 17):
        for red in ("max", "min"):
            nd_case(f"scatter_nd_{opset}_reduction_{red}_err_reduction", opset, dt, data, idx, upd, red)
    for opset in (16, 18):
        nd_case(f"scatter_nd_{opset}_reduction_foo_err_reduction", opset, dt, data, idx, upd, "foo")
    nd_case("scatter_nd_10_below_first_version_err_opset", 10, dt, data, idx, upd, None)
    sd = np_arr(["a", "b"], "str", [2])
    for opset in (16, 18):
        nd_case(f"scatter_nd_{opset}_str_mul_err_reduction", opset, "str", sd, idx_arr([1], [1, 1], "i64"),
                np_arr(["c"], "str", [1]), "mul")
