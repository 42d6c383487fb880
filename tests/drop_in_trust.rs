//! The plugin never does worse than stock tract: minimal models for the two
//! regressions the "drop-in trust" issue names, each through every path
//! (constant and run-time shapes; analysis, typing, declutter, eval).

use crate::graph;

use graph::{D, Graph, attr_int, attr_string, tensor};
use tract_onnx_scatter::tract_onnx::prelude::*;
use tract_onnx_scatter::tract_onnx::tract_hir::infer::Factoid;

fn plan(g: &Graph, onnx: &impl graph::Loader) -> TractResult<Arc<TypedSimplePlan>> {
    g.load_with(onnx)?.into_optimized()?.into_runnable()
}

/// GNN message passing as exporters write it: `ConstantOfShape` with no
/// `value` attribute (ONNX: a float32 zero) of a shape, then
/// `ScatterElements(reduction=add)` of float32 messages into it.
fn message_passing(shape_from_data: bool) -> Graph {
    let dt = DatumType::F32;
    let g = Graph::new(18)
        .input_c("messages", dt, &[4, 2])
        .input_c("dst", DatumType::I64, &[4, 2]);
    let g = if shape_from_data {
        g.input_c("nodes", dt, &[3, 2])
            .node("Shape", &["nodes"], &["shape"], vec![])
    } else {
        g.init("shape", &tensor(DatumType::I64, &[2], &[3, 2]))
    };
    g.node("ConstantOfShape", &["shape"], &["zeros"], vec![])
        .node(
            "ScatterElements",
            &["zeros", "dst", "messages"],
            &["out"],
            vec![attr_int("axis", 0), attr_string("reduction", "add")],
        )
        .output("out", dt)
}

fn message_passing_inputs(shape_from_data: bool) -> TVec<TValue> {
    let mut inputs: TVec<TValue> = tvec![
        tensor2(&[[1f32, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]).into(),
        tensor2(&[[0i64, 2], [2, 2], [0, 1], [1, 0]]).into(),
    ];
    if shape_from_data {
        inputs.push(Tensor::zero::<f32>(&[3, 2]).unwrap().into());
    }
    inputs
}

#[test]
fn constant_of_shape_without_value_is_a_float32_zero_for_a_shape_known_at_load() {
    for from_data in [false, true] {
        let g = message_passing(from_data);
        let out = plan(&g, &tract_onnx_scatter::onnx())
            .and_then(|p| p.run(message_passing_inputs(from_data)))
            .unwrap_or_else(|e| panic!("shape from data {from_data}: {e:?}"));
        assert_eq!(
            out[0].clone().into_tensor(),
            tensor2(&[[6f32, 8.0], [7.0, 6.0], [3.0, 6.0]]),
            "shape from data {from_data}"
        );
    }
}

#[test]
fn constant_of_shape_without_value_types_as_float32_on_every_path() {
    for from_data in [false, true] {
        let g = Graph::new(18)
            .input("n", DatumType::F32, &[D::S("N"), D::N(2)])
            .init("fixed", &tensor(DatumType::I64, &[2], &[3, 2]))
            .node("Shape", &["n"], &["from_data"], vec![])
            .node(
                "ConstantOfShape",
                &[if from_data { "from_data" } else { "fixed" }],
                &["zeros"],
                vec![],
            )
            .output("zeros", DatumType::F32);
        let mut model = g.load().unwrap();
        // Analysis.
        model.analyse(false).unwrap();
        let fact = model
            .outlet_fact(model.output_outlets().unwrap()[0])
            .unwrap();
        assert_eq!(
            fact.datum_type.concretize(),
            Some(DatumType::F32),
            "{from_data}"
        );
        // Typing, declutter and eval.
        let typed = model.into_typed().unwrap();
        let out = typed.output_fact(0).unwrap().datum_type;
        assert_eq!(out, DatumType::F32, "{from_data}");
        let decluttered = typed.into_decluttered().unwrap();
        assert_eq!(
            decluttered.output_fact(0).unwrap().datum_type,
            DatumType::F32
        );
        let run = decluttered
            .into_runnable()
            .unwrap()
            .run(tvec![Tensor::zero::<f32>(&[3, 2]).unwrap().into()])
            .unwrap();
        assert_eq!(run[0].datum_type(), DatumType::F32, "{from_data}");
        assert_eq!(run[0].shape(), &[3, 2]);
    }
}

/// A sequence model's positional table sliced by the run-time length:
/// `pe[:, :T] + x` with `x: [1, T]`, `T` a symbol of the model's input.
fn positional_table_sliced_by_length() -> Graph {
    let dt = DatumType::F32;
    let pe: Vec<i64> = (0..16).collect();
    Graph::new(13)
        .input("x", dt, &[D::N(1), D::S("sequence_length")])
        .init("pe", &tensor(dt, &[1, 16], &pe))
        .init("zero", &tensor(DatumType::I64, &[1], &[0]))
        .init("one", &tensor(DatumType::I64, &[1], &[1]))
        .init("two", &tensor(DatumType::I64, &[1], &[2]))
        .init("axis1", &tensor(DatumType::I64, &[1], &[1]))
        .node("Shape", &["x"], &["shape"], vec![])
        .node("Slice", &["shape", "one", "two"], &["length"], vec![])
        .node(
            "Slice",
            &["pe", "zero", "length", "axis1"],
            &["pe_t"],
            vec![],
        )
        .node("Add", &["x", "pe_t"], &["out"], vec![])
        .output("out", dt)
}

#[test]
fn a_slice_of_a_constant_by_a_symbolic_input_length_loads_and_runs_as_stock() {
    let g = positional_table_sliced_by_length();
    let x = Tensor::zero::<f32>(&[1, 5]).unwrap();
    let ours = plan(&g, &tract_onnx_scatter::onnx())
        .and_then(|p| p.run(tvec![x.clone().into()]))
        .unwrap();
    let stock = plan(&g, &tract_onnx_scatter::tract_onnx::onnx())
        .and_then(|p| p.run(tvec![x.into()]))
        .unwrap();
    assert_eq!(ours[0], stock[0]);
    assert_eq!(
        ours[0].clone().into_tensor(),
        tensor(DatumType::F32, &[1, 5], &[0, 1, 2, 3, 4])
    );
}

/// `buf[0, T - 1] = 7` with `T` the symbolic length of `x`: ScatterND's
/// indices are shape arithmetic (TDim) that only the run can evaluate.
fn write_at_the_last_position() -> Graph {
    let dt = DatumType::F32;
    Graph::new(13)
        .input("x", dt, &[D::N(1), D::S("sequence_length")])
        .input_c("buf", dt, &[1, 8])
        .init("one_scalar", &tensor(DatumType::I64, &[], &[1]))
        .init("zero", &tensor(DatumType::I64, &[1], &[0]))
        .init("axes0", &tensor(DatumType::I64, &[1], &[0]))
        .init("seven", &tensor(dt, &[1], &[7]))
        .node("Shape", &["x"], &["shape"], vec![])
        .node("Gather", &["shape", "one_scalar"], &["length"], vec![])
        .node("Sub", &["length", "one_scalar"], &["last"], vec![])
        .node("Unsqueeze", &["last", "axes0"], &["last1"], vec![])
        .node(
            "Concat",
            &["zero", "last1"],
            &["tuple"],
            vec![attr_int("axis", 0)],
        )
        .node("Unsqueeze", &["tuple", "axes0"], &["indices"], vec![])
        .node("ScatterND", &["buf", "indices", "seven"], &["out"], vec![])
        .output("out", dt)
}

#[test]
fn scatter_indices_computed_from_a_symbolic_length_take_the_run_s_value() {
    let g = write_at_the_last_position();
    let x = Tensor::zero::<f32>(&[1, 5]).unwrap();
    let buf = Tensor::zero::<f32>(&[1, 8]).unwrap();
    let out = plan(&g, &tract_onnx_scatter::onnx())
        .and_then(|p| p.run(tvec![x.into(), buf.into()]))
        .unwrap();
    assert_eq!(
        out[0].clone().into_tensor(),
        tensor(DatumType::F32, &[1, 8], &[0, 0, 0, 0, 7, 0, 0, 0])
    );
}

// The plugin's `Onnx` keeps every path tract's framework offers, each
// through the loader (a bfloat16 model, which tract's parser alone refuses
// with `Unknown DatumType Bfloat16`, tells whether the loader ran).

use std::path::{Path, PathBuf};
use tract_onnx_scatter::tract_onnx::pb::ModelProto;

fn bfloat16_model() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../onnx-testdata/types/bfloat16/cast_f32_bf16_scatter_elements_13_noreduction_axis1_cast_back/model.onnx",
    )
}

fn without_loader(result: TractResult<InferenceModel>) -> bool {
    result.is_err_and(|e| format!("{e:?}").contains("Bfloat16"))
}

/// As README shows: a function generic over tract's framework.
fn load(fw: &impl Framework<ModelProto, InferenceModel>, p: &Path) -> TractResult<InferenceModel> {
    fw.model_for_path(p)
}

#[test]
fn a_function_generic_over_tract_s_framework_takes_either_with_its_own_loader() {
    let path = bfloat16_model();
    load(&tract_onnx_scatter::onnx(), &path).unwrap();
    assert!(without_loader(load(
        &tract_onnx_scatter::tract_onnx::onnx(),
        &path
    )));
}

#[test]
fn the_one_way_out_of_the_loader_is_explicit_and_keeps_the_register() {
    let tract = tract_onnx_scatter::onnx().into_tract_without_loader();
    assert!(without_loader(tract.model_for_path(bfloat16_model())));
    assert!(tract.op_register.0.contains_key("TensorScatter"));
}

#[test]
fn every_reading_path_goes_through_the_loader() {
    let path = bfloat16_model();
    let fw = tract_onnx_scatter::onnx();
    let proto = fw.proto_model_for_path(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(fw.proto_model_for_read(&mut &bytes[..]).unwrap(), proto);
    fw.model_for_path(&path).unwrap();
    fw.model_for_read(&mut &bytes[..]).unwrap();
    fw.model_for_proto_model(&proto).unwrap();
    fw.model_for_proto_model_with_model_template(&proto, InferenceModel::default())
        .unwrap();
    assert!(fw.parse(&proto, None).unwrap().unresolved_inputs.is_empty());
    fw.parse_with_template(&proto, None, InferenceModel::default())
        .unwrap();
}

#[test]
fn tract_s_switches_and_fields_are_methods_and_keep_the_loader() {
    let fw = tract_onnx_scatter::onnx();
    // tract's defaults: every declared fact read, output shapes not.
    assert!(!fw.ignore_value_info() && !fw.ignore_output_types() && !fw.use_output_shapes());
    let fw = fw
        .with_ignore_value_info(true)
        .with_ignore_output_types(true)
        .with_ignore_output_shapes(false);
    assert!(fw.ignore_value_info() && fw.ignore_output_types() && fw.use_output_shapes());
    let fw = fw.with_ignore_output_shapes(true);
    assert!(!fw.use_output_shapes());
    fw.model_for_path(bfloat16_model()).unwrap();
    let provider = tract_onnx_scatter::tract_onnx::onnx().provider;
    let fw = fw.with_provider(provider);
    fw.model_for_path(bfloat16_model()).unwrap();
}

#[test]
fn a_user_op_added_to_the_register_loads_through_the_loader() {
    use tract_onnx_scatter::tract_hir::internal::ElementWiseIntoHir;
    let mut fw = tract_onnx_scatter::onnx();
    assert!(fw.op_register().0.contains_key("Abs"));
    fw.op_register_mut().insert("MyAbs", |_, _| {
        Ok((
            tract_onnx_scatter::tract_core::ops::math::abs().into_hir(),
            vec![],
        ))
    });
    let g = Graph::new(18)
        .input_c("x", DatumType::F32, &[3])
        .node("MyAbs", &["x"], &["y"], vec![])
        .output("y", DatumType::F32);
    let out = plan(&g, &fw)
        .and_then(|p| p.run(tvec![tensor1(&[-1f32, 2.0, -3.0]).into()]))
        .unwrap();
    assert_eq!(out[0].clone().into_tensor(), tensor1(&[1f32, 2.0, 3.0]));
    assert!(plan(&g, &tract_onnx_scatter::onnx()).is_err());
    // The loader still runs in front of the user's register.
    fw.model_for_path(bfloat16_model()).unwrap();
}
