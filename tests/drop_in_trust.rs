//! The plugin never does worse than stock tract: minimal models for the two
//! regressions the "drop-in trust" issue names, each through every path
//! (constant and run-time shapes; analysis, typing, declutter, eval).

#[path = "support/graph.rs"]
mod graph;

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
