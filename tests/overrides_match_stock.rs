//! Where stock tract can already prove the result, every override of a
//! tract operator (`tract_onnx_scatter::tract_overrides`) builds exactly the
//! op and facts stock tract builds: one model per override that stock
//! loads, compared node by node (op and output facts, in evaluation order),
//! typed and decluttered.

use crate::graph;

use graph::{D, Graph, attr_int, tensor, tensor_proto};
use tract_onnx_scatter::tract_onnx::pb::AttributeProto;
use tract_onnx_scatter::tract_onnx::pb::attribute_proto::AttributeType;
use tract_onnx_scatter::tract_onnx::prelude::*;

/// Each node's op (its Debug form) and output facts, in evaluation order.
/// Node names are left out: stock tract names a typed `If` after its op.
fn signature(model: &TypedModel) -> Vec<String> {
    model
        .eval_order()
        .unwrap()
        .into_iter()
        .map(|id| {
            let node = model.node(id);
            let facts: Vec<String> = node
                .outputs
                .iter()
                .map(|o| format!("{:?}", o.fact))
                .collect();
            format!("{:?} -> {}", node.op, facts.join(", "))
        })
        .collect()
}

/// The plugin's and stock's typed, then decluttered models of `g` are the
/// same; and so is the plugin's with `stock_g` loaded by stock, when given.
fn assert_built_as_stock(g: &Graph, stock_g: Option<&Graph>) {
    let stock_g = stock_g.unwrap_or(g);
    let ours = g.load().unwrap().into_typed().unwrap();
    let stock = stock_g
        .load_with(&tract_onnx_scatter::tract_onnx::onnx())
        .unwrap()
        .into_typed()
        .unwrap();
    assert_eq!(signature(&ours), signature(&stock), "typed");
    let (ours, stock) = (
        ours.into_decluttered().unwrap(),
        stock.into_decluttered().unwrap(),
    );
    assert_eq!(signature(&ours), signature(&stock), "decluttered");
}

#[test]
fn a_reshape_stock_can_prove_is_built_exactly_as_stock() {
    let dt = DatumType::F32;
    let g = Graph::new(18)
        .input("x", dt, &[D::S("N"), D::N(3), D::N(4)])
        .init("shape", &tensor(DatumType::I64, &[2], &[0, -1]))
        .node("Reshape", &["x", "shape"], &["out"], vec![])
        .output("out", dt);
    assert_built_as_stock(&g, None);
}

/// A dim picked at run time (`Gather(Shape(x), i)`, TDim but no constant)
/// next to a small int64 constant, which tract's i32 cast keeps exact.
#[test]
fn a_concat_of_dims_and_small_integers_is_built_exactly_as_stock() {
    let g = Graph::new(13)
        .input("x", DatumType::F32, &[D::S("N"), D::N(3)])
        .input_c("i", DatumType::I64, &[1])
        .init("tail", &tensor(DatumType::I64, &[1], &[-1]))
        .node("Shape", &["x"], &["shape"], vec![])
        .node("Gather", &["shape", "i"], &["dim"], vec![])
        .node(
            "Concat",
            &["dim", "tail"],
            &["out"],
            vec![attr_int("axis", 0)],
        )
        .output("out", DatumType::I64);
    assert_built_as_stock(&g, None);
}

#[test]
fn a_slice_bound_by_an_input_symbol_is_built_exactly_as_stock() {
    let dt = DatumType::F32;
    let g = Graph::new(13)
        .input("x", dt, &[D::S("N"), D::N(8)])
        .init("zero", &tensor(DatumType::I64, &[1], &[0]))
        .init("one", &tensor(DatumType::I64, &[1], &[1]))
        .node("Shape", &["x"], &["shape"], vec![])
        .node("Slice", &["shape", "zero", "one"], &["n"], vec![])
        .node("Sub", &["n", "one"], &["end"], vec![])
        .node("Slice", &["x", "zero", "end", "zero"], &["out"], vec![])
        .output("out", dt);
    assert_built_as_stock(&g, None);
}

#[test]
fn a_cast_of_input_dims_is_built_exactly_as_stock() {
    let g = Graph::new(13)
        .input("x", DatumType::F32, &[D::S("N"), D::N(8)])
        .node("Shape", &["x"], &["shape"], vec![])
        .node(
            "Cast",
            &["shape"],
            &["out"],
            vec![attr_int("to", 1 /* FLOAT */)],
        )
        .output("out", DatumType::F32);
    assert_built_as_stock(&g, None);
}

/// Casts whose result stock tract proves: a shape value to int64 (a TDim,
/// as stock), a shape value without symbols to int32, and float to float16.
#[test]
fn casts_stock_proves_are_built_exactly_as_stock() {
    let shape_to = |to: i64, dims: &[D]| {
        Graph::new(13)
            .input("x", DatumType::F32, dims)
            .node("Shape", &["x"], &["shape"], vec![])
            .node("Cast", &["shape"], &["out"], vec![attr_int("to", to)])
            .output("out", DatumType::I64)
    };
    assert_built_as_stock(&shape_to(7 /* INT64 */, &[D::S("N"), D::N(8)]), None);
    assert_built_as_stock(&shape_to(6 /* INT32 */, &[D::N(2), D::N(8)]), None);
    let g = Graph::new(13)
        .input("x", DatumType::F32, &[D::S("N"), D::N(8)])
        .node(
            "Cast",
            &["x"],
            &["out"],
            vec![attr_int("to", 10 /* FLOAT16 */)],
        )
        .output("out", DatumType::F16);
    assert_built_as_stock(&g, None);
    let g = Graph::new(15)
        .input("x", DatumType::I32, &[D::S("N")])
        .input("like", DatumType::F32, &[D::N(1)])
        .node("CastLike", &["x", "like"], &["out"], vec![])
        .output("out", DatumType::F32);
    assert_built_as_stock(&g, None);
}

/// A slice reversing a whole axis of known length is stock's StridedSlice.
#[test]
fn a_whole_axis_reverse_of_known_length_is_built_exactly_as_stock() {
    let g = Graph::new(13)
        .input("x", DatumType::F32, &[D::S("N"), D::N(5)])
        .init("starts", &tensor(DatumType::I64, &[1], &[-1]))
        .init("ends", &tensor(DatumType::I64, &[1], &[i64::MIN]))
        .init("axes", &tensor(DatumType::I64, &[1], &[1]))
        .init("steps", &tensor(DatumType::I64, &[1], &[-1]))
        .node(
            "Slice",
            &["x", "starts", "ends", "axes", "steps"],
            &["out"],
            vec![],
        )
        .output("out", DatumType::F32);
    assert_built_as_stock(&g, None);
}

fn value_attr(t: &Tensor) -> AttributeProto {
    AttributeProto {
        name: "value".into(),
        r#type: AttributeType::Tensor as i32,
        t: Some(tensor_proto("value", t)),
        ..Default::default()
    }
}

fn constant_of_shape(value: Option<Tensor>) -> Graph {
    Graph::new(13)
        .input("x", DatumType::F32, &[D::S("N"), D::N(2)])
        .node("Shape", &["x"], &["shape"], vec![])
        .node(
            "ConstantOfShape",
            &["shape"],
            &["out"],
            value.iter().map(value_attr).collect(),
        )
        .output("out", DatumType::F32)
}

#[test]
fn a_constant_of_shape_with_a_value_is_built_exactly_as_stock() {
    assert_built_as_stock(&constant_of_shape(Some(tensor1(&[3.5f32]))), None);
}

/// Stock's default is an f64 zero, against the spec: the plugin builds what
/// stock builds for the spec's explicit float32 zero.
#[test]
fn a_constant_of_shape_without_a_value_is_stock_s_op_with_a_float32_zero() {
    let spec_default = constant_of_shape(Some(tensor1(&[0f32])));
    assert_built_as_stock(&constant_of_shape(None), Some(&spec_default));
}

/// `If(cond)` on x: then x + 1, else x * 2; both branches of equal facts.
fn if_on(cond_known: bool) -> Graph {
    let dt = DatumType::F32;
    let then_branch = Graph::new(13)
        .init("one", &tensor(dt, &[], &[1]))
        .node("Add", &["x", "one"], &["then_out"], vec![])
        .output("then_out", dt);
    let else_branch = Graph::new(13)
        .init("two", &tensor(dt, &[], &[2]))
        .node("Mul", &["x", "two"], &["else_out"], vec![])
        .output("else_out", dt);
    let g = Graph::new(13).input("x", dt, &[D::S("N"), D::N(2)]);
    let g = if cond_known {
        g.init("cond", &tensor1(&[true]))
    } else {
        g.input_c("cond", DatumType::Bool, &[])
    };
    g.if_node("cond", &["out"], &then_branch, &else_branch)
        .output("out", dt)
}

#[test]
fn an_if_with_a_run_time_condition_is_built_exactly_as_stock() {
    assert_built_as_stock(&if_on(false), None);
}

/// A condition known at load: the plugin inlines the branch when typing,
/// stock when decluttering; the decluttered models are the same.
#[test]
fn an_if_with_a_constant_condition_declutters_exactly_as_stock() {
    let g = if_on(true);
    let ours = g.decluttered().unwrap();
    let stock = g
        .load_with(&tract_onnx_scatter::tract_onnx::onnx())
        .unwrap()
        .into_typed()
        .unwrap()
        .into_decluttered()
        .unwrap();
    assert_eq!(signature(&ours), signature(&stock));
}

/// `Expand(x, Shape(y))` with `y`'s dims the model's symbols.
#[test]
fn an_expand_to_input_dims_is_built_exactly_as_stock() {
    let dt = DatumType::F32;
    let g = Graph::new(13)
        .input("x", dt, &[D::N(1), D::N(3)])
        .input("y", dt, &[D::S("N"), D::N(3)])
        .node("Shape", &["y"], &["shape"], vec![])
        .node("Expand", &["x", "shape"], &["out"], vec![])
        .output("out", dt);
    assert_built_as_stock(&g, None);
}

fn squeeze(opset: i64, axes: Option<&[i64]>) -> Graph {
    let dt = DatumType::F32;
    let g = Graph::new(opset).input("x", dt, &[D::S("N"), D::N(1), D::N(3), D::N(1)]);
    let g = match (opset, axes) {
        (13.., Some(axes)) => g
            .init("axes", &tensor(DatumType::I64, &[axes.len()], axes))
            .node("Squeeze", &["x", "axes"], &["out"], vec![]),
        (_, Some(axes)) => g.node(
            "Squeeze",
            &["x"],
            &["out"],
            vec![graph::attr_ints("axes", axes)],
        ),
        (_, None) => g.node("Squeeze", &["x"], &["out"], vec![]),
    };
    g.output("out", dt)
}

#[test]
fn a_squeeze_of_axes_of_known_length_is_built_exactly_as_stock() {
    assert_built_as_stock(&squeeze(13, Some(&[1, -1])), None);
    assert_built_as_stock(&squeeze(11, Some(&[1, 3])), None);
}

/// From opset 13 (below it, tract's builder requires the `axes` attribute,
/// and the override builds through it: both refuse alike).
#[test]
fn a_squeeze_without_axes_is_built_exactly_as_stock() {
    assert_built_as_stock(&squeeze(13, None), None);
}

/// A one-node `op` (GRU, LSTM or RNN) of hidden size 2 over `x` of shape
/// `[5, batch, 3]` with initial states (`c0` unread but by LSTM), weights as initializers; with
/// `lens`, a constant `sequence_lens` of that many rows, each 5 (the time
/// dim), and a batch of that many rows.
fn recurrent(op: &str, direction: &str, lens: Option<usize>) -> Graph {
    let (gates, dirs) = (
        match op {
            "GRU" => 3,
            "LSTM" => 4,
            _ => 1,
        },
        if direction == "bidirectional" { 2 } else { 1 },
    );
    let dt = DatumType::F32;
    let w = Tensor::zero::<f32>(&[dirs, gates * 2, 3]).unwrap();
    let r = Tensor::zero::<f32>(&[dirs, gates * 2, 2]).unwrap();
    let b = Tensor::zero::<f32>(&[dirs, gates * 4]).unwrap();
    let batch = lens.map_or(D::S("N"), |n| D::N(n as i64));
    let mut g = Graph::new(14)
        .input("x", dt, &[D::N(5), batch.clone(), D::N(3)])
        .input("h0", dt, &[D::N(dirs as i64), batch.clone(), D::N(2)])
        .input("c0", dt, &[D::N(dirs as i64), batch, D::N(2)])
        .init("W", &w)
        .init("R", &r)
        .init("B", &b);
    let mut inputs = vec!["x", "W", "R", "B", "", "h0"];
    if op == "LSTM" {
        inputs.push("c0");
    }
    if let Some(n) = lens {
        g = g.init("lens", &tensor(DatumType::I32, &[n], &vec![5; n]));
        inputs[4] = "lens";
    }
    let mut attrs = vec![graph::attr_string("direction", direction)];
    if op == "GRU" {
        attrs.push(attr_int("linear_before_reset", 1));
    }
    g.node(op, &inputs, &["y", "y_h"], attrs)
        .output("y", dt)
        .output("y_h", dt)
}

/// Forward and bidirectional (time-major), with an initial state, without
/// `sequence_lens` or with a constant one equal to the time dim: stock's
/// cell computes these, and the override builds it.
#[test]
fn recurrent_nodes_stock_computes_are_built_exactly_as_stock() {
    for op in ["GRU", "LSTM", "RNN"] {
        for direction in ["forward", "bidirectional"] {
            assert_built_as_stock(&recurrent(op, direction, None), None);
            assert_built_as_stock(&recurrent(op, direction, Some(2)), None);
        }
    }
}

/// One node of `op` on an input `x` of type `dt` and shape `shape`, with
/// `inits` as initializers (values 1, 2, 3, ... cast to `dt`).
fn one_float_op(
    dt: DatumType,
    op: &str,
    shape: &[usize],
    inits: &[(&str, &[usize])],
    attrs: Vec<tract_onnx_scatter::tract_onnx::pb::AttributeProto>,
) -> Graph {
    let mut g = Graph::new(18).input_c("x", dt, shape);
    let mut inputs = vec!["x"];
    for (name, shape) in inits {
        let len: usize = shape.iter().product();
        let values: Vec<i64> = (1..=len as i64).collect();
        g = g.init(name, &tensor(dt, shape, &values));
        inputs.push(name);
    }
    g.node(op, &inputs, &["y"], attrs).output("y", dt)
}

/// The float16 ops the plugin computes in float32
/// (`tract_overrides::float16::IN_FLOAT32`) are stock's op and facts on
/// float32 and float64: only a float16 input changes their typing.
#[test]
fn float32_and_float64_ops_that_accumulate_are_built_exactly_as_stock() {
    use graph::attr_ints;
    for dt in [DatumType::F32, DatumType::F64] {
        let graphs = [
            one_float_op(
                dt,
                "Conv",
                &[1, 4, 6, 6],
                &[("w", &[2, 4, 3, 3]), ("b", &[2])],
                vec![attr_ints("pads", &[1, 1, 1, 1])],
            ),
            one_float_op(dt, "ReduceSum", &[2, 8], &[], vec![attr_int("keepdims", 0)]),
            one_float_op(dt, "Softmax", &[2, 8], &[], vec![attr_int("axis", -1)]),
            one_float_op(
                dt,
                "BatchNormalization",
                &[1, 3, 4, 4],
                &[("s", &[3]), ("b", &[3]), ("m", &[3]), ("v", &[3])],
                vec![],
            ),
            one_float_op(
                dt,
                "AveragePool",
                &[1, 2, 8, 8],
                &[],
                vec![attr_ints("kernel_shape", &[4, 4])],
            ),
            one_float_op(dt, "GlobalAveragePool", &[1, 2, 8, 8], &[], vec![]),
        ];
        for g in &graphs {
            assert_built_as_stock(g, None);
        }
    }
}
