"""Cases for OpenVINO ScatterElementsUpdate-12 in the custom domain
org.openvinotoolkit (version 1, plus default domain 18): inputs data, indices,
updates, axis; reductions none/sum/prod/min/max/mean with use_init_val.  Hand-
computed examples check the oracle first.  These cases are oracle-only (no
cross-checker runs the domain).
"""
from __future__ import annotations

import numpy as np

from .cases import io, make_case, rng_for
from .oracle import OracleError, oracle_ov
from .scatter_elements import gen_se_inputs
from .values import DTYPES, idx_arr, np_arr

OV_DOMAIN = "org.openvinotoolkit"


# --------------------------------------------------------------------------
# OpenVINO ScatterElementsUpdate-12 (custom domain)
# --------------------------------------------------------------------------
def ov_case(name, dt, data, indices, updates, axis_val, red, use_init, idt="i64", axis_dt="i64",
            axis_shape=(), axis_init=True, extra_attrs=None, upd_dt=None):
    attrs = {}
    if red is not None:
        attrs["reduction"] = red
    if use_init is not None:
        attrs["use_init_val"] = use_init
    if extra_attrs:
        attrs.update(extra_attrs)
    upd_dt = upd_dt or dt
    axis_arr = np.array(axis_val, dtype=DTYPES[axis_dt][0]).reshape(axis_shape)
    inputs = [io("data", data, dt), io("indices", indices, idt), io("updates", updates, upd_dt),
              io("axis", axis_arr, axis_dt, axis_init)]
    lerr = None
    for a in sorted(attrs):
        if a not in ("reduction", "use_init_val"):
            lerr = a
            break
    if lerr is None and attrs.get("reduction", "none") not in ("none", "sum", "prod", "min", "max", "mean"):
        lerr = "reduction"

    def compute():
        if upd_dt != dt or idt not in ("i32", "i64"):
            raise OracleError("type")
        return oracle_ov(data, indices, updates, int(axis_val), red or "none", 1 if use_init is None else use_init, dt)

    c = make_case(name, "ScatterElementsUpdate", 18, attrs, inputs, DTYPES[dt][1], compute, domain=OV_DOMAIN,
                  load_error=lerr)
    return c


def gen_ov():
    d = np_arr([2, 3, 4, 6], "i32", [4])
    u = np_arr([10, 20, 30, 40, 70, 60], "i32", [6])
    c = ov_case("ov_scatter_elements_update_i32_r1_axis0_sum_init1_spec_example", "i32", d,
                idx_arr([1, 0, 0, -2, -1, 2], [6], "i64"), u, 0, "sum", 1)
    assert c.expected.tolist() == [52, 13, 104, 76], c.expected
    c = ov_case("ov_scatter_elements_update_i32_r1_axis0_sum_init0_spec_example", "i32", d,
                idx_arr([1, 0, 0, 2, 3, 2], [6], "i64"), u, 0, "sum", 0)
    assert c.expected.tolist() == [50, 10, 100, 70], c.expected
    # sanity checks of the oracle (hand-computed)
    c = ov_case("ov_scatter_elements_update_i32_r1_axis0_mean_init1_floor", "i32", np_arr([-3, 5, 0, 7], "i32", [4]),
                idx_arr([0, 0, 1, 2], [4], "i64"), np_arr([-4, 2, -2, 1], "i32", [4]), 0, "mean", 1)
    assert c.expected.tolist() == [-2, 1, 0, 7], c.expected  # (-3-4+2)/3=-5/3 -> -2 ; (5-2)/2 -> 1 ; (0+1)/2 -> 0
    c = ov_case("ov_scatter_elements_update_i32_r1_axis0_mean_init0_floor", "i32", np_arr([-3, 5, 0, 7], "i32", [4]),
                idx_arr([0, 0, 1, 2], [4], "i64"), np_arr([-4, 1, -3, 1], "i32", [4]), 0, "mean", 0)
    assert c.expected.tolist() == [-2, -3, 1, 7], c.expected  # (-4+1)/2=-1.5 -> -2
    # cover: reductions x use_init_val x dtypes x axis forms
    counter = 0
    for dt in ["i32", "i64", "i8", "u8", "f32", "f16", "f64", "bool"]:
        for red in ["none", "sum", "prod", "min", "max", "mean"]:
            for use_init in (1, 0):
                counter += 1
                if dt == "bool" and red == "mean":
                    continue
                if dt not in ("i32", "f32") and (counter % 3 != 0):
                    continue
                rank = 1 + counter % 3
                ax = counter % rank
                neg = (counter // 3) % 2 == 1
                axis = ax - rank if neg else ax
                axis_dt = "i32" if counter % 2 else "i64"
                axis_shape = () if counter % 4 < 2 else (1,)
                axis_init = counter % 5 != 0
                idt = "i64" if (counter // 2) % 2 else "i32"
                name = (f"ov_scatter_elements_update_{dt}_r{rank}_axis{axis}_{red}_init{use_init}_{idt}"
                        f"_axis{axis_dt}{'s' if axis_shape == () else '1'}{'' if axis_init else '_axisinput'}")
                rng = rng_for(name)
                data, ivals, ishape, upd = gen_se_inputs(rng, dt, rank, ax)
                ov_case(name, dt, data, idx_arr(ivals, ishape, idt), upd, axis, red, use_init, idt, axis_dt,
                        axis_shape, axis_init)
    # 2-D with axis 1 and -1
    data = np_arr([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "f32", [2, 3])
    idx = idx_arr([0, 0, 2, -1, 1, 1], [2, 3], "i64")
    upd = np_arr([10.0, 20.0, 30.0, 40.0, 50.0, 5.0], "f32", [2, 3])
    for axis in (1, -1):
        for red in ["sum", "prod", "min", "max", "mean", "none"]:
            for ui in (1, 0):
                ov_case(f"ov_scatter_elements_update_f32_r2_axis{axis}_{red}_init{ui}_2d", "f32", data, idx, upd,
                        axis, red, ui, axis_init=(axis == 1))
    # defaults: no attributes at all (none), reduction without use_init_val (defaults to 1)
    ov_case("ov_scatter_elements_update_f32_r2_axis1_default_attrs", "f32", data, idx, upd, 1, None, None)
    ov_case("ov_scatter_elements_update_f32_r2_axis1_mean_default_init", "f32", data, idx, upd, 1, "mean", None)
    ov_case("ov_scatter_elements_update_i64_r2_axis0_mean_negative_floor", "i64",
            np_arr([-7, 3, 0, -1], "i64", [2, 2]), idx_arr([1, 1, 1, 0], [2, 2], "i64"),
            np_arr([-2, -2, 4, 1], "i64", [2, 2]), 0, "mean", 1)
    ov_case("ov_scatter_elements_update_f16_r1_axis0_mean_init0", "f16", np_arr([1.0, 2.0, 3.0], "f16", [3]),
            idx_arr([2, 2, 2, 0], [4], "i64"), np_arr([1.0, 2.0, 4.0, 0.5], "f16", [4]), 0, "mean", 0)
    nan = float("nan")
    ov_case("ov_scatter_elements_update_f32_r1_axis0_max_nan_init0", "f32", np_arr([nan, 2.0, 3.0], "f32", [3]),
            idx_arr([0, 1, 1], [3], "i64"), np_arr([1.0, nan, 4.0], "f32", [3]), 0, "max", 0)
    ov_case("ov_scatter_elements_update_i32_r1_axis0_sum_empty_indices", "i32", d, idx_arr([], [0], "i64"),
            np_arr([], "i32", [0]), 0, "sum", 0)
    # errors
    b = np_arr([True, False], "bool", [2])
    for ui in (1, 0):
        ov_case(f"ov_scatter_elements_update_bool_mean_init{ui}_err_reduction", "bool", b, idx_arr([0], [1], "i64"),
                np_arr([True], "bool", [1]), 0, "mean", ui)
    ov_case("ov_scatter_elements_update_reduction_foo_err_reduction", "i32", d, idx_arr([0], [1], "i64"),
            np_arr([1], "i32", [1]), 0, "foo", 1)
    ov_case("ov_scatter_elements_update_reduction_add_err_reduction", "i32", d, idx_arr([0], [1], "i64"),
            np_arr([1], "i32", [1]), 0, "add", 1)
    ov_case("ov_scatter_elements_update_axis_eq_r_err_axis", "i32", d, idx_arr([0], [1], "i64"),
            np_arr([1], "i32", [1]), 1, "sum", 1)
    ov_case("ov_scatter_elements_update_axis_input_neg_r_minus_1_err_axis", "i32", d, idx_arr([0], [1], "i64"),
            np_arr([1], "i32", [1]), -2, "sum", 1, axis_init=False)
    ov_case("ov_scatter_elements_update_index_eq_s_err_out-of-bounds", "i32", d, idx_arr([4], [1], "i64"),
            np_arr([1], "i32", [1]), 0, "sum", 1)
    ov_case("ov_scatter_elements_update_index_neg_s_minus_1_err_out-of-bounds", "i32", d, idx_arr([-5], [1], "i32"),
            np_arr([1], "i32", [1]), 0, "max", 0, idt="i32")
    ov_case("ov_scatter_elements_update_type_mismatch_err_type", "i32", d, idx_arr([0], [1], "i64"),
            np_arr([1.0], "f32", [1]), 0, "sum", 1, upd_dt="f32")
    ov_case("ov_scatter_elements_update_shape_mismatch_err_shape", "i32", d, idx_arr([0, 1], [2], "i64"),
            np_arr([1], "i32", [1]), 0, "sum", 1)
    ov_case("ov_scatter_elements_update_unknown_attr_foo_err_foo", "i32", d, idx_arr([0], [1], "i64"),
            np_arr([1], "i32", [1]), 0, "sum", 1, extra_attrs={"foo": 1})
