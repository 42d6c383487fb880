//! The operators recurrent models need, on small models built in memory and loaded through
//! `tract_onnx_scatter::onnx()`, each with the input facts the model declares (symbolic dims)
//! and with facts pinned to the data: `Cast`/`CastLike` to int64 (exact, where stock tract
//! wraps past int32); tf2onnx's shape chain `Shape -> Cast(int32) -> Slice -> Concat ->
//! Cast(int64) -> Expand` keeping its symbolic batch, also in a `Loop` body that passes the
//! batch through; `ReverseSequence` (both layouts, every element type, lengths checked) and the
//! whole-axis reversing `Slice` on an axis of symbolic length; `value_info` read as hints;
//! lists a `Loop` builds, read after it by `ConcatFromSequence`, `SequenceAt` and
//! `SequenceLength`; counted loops (`M` the time dim, `i + 1 < time`) whose scan outputs share
//! `M` as their first dim. The rules: docs/contract.md, "Operators outside the scatter family".

use crate::graph;
use crate::log_capture::logged;

use graph::{D, Graph, Loader, attr_graph, attr_int};
use prost::Message;
use tract_onnx_scatter::tract_onnx::pb::tensor_shape_proto::{Dimension, dimension};
use tract_onnx_scatter::tract_onnx::pb::{
    ModelProto, TensorShapeProto, TypeProto, ValueInfoProto, type_proto,
};
use tract_onnx_scatter::tract_onnx::prelude::*;

const OPSET: i64 = 17;

// ONNX `TensorProto.DataType` codes.
const INT32: i64 = 6;
const INT64: i64 = 7;

/// How a test gives the model its input facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Facts {
    /// As the model declares them (symbolic dims).
    Declared,
    /// Pinned to the data's types and shapes.
    Pinned,
}

const EVERY_MODE: [Facts; 2] = [Facts::Declared, Facts::Pinned];

fn stock() -> tract_onnx_scatter::tract_onnx::Onnx {
    tract_onnx_scatter::tract_onnx::onnx()
}

fn chain(e: &anyhow::Error) -> String {
    format!("{e:#}")
}

/// `proto` loaded through `onnx` from its encoding, as a file would be.
fn load(proto: &ModelProto, onnx: &impl Loader) -> TractResult<InferenceModel> {
    onnx.model_for_read(&mut &proto.encode_to_vec()[..])
}

/// `proto` loaded through `onnx`, its input facts as `facts` says, optimized.
fn optimized(
    proto: &ModelProto,
    onnx: &impl Loader,
    facts: Facts,
    inputs: &[Tensor],
) -> TractResult<TypedModel> {
    let mut model = load(proto, onnx)?;
    if facts == Facts::Pinned {
        for (ix, t) in inputs.iter().enumerate() {
            model.set_input_fact(ix, InferenceFact::dt_shape_from_tensor(t))?;
        }
    }
    model.into_optimized()
}

fn run_model(model: &TypedModel, inputs: &[Tensor]) -> TractResult<Vec<Tensor>> {
    let plan = model.clone().into_runnable()?;
    let outputs = plan.run(inputs.iter().cloned().map(|t| t.into_tvalue()).collect())?;
    Ok(outputs.into_iter().map(|v| v.into_tensor()).collect())
}

/// `proto` through `onnx` with `facts`, run on `inputs`.
fn run_with(
    proto: &ModelProto,
    onnx: &impl Loader,
    facts: Facts,
    inputs: &[Tensor],
) -> TractResult<Vec<Tensor>> {
    run_model(&optimized(proto, onnx, facts, inputs)?, inputs)
}

/// `proto` through the plugin's `onnx()` with `facts`, run on `inputs`.
fn run(proto: &ModelProto, facts: Facts, inputs: &[Tensor]) -> TractResult<Vec<Tensor>> {
    run_with(proto, &tract_onnx_scatter::onnx(), facts, inputs)
}

fn values<T: Datum + Clone>(t: &Tensor) -> Vec<T> {
    t.try_as_plain_ram()
        .unwrap()
        .as_slice::<T>()
        .unwrap()
        .to_vec()
}

/// The shape and type of each of the model's outputs (`batch,7,F32`).
fn output_facts(model: &TypedModel) -> Vec<String> {
    (0..model.outputs.len())
        .map(|ix| {
            let fact = model.output_fact(ix).unwrap();
            let dims: Vec<String> = fact.shape.iter().map(|d| d.to_string()).collect();
            format!("{},{:?}", dims.join(","), fact.datum_type)
        })
        .collect()
}

/// A value info of `dt` and `dims` (numbers or `dim_param` symbols).
fn value_info(name: &str, dt: DatumType, dims: &[D]) -> ValueInfoProto {
    let dim = dims
        .iter()
        .map(|d| Dimension {
            value: Some(match d {
                D::N(n) => dimension::Value::DimValue(*n),
                D::S(s) => dimension::Value::DimParam(s.to_string()),
            }),
            ..Default::default()
        })
        .collect();
    ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: graph::onnx_type(dt) as i32,
                shape: Some(TensorShapeProto { dim }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

// ---------------------------------------------------------------- Cast

/// `Cast(x, to=INT64)` of an input `x` of `dt` and shape `[n]`.
fn cast_to_int64(dt: DatumType) -> ModelProto {
    Graph::new(OPSET)
        .input("x", dt, &[D::S("n")])
        .node("Cast", &["x"], &["y"], vec![attr_int("to", INT64)])
        .output("y", DatumType::I64)
        .proto()
}

/// Casts `x` to int64 in every input mode: the typed output and the value
/// are int64, the values `want`.
fn assert_casts_to(x: Tensor, want: &[i64]) {
    let dt = x.datum_type();
    for facts in EVERY_MODE {
        let model = optimized(
            &cast_to_int64(dt),
            &tract_onnx_scatter::onnx(),
            facts,
            std::slice::from_ref(&x),
        )
        .unwrap();
        assert_eq!(model.output_fact(0).unwrap().datum_type, DatumType::I64);
        let y = run_model(&model, std::slice::from_ref(&x))
            .unwrap()
            .remove(0);
        assert_eq!(y.datum_type(), DatumType::I64, "{dt:?} {facts:?}");
        assert_eq!(values::<i64>(&y), want, "{dt:?} {facts:?}");
    }
}

#[test]
fn casting_signed_integers_to_int64_keeps_every_value() {
    assert_casts_to(tensor1(&[i8::MIN, -1, i8::MAX]), &[-128, -1, 127]);
    assert_casts_to(tensor1(&[i16::MIN, i16::MAX]), &[-32768, 32767]);
    assert_casts_to(
        tensor1(&[i32::MAX, i32::MIN, -1]),
        &[2147483647, -2147483648, -1],
    );
    let wide = [2147483648, -2147483649, 1099511627781, i64::MAX, i64::MIN];
    assert_casts_to(tensor1(&wide), &wide);
}

#[test]
fn casting_unsigned_integers_and_bools_to_int64_keeps_every_value() {
    assert_casts_to(tensor1(&[0u8, u8::MAX]), &[0, 255]);
    assert_casts_to(tensor1(&[u16::MAX]), &[65535]);
    assert_casts_to(
        tensor1(&[2147483648u32, 4000000000, u32::MAX]),
        &[2147483648, 4000000000, 4294967295],
    );
    // Past i64::MAX, a u64 wraps as Rust's `as` does.
    assert_casts_to(
        tensor1(&[4000000000u64, 1099511627781, 1 << 63, u64::MAX]),
        &[4000000000, 1099511627781, i64::MIN, -1],
    );
    assert_casts_to(tensor1(&[true, false]), &[1, 0]);
}

#[test]
fn casting_floats_to_int64_truncates_and_gives_int64_min_where_there_is_no_value() {
    let f16 = |v: f32| f16::from_f32(v);
    assert_casts_to(
        tensor1(&[f16(65504.), f16(-2.9), f16(f32::INFINITY), f16(f32::NAN)]),
        &[65504, -2, i64::MIN, i64::MIN],
    );
    assert_casts_to(
        tensor1(&[3e9f32, 2147483648., -2.9, f32::NAN, f32::NEG_INFINITY, 1e19]),
        &[3000000000, 2147483648, -2, i64::MIN, i64::MIN, i64::MIN],
    );
    assert_casts_to(
        tensor1(&[1099511627781f64, -2147483649., 2.9, 1e19, f64::INFINITY]),
        &[1099511627781, -2147483649, 2, i64::MIN, i64::MIN],
    );
}

#[test]
fn cast_like_an_int64_tensor_gives_int64() {
    let proto = Graph::new(OPSET)
        .input("x", DatumType::F64, &[D::S("n")])
        .init("like", &tensor1(&[0i64]))
        .node("CastLike", &["x", "like"], &["y"], vec![])
        .output("y", DatumType::I64)
        .proto();
    let x = tensor1(&[3e9f64, -4000000000.5]);
    for facts in EVERY_MODE {
        let y = run(&proto, facts, std::slice::from_ref(&x))
            .unwrap()
            .remove(0);
        assert_eq!(y.datum_type(), DatumType::I64, "{facts:?}");
        assert_eq!(values::<i64>(&y), [3000000000, -4000000000], "{facts:?}");
    }
}

/// What the plugin fixes: stock tract's Cast to int64 gives a shape value
/// (TDim) through i32, an int64 wrapping, a float saturating, NaN as 0.
#[test]
fn stock_tract_casts_to_a_shape_value_that_wraps_past_int32() {
    let x = tensor1(&[1099511627781i64, 2147483648]);
    let y = run_with(
        &cast_to_int64(DatumType::I64),
        &stock(),
        Facts::Pinned,
        &[x],
    );
    let y = y.unwrap().remove(0);
    assert_eq!(y.datum_type(), DatumType::TDim);
    assert_eq!(values::<TDim>(&y), [TDim::Val(5), TDim::Val(-2147483648)]);
    let x = tensor1(&[3e9f32, f32::NAN]);
    let y = run_with(
        &cast_to_int64(DatumType::F32),
        &stock(),
        Facts::Declared,
        &[x],
    );
    let y = y.unwrap().remove(0);
    assert_eq!(y.datum_type(), DatumType::TDim);
    assert_eq!(values::<TDim>(&y), [TDim::Val(2147483647), TDim::Val(0)]);
}

// ---------------------------------------------------- the shape chain

/// tf2onnx's `tf.zeros([batch, 7])` of an input `x: [batch, 3]`:
/// `Shape -> Cast(int32) -> Slice -> Concat(const int32 [7]) ->
/// Cast(int64) -> Expand`, `batch` a symbol.
fn zeros_like_batch() -> ModelProto {
    Graph::new(OPSET)
        .input("x", DatumType::F32, &[D::S("batch"), D::N(3)])
        .init("start", &tensor1(&[0i64]))
        .init("end", &tensor1(&[1i64]))
        .init("seven", &tensor1(&[7i32]))
        .init("half", &tensor1(&[0.5f32]))
        .node("Shape", &["x"], &["dims"], vec![])
        .node("Cast", &["dims"], &["dims32"], vec![attr_int("to", INT32)])
        .node("Slice", &["dims32", "start", "end"], &["batch32"], vec![])
        .node(
            "Concat",
            &["batch32", "seven"],
            &["shape32"],
            vec![attr_int("axis", 0)],
        )
        .node(
            "Cast",
            &["shape32"],
            &["shape"],
            vec![attr_int("to", INT64)],
        )
        .node("Expand", &["half", "shape"], &["y"], vec![])
        .output("y", DatumType::F32)
        .proto()
}

fn batch_input(batch: usize) -> Tensor {
    Tensor::zero::<f32>(&[batch, 3]).unwrap()
}

#[test]
fn the_shape_chain_keeps_a_symbolic_batch_and_expands_to_it() {
    let proto = zeros_like_batch();
    let declared = optimized(&proto, &tract_onnx_scatter::onnx(), Facts::Declared, &[]).unwrap();
    assert_eq!(output_facts(&declared), ["batch,7,F32"]);
    for batch in [2, 3] {
        let x = batch_input(batch);
        let pinned = optimized(
            &proto,
            &tract_onnx_scatter::onnx(),
            Facts::Pinned,
            std::slice::from_ref(&x),
        );
        assert_eq!(output_facts(&pinned.unwrap()), [format!("{batch},7,F32")]);
        for facts in EVERY_MODE {
            let y = run(&proto, facts, std::slice::from_ref(&x))
                .unwrap()
                .remove(0);
            assert_eq!(y.shape(), [batch, 7], "{facts:?}");
            assert!(values::<f32>(&y).iter().all(|&v| v == 0.5), "{facts:?}");
        }
    }
    let err = optimized(&proto, &stock(), Facts::Declared, &[]).unwrap_err();
    assert!(
        chain(&err).contains("output can not have variable rank"),
        "{err:#}"
    );
}

/// A `Loop` body passing on `batch_in` (int32 `[1]`) through an `Identity`
/// and scanning `Expand(0.5, Cast(int64, Concat(batch_in, [7])))`.
fn batch_passing_body() -> Graph {
    Graph::new(OPSET)
        .input("iter", DatumType::I64, &[])
        .input("cond_in", DatumType::Bool, &[])
        .input_c("batch_in", DatumType::I32, &[1])
        .init("seven", &tensor1(&[7i32]))
        .init("half", &tensor1(&[0.5f32]))
        .node("Identity", &["cond_in"], &["cond_out"], vec![])
        .node("Identity", &["batch_in"], &["batch_out"], vec![])
        .node(
            "Concat",
            &["batch_in", "seven"],
            &["shape32"],
            vec![attr_int("axis", 0)],
        )
        .node(
            "Cast",
            &["shape32"],
            &["shape"],
            vec![attr_int("to", INT64)],
        )
        .node("Expand", &["half", "shape"], &["zeros"], vec![])
        .output("cond_out", DatumType::Bool)
        .output("batch_out", DatumType::I32)
        .output("zeros", DatumType::F32)
}

/// The same chain in a `Loop` body: the batch (`Shape -> Cast(int32) ->
/// Slice` outside) comes in as a loop-carried value the body passes on,
/// and the body's Expand, a scan output, types with it.
#[test]
fn the_shape_chain_in_a_loop_body_types_with_the_batch_passed_through() {
    let proto = Graph::new(OPSET)
        .input("x", DatumType::F32, &[D::S("batch"), D::N(3)])
        .init("m", &tensor0(2i64))
        .init("start", &tensor1(&[0i64]))
        .init("end", &tensor1(&[1i64]))
        .node("Shape", &["x"], &["dims"], vec![])
        .node("Cast", &["dims"], &["dims32"], vec![attr_int("to", INT32)])
        .node("Slice", &["dims32", "start", "end"], &["batch32"], vec![])
        .node(
            "Loop",
            &["m", "", "batch32"],
            &["batch_final", "ys"],
            vec![attr_graph("body", batch_passing_body().graph_proto())],
        )
        .output("ys", DatumType::F32)
        .proto();
    let declared = optimized(&proto, &tract_onnx_scatter::onnx(), Facts::Declared, &[]).unwrap();
    assert_eq!(output_facts(&declared), ["2,batch,7,F32"]);
    for batch in [2, 3] {
        for facts in EVERY_MODE {
            let y = run(&proto, facts, &[batch_input(batch)]).unwrap().remove(0);
            assert_eq!(y.shape(), [2, batch, 7], "{facts:?}");
            assert!(values::<f32>(&y).iter().all(|&v| v == 0.5), "{facts:?}");
        }
    }
}

// ------------------------------------------------------ ReverseSequence

/// `ReverseSequence(x, lens)` named "rev", `x` of `dt` and `dims`.
fn reverse_sequence(dt: DatumType, dims: &[D], batch_axis: i64, time_axis: i64) -> ModelProto {
    Graph::new(OPSET)
        .input("x", dt, dims)
        .input("lens", DatumType::I64, &[D::S("batch")])
        .node(
            "ReverseSequence",
            &["x", "lens"],
            &["rev"],
            vec![
                attr_int("batch_axis", batch_axis),
                attr_int("time_axis", time_axis),
            ],
        )
        .output("rev", dt)
        .proto()
}

#[test]
fn time_major_reverse_sequence_reverses_each_entry_up_to_its_length() {
    let proto = reverse_sequence(
        DatumType::F32,
        &[D::S("time"), D::S("batch"), D::N(1)],
        1,
        0,
    );
    // [time 4, batch 2, 1]: entry 0 of length 3, entry 1 of length 4.
    let x = tensor3(&[[[0f32], [10.]], [[1.], [11.]], [[2.], [12.]], [[3.], [13.]]]);
    let lens = tensor1(&[3i64, 4]);
    for facts in EVERY_MODE {
        let y = run(&proto, facts, &[x.clone(), lens.clone()])
            .unwrap()
            .remove(0);
        assert_eq!(
            y,
            tensor3(&[[[2f32], [13.]], [[1.], [12.]], [[0.], [11.]], [[3.], [10.]]]),
            "{facts:?}"
        );
    }
}

/// ReverseSequence has no NNEF form: writing it is an error naming the node.
#[test]
fn writing_a_reverse_sequence_as_nnef_is_an_error_naming_the_node() {
    let proto = reverse_sequence(
        DatumType::F32,
        &[D::S("time"), D::S("batch"), D::N(1)],
        1,
        0,
    );
    let model = optimized(&proto, &tract_onnx_scatter::onnx(), Facts::Declared, &[])
        .unwrap()
        .into_decluttered()
        .unwrap();
    let err = tract_onnx_scatter::nnef()
        .write_to_tar(&model, vec![])
        .unwrap_err();
    assert!(
        chain(&err).contains("No serializer found for node"),
        "{err:#}"
    );
    assert!(chain(&err).contains("\"rev\" Reverse"), "{err:#}");
}

#[test]
fn batch_major_reverse_sequence_reverses_int64_and_string_entries() {
    let lens = tensor1(&[0i64, 2, 3]);
    let dims = [D::S("batch"), D::S("time")];
    let ints = tensor2(&[[1i64, 2, 3], [4, 5, 6], [7, 8, 9]]);
    let strings = |rows: [[&str; 3]; 3]| tensor2(&rows.map(|r| r.map(String::from)));
    let text = strings([["a", "b", "c"], ["d", "e", "f"], ["g", "h", "i"]]);
    for facts in EVERY_MODE {
        let proto = reverse_sequence(DatumType::I64, &dims, 0, 1);
        let y = run(&proto, facts, &[ints.clone(), lens.clone()]).unwrap();
        assert_eq!(
            y[0],
            tensor2(&[[1i64, 2, 3], [5, 4, 6], [9, 8, 7]]),
            "{facts:?}"
        );
        let proto = reverse_sequence(DatumType::String, &dims, 0, 1);
        let y = run(&proto, facts, &[text.clone(), lens.clone()]).unwrap();
        let want = strings([["a", "b", "c"], ["e", "d", "f"], ["i", "h", "g"]]);
        assert_eq!(y[0], want, "{facts:?}");
    }
}

#[test]
fn a_sequence_length_past_the_time_dim_is_an_error_naming_node_entry_length_and_bound() {
    let proto = reverse_sequence(DatumType::F32, &[D::S("batch"), D::S("time")], 0, 1);
    let x = tensor2(&[[1f32, 2., 3.], [4., 5., 6.]]);
    for facts in EVERY_MODE {
        let err = run(&proto, facts, &[x.clone(), tensor1(&[1i64, 5])]).unwrap_err();
        assert!(
            chain(&err).contains(
                "ReverseSequence node 'rev': sequence_lens[1] is 5, out of range [0, 3] (the time dim)"
            ),
            "{facts:?}: {err:#}"
        );
        let err = run(&proto, facts, &[x.clone(), tensor1(&[-1i64, 0])]).unwrap_err();
        assert!(
            chain(&err).contains(
                "ReverseSequence node 'rev': sequence_lens[0] is -1, out of range [0, 3] (the time dim)"
            ),
            "{facts:?}: {err:#}"
        );
    }
}

/// Constant lengths that all equal the time dim: a plain reverse of the
/// time axis, the lengths no input of it.
#[test]
fn constant_lengths_equal_to_the_time_dim_are_a_whole_reverse() {
    let proto = Graph::new(OPSET)
        .input("x", DatumType::F32, &[D::N(2), D::N(3), D::S("features")])
        .init("lens", &tensor1(&[3i64, 3]))
        .node(
            "ReverseSequence",
            &["x", "lens"],
            &["rev"],
            vec![attr_int("batch_axis", 0), attr_int("time_axis", 1)],
        )
        .output("rev", DatumType::F32)
        .proto();
    let x = tensor3(&[[[1f32], [2.], [3.]], [[4.], [5.], [6.]]]);
    for facts in EVERY_MODE {
        let model = optimized(
            &proto,
            &tract_onnx_scatter::onnx(),
            facts,
            std::slice::from_ref(&x),
        )
        .unwrap();
        let reverse = model.nodes().iter().find(|n| n.op.name() == "Reverse");
        let reverse = reverse.unwrap_or_else(|| panic!("{facts:?}: no Reverse in {model}"));
        assert_eq!(reverse.inputs.len(), 1, "{facts:?}");
        assert_eq!(reverse.op.info().unwrap(), ["axis 1"], "{facts:?}");
        let y = run_model(&model, std::slice::from_ref(&x))
            .unwrap()
            .remove(0);
        let want = tensor3(&[[[3f32], [2.], [1.]], [[6.], [5.], [4.]]]);
        assert_eq!(y, want, "{facts:?}");
    }
}

/// `torch.flip(x, [1])` as exported: `Slice(x, [-1], [INT64_MIN], [1],
/// [-1])`, on a time axis of symbolic length.
#[test]
fn a_whole_axis_reversing_slice_reverses_a_symbolic_time_axis() {
    let proto = Graph::new(OPSET)
        .input("x", DatumType::F32, &[D::N(2), D::S("time")])
        .init("starts", &tensor1(&[-1i64]))
        .init("ends", &tensor1(&[i64::MIN]))
        .init("axes", &tensor1(&[1i64]))
        .init("steps", &tensor1(&[-1i64]))
        .node(
            "Slice",
            &["x", "starts", "ends", "axes", "steps"],
            &["y"],
            vec![],
        )
        .output("y", DatumType::F32)
        .proto();
    let x = tensor2(&[[1f32, 2., 3., 4.], [5., 6., 7., 8.]]);
    for facts in EVERY_MODE {
        let y = run(&proto, facts, std::slice::from_ref(&x))
            .unwrap()
            .remove(0);
        assert_eq!(
            y,
            tensor2(&[[4f32, 3., 2., 1.], [8., 7., 6., 5.]]),
            "{facts:?}"
        );
    }
    let err = run_with(&proto, &stock(), Facts::Declared, &[x]).unwrap_err();
    assert!(
        chain(&err).contains("Streaming dimensions with strides are not supported"),
        "{err:#}"
    );
}

// ------------------------------------------------------ value_info hints

/// `y = Relu(x) + 1` of `x: [batch, 4]`, with a value_info for the
/// intermediate `h = Relu(x)` of dims `h_dims`.
fn relu_plus_one(h_dims: &[D]) -> ModelProto {
    let mut proto = Graph::new(OPSET)
        .input("x", DatumType::F32, &[D::S("batch"), D::N(4)])
        .init("one", &tensor0(1f32))
        .node("Relu", &["x"], &["h"], vec![])
        .node("Add", &["h", "one"], &["y"], vec![])
        .output("y", DatumType::F32)
        .proto();
    let graph = proto.graph.as_mut().unwrap();
    graph.value_info = vec![value_info("h", DatumType::F32, h_dims)];
    proto
}

fn relu_input() -> (Tensor, Tensor) {
    let x = tensor2(&[[-1f32, 0., 1., 2.], [3., -4., 5., -6.]]);
    let y = tensor2(&[[1f32, 1., 2., 3.], [4., 1., 6., 1.]]);
    (x, y)
}

#[test]
fn value_info_naming_another_symbol_or_a_sentinel_does_not_stop_a_load() {
    let (x, want) = relu_input();
    for name in ["s27", "__jax2onnx_unknown__"] {
        let proto = relu_plus_one(&[D::S(name), D::N(4)]);
        for facts in EVERY_MODE {
            let y = run(&proto, facts, std::slice::from_ref(&x))
                .unwrap()
                .remove(0);
            assert_eq!(y, want, "{name} {facts:?}");
        }
        let err =
            run_with(&proto, &stock(), Facts::Declared, std::slice::from_ref(&x)).unwrap_err();
        let stock_says = format!("Impossible to unify Sym(batch) with Sym({name})");
        assert!(chain(&err).contains(&stock_says), "{err:#}");
        let err = run_with(&proto, &stock(), Facts::Pinned, std::slice::from_ref(&x)).unwrap_err();
        let stock_says = format!("Impossible to unify Val(2) with Sym({name})");
        assert!(chain(&err).contains(&stock_says), "{err:#}");
    }
}

#[test]
fn a_value_info_symbol_no_input_declares_is_named_in_one_log_line() {
    let proto = relu_plus_one(&[D::S("s27"), D::N(4)]);
    let (model, lines) = logged(|| load(&proto, &tract_onnx_scatter::onnx()));
    model.unwrap();
    assert_eq!(
        lines,
        ["loader: value_info names symbols no graph input declares (s27): read as unknown dims"]
    );
}

#[test]
fn value_info_repeating_the_input_s_symbol_does_not_stop_pinned_facts() {
    let (x, want) = relu_input();
    let proto = relu_plus_one(&[D::S("batch"), D::N(4)]);
    for facts in EVERY_MODE {
        let y = run(&proto, facts, std::slice::from_ref(&x))
            .unwrap()
            .remove(0);
        assert_eq!(y, want, "{facts:?}");
    }
    let err = run_with(&proto, &stock(), Facts::Pinned, &[x]).unwrap_err();
    assert!(
        chain(&err).contains("Impossible to unify Val(2) with Sym(batch)"),
        "{err:#}"
    );
}

// ------------------------------------------------------ Loop-built lists

/// A Loop of `m` iterations carrying `acc: [2]` (+1 each iteration) and a
/// list, `SequenceEmpty` before the loop, to which the body appends `acc`
/// after its update; `readers` add the nodes that read `list` after it.
fn list_loop(body_reads_the_list: bool, readers: impl FnOnce(Graph) -> Graph) -> ModelProto {
    let mut body = Graph::new(OPSET)
        .input("iter", DatumType::I64, &[])
        .input("cond_in", DatumType::Bool, &[])
        .input_c("acc_in", DatumType::F32, &[2])
        .input_c("list_in", DatumType::F32, &[])
        .init("one", &tensor1(&[1f32]))
        .node("Identity", &["cond_in"], &["cond_out"], vec![])
        .node("Add", &["acc_in", "one"], &["acc_out"], vec![])
        .node(
            "SequenceInsert",
            &["list_in", "acc_out"],
            &["list_out"],
            vec![],
        )
        .output("cond_out", DatumType::Bool)
        .output("acc_out", DatumType::F32)
        .output("list_out", DatumType::F32);
    if body_reads_the_list {
        body = body
            .node("SequenceLength", &["list_in"], &["n"], vec![])
            .output("n", DatumType::I64);
    }
    let mut body = body.graph_proto();
    // Sequence-typed: a TypeProto without a tensor type.
    body.input[3].r#type = Some(TypeProto::default());
    body.output[2].r#type = Some(TypeProto::default());
    let g = Graph::new(OPSET)
        .input("m", DatumType::I64, &[])
        .input_c("acc", DatumType::F32, &[2])
        .node("SequenceEmpty", &[], &["empty"], vec![attr_int("dtype", 1)])
        .node(
            "Loop",
            &["m", "", "acc", "empty"],
            &["acc_final", "list"],
            vec![attr_graph("body", body)],
        );
    readers(g).proto()
}

fn list_inputs(m: i64) -> [Tensor; 2] {
    [tensor0(m), tensor1(&[0f32, 10.])]
}

#[test]
fn a_loop_built_list_stacked_by_concat_from_sequence_is_a_scan_output() {
    let proto = list_loop(false, |g| {
        g.node(
            "ConcatFromSequence",
            &["list"],
            &["stacked"],
            vec![attr_int("axis", 1), attr_int("new_axis", 1)],
        )
        .output("stacked", DatumType::F32)
    });
    for facts in EVERY_MODE {
        let y = run(&proto, facts, &list_inputs(3)).unwrap().remove(0);
        // Three [2] values stacked on a new axis 1: [2, 3].
        assert_eq!(y, tensor2(&[[1f32, 2., 3.], [11., 12., 13.]]), "{facts:?}");
    }
}

#[test]
fn a_loop_built_list_concatenated_by_concat_from_sequence_is_one_long_axis() {
    let proto = list_loop(false, |g| {
        g.node(
            "ConcatFromSequence",
            &["list"],
            &["concat"],
            vec![attr_int("axis", 0), attr_int("new_axis", 0)],
        )
        .output("concat", DatumType::F32)
    });
    for facts in EVERY_MODE {
        let y = run(&proto, facts, &list_inputs(3)).unwrap().remove(0);
        assert_eq!(y, tensor1(&[1f32, 11., 2., 12., 3., 13.]), "{facts:?}");
    }
}

/// `proto` with its input `m` replaced by a constant.
fn with_constant_trip_count(mut proto: ModelProto, m: i64) -> ModelProto {
    let g = proto.graph.as_mut().unwrap();
    g.input.retain(|i| i.name != "m");
    g.initializer.push(graph::tensor_proto("m", &tensor0(m)));
    proto
}

/// The list's last value (`SequenceAt(-1)`) and its length.
fn last_and_length(g: Graph) -> Graph {
    g.init("last", &tensor0(-1i64))
        .node("SequenceAt", &["list", "last"], &["at"], vec![])
        .node("SequenceLength", &["list"], &["len"], vec![])
        .output("at", DatumType::F32)
        .output("len", DatumType::I64)
}

#[test]
fn a_loop_built_list_of_a_constant_trip_count_gives_its_last_value_and_length() {
    let proto = with_constant_trip_count(list_loop(false, last_and_length), 4);
    for facts in EVERY_MODE {
        let out = run(&proto, facts, &list_inputs(4)[1..]).unwrap();
        assert_eq!(out[0], tensor1(&[4f32, 14.]), "{facts:?}");
        assert_eq!(out[1].shape(), [0usize; 0], "{facts:?}");
        assert_eq!(out[1].cast_to_scalar::<i64>().unwrap(), 4, "{facts:?}");
    }
}

#[test]
fn a_loop_built_list_of_a_run_time_trip_count_gives_its_last_value() {
    let proto = list_loop(false, |g| {
        g.init("last", &tensor0(-1i64))
            .node("SequenceAt", &["list", "last"], &["at"], vec![])
            .output("at", DatumType::F32)
    });
    for facts in EVERY_MODE {
        let out = run(&proto, facts, &list_inputs(4)).unwrap();
        assert_eq!(out[0], tensor1(&[4f32, 14.]), "{facts:?}");
    }
}

/// The list's length is the first dim of the scan output that holds it, a
/// symbol the run binds: the length must be that run's value.
#[test]
fn a_loop_built_list_of_a_run_time_trip_count_gives_its_length() {
    let proto = list_loop(false, last_and_length);
    for facts in EVERY_MODE {
        let out = run(&proto, facts, &list_inputs(4)).unwrap();
        assert_eq!(out[0], tensor1(&[4f32, 14.]), "{facts:?}");
        assert_eq!(out[1].shape(), [0usize; 0], "{facts:?}");
        assert_eq!(out[1].cast_to_scalar::<i64>().unwrap(), 4, "{facts:?}");
    }
}

#[test]
fn a_list_the_loop_body_also_reads_is_still_a_load_error() {
    let proto = list_loop(true, |g| {
        g.node("SequenceLength", &["list"], &["len"], vec![])
            .output("len", DatumType::I64)
    });
    let err = load(&proto, &tract_onnx_scatter::onnx()).unwrap_err();
    assert!(
        chain(&err).contains(
            "Loop node 'acc_final': body input 'list_in' (loop-carried value 1) is not a tensor (a sequence, optional or map value)"
        ),
        "{err:#}"
    );
}

// ------------------------------------------------------- counted loops

/// tf2onnx's counted loop over `x: [time, 2]`: `M = Shape(x)[0]`, a counter
/// `i` from 0 incremented by one, cond `i + 1 < time`; the body scans row
/// `iter` of `x` times `scale`. Named after its scan output `ys`.
fn counted_loop(g: Graph, scale: &str, ys: &str) -> Graph {
    let body = Graph::new(OPSET)
        .input("iter", DatumType::I64, &[])
        .input("cond_in", DatumType::Bool, &[])
        .input("i_in", DatumType::I64, &[])
        .init("inc", &tensor0(1i64))
        .node("Add", &["i_in", "inc"], &["i_out"], vec![])
        .node("Less", &["i_out", "time"], &["cond_out"], vec![])
        .node(
            "Gather",
            &["x", "iter"],
            &["row"],
            vec![attr_int("axis", 0)],
        )
        .node("Mul", &["row", scale], &["scaled"], vec![])
        .output("cond_out", DatumType::Bool)
        .output("i_out", DatumType::I64)
        .output("scaled", DatumType::F32);
    g.node(
        "Loop",
        &["time", "go", "zero"],
        &[&format!("{ys}_i"), ys],
        vec![attr_graph("body", body.graph_proto())],
    )
}

#[test]
fn two_counted_loops_scan_outputs_share_the_trip_count_and_concatenate() {
    let g = Graph::new(OPSET)
        .input("x", DatumType::F32, &[D::S("time"), D::N(2)])
        .init("zero", &tensor0(0i64))
        .init("go", &tensor0(true))
        .init("first", &tensor0(0i64))
        .init("plus", &tensor0(1f32))
        .init("minus", &tensor0(-1f32))
        .node("Shape", &["x"], &["dims"], vec![])
        .node(
            "Gather",
            &["dims", "first"],
            &["time"],
            vec![attr_int("axis", 0)],
        );
    let g = counted_loop(g, "plus", "fwd");
    let proto = counted_loop(g, "minus", "bwd")
        .node(
            "Concat",
            &["fwd", "bwd"],
            &["both"],
            vec![attr_int("axis", 1)],
        )
        .output("both", DatumType::F32)
        .proto();
    let declared = optimized(&proto, &tract_onnx_scatter::onnx(), Facts::Declared, &[]).unwrap();
    assert_eq!(output_facts(&declared), ["time,4,F32"]);
    let x = tensor2(&[[1f32, 2.], [3., 4.], [5., 6.]]);
    for facts in EVERY_MODE {
        let y = run(&proto, facts, std::slice::from_ref(&x))
            .unwrap()
            .remove(0);
        let want = tensor2(&[[1f32, 2., -1., -2.], [3., 4., -3., -4.], [5., 6., -5., -6.]]);
        assert_eq!(y, want, "{facts:?}");
    }
}

// ------------------------------------------ GRU / LSTM / RNN, TopK (#50)

use integration_tests::golden::check_never_worse;
use onnx_golden::framework::Tract;
use onnx_golden::suite::{NamedFramework, Suite, run_suites};

/// `onnx-testdata/control-flow/<name>`, a suite of node tests.
fn control_flow_suite(name: &str) -> Suite {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .join("onnx-testdata/control-flow")
        .join(name);
    Suite {
        name: format!("control-flow/{name}"),
        root,
    }
}

/// Every case of the suite passes through `onnx()` with the declared and
/// with pinned input facts, and never does worse than stock tract.
fn check_control_flow_suite(name: &str) {
    let suite = control_flow_suite(name);
    let plugin = tract_onnx_scatter::onnx();
    let (declared, pinned) = (Tract::declared(&plugin), Tract::pinned(&plugin));
    let frameworks = [
        NamedFramework {
            name: "declared".into(),
            framework: &declared,
        },
        NamedFramework {
            name: "pinned".into(),
            framework: &pinned,
        },
    ];
    let results = run_suites(
        std::slice::from_ref(&suite),
        &frameworks,
        None,
        &mut |_, _, _| {},
    )
    .unwrap();
    assert!(results.len() >= 12, "{name}: {} cases", results.len());
    let failed: Vec<String> = results
        .iter()
        .flat_map(|case| {
            case.outcomes
                .iter()
                .zip(["declared", "pinned"])
                .filter(|(o, _)| !o.is_pass())
                .map(move |(o, mode)| format!("{} ({mode}): {}", case.test, o.describe()))
        })
        .collect();
    assert!(failed.is_empty(), "{name}:\n{}", failed.join("\n"));
    check_never_worse(&[suite], &plugin, &tract_onnx_scatter::tract_onnx::onnx());
}

/// GRU, LSTM and RNN × forward/reverse/bidirectional × layout 0/1 × with
/// and without initial states, run-time lengths (unsorted, 0 and full),
/// every activation, clip, peepholes, input_forget; and TopK of a symbolic
/// k. Expected values from the generator's numpy reference.
#[test]
fn hand_written_recurrent_cases_match_the_onnx_reference() {
    check_control_flow_suite("rnn-onnx");
}

/// PyTorch's pack_padded_sequence(enforce_sorted=False) exports: TopK of
/// the lengths, the recurrent op with run-time sequence_lens, ScatterElements
/// restoring the batch order. Expected values from eager PyTorch.
#[test]
fn torch_packed_sequence_exports_match_pytorch_eager() {
    check_control_flow_suite("torch-packed");
}

/// A forward RNN named "rnn" over `x` `[time, batch, 1]`, hidden size 1,
/// run-time `sequence_lens`.
fn rnn_with_lengths() -> ModelProto {
    Graph::new(OPSET)
        .input("x", DatumType::F32, &[D::S("time"), D::S("batch"), D::N(1)])
        .input("lens", DatumType::I32, &[D::S("batch")])
        .init("W", &tensor3(&[[[1f32]]]))
        .init("R", &tensor3(&[[[0.5f32]]]))
        .node(
            "RNN",
            &["x", "W", "R", "", "lens"],
            &["rnn", "rnn_h"],
            vec![attr_int("hidden_size", 1)],
        )
        .output("rnn", DatumType::F32)
        .output("rnn_h", DatumType::F32)
        .proto()
}

#[test]
fn a_run_time_length_outside_the_time_dim_is_an_error_naming_node_row_length_and_bound() {
    let x = tensor3(&[[[1f32], [2.]], [[3.], [4.]]]);
    for facts in EVERY_MODE {
        let err = run(
            &rnn_with_lengths(),
            facts,
            &[x.clone(), tensor1(&[2i32, 3])],
        )
        .unwrap_err();
        snap!("rnn_length_past_the_time_dim", chain(&err));
        let err = run(
            &rnn_with_lengths(),
            facts,
            &[x.clone(), tensor1(&[-2i32, 1])],
        )
        .unwrap_err();
        snap!("rnn_negative_length", chain(&err));
    }
}

#[test]
fn stock_tract_stops_on_run_time_lengths_and_the_plugin_runs_them() {
    let x = tensor3(&[[[1f32], [2.]], [[3.], [4.]]]);
    let lens = tensor1(&[1i32, 2]);
    let err = run_with(
        &rnn_with_lengths(),
        &stock(),
        Facts::Declared,
        &[x.clone(), lens.clone()],
    )
    .unwrap_err();
    assert!(
        chain(&err).contains("Non constant seq_len is not supported"),
        "{err:#}"
    );
    for facts in EVERY_MODE {
        let out = run(&rnn_with_lengths(), facts, &[x.clone(), lens.clone()]).unwrap();
        // Row 0 stops after step 0 (tanh(1)); row 1 runs both steps.
        let h1 = (2f32).tanh();
        let want_y = [1f32.tanh(), h1, 0., (4. + 0.5 * h1).tanh()];
        let close = |got: Vec<f32>, want: &[f32]| {
            got.len() == want.len() && got.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-6)
        };
        assert!(close(values::<f32>(&out[0]), &want_y), "{facts:?}: {out:?}");
        assert!(
            close(values::<f32>(&out[1]), &[want_y[0], want_y[3]]),
            "{facts:?}: {out:?}"
        );
    }
}

/// `TopK(lengths, k = Gather(Shape(lengths), 0))`, `lengths` of symbolic
/// batch, as PyTorch's packed-sequence exports sort lengths.
fn topk_of_the_batch() -> ModelProto {
    Graph::new(OPSET)
        .input("lengths", DatumType::I64, &[D::S("batch")])
        .init("zero", &tensor0(0i64))
        .init("axes", &tensor1(&[0i64]))
        .node("Shape", &["lengths"], &["shape"], vec![])
        .node(
            "Gather",
            &["shape", "zero"],
            &["k0"],
            vec![attr_int("axis", 0)],
        )
        .node("Unsqueeze", &["k0", "axes"], &["k"], vec![])
        .node(
            "TopK",
            &["lengths", "k"],
            &["values", "indices"],
            vec![attr_int("axis", 0)],
        )
        .output("values", DatumType::I64)
        .output("indices", DatumType::I64)
        .proto()
}

#[test]
fn topk_of_a_symbolic_k_runs_with_declared_and_pinned_facts() {
    let lengths = tensor1(&[3i64, 9, 6]);
    let err = run_with(
        &topk_of_the_batch(),
        &stock(),
        Facts::Declared,
        std::slice::from_ref(&lengths),
    )
    .unwrap_err();
    assert!(
        chain(&err).contains("Undetermined symbol in expression: batch"),
        "{err:#}"
    );
    for facts in EVERY_MODE {
        let model = optimized(
            &topk_of_the_batch(),
            &tract_onnx_scatter::onnx(),
            facts,
            std::slice::from_ref(&lengths),
        )
        .unwrap();
        if facts == Facts::Declared {
            assert_eq!(output_facts(&model), ["batch,I64", "batch,I64"]);
        }
        let out = run_model(&model, std::slice::from_ref(&lengths)).unwrap();
        assert_eq!(out[0], tensor1(&[9i64, 6, 3]), "{facts:?}");
        assert_eq!(out[1], tensor1(&[1i64, 2, 0]), "{facts:?}");
    }
}
