//! Hostile inputs through `onnx()`: a model file and the tensors fed to it
//! are untrusted. Every case must end in a clear error (or the contract's
//! value), never a panic, an abort, an overflow or an allocation
//! proportional to a declared size. Runs in debug (`cargo test`), where
//! integer overflow would panic.
//!
//! Regression tests for crashes the fuzzers found (`fuzz/`) live at the end.

use crate::model_builder;

use model_builder::*;
use tract_onnx_scatter::tract_onnx::pb::TensorProto;
use tract_onnx_scatter::tract_onnx::pb::tensor_proto::DataType;
use tract_onnx_scatter::tract_onnx::prelude::*;

// ---------------------------------------------------------------------------
// Helpers.

/// Compiles and runs `m` on `inputs`; `Err` is the whole error chain.
/// Fails the test on a panic.
fn outcome(what: &str, m: &OneNode, inputs: TVec<TValue>) -> Result<Tensor, String> {
    no_panic(what, || {
        let plan = m.compile().map_err(|e| chain(&e))?;
        let mut out = plan.run(inputs).map_err(|e| chain(&e))?;
        Ok(out.remove(0).into_tensor())
    })
}

fn expect_err(what: &str, m: &OneNode, inputs: TVec<TValue>, words: &[&str]) -> String {
    match outcome(what, m, inputs) {
        Ok(t) => panic!("{what}: expected an error, got {t:?}"),
        Err(e) => {
            for w in words {
                assert!(e.contains(w), "{what}: error lacks {w:?}: {e}");
            }
            e
        }
    }
}

fn expect_ok(what: &str, m: &OneNode, inputs: TVec<TValue>) -> Tensor {
    match outcome(what, m, inputs) {
        Ok(t) => t,
        Err(e) => panic!("{what}: expected a value, got error: {e}"),
    }
}

fn t<T: Datum + Copy>(shape: &[usize], data: &[T]) -> TValue {
    Tensor::from_shape(shape, data).unwrap().into_tvalue()
}

fn vals<T: Datum + Clone>(t: &Tensor) -> Vec<T> {
    t.try_as_plain_ram()
        .unwrap()
        .as_slice::<T>()
        .unwrap()
        .to_vec()
}

fn init_i32(name: &str, shape: &[i64], values: &[i32]) -> Value {
    Value::Init(Box::new(TensorProto {
        name: name.into(),
        dims: shape.to_vec(),
        data_type: DataType::Int32 as i32,
        int32_data: values.to_vec(),
        ..Default::default()
    }))
}

/// `ScatterElementsUpdate` (OpenVINO semantics) with a constant axis.
fn seu(_axis: i64, reduction: &str, use_init_val: i64) -> OneNode {
    OneNode::new("ScatterElementsUpdate", 18)
        .attr(attr_string("reduction", reduction))
        .attr(attr_int("use_init_val", use_init_val))
}

/// Extreme values for an index on an axis of size `dim`, each out of
/// range.
fn bad_indices(dim: i64) -> [i64; 5] {
    [i64::MIN, i64::MAX, dim, -dim - 1, i32::MIN as i64]
}

// ---------------------------------------------------------------------------
// 1. Index values: i64::MIN, i64::MAX, +dim, -(dim + 1) on every op, as
//    run-time inputs (checked at run) and as constants (checked at load).

/// (op, opset, extra attributes) for the ScatterElements family on data
/// [3, 4], axis 1.
fn elements_family() -> Vec<OneNode> {
    let mut v = vec![
        OneNode::new("Scatter", 9),
        OneNode::new("Scatter", 10),
        OneNode::new("ScatterElements", 11),
        OneNode::new("ScatterElements", 13),
    ];
    for r in ["none", "add", "mul"] {
        v.push(OneNode::new("ScatterElements", 16).attr(attr_string("reduction", r)));
    }
    for r in ["none", "add", "mul", "max", "min"] {
        v.push(OneNode::new("ScatterElements", 18).attr(attr_string("reduction", r)));
    }
    v.into_iter().map(|m| m.attr(attr_int("axis", 1))).collect()
}

#[test]
fn extreme_indices_on_scatter_elements_and_scatter_are_out_of_bounds() {
    for base in elements_family() {
        for bad in bad_indices(4) {
            let what = format!("{} {} index {bad}", base.op_type, base.opset);
            // Run time.
            let m = base
                .clone()
                .value(input("data", DataType::Float, &[3, 4]))
                .value(input("indices", DataType::Int64, &[1, 2]))
                .value(input("updates", DataType::Float, &[1, 2]));
            let inputs = tvec![
                t(&[3, 4], &[0f32; 12]),
                t(&[1, 2], &[0i64, bad]),
                t(&[1, 2], &[1f32, 2.]),
            ];
            let e = expect_err(&what, &m, inputs, &["out of bounds", &bad.to_string()]);
            assert!(e.contains("size 4"), "{what}: {e}");
            // Constant indices: refused when the model is optimized.
            let m = base
                .clone()
                .value(input("data", DataType::Float, &[3, 4]))
                .value(init_i64("indices", &[1, 2], &[0, bad]))
                .value(input("updates", DataType::Float, &[1, 2]));
            let inputs = tvec![t(&[3, 4], &[0f32; 12]), t(&[1, 2], &[1f32, 2.])];
            expect_err(&what, &m, inputs, &["out of bounds"]);
        }
        // ±dim - 1 / -dim are the edges of the valid range.
        let m = base
            .clone()
            .value(input("data", DataType::Float, &[3, 4]))
            .value(input("indices", DataType::Int64, &[1, 2]))
            .value(input("updates", DataType::Float, &[1, 2]));
        let out = expect_ok(
            "edges",
            &m,
            tvec![
                t(&[3, 4], &[0f32; 12]),
                t(&[1, 2], &[-4i64, 3]),
                t(&[1, 2], &[1f32, 2.]),
            ],
        );
        let v = vals::<f32>(&out);
        // none and add write 1 and 2 into zeros; mul gives 0; max 1/2; min 0.
        assert!(v[0] == 1.0 || v[0] == 0.0, "{v:?}");
        assert!(v[3] == 2.0 || v[3] == 0.0, "{v:?}");
        assert!(v[4..].iter().all(|&x| x == 0.0));
    }
}

#[test]
fn extreme_i32_indices_are_out_of_bounds() {
    for bad in [i32::MIN, i32::MAX, 4, -5] {
        let m = OneNode::new("ScatterElements", 18)
            .attr(attr_int("axis", -1))
            .value(input("data", DataType::Float, &[3, 4]))
            .value(input("indices", DataType::Int32, &[1, 1]))
            .value(input("updates", DataType::Float, &[1, 1]));
        let inputs = tvec![
            t(&[3, 4], &[0f32; 12]),
            t(&[1, 1], &[bad]),
            t(&[1, 1], &[1f32])
        ];
        expect_err("i32", &m, inputs, &["out of bounds", &bad.to_string()]);
        let m = OneNode::new("ScatterND", 18)
            .value(input("data", DataType::Float, &[3, 4]))
            .value(init_i32("indices", &[1, 2], &[0, bad]))
            .value(input("updates", DataType::Float, &[1]));
        expect_err(
            "nd i32 const",
            &m,
            tvec![t(&[3, 4], &[0f32; 12]), t(&[1], &[1f32])],
            &["out of bounds"],
        );
    }
}

#[test]
fn extreme_indices_on_scatter_nd_are_out_of_bounds_per_component() {
    let mut bases = vec![OneNode::new("ScatterND", 11), OneNode::new("ScatterND", 13)];
    for r in ["none", "add", "mul"] {
        bases.push(OneNode::new("ScatterND", 16).attr(attr_string("reduction", r)));
    }
    for r in ["none", "add", "mul", "max", "min"] {
        bases.push(OneNode::new("ScatterND", 18).attr(attr_string("reduction", r)));
    }
    for base in bases {
        // data [3, 4]: component 0 against 3, component 1 against 4.
        for (component, dim) in [(0usize, 3i64), (1, 4)] {
            for bad in bad_indices(dim) {
                let what = format!("ScatterND {} component {component} = {bad}", base.opset);
                let mut tuple = [0i64, 0];
                tuple[component] = bad;
                let m = base
                    .clone()
                    .value(input("data", DataType::Float, &[3, 4]))
                    .value(input("indices", DataType::Int64, &[1, 2]))
                    .value(input("updates", DataType::Float, &[1]));
                let inputs = tvec![
                    t(&[3, 4], &[0f32; 12]),
                    t(&[1, 2], &tuple),
                    t(&[1], &[1f32]),
                ];
                let e = expect_err(&what, &m, inputs, &["out of bounds", &bad.to_string()]);
                assert!(e.contains(&format!("size {dim}")), "{what}: {e}");
                let m = base
                    .clone()
                    .value(input("data", DataType::Float, &[3, 4]))
                    .value(init_i64("indices", &[1, 2], &tuple))
                    .value(input("updates", DataType::Float, &[1]));
                let inputs = tvec![t(&[3, 4], &[0f32; 12]), t(&[1], &[1f32])];
                expect_err(&what, &m, inputs, &["out of bounds"]);
            }
        }
        // A component out of range whose flat offset would land inside.
        let m = base
            .clone()
            .value(input("data", DataType::Float, &[3, 4]))
            .value(input("indices", DataType::Int64, &[1, 2]))
            .value(input("updates", DataType::Float, &[1]));
        let inputs = tvec![
            t(&[3, 4], &[0f32; 12]),
            t(&[1, 2], &[0i64, 5]),
            t(&[1], &[1f32])
        ];
        expect_err("flat inside", &m, inputs, &["out of bounds"]);
    }
}

#[test]
fn extreme_write_indices_on_tensor_scatter() {
    // past_cache [2, 4, 3] along axis 1 (the default -2), update [2, 2, 3].
    let model = |mode: &str| {
        OneNode::new("TensorScatter", 24)
            .attr(attr_string("mode", mode))
            .value(input("past_cache", DataType::Float, &[2, 4, 3]))
            .value(input("update", DataType::Float, &[2, 2, 3]))
            .value(input("write_indices", DataType::Int64, &[2]))
    };
    let cache: Vec<f32> = (0..24).map(|x| x as f32).collect();
    let update: Vec<f32> = (100..112).map(|x| x as f32).collect();
    for bad in [i64::MIN, i64::MAX, 3, 4, -1, -4, i64::MAX - 1] {
        let inputs = tvec![
            t(&[2, 4, 3], &cache),
            t(&[2, 2, 3], &update),
            t(&[2], &[0i64, bad]),
        ];
        expect_err("linear", &model("linear"), inputs, &["out of bounds"]);
        // Circular wraps any start, the extremes included.
        let inputs = tvec![
            t(&[2, 4, 3], &cache),
            t(&[2, 2, 3], &update),
            t(&[2], &[0i64, bad]),
        ];
        let out = expect_ok("circular", &model("circular"), inputs);
        let v = vals::<f32>(&out);
        let first = bad.rem_euclid(4) as usize;
        for s in 0..2 {
            let pos = (first + s) % 4;
            for c in 0..3 {
                assert_eq!(v[12 + pos * 3 + c], update[6 + s * 3 + c], "start {bad}");
            }
        }
    }
}

#[test]
fn extreme_indices_and_axis_on_scatter_elements_update() {
    for bad in bad_indices(4) {
        for (reduction, init) in [("none", 1), ("sum", 0), ("mean", 1), ("prod", 0)] {
            let m = seu(1, reduction, init)
                .value(input("data", DataType::Float, &[3, 4]))
                .value(input("indices", DataType::Int64, &[1, 2]))
                .value(input("updates", DataType::Float, &[1, 2]))
                .value(init_i64("axis", &[], &[1]));
            let inputs = tvec![
                t(&[3, 4], &[0f32; 12]),
                t(&[1, 2], &[0i64, bad]),
                t(&[1, 2], &[1f32, 2.]),
            ];
            expect_err("seu", &m, inputs, &["out of bounds"]);
        }
    }
    // The axis input itself, extreme, at run time.
    for axis in [i64::MIN, i64::MAX, 2, -3] {
        let m = seu(1, "sum", 1)
            .value(input("data", DataType::Float, &[3, 4]))
            .value(input("indices", DataType::Int64, &[1, 2]))
            .value(input("updates", DataType::Float, &[1, 2]))
            .value(input("axis", DataType::Int64, &[]));
        let inputs = tvec![
            t(&[3, 4], &[0f32; 12]),
            t(&[1, 2], &[0i64, 1]),
            t(&[1, 2], &[1f32, 2.]),
            tensor0(axis).into_tvalue(),
        ];
        expect_err("seu axis", &m, inputs, &["axis"]);
    }
}

#[test]
fn extreme_axis_attribute_is_an_axis_error() {
    for axis in [i64::MIN, i64::MAX, 2, -3] {
        for op in ["ScatterElements", "Scatter"] {
            let opset = if op == "Scatter" { 10 } else { 18 };
            let m = OneNode::new(op, opset)
                .attr(attr_int("axis", axis))
                .value(input("data", DataType::Float, &[3, 4]))
                .value(input("indices", DataType::Int64, &[1, 2]))
                .value(input("updates", DataType::Float, &[1, 2]));
            let inputs = tvec![
                t(&[3, 4], &[0f32; 12]),
                t(&[1, 2], &[0i64, 1]),
                t(&[1, 2], &[1f32, 2.]),
            ];
            expect_err("axis", &m, inputs, &["axis"]);
        }
        let m = OneNode::new("TensorScatter", 24)
            .attr(attr_int("axis", axis))
            .value(input("past_cache", DataType::Float, &[2, 4]))
            .value(input("update", DataType::Float, &[2, 1]));
        let inputs = tvec![t(&[2, 4], &[0f32; 8]), t(&[2, 1], &[1f32, 2.])];
        expect_err("ts axis", &m, inputs, &["axis"]);
    }
}

// ---------------------------------------------------------------------------
// 2. Rank 0, k > r, rank 8+.

#[test]
fn rank_0_data_and_rank_0_indices_are_rank_errors() {
    for op in ["ScatterElements", "ScatterND"] {
        let m = OneNode::new(op, 18)
            .value(input("data", DataType::Float, &[]))
            .value(input("indices", DataType::Int64, &[]))
            .value(input("updates", DataType::Float, &[]));
        let inputs = tvec![
            tensor0(1f32).into_tvalue(),
            tensor0(0i64).into_tvalue(),
            tensor0(2f32).into_tvalue(),
        ];
        let e = expect_err(op, &m, inputs, &[]);
        assert!(e.contains("rank") || e.contains("axis"), "{op}: {e}");
    }
    // Rank-0 ScatterND indices on rank-1 data, declared and symbolic.
    let m = OneNode::new("ScatterND", 18)
        .value(input("data", DataType::Float, &[3]))
        .value(input("indices", DataType::Int64, &[]))
        .value(input("updates", DataType::Float, &[]));
    let inputs = tvec![
        t(&[3], &[0f32; 3]),
        tensor0(0i64).into_tvalue(),
        tensor0(2f32).into_tvalue(),
    ];
    expect_err("nd rank-0 indices", &m, inputs, &["rank", "indices"]);
    let m = OneNode::new("ScatterND", 18)
        .value(input_sym("data", DataType::Float, vec!["N".into()]))
        .value(input_sym("indices", DataType::Int64, vec![]))
        .value(input_sym("updates", DataType::Float, vec![]));
    let inputs = tvec![
        t(&[3], &[0f32; 3]),
        tensor0(0i64).into_tvalue(),
        tensor0(2f32).into_tvalue(),
    ];
    expect_err("nd rank-0 indices sym", &m, inputs, &["rank"]);
    // TensorScatter needs rank >= 2.
    let m = OneNode::new("TensorScatter", 24)
        .value(input("past_cache", DataType::Float, &[]))
        .value(input("update", DataType::Float, &[]));
    let inputs = tvec![tensor0(0f32).into_tvalue(), tensor0(1f32).into_tvalue()];
    let e = expect_err("ts rank 0", &m, inputs, &[]);
    assert!(e.contains("rank") || e.contains("axis"), "{e}");
}

#[test]
fn scatter_nd_tuples_longer_than_the_data_rank_are_rank_errors() {
    let m = OneNode::new("ScatterND", 18)
        .value(input("data", DataType::Float, &[2, 2]))
        .value(input("indices", DataType::Int64, &[1, 3]))
        .value(input("updates", DataType::Float, &[1]));
    let inputs = tvec![
        t(&[2, 2], &[0f32; 4]),
        t(&[1, 3], &[0i64; 3]),
        t(&[1], &[1f32])
    ];
    expect_err("k > r", &m, inputs, &["rank"]);
    // Symbolic: only the run knows.
    let m = OneNode::new("ScatterND", 18)
        .value(input_sym(
            "data",
            DataType::Float,
            vec!["A".into(), "B".into()],
        ))
        .value(input_sym(
            "indices",
            DataType::Int64,
            vec!["N".into(), "K".into()],
        ))
        .value(input_sym("updates", DataType::Float, vec!["N".into()]));
    let inputs = tvec![
        t(&[2, 2], &[0f32; 4]),
        t(&[1, 3], &[0i64; 3]),
        t(&[1], &[1f32])
    ];
    expect_err("k > r sym", &m, inputs, &["rank"]);
    // k = i64::MAX-ish declared: a rank error, not an allocation.
    let m = OneNode::new("ScatterND", 18)
        .value(input("data", DataType::Float, &[2, 2]))
        .value(input("indices", DataType::Int64, &[1, 1 << 40]))
        .value(input("updates", DataType::Float, &[1]));
    let inputs = tvec![
        t(&[2, 2], &[0f32; 4]),
        t(&[1, 3], &[0i64; 3]),
        t(&[1], &[1f32])
    ];
    expect_err("k huge", &m, inputs, &[]);
}

#[test]
fn rank_9_scatter_elements_and_scatter_nd_give_the_contract_value() {
    let shape = [2usize, 1, 2, 1, 2, 1, 2, 1, 2];
    let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    let n: usize = shape.iter().product();
    let data: Vec<f32> = (0..n).map(|x| x as f32).collect();
    // ScatterElements along the last axis: indices all-ones shape, index 1.
    let ones = [1i64; 9];
    let m = OneNode::new("ScatterElements", 18)
        .attr(attr_int("axis", -1))
        .attr(attr_string("reduction", "add"))
        .value(input("data", DataType::Float, &dims))
        .value(input("indices", DataType::Int64, &ones))
        .value(input("updates", DataType::Float, &ones));
    let inputs = tvec![
        t(&shape, &data),
        t(&[1; 9], &[-1i64]),
        t(&[1; 9], &[100f32]),
    ];
    let out = expect_ok("rank 9 elements", &m, inputs);
    let mut expected = data.clone();
    expected[1] += 100.0;
    assert_eq!(vals::<f32>(&out), &expected[..]);
    // ScatterND with a full-rank tuple (k = 9): one element.
    let m = OneNode::new("ScatterND", 18)
        .attr(attr_string("reduction", "mul"))
        .value(input("data", DataType::Float, &dims))
        .value(input("indices", DataType::Int64, &[1, 9]))
        .value(input("updates", DataType::Float, &[1]));
    let tuple = [1i64, 0, -1, 0, 1, -1, -1, 0, 1];
    let inputs = tvec![t(&shape, &data), t(&[1, 9], &tuple), t(&[1], &[-2f32])];
    let out = expect_ok("rank 9 nd", &m, inputs);
    let mut expected = data.clone();
    expected[n - 1] *= -2.0;
    assert_eq!(vals::<f32>(&out), &expected[..]);
    // And out of range on the 9th component.
    let m = OneNode::new("ScatterND", 18)
        .value(input("data", DataType::Float, &dims))
        .value(input("indices", DataType::Int64, &[1, 9]))
        .value(input("updates", DataType::Float, &[1]));
    let mut tuple = [0i64; 9];
    tuple[8] = 2;
    let inputs = tvec![t(&shape, &data), t(&[1, 9], &tuple), t(&[1], &[1f32])];
    expect_err("rank 9 nd oob", &m, inputs, &["out of bounds", "axis 8"]);
}

#[test]
fn rank_12_scatter_elements_is_handled() {
    let shape = [1usize; 12];
    let dims = [1i64; 12];
    let m = OneNode::new("ScatterElements", 13)
        .attr(attr_int("axis", 5))
        .value(input("data", DataType::Int64, &dims))
        .value(input("indices", DataType::Int64, &dims))
        .value(input("updates", DataType::Int64, &dims))
        .output_elem(DataType::Int64);
    let inputs = tvec![t(&shape, &[1i64]), t(&shape, &[0i64]), t(&shape, &[7i64])];
    let out = expect_ok("rank 12", &m, inputs);
    assert_eq!(vals::<i64>(&out), &[7]);
}

// ---------------------------------------------------------------------------
// 3. Declared shapes: overflowing products, far larger than what is fed.

#[test]
fn declared_dims_whose_product_overflows_are_errors_not_allocations() {
    let huge = [1i64 << 32, 1 << 32, 1 << 32];
    for op in ["ScatterElements", "ScatterND"] {
        let indices: &[i64] = if op == "ScatterND" { &[1, 3] } else { &huge };
        let updates: &[i64] = if op == "ScatterND" { &[1] } else { &huge };
        let m = OneNode::new(op, 18)
            .value(input("data", DataType::Float, &huge))
            .value(input("indices", DataType::Int64, indices))
            .value(input("updates", DataType::Float, updates));
        let inputs = tvec![
            t(&[1, 1, 1], &[0f32]),
            t(&[1, 3], &[0i64; 3]),
            t(&[1], &[1f32]),
        ];
        expect_err(op, &m, inputs, &[]);
    }
    // i64::MAX on every dimension of every input.
    let max = [i64::MAX, i64::MAX];
    let m = OneNode::new("ScatterElements", 18)
        .value(input("data", DataType::Float, &max))
        .value(input("indices", DataType::Int64, &max))
        .value(input("updates", DataType::Float, &max));
    let inputs = tvec![
        t(&[1, 1], &[0f32]),
        t(&[1, 1], &[0i64]),
        t(&[1, 1], &[1f32])
    ];
    expect_err("i64::MAX dims", &m, inputs, &[]);
    // TensorScatter with an overflowing cache.
    let m = OneNode::new("TensorScatter", 24)
        .value(input("past_cache", DataType::Float, &huge))
        .value(input("update", DataType::Float, &huge));
    let inputs = tvec![t(&[1, 1, 1], &[0f32]), t(&[1, 1, 1], &[1f32])];
    expect_err("ts overflow", &m, inputs, &[]);
}

#[test]
fn negative_declared_dims_are_errors() {
    let m = OneNode::new("ScatterElements", 18)
        .value(input("data", DataType::Float, &[-1, 3]))
        .value(input("indices", DataType::Int64, &[1, 1]))
        .value(input("updates", DataType::Float, &[1, 1]));
    let inputs = tvec![
        t(&[1, 3], &[0f32; 3]),
        t(&[1, 1], &[0i64]),
        t(&[1, 1], &[1f32])
    ];
    // Either refused or run on what is fed; never a panic.
    let _ = outcome("negative dim", &m, inputs);
    let m = OneNode::new("ScatterND", 18)
        .value(input("data", DataType::Float, &[3]))
        .value(input("indices", DataType::Int64, &[1, i64::MIN]))
        .value(input("updates", DataType::Float, &[1]));
    let inputs = tvec![t(&[3], &[0f32; 3]), t(&[1, 1], &[0i64]), t(&[1], &[1f32])];
    let _ = outcome("i64::MIN dim", &m, inputs);
}

#[test]
fn a_declared_shape_far_larger_than_the_fed_tensor_is_an_error() {
    for op in ["ScatterElements", "ScatterND", "Scatter"] {
        let opset = if op == "Scatter" { 10 } else { 18 };
        let big = [1i64 << 20, 1 << 20];
        let indices: &[i64] = if op == "ScatterND" { &[1, 2] } else { &[1, 1] };
        let updates: &[i64] = if op == "ScatterND" { &[1] } else { &[1, 1] };
        let m = OneNode::new(op, opset)
            .value(input("data", DataType::Float, &big))
            .value(input("indices", DataType::Int64, indices))
            .value(input("updates", DataType::Float, updates));
        let fed_indices = if op == "ScatterND" {
            t(&[1, 2], &[0i64, 0])
        } else {
            t(&[1, 1], &[0i64])
        };
        let fed_updates = if op == "ScatterND" {
            t(&[1], &[1f32])
        } else {
            t(&[1, 1], &[1f32])
        };
        let inputs = tvec![t(&[2, 2], &[0f32; 4]), fed_indices, fed_updates];
        expect_err(op, &m, inputs, &[]);
    }
    // Indices declared as 2^40 tuples of 2, fed 1 tuple.
    let m = OneNode::new("ScatterND", 18)
        .value(input("data", DataType::Float, &[2, 2]))
        .value(input("indices", DataType::Int64, &[1 << 40, 2]))
        .value(input("updates", DataType::Float, &[1 << 40]));
    let inputs = tvec![
        t(&[2, 2], &[0f32; 4]),
        t(&[1, 2], &[0i64, 0]),
        t(&[1], &[1f32])
    ];
    expect_err("nd indices", &m, inputs, &[]);
}

#[test]
fn initializers_whose_dims_lie_are_errors() {
    // int64_data of 2 values under dims [2^40, 2^40].
    let m = OneNode::new("ScatterElements", 18)
        .value(input("data", DataType::Float, &[3, 3]))
        .value(init_i64("indices", &[1 << 40, 1 << 40], &[0, 1]))
        .value(input("updates", DataType::Float, &[1, 2]));
    let inputs = tvec![t(&[3, 3], &[0f32; 9]), t(&[1, 2], &[1f32, 2.])];
    expect_err("lying init", &m, inputs, &[]);
    // Overflowing product.
    let m = OneNode::new("ScatterND", 18)
        .value(input("data", DataType::Float, &[3, 3]))
        .value(init_i64("indices", &[1 << 32, 1 << 32, 1 << 32], &[0]))
        .value(input("updates", DataType::Float, &[1, 3]));
    let inputs = tvec![t(&[3, 3], &[0f32; 9]), t(&[1, 3], &[1f32, 2., 3.])];
    expect_err("overflowing init", &m, inputs, &[]);
}

// ---------------------------------------------------------------------------
// 4. Zero-size dimensions everywhere.

#[test]
fn zero_size_dims_everywhere() {
    // Empty indices: output = data, whatever the reduction.
    for r in ["none", "add", "mul", "max", "min"] {
        let m = OneNode::new("ScatterElements", 18)
            .attr(attr_string("reduction", r))
            .attr(attr_int("axis", 1))
            .value(input("data", DataType::Float, &[2, 3]))
            .value(input("indices", DataType::Int64, &[2, 0]))
            .value(input("updates", DataType::Float, &[2, 0]));
        let data = [1f32, 2., 3., 4., 5., 6.];
        let out = expect_ok(
            r,
            &m,
            tvec![
                t(&[2, 3], &data),
                t(&[2, 0], &[] as &[i64]),
                t(&[2, 0], &[] as &[f32])
            ],
        );
        assert_eq!(vals::<f32>(&out), &data);
        // ScatterND with no tuples.
        let m = OneNode::new("ScatterND", 18)
            .attr(attr_string("reduction", r))
            .value(input("data", DataType::Float, &[2, 3]))
            .value(input("indices", DataType::Int64, &[0, 1]))
            .value(input("updates", DataType::Float, &[0, 3]));
        let out = expect_ok(
            r,
            &m,
            tvec![
                t(&[2, 3], &data),
                t(&[0, 1], &[] as &[i64]),
                t(&[0, 3], &[] as &[f32])
            ],
        );
        assert_eq!(vals::<f32>(&out), &data);
    }
    // Zero-size data, consistent shapes: output = data (empty).
    let m = OneNode::new("ScatterElements", 18)
        .attr(attr_int("axis", 1))
        .value(input("data", DataType::Float, &[0, 3]))
        .value(input("indices", DataType::Int64, &[0, 5]))
        .value(input("updates", DataType::Float, &[0, 5]));
    let out = expect_ok(
        "zero data",
        &m,
        tvec![
            t(&[0, 3], &[] as &[f32]),
            t(&[0, 5], &[] as &[i64]),
            t(&[0, 5], &[] as &[f32])
        ],
    );
    assert_eq!(out.shape(), &[0, 3]);
    // An index into an axis of size 0 is out of bounds.
    let m = OneNode::new("ScatterElements", 18)
        .attr(attr_int("axis", 1))
        .value(input("data", DataType::Float, &[1, 0]))
        .value(input("indices", DataType::Int64, &[1, 1]))
        .value(input("updates", DataType::Float, &[1, 1]));
    expect_err(
        "empty axis",
        &m,
        tvec![
            t(&[1, 0], &[] as &[f32]),
            t(&[1, 1], &[0i64]),
            t(&[1, 1], &[1f32])
        ],
        &["out of bounds"],
    );
    let m = OneNode::new("ScatterND", 18)
        .value(input("data", DataType::Float, &[0, 2]))
        .value(input("indices", DataType::Int64, &[1, 1]))
        .value(input("updates", DataType::Float, &[1, 2]));
    expect_err(
        "nd empty axis",
        &m,
        tvec![
            t(&[0, 2], &[] as &[f32]),
            t(&[1, 1], &[0i64]),
            t(&[1, 2], &[1f32, 2.])
        ],
        &["out of bounds"],
    );
    // ScatterND with k = 0 on data with a zero dim and a zero slice.
    let m = OneNode::new("ScatterND", 18)
        .attr(attr_string("reduction", "add"))
        .value(input("data", DataType::Float, &[0, 4]))
        .value(input("indices", DataType::Int64, &[3, 0]))
        .value(input("updates", DataType::Float, &[3, 0, 4]));
    let out = expect_ok(
        "nd k=0 empty",
        &m,
        tvec![
            t(&[0, 4], &[] as &[f32]),
            t(&[3, 0], &[] as &[i64]),
            t(&[3, 0, 4], &[] as &[f32])
        ],
    );
    assert_eq!(out.shape(), &[0, 4]);
    // TensorScatter: empty update accepts any start; empty batch too.
    let m = OneNode::new("TensorScatter", 24)
        .value(input("past_cache", DataType::Float, &[2, 3, 2]))
        .value(input("update", DataType::Float, &[2, 0, 2]))
        .value(input("write_indices", DataType::Int64, &[2]));
    let cache: Vec<f32> = (0..12).map(|x| x as f32).collect();
    let out = expect_ok(
        "ts empty update",
        &m,
        tvec![
            t(&[2, 3, 2], &cache),
            t(&[2, 0, 2], &[] as &[f32]),
            t(&[2], &[i64::MAX, i64::MIN])
        ],
    );
    assert_eq!(vals::<f32>(&out), &cache[..]);
    let m = OneNode::new("TensorScatter", 24)
        .value(input("past_cache", DataType::Float, &[0, 3, 2]))
        .value(input("update", DataType::Float, &[0, 1, 2]))
        .value(input("write_indices", DataType::Int64, &[0]));
    let out = expect_ok(
        "ts empty batch",
        &m,
        tvec![
            t(&[0, 3, 2], &[] as &[f32]),
            t(&[0, 1, 2], &[] as &[f32]),
            t(&[0], &[] as &[i64])
        ],
    );
    assert_eq!(out.shape(), &[0, 3, 2]);
    // ScatterElementsUpdate with mean over nothing.
    let m = seu(0, "mean", 0)
        .value(input("data", DataType::Float, &[3]))
        .value(input("indices", DataType::Int64, &[0]))
        .value(input("updates", DataType::Float, &[0]))
        .value(init_i64("axis", &[], &[0]));
    let out = expect_ok(
        "seu empty",
        &m,
        tvec![
            t(&[3], &[1f32, 2., 3.]),
            t(&[0], &[] as &[i64]),
            t(&[0], &[] as &[f32])
        ],
    );
    assert_eq!(vals::<f32>(&out), &[1., 2., 3.]);
}

// ---------------------------------------------------------------------------
// 5. NaN and infinities in every float reduction.

fn same_f64(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

/// The contract's fold of `updates` into `acc`, in f64 (exact for f32/f64
/// on these values: no rounding happens with NaN, inf, 0, 1, 2).
fn fold(reduction: &str, acc: f64, update: f64) -> f64 {
    match reduction {
        "add" => acc + update,
        "mul" => acc * update,
        "max" => {
            if acc.is_nan() || update.is_nan() {
                f64::NAN
            } else if update > acc {
                update
            } else {
                acc
            }
        }
        "min" => {
            if acc.is_nan() || update.is_nan() {
                f64::NAN
            } else if update < acc {
                update
            } else {
                acc
            }
        }
        _ => update,
    }
}

#[test]
fn nan_and_infinities_in_every_float_reduction() {
    let specials = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        1.0,
        -2.0,
    ];
    let n = specials.len();
    for elem in [DataType::Float, DataType::Double, DataType::Float16] {
        for reduction in ["add", "mul", "max", "min"] {
            for op in ["ScatterElements", "ScatterND"] {
                let what = format!("{op} {elem:?} {reduction}");
                let ideclared: Vec<i64> = if op == "ScatterND" {
                    vec![(n * n) as i64, 1]
                } else {
                    vec![(n * n) as i64]
                };
                let m = OneNode::new(op, 18)
                    .attr(attr_string("reduction", reduction))
                    .output_elem(elem)
                    .value(input("data", elem, &[(n * n) as i64]))
                    .value(input("indices", DataType::Int64, &ideclared))
                    .value(input("updates", elem, &[(n * n) as i64]));
                // Position p = i * n + j holds specials[i], gets specials[j].
                let data: Vec<f64> = (0..n * n).map(|p| specials[p / n]).collect();
                let idx: Vec<i64> = (0..n * n).map(|p| p as i64).collect();
                let ups: Vec<f64> = (0..n * n).map(|p| specials[p % n]).collect();
                let ishape: Vec<usize> = if op == "ScatterND" {
                    vec![n * n, 1]
                } else {
                    vec![n * n]
                };
                let (d, u) = match elem {
                    DataType::Float => (
                        t(
                            &[n * n],
                            &data.iter().map(|&x| x as f32).collect::<Vec<_>>(),
                        ),
                        t(&[n * n], &ups.iter().map(|&x| x as f32).collect::<Vec<_>>()),
                    ),
                    DataType::Double => (t(&[n * n], &data), t(&[n * n], &ups)),
                    _ => (
                        t(
                            &[n * n],
                            &data.iter().map(|&x| f16::from_f64(x)).collect::<Vec<_>>(),
                        ),
                        t(
                            &[n * n],
                            &ups.iter().map(|&x| f16::from_f64(x)).collect::<Vec<_>>(),
                        ),
                    ),
                };
                let out = expect_ok(&what, &m, tvec![d, t(&ishape, &idx), u]);
                let out = out.cast_to::<f64>().unwrap().into_owned();
                let got = vals::<f64>(&out);
                for p in 0..n * n {
                    let expected = fold(reduction, data[p], ups[p]);
                    assert!(
                        same_f64(got[p], expected),
                        "{what}: {} {reduction} {} = {}, expected {expected}",
                        data[p],
                        ups[p],
                        got[p]
                    );
                }
            }
        }
    }
    // ScatterElementsUpdate: NaN through sum, prod, min, max and mean.
    for reduction in ["sum", "prod", "min", "max", "mean"] {
        for init in [0, 1] {
            let m = seu(0, reduction, init)
                .value(input("data", DataType::Float, &[3]))
                .value(input("indices", DataType::Int64, &[4]))
                .value(input("updates", DataType::Float, &[4]))
                .value(init_i64("axis", &[], &[0]));
            let out = expect_ok(
                reduction,
                &m,
                tvec![
                    t(&[3], &[f32::NAN, f32::INFINITY, 1.0]),
                    t(&[4], &[0i64, 1, 1, 2]),
                    t(&[4], &[1f32, f32::NEG_INFINITY, 1.0, f32::NAN]),
                ],
            );
            let v = vals::<f32>(&out);
            // Position 2 always takes the NaN update.
            assert!(v[2].is_nan(), "{reduction} init={init}: {v:?}");
            if init == 1 {
                assert!(v[0].is_nan(), "{reduction}: {v:?}");
            }
        }
    }
}

// ---------------------------------------------------------------------------
// 6. Integer overflow in add / mul / mean: wraps, in debug builds too.

#[test]
fn integer_add_and_mul_wrap_in_debug_builds() {
    macro_rules! check {
        ($t:ty, $dt:expr) => {{
            let data: Vec<$t> = vec![<$t>::MAX, <$t>::MIN, <$t>::MAX, <$t>::MAX / 2 + 1];
            let ups: Vec<$t> = vec![<$t>::MAX, <$t>::MAX, 2 as $t, <$t>::MAX];
            for reduction in ["add", "mul"] {
                let expected: Vec<$t> = data
                    .iter()
                    .zip(&ups)
                    .map(|(a, b)| {
                        if reduction == "add" {
                            a.wrapping_add(*b)
                        } else {
                            a.wrapping_mul(*b)
                        }
                    })
                    .collect();
                for op in ["ScatterElements", "ScatterND"] {
                    let ishape: &[i64] = if op == "ScatterND" { &[4, 1] } else { &[4] };
                    let m = OneNode::new(op, 16)
                        .attr(attr_string("reduction", reduction))
                        .output_elem($dt)
                        .value(input("data", $dt, &[4]))
                        .value(input("indices", DataType::Int64, ishape))
                        .value(input("updates", $dt, &[4]));
                    let ishape: Vec<usize> = ishape.iter().map(|&d| d as usize).collect();
                    let out = expect_ok(
                        stringify!($t),
                        &m,
                        tvec![t(&[4], &data), t(&ishape, &[0i64, 1, 2, 3]), t(&[4], &ups)],
                    );
                    assert_eq!(
                        vals::<$t>(&out),
                        &expected[..],
                        "{op} {} {reduction}",
                        stringify!($t)
                    );
                }
            }
            // Duplicates fold: MAX + MAX + MAX, and the OpenVINO reductions.
            for (reduction, init) in [
                ("sum", 1),
                ("prod", 1),
                ("mean", 1),
                ("sum", 0),
                ("mean", 0),
            ] {
                let m = seu(0, reduction, init)
                    .output_elem($dt)
                    .value(input("data", $dt, &[2]))
                    .value(input("indices", DataType::Int64, &[3]))
                    .value(input("updates", $dt, &[3]))
                    .value(init_i64("axis", &[], &[0]));
                let out = expect_ok(
                    reduction,
                    &m,
                    tvec![
                        t(&[2], &[<$t>::MAX, <$t>::MIN]),
                        t(&[3], &[0i64, 0, 1]),
                        t(&[3], &[<$t>::MAX, <$t>::MAX, <$t>::MIN]),
                    ],
                );
                let v = vals::<$t>(&out).to_vec();
                if reduction == "sum" && init == 1 {
                    assert_eq!(
                        v[0],
                        <$t>::MAX.wrapping_add(<$t>::MAX).wrapping_add(<$t>::MAX)
                    );
                    assert_eq!(v[1], <$t>::MIN.wrapping_add(<$t>::MIN));
                }
                if reduction == "prod" {
                    assert_eq!(
                        v[0],
                        <$t>::MAX.wrapping_mul(<$t>::MAX).wrapping_mul(<$t>::MAX)
                    );
                }
            }
        }};
    }
    check!(i8, DataType::Int8);
    check!(i16, DataType::Int16);
    check!(i32, DataType::Int32);
    check!(i64, DataType::Int64);
    check!(u8, DataType::Uint8);
    check!(u16, DataType::Uint16);
    check!(u32, DataType::Uint32);
    check!(u64, DataType::Uint64);
}

// ---------------------------------------------------------------------------
// 7. Types and shapes fed at run time that contradict the model.

#[test]
fn fed_tensors_of_another_type_or_rank_are_errors() {
    let m = OneNode::new("ScatterElements", 18)
        .value(input("data", DataType::Float, &[3]))
        .value(input("indices", DataType::Int64, &[1]))
        .value(input("updates", DataType::Float, &[1]));
    // Indices fed as f32.
    expect_err(
        "indices f32",
        &m,
        tvec![t(&[3], &[0f32; 3]), t(&[1], &[0f32]), t(&[1], &[1f32])],
        &[],
    );
    // Updates fed as i64.
    expect_err(
        "updates i64",
        &m,
        tvec![t(&[3], &[0f32; 3]), t(&[1], &[0i64]), t(&[1], &[1i64])],
        &[],
    );
    // Data fed with another rank.
    expect_err(
        "data rank",
        &m,
        tvec![t(&[1, 3], &[0f32; 3]), t(&[1], &[0i64]), t(&[1], &[1f32])],
        &[],
    );
    // Missing inputs.
    let _ = no_panic("missing", || {
        m.compile().map(|p| p.run(tvec![t(&[3], &[0f32; 3])]))
    });
}

#[test]
fn every_op_survives_symbolic_shapes_fed_inconsistent_tensors() {
    let sym = |s: &'static str| -> Dim { s.into() };
    for op in ["ScatterElements", "ScatterND"] {
        let m = OneNode::new(op, 18)
            .value(input_sym("data", DataType::Float, vec![sym("N"), sym("M")]))
            .value(input_sym(
                "indices",
                DataType::Int64,
                vec![sym("N"), sym("K")],
            ))
            .value(input_sym(
                "updates",
                DataType::Float,
                vec![sym("N"), sym("K")],
            ));
        // N bound to 2 by data, 3 by indices.
        let inputs = tvec![
            t(&[2, 2], &[0f32; 4]),
            t(&[3, 1], &[0i64; 3]),
            t(&[3, 1], &[1f32; 3]),
        ];
        let _ = outcome(op, &m, inputs);
    }
}

// ---------------------------------------------------------------------------
// 8. Peak memory of the largest workloads: inputs + one output at most.
//
// Ignored by default (it allocates ~200 MB); run alone, so that no other
// test shares the process's high-water mark:
//
//   cargo test --test integration -- --ignored --exact \
//       hostile_inputs::peak_memory_is_inputs_plus_one_output --nocapture
//
// or under `/usr/bin/time -v` for the process's max RSS.

/// (VmRSS, VmHWM) of this process, in bytes.
fn rss() -> (usize, usize) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<usize>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Resets VmHWM to the current RSS (Linux: `5 > /proc/self/clear_refs`).
fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// `shared`: the caller keeps a reference to the data input, so the op
/// cannot write in place and must produce one output buffer.
fn measure(what: &str, shared: bool, m: &OneNode, make_inputs: impl FnOnce() -> TVec<TValue>) {
    let plan = m.compile().unwrap();
    let (before, _) = rss();
    let inputs = make_inputs();
    let kept = shared.then(|| inputs[0].clone());
    let what = format!(
        "{what} ({})",
        if shared {
            "shared data"
        } else {
            "exclusive data"
        }
    );
    let input_bytes: usize = inputs
        .iter()
        .map(|t| t.len() * t.datum_type().size_of())
        .sum();
    let output_bytes = inputs[0].len() * inputs[0].datum_type().size_of();
    let resettable = reset_peak();
    let out = plan.run(inputs).unwrap();
    let (_, peak) = rss();
    drop(out);
    drop(kept);
    let mib = |b: usize| b as f64 / (1024.0 * 1024.0);
    let extra = peak.saturating_sub(before);
    println!(
        "{what}: inputs {:.1} MiB + output {:.1} MiB = {:.1} MiB; peak RSS {:.1} MiB, \
         {:.1} MiB above the RSS before the inputs existed (peak reset: {resettable})",
        mib(input_bytes),
        mib(output_bytes),
        mib(input_bytes + output_bytes),
        mib(peak),
        mib(extra),
    );
    // In place (exclusive data) the output reuses the data buffer; shared,
    // one output buffer is made. Either way: at most inputs + one output,
    // plus 16 MiB of slack for the allocator and tract's plan state.
    assert!(
        extra <= input_bytes + output_bytes + (16 << 20),
        "{what}: peak {} MiB above baseline exceeds inputs + output",
        mib(extra)
    );
}

#[test]
#[ignore = "allocates ~200 MB; run alone (see comment)"]
fn peak_memory_is_inputs_plus_one_output() {
    // ScatterND f32 data 32x1024x1024, 8 row updates (k = 2, rows of 1024).
    let m = OneNode::new("ScatterND", 18)
        .value(input("data", DataType::Float, &[32, 1024, 1024]))
        .value(input("indices", DataType::Int64, &[8, 2]))
        .value(input("updates", DataType::Float, &[8, 1024]));
    for shared in [false, true] {
        measure("ScatterND f32 [32, 1024, 1024], 8 rows", shared, &m, || {
            // Non-zero, so that every page of data is resident.
            let data = Tensor::from_shape(&[32, 1024, 1024], &vec![0.25f32; 32 << 20]).unwrap();
            let idx: Vec<i64> = (0..8).flat_map(|i| [i * 4, -(i + 1)]).collect();
            let updates = Tensor::from_shape(&[8, 1024], &vec![1f32; 8 * 1024]).unwrap();
            tvec![data.into_tvalue(), t(&[8, 2], &idx), updates.into_tvalue()]
        });
    }
    // ScatterElements f32 4096x4096, 4096x64 add updates along axis 1.
    let m = OneNode::new("ScatterElements", 18)
        .attr(attr_int("axis", 1))
        .attr(attr_string("reduction", "add"))
        .value(input("data", DataType::Float, &[4096, 4096]))
        .value(input("indices", DataType::Int64, &[4096, 64]))
        .value(input("updates", DataType::Float, &[4096, 64]));
    for shared in [false, true] {
        measure(
            "ScatterElements f32 [4096, 4096], [4096, 64] add",
            shared,
            &m,
            || {
                let data = Tensor::from_shape(&[4096, 4096], &vec![0.25f32; 4096 * 4096]).unwrap();
                let idx: Vec<i64> = (0..4096 * 64).map(|i| (i * 61 % 4096) as i64).collect();
                let updates = Tensor::from_shape(&[4096, 64], &vec![0.5f32; 4096 * 64]).unwrap();
                tvec![
                    data.into_tvalue(),
                    t(&[4096, 64], &idx),
                    updates.into_tvalue()
                ]
            },
        );
    }
}

#[test]
fn scatter_elements_update_axis_input_of_hostile_shapes_and_types() {
    let base = || {
        seu(0, "sum", 1)
            .value(input("data", DataType::Float, &[3]))
            .value(input("indices", DataType::Int64, &[1]))
            .value(input("updates", DataType::Float, &[1]))
    };
    let fed = |axis: TValue| {
        tvec![
            t(&[3], &[0f32; 3]),
            t(&[1], &[0i64]),
            t(&[1], &[1f32]),
            axis
        ]
    };
    // Declared with dims whose product overflows i64.
    for dims in [
        vec![1i64 << 32, 1 << 32, 1 << 32],
        vec![i64::MAX, 2],
        vec![0, i64::MAX],
        vec![2],
        vec![0],
    ] {
        let m = base().value(input("axis", DataType::Int64, &dims));
        expect_err(&format!("axis {dims:?}"), &m, fed(t(&[1], &[0i64])), &[]);
    }
    // Fed empty, fed two values, fed as float.
    let m = base().value(input_sym("axis", DataType::Int64, vec!["A".into()]));
    expect_err("axis []", &m, fed(t(&[0], &[] as &[i64])), &["axis"]);
    expect_err("axis [2]", &m, fed(t(&[2], &[0i64, 0])), &["axis"]);
    let m = base().value(input("axis", DataType::Float, &[]));
    expect_err("axis f32", &m, fed(tensor0(0f32).into_tvalue()), &["axis"]);
    // Constant axis of an extreme value, and of the wrong shape.
    for (shape, v) in [
        (vec![], vec![i64::MIN]),
        (vec![2], vec![0, 0]),
        (vec![0], vec![]),
    ] {
        let m = base().value(init_i64("axis", &shape, &v));
        expect_err(
            "const axis",
            &m,
            tvec![t(&[3], &[0f32; 3]), t(&[1], &[0i64]), t(&[1], &[1f32])],
            &["axis"],
        );
    }
}

#[test]
fn tensor_scatter_write_indices_of_hostile_shapes_and_types() {
    let base = |wi_elem: DataType, wi: &[i64]| {
        OneNode::new("TensorScatter", 24)
            .value(input("past_cache", DataType::Float, &[2, 4, 1]))
            .value(input("update", DataType::Float, &[2, 1, 1]))
            .value(input("write_indices", wi_elem, wi))
    };
    let fed = |wi: TValue| tvec![t(&[2, 4, 1], &[0f32; 8]), t(&[2, 1, 1], &[1f32, 2.]), wi];
    expect_err(
        "wi i32",
        &base(DataType::Int32, &[2]),
        fed(t(&[2], &[0i32, 0])),
        &["type"],
    );
    expect_err(
        "wi [3]",
        &base(DataType::Int64, &[3]),
        fed(t(&[3], &[0i64; 3])),
        &["shape"],
    );
    expect_err(
        "wi [1<<40]",
        &base(DataType::Int64, &[1 << 40]),
        fed(t(&[2], &[0i64; 2])),
        &[],
    );
    expect_err(
        "wi overflow",
        &base(DataType::Int64, &[1 << 32, 1 << 32, 1 << 32]),
        fed(t(&[2], &[0i64; 2])),
        &[],
    );
    // Update longer than the cache along the axis.
    let m = OneNode::new("TensorScatter", 24)
        .attr(attr_int("axis", 1))
        .value(input("past_cache", DataType::Float, &[2, 1]))
        .value(input("update", DataType::Float, &[2, 2]));
    expect_err(
        "long update",
        &m,
        tvec![t(&[2, 1], &[0f32; 2]), t(&[2, 2], &[1f32; 4])],
        &["shape"],
    );
}

// ---------------------------------------------------------------------------
// Crashes the fuzzers found in tract 0.23.9's own parser and typing, for any
// op. Each is pinned twice: stock tract still panics (a tract upgrade that
// fixes it shows up here), and the plugin's loader refuses the model first
// with an error naming the graph element (`load::validate`).

/// `bytes` loaded and optimized by stock tract, as the `known_tract_bug_*`
/// tests drive it to its panic.
fn stock_optimized(bytes: &[u8]) -> TractResult<TypedModel> {
    tract_onnx::onnx()
        .model_for_read(&mut &bytes[..])
        .and_then(|m| m.into_optimized())
}

/// tract wires a graph input whose declared shape has zero volume as a
/// constant zero tensor (tract-core `TypedModel::wire_node`), and computing
/// that tensor's strides (tract-data `compute_natural_stride_to`) overflows
/// when the other dims multiply past usize: a panic in debug builds.
fn zero_volume_input_with_overflowing_dims() -> OneNode {
    OneNode::new("ScatterElements", 18)
        .value(input("data", DataType::Float, &[0, 1 << 32, 1 << 32]))
        .value(input("indices", DataType::Int64, &[0, 1, 1]))
        .value(input("updates", DataType::Float, &[0, 1, 1]))
}

#[test]
#[cfg_attr(debug_assertions, should_panic(expected = "overflow"))]
fn known_tract_bug_zero_volume_input_with_overflowing_dims() {
    let bytes = zero_volume_input_with_overflowing_dims().bytes();
    let _ = stock_optimized(&bytes);
}

#[test]
fn the_loader_refuses_a_zero_volume_input_with_overflowing_dims() {
    let err = zero_volume_input_with_overflowing_dims()
        .load()
        .unwrap_err();
    assert_eq!(
        format!("{:#}", err.root_cause()),
        "the main graph: input 'data' declares dims [0, 4294967296, 4294967296] of Float: more than isize::MAX bytes"
    );
}

/// tract's ONNX graph parser indexes its name map with every graph output
/// name (tract-onnx `model.rs`, `outlets_by_name[&*output.name]`), so a
/// graph output that no node, input or initializer produces panics ("no
/// entry found for key").
fn graph_output_nobody_produces() -> Vec<u8> {
    use prost::Message;
    let mut proto = OneNode::new("ScatterElements", 18)
        .value(input("data", DataType::Float, &[3]))
        .value(input("indices", DataType::Int64, &[1]))
        .value(input("updates", DataType::Float, &[1]))
        .proto();
    proto.graph.as_mut().unwrap().output[0].name = "nobody".into();
    proto.encode_to_vec()
}

#[test]
#[should_panic(expected = "no entry found for key")]
fn known_tract_bug_graph_output_nobody_produces() {
    let bytes = graph_output_nobody_produces();
    let _ = tract_onnx::onnx().model_for_read(&mut &bytes[..]);
}

#[test]
fn the_loader_refuses_a_graph_output_nobody_produces() {
    let bytes = graph_output_nobody_produces();
    let err = tract_onnx_scatter::onnx()
        .model_for_read(&mut &bytes[..])
        .unwrap_err();
    assert!(
        format!("{err:#}").contains(
            "the main graph: output 'nobody' is produced by no node, input or initializer of the graph"
        ),
        "{err:#}"
    );
}

/// tract loads an initializer given as typed data (here `int64_data`)
/// through ndarray, then `Tensor::from(Array)` unwraps tract's own size
/// check, which fails on a zero-volume shape whose leading dims times the
/// element size pass isize::MAX before the zero is reached (tract-data
/// `tensor.rs`: "tensor shape [..] is too large").
fn zero_volume_initializer_with_huge_dims() -> OneNode {
    OneNode::new("ScatterElements", 18)
        .value(input("data", DataType::Float, &[3]))
        .value(init_i64(
            "indices",
            &[1, 2, 12920, 97, 116, 101, 115, 18, 6, 111, 117, 0],
            &[],
        ))
        .value(input("updates", DataType::Float, &[1]))
}

#[test]
#[should_panic(expected = "too large")]
fn known_tract_bug_zero_volume_initializer_with_huge_dims() {
    let bytes = zero_volume_initializer_with_huge_dims().bytes();
    let _ = tract_onnx::onnx().model_for_read(&mut &bytes[..]);
}

#[test]
fn the_loader_refuses_a_zero_volume_initializer_with_huge_dims() {
    let err = zero_volume_initializer_with_huge_dims().load().unwrap_err();
    assert!(
        format!("{err:#}").contains(
            "the main graph: initializer 'indices': dims [1, 2, 12920, 97, 116, 101, 115, 18, 6, 111, 117, 0] of Int64 overflow: more than isize::MAX bytes"
        ),
        "{err:#}"
    );
}

/// tract's tensor loader has `unimplemented!()` for raw string data and for
/// the element types it has no Rust type for (float8, 4-bit; the loader
/// reads bfloat16 and complex itself, `tests/bfloat16.rs`, `tests/complex.rs`).
#[test]
fn the_loader_refuses_raw_string_data_and_element_types_tract_lacks() {
    use prost::Message;
    for (data_type, raw, want) in [
        (8, b"abc".to_vec(), "string data given as raw bytes"),
        (
            17,
            vec![0],
            "element type Float8e4m3fn (17) is not supported by tract 0.23.9",
        ),
    ] {
        let mut proto = OneNode::new("ScatterElements", 18)
            .value(input("data", DataType::Float, &[3]))
            .value(input("indices", DataType::Int64, &[1]))
            .value(input("updates", DataType::Float, &[1]))
            .proto();
        let graph = proto.graph.as_mut().unwrap();
        graph
            .initializer
            .push(tract_onnx_scatter::tract_onnx::pb::TensorProto {
                name: "extra".into(),
                data_type,
                dims: vec![1],
                raw_data: raw,
                ..Default::default()
            });
        let bytes = proto.encode_to_vec();
        let err = tract_onnx_scatter::onnx()
            .model_for_read(&mut &bytes[..])
            .unwrap_err();
        assert!(format!("{err:#}").contains(want), "{err:#}");
    }
}

/// tract's `Squeeze` analysis removes each constant axis from the input's
/// shape without checking it (tract-hir `Squeeze::output_shape`, smallvec's
/// `index < len` assertion): a scalar squeezed at axis 0.
fn squeeze_of_a_scalar() -> OneNode {
    OneNode::new("Squeeze", 13)
        .value(input("x", DataType::Float, &[]))
        .value(init_i64("axes", &[1], &[0]))
}

#[test]
#[should_panic(expected = "index < len")]
fn known_tract_bug_squeeze_axis_past_the_rank() {
    let bytes = squeeze_of_a_scalar().bytes();
    let _ = stock_optimized(&bytes);
}

#[test]
fn a_squeeze_axis_past_the_rank_is_an_error_naming_squeeze() {
    let err = squeeze_of_a_scalar().compile().unwrap_err();
    let chain = chain(&err);
    assert!(
        chain.contains(
            "Squeeze13: tract-onnx-scatter's code, or tract 0.23.9's under it, panicked on this \
             node's inputs (assertion failed: index < len)"
        ),
        "{chain}"
    );
}

/// tract's `ConstantOfShape` analysis makes a shape fact of its constant
/// shape input, and tract-core asserts its dims are not negative.
fn constant_of_shape_of_a_negative_dim() -> OneNode {
    OneNode::new("ConstantOfShape", 9).value(init_i64("shape", &[2], &[2, -1]))
}

#[test]
#[should_panic]
fn known_tract_bug_constant_of_shape_of_a_negative_dim() {
    let bytes = constant_of_shape_of_a_negative_dim().bytes();
    let _ = stock_optimized(&bytes);
}

#[test]
fn a_negative_constant_of_shape_dim_is_an_error_naming_constant_of_shape() {
    let err = constant_of_shape_of_a_negative_dim().compile().unwrap_err();
    let chain = chain(&err);
    assert!(
        chain.contains("ConstantOfShape: shape [2, -1] holds -1, outside [0, 2147483647]"),
        "{chain}"
    );
}

/// tract's analysis unwraps an `If`'s output count, which errs when the
/// branches give different counts (tract-hir `analyser.rs`).
fn if_of_branches_of_different_arity() -> Vec<u8> {
    use prost::Message;
    use tract_onnx_scatter::tract_onnx::pb::{AttributeProto, GraphProto, NodeProto};
    let mut proto = OneNode::new("Identity", 13)
        .value(input("x", DataType::Float, &[1]))
        .proto();
    let branch = |name: &str, outputs: &[&str]| {
        let graph = GraphProto {
            name: name.into(),
            node: outputs
                .iter()
                .map(|o| NodeProto {
                    op_type: "Constant".into(),
                    output: vec![o.to_string()],
                    attribute: vec![AttributeProto {
                        name: "value_float".into(),
                        r#type: 1,
                        f: 1.0,
                        ..Default::default()
                    }],
                    ..Default::default()
                })
                .collect(),
            output: outputs
                .iter()
                .map(|o| tract_onnx_scatter::tract_onnx::pb::ValueInfoProto {
                    name: o.to_string(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        AttributeProto {
            name: name.into(),
            r#type: 5,
            g: Some(graph),
            ..Default::default()
        }
    };
    let graph = proto.graph.as_mut().unwrap();
    graph
        .input
        .push(tract_onnx_scatter::tract_onnx::pb::ValueInfoProto {
            name: "cond".into(),
            ..graph.input[0].clone()
        });
    graph.node[0] = NodeProto {
        name: "choose".into(),
        op_type: "If".into(),
        input: vec!["cond".into()],
        output: vec!["output".into()],
        attribute: vec![
            branch("then_branch", &["a"]),
            branch("else_branch", &["b", "c"]),
        ],
        ..Default::default()
    };
    proto.encode_to_vec()
}

#[test]
#[should_panic]
fn known_tract_bug_if_of_branches_of_different_arity() {
    let bytes = if_of_branches_of_different_arity();
    let _ = stock_optimized(&bytes);
}

#[test]
fn the_loader_refuses_an_if_of_branches_of_different_arity() {
    let bytes = if_of_branches_of_different_arity();
    let err = tract_onnx_scatter::onnx()
        .model_for_read(&mut &bytes[..])
        .unwrap_err();
    assert!(
        format!("{err:#}").contains(
            "the main graph: node 'choose' (If): then_branch has 1 outputs, else_branch 2"
        ),
        "{err:#}"
    );
}

/// tract's `Expand` typing makes a shape fact of its constant target shape,
/// and tract-core asserts its dims are not negative.
fn expand_to_a_negative_dim() -> OneNode {
    OneNode::new("Expand", 13)
        .value(input("x", DataType::Float, &[1]))
        .value(init_i64("shape", &[2], &[-3, 1]))
}

#[test]
#[should_panic]
fn known_tract_bug_expand_to_a_negative_dim() {
    let bytes = expand_to_a_negative_dim().bytes();
    let _ = stock_optimized(&bytes);
}

#[test]
fn expand_to_a_negative_dim_is_an_error_naming_the_node() {
    let err = expand_to_a_negative_dim().compile().unwrap_err();
    let chain = chain(&err);
    assert!(
        chain.contains(
            "MultiBroadcastTo: tract-onnx-scatter's code, or tract 0.23.9's under it, panicked on \
             this node's inputs"
        ),
        "{chain}"
    );
}

/// tract's `Gather` evaluates constant inputs while typing and indexes its
/// data with the index unchecked (tract-core `gather.rs`).
fn gather_of_a_constant_at_an_index_out_of_range() -> OneNode {
    OneNode::new("Gather", 13)
        .value(init_i64("data", &[3], &[1, 2, 3]))
        .value(init_i64("indices", &[], &[7]))
        .output_elem(DataType::Int64)
}

#[test]
#[should_panic(expected = "index out of bounds")]
fn known_tract_bug_gather_of_a_constant_at_an_index_out_of_range() {
    let bytes = gather_of_a_constant_at_an_index_out_of_range().bytes();
    let _ = stock_optimized(&bytes);
}

#[test]
fn a_constant_gather_out_of_range_is_an_error_naming_gather() {
    let err = gather_of_a_constant_at_an_index_out_of_range()
        .compile()
        .unwrap_err();
    let chain = chain(&err);
    assert!(
        chain.contains("Gather: tract 0.23.9 panicked on this node's inputs (index out of bounds"),
        "{chain}"
    );
}

/// tract's `Unsqueeze` analysis inserts each axis into the output shape
/// without checking it against the output rank (tract-hir `unsqueeze.rs`).
fn unsqueeze_at_an_axis_past_the_rank() -> OneNode {
    OneNode::new("Unsqueeze", 13)
        .value(input("x", DataType::Float, &[2]))
        .value(init_i64("axes", &[1], &[5]))
}

#[test]
#[should_panic]
fn known_tract_bug_unsqueeze_at_an_axis_past_the_rank() {
    let bytes = unsqueeze_at_an_axis_past_the_rank().bytes();
    let _ = stock_optimized(&bytes);
}

#[test]
fn an_unsqueeze_axis_past_the_rank_is_an_error_naming_unsqueeze() {
    let err = unsqueeze_at_an_axis_past_the_rank().compile().unwrap_err();
    let chain = chain(&err);
    assert!(
        chain.contains("Unsqueeze13: tract 0.23.9 panicked on this node's inputs"),
        "{chain}"
    );
}

#[test]
fn a_refused_index_is_a_node_error_holding_the_kernel_s_scatter_error() {
    use tract_onnx_scatter::scatter_kernels::{Input, ScatterError};
    use tract_onnx_scatter::site::NodeError;
    let m = OneNode::new("ScatterElements", 18)
        .attr(attr_int("axis", 1))
        .value(input("data", DataType::Float, &[3, 4]))
        .value(input("indices", DataType::Int64, &[1, 2]))
        .value(input("updates", DataType::Float, &[1, 2]));
    let err = m
        .run(tvec![
            t(&[3, 4], &[0f32; 12]),
            t(&[1, 2], &[0i64, 9]),
            t(&[1, 2], &[1f32, 2.]),
        ])
        .unwrap_err();
    let node_error = err
        .downcast_ref::<NodeError>()
        .unwrap_or_else(|| panic!("no NodeError in {err:#}"));
    assert_eq!(node_error.site.node, NODE);
    assert!(
        matches!(
            node_error.error,
            ScatterError::OutOfBounds {
                input: Input::Indices,
                value: 9,
                dim: 4,
                ..
            }
        ),
        "{:?}",
        node_error.error
    );
    // One link of the chain, as the message always was.
    assert!(
        chain(&err).ends_with(&format!(
            "ScatterElements node '{NODE}' (opset 18): {}",
            node_error.error
        )),
        "{}",
        chain(&err)
    );
}

/// tract carries a constant shape as TDim made through i32: a dim past it
/// wraps (2^53 + 6 becomes 6), and `ConstantOfShape` would fill a tensor
/// of another shape, here 3 GiB where ONNX's is far past any memory.
#[test]
fn a_constant_of_shape_dim_past_i32_is_an_error_not_a_wrapped_allocation() {
    let err = OneNode::new("ConstantOfShape", 9)
        .value(init_i64("shape", &[2], &[(1 << 53) + 6, 134217734]))
        .compile()
        .unwrap_err();
    let text = chain(&err);
    assert!(
        text.contains("ConstantOfShape: shape [9007199254740998, 134217734] holds 9007199254740998, outside [0, 2147483647]"),
        "{text}"
    );
    let err = OneNode::new("ConstantOfShape", 9)
        .value(init_i64("shape", &[3], &[i32::MAX as i64; 3]))
        .compile()
        .unwrap_err();
    assert!(
        chain(&err).contains(
            "ConstantOfShape: shape [2147483647, 2147483647, 2147483647] of F32 is more than isize::MAX bytes"
        ),
        "{}",
        chain(&err)
    );
}

/// A float32 scalar initializer.
fn init_f32_scalar(name: &str, value: f32) -> Value {
    Value::Init(Box::new(TensorProto {
        name: name.into(),
        data_type: DataType::Float as i32,
        float_data: vec![value],
        ..Default::default()
    }))
}

/// tract computes an op of constants while loading (its analysis, its
/// `wire_node`, its `PropConst` pass) before it weighs the result: a
/// mutated model of 150 bytes, `Expand` of one float to `[5, 1056964614]`,
/// made loading fill 21 GB
/// (`fuzz/regressions/model_bytes/expand_of_a_scalar_to_21_gigabytes.onnx`).
fn expand_of_a_constant(dims: &[i64]) -> OneNode {
    OneNode::new("Expand", 13)
        .value(init_f32_scalar("x", 1.5))
        .value(init_i64("shape", &[dims.len() as i64], dims))
}

fn constant_of_shape(dims: &[i64]) -> OneNode {
    OneNode::new("ConstantOfShape", 9).value(init_i64("shape", &[dims.len() as i64], dims))
}

/// The bytes of the largest constant in `model`.
fn largest_constant_bytes(model: &TypedModel) -> usize {
    model
        .nodes()
        .iter()
        .flat_map(|n| &n.outputs)
        .filter_map(|o| o.fact.konst.as_ref())
        .map(|k| k.len() * k.datum_type().size_of())
        .max()
        .unwrap_or(0)
}

/// `fold_budget::MAX_LOAD_TIME_CONSTANT_BYTES`.
const LOAD_TIME_LIMIT: usize = 256 << 20;

/// One f32 past the load-time limit.
const PAST_THE_LIMIT: [i64; 2] = [1, (1 << 26) + 1];

/// `m` loaded and optimized: no constant past the limit, and its one
/// output, run, is `[1, 2^26 + 1]` of `value`.
fn computed_when_run(m: OneNode, value: f32) {
    let model = m.load().unwrap().into_optimized().unwrap();
    assert!(largest_constant_bytes(&model) <= LOAD_TIME_LIMIT);
    let out = model.into_runnable().unwrap().run(tvec![]).unwrap();
    let out = out[0].to_plain_array_view::<f32>().unwrap();
    assert_eq!(out.shape(), &[1, (1 << 26) + 1]);
    assert_eq!(out[[0, 0]], value);
    assert_eq!(out[[0, 1 << 26]], value);
}

#[test]
fn a_constant_expand_past_the_load_time_limit_is_computed_when_the_model_runs() {
    computed_when_run(expand_of_a_constant(&PAST_THE_LIMIT), 1.5);
}

#[test]
fn a_constant_of_shape_past_the_load_time_limit_is_computed_when_the_model_runs() {
    computed_when_run(constant_of_shape(&PAST_THE_LIMIT), 0.0);
}

#[test]
fn constants_within_the_load_time_limit_are_folded_as_stock_folds_them() {
    // 16 MiB: past tract's own 4 MiB budget, which its wire-time fold
    // does not weigh.
    for m in [
        expand_of_a_constant(&[4, 1 << 20]),
        constant_of_shape(&[4, 1 << 20]),
    ] {
        let plugin = m.load().unwrap().into_optimized().unwrap();
        let stock = stock_optimized(&m.bytes()).unwrap();
        // Stock's ConstantOfShape fills f64 where ONNX says f32.
        assert!(largest_constant_bytes(&stock) >= 16 << 20);
        assert_eq!(largest_constant_bytes(&plugin), 16 << 20);
        assert_eq!(plugin.nodes().len(), stock.nodes().len());
    }
}

/// tract's analysis builds a shape fact with as many dims as a shape input
/// is declared long, before any value is known: a `Reshape` whose shape
/// input is declared with 2^32 values made it allocate 137 GB and abort
/// (`fuzz/regressions/overrides/reshape_to_a_shape_input_of_2_pow_32_values`).
#[test]
fn a_shape_input_declared_longer_than_64_dims_is_an_error_naming_the_op() {
    for (op, opset, data_rank, len, want) in [
        (
            "Reshape",
            14,
            1,
            1i64 << 32,
            "Reshape: input 1 holds 4294967296 values, a tensor of 4294967296 dims; at most 64 dims are supported",
        ),
        (
            "Tile",
            13,
            1,
            65,
            "Tile: input 1 holds 65 values, a tensor of 65 dims; at most 64 dims are supported",
        ),
        (
            "Expand",
            13,
            1,
            100,
            "Expand: input 1 holds 100 values, a tensor of 100 dims; at most 64 dims are supported",
        ),
    ] {
        let m = OneNode::new(op, opset)
            .value(input("x", DataType::Float, &vec![2; data_rank]))
            .value(input("shape", DataType::Int64, &[len]));
        let err = m.load().and_then(|m| m.into_optimized()).unwrap_err();
        assert!(chain(&err).contains(want), "{op}: {}", chain(&err));
    }
}

#[test]
fn a_shape_input_of_64_values_still_loads() {
    let m = OneNode::new("Reshape", 14)
        .value(input("x", DataType::Float, &[1]))
        .value(input("shape", DataType::Int64, &[64]));
    m.load().unwrap().into_optimized().unwrap();
}
