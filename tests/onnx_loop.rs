//! ONNX `Loop` (tract override `TractOverride::Loop`; stock tract 0.23.9 has
//! none): hand-written models through `tract_onnx_scatter::onnx()`, typed,
//! optimized and run. The iteration limit is process-wide:
//! `the_iteration_limit_stops_a_loop_whose_condition_never_turns_false`
//! lowers it in a process of its own.

use crate::graph;
use crate::own_process::in_own_process;

use std::sync::atomic::Ordering;

use graph::{D, Graph, attr_graph, attr_int};
use tract_onnx_scatter::tract_onnx::pb::{GraphProto, TypeProto};
use tract_onnx_scatter::tract_onnx::prelude::*;
use tract_onnx_scatter::tract_overrides::onnx_loop::{
    DEFAULT_LOOP_ITERATION_LIMIT, LOOP_ITERATION_LIMIT,
};

const OPSET: i64 = 13;

fn chain(e: &anyhow::Error) -> String {
    format!("{e:#}")
}

/// A body reading `(iter, cond_in, carried...)` (each carried value an f32
/// of `shape`); the caller adds its nodes and outputs.
fn body(carried: &[&str], shape: &[usize]) -> Graph {
    let mut g =
        Graph::new(OPSET)
            .input("iter", DatumType::I64, &[])
            .input("cond_in", DatumType::Bool, &[]);
    for name in carried {
        g = g.input_c(name, DatumType::F32, shape);
    }
    g
}

/// `loop` node named "loop" with `inputs` (M, cond, carried...) and
/// `outputs`.
fn with_loop(g: Graph, inputs: &[&str], outputs: &[&str], body: GraphProto) -> Graph {
    g.node("Loop", inputs, outputs, vec![attr_graph("body", body)])
}

fn f32s(v: &TValue) -> Vec<f32> {
    v.try_as_plain_ram()
        .unwrap()
        .as_slice::<f32>()
        .unwrap()
        .to_vec()
}

fn i64s(v: &TValue) -> Vec<i64> {
    v.try_as_plain_ram()
        .unwrap()
        .as_slice::<i64>()
        .unwrap()
        .to_vec()
}

fn run(g: &Graph, inputs: &[Tensor]) -> TractResult<TVec<TValue>> {
    let plan = g.optimized()?.into_runnable()?;
    plan.run(inputs.iter().cloned().map(|t| t.into_tvalue()).collect())
}

fn scalar_i64(v: i64) -> Tensor {
    tensor0(v)
}

/// x += 1 each iteration; scans x and the iteration number.
fn counting_body() -> Graph {
    body(&["x_in"], &[2])
        .init("one", &tensor1(&[1f32]))
        .node("Identity", &["cond_in"], &["cond_out"], vec![])
        .node("Add", &["x_in", "one"], &["x_out"], vec![])
        .node("Identity", &["x_out"], &["x_scan"], vec![])
        .node("Identity", &["iter"], &["i_scan"], vec![])
        .output("cond_out", DatumType::Bool)
        .output("x_out", DatumType::F32)
        .output("x_scan", DatumType::F32)
        .output("i_scan", DatumType::I64)
}

/// x (scalar) += 1 each iteration, while x < 10.
fn until_ten_body() -> Graph {
    body(&["x_in"], &[])
        .init("one", &tensor0(1f32))
        .init("ten", &tensor0(10f32))
        .node("Add", &["x_in", "one"], &["x_out"], vec![])
        .node("Less", &["x_out", "ten"], &["cond_out"], vec![])
        .output("cond_out", DatumType::Bool)
        .output("x_out", DatumType::F32)
}

#[test]
fn a_trip_count_alone_runs_m_iterations_and_stacks_the_scan_outputs() {
    let g = with_loop(
        Graph::new(OPSET)
            .input("m", DatumType::I64, &[])
            .input_c("x", DatumType::F32, &[2]),
        &["m", "", "x"],
        &["x_final", "xs", "is"],
        counting_body().graph_proto(),
    )
    .output("x_final", DatumType::F32)
    .output("xs", DatumType::F32)
    .output("is", DatumType::I64);
    let out = run(&g, &[scalar_i64(3), tensor1(&[0f32, 10.])]).unwrap();
    assert_eq!(f32s(&out[0]), [3., 13.]);
    assert_eq!(out[1].shape(), [3, 2]);
    assert_eq!(f32s(&out[1]), [1., 11., 2., 12., 3., 13.]);
    assert_eq!(i64s(&out[2]), [0, 1, 2]);
}

#[test]
fn a_constant_trip_count_gives_the_scan_outputs_m_rows_at_load() {
    let g = with_loop(
        Graph::new(OPSET)
            .init("m", &scalar_i64(4))
            .input_c("x", DatumType::F32, &[2]),
        &["m", "", "x"],
        &["x_final", "xs", "is"],
        counting_body().graph_proto(),
    )
    .output("x_final", DatumType::F32)
    .output("xs", DatumType::F32)
    .output("is", DatumType::I64);
    let model = g.optimized().unwrap();
    let facts: Vec<String> = model
        .output_outlets()
        .unwrap()
        .iter()
        .map(|o| format!("{:?}", model.outlet_fact(*o).unwrap()))
        .collect();
    assert_eq!(facts, ["2,F32", "4,2,F32", "4,I64"]);
    let out = run(&g, &[tensor1(&[0f32, 0.])]).unwrap();
    assert_eq!(i64s(&out[2]), [0, 1, 2, 3]);
}

#[test]
fn a_cond_alone_runs_until_the_body_s_cond_is_false() {
    let g = with_loop(
        Graph::new(OPSET)
            .input("c", DatumType::Bool, &[])
            .input_c("x", DatumType::F32, &[]),
        &["", "c", "x"],
        &["x_final"],
        until_ten_body().graph_proto(),
    )
    .output("x_final", DatumType::F32);
    let out = run(&g, &[tensor0(true), tensor0(0f32)]).unwrap();
    assert_eq!(f32s(&out[0]), [10.]);
    // A false cond: no iteration at all.
    let out = run(&g, &[tensor0(false), tensor0(0f32)]).unwrap();
    assert_eq!(f32s(&out[0]), [0.]);
}

#[test]
fn with_both_the_loop_stops_at_whichever_comes_first() {
    let g = with_loop(
        Graph::new(OPSET)
            .input("m", DatumType::I64, &[])
            .input("c", DatumType::Bool, &[])
            .input_c("x", DatumType::F32, &[]),
        &["m", "c", "x"],
        &["x_final"],
        until_ten_body().graph_proto(),
    )
    .output("x_final", DatumType::F32);
    let out = run(&g, &[scalar_i64(3), tensor0(true), tensor0(0f32)]).unwrap();
    assert_eq!(f32s(&out[0]), [3.]);
    let out = run(&g, &[scalar_i64(50), tensor0(true), tensor0(0f32)]).unwrap();
    assert_eq!(f32s(&out[0]), [10.]);
}

#[test]
fn with_neither_the_loop_runs_until_the_body_s_cond_is_false() {
    let g = with_loop(
        Graph::new(OPSET).input_c("x", DatumType::F32, &[]),
        &["", "", "x"],
        &["x_final"],
        until_ten_body().graph_proto(),
    )
    .output("x_final", DatumType::F32);
    let out = run(&g, &[tensor0(4f32)]).unwrap();
    assert_eq!(f32s(&out[0]), [10.]);
}

#[test]
fn zero_iterations_give_the_initial_values_and_empty_scan_outputs() {
    let g = with_loop(
        Graph::new(OPSET)
            .input("m", DatumType::I64, &[])
            .input_c("x", DatumType::F32, &[2]),
        &["m", "", "x"],
        &["x_final", "xs", "is"],
        counting_body().graph_proto(),
    )
    .output("x_final", DatumType::F32)
    .output("xs", DatumType::F32)
    .output("is", DatumType::I64);
    let out = run(&g, &[scalar_i64(0), tensor1(&[5f32, 6.])]).unwrap();
    assert_eq!(f32s(&out[0]), [5., 6.]);
    assert_eq!(out[1].shape(), [0, 2]);
    assert_eq!(out[2].shape(), [0]);
}

#[test]
fn the_body_reads_values_of_the_enclosing_graph_by_name() {
    let b = body(&["x_in"], &[2])
        .node("Identity", &["cond_in"], &["cond_out"], vec![])
        .node("Add", &["x_in", "step"], &["x_out"], vec![])
        .output("cond_out", DatumType::Bool)
        .output("x_out", DatumType::F32);
    let g = with_loop(
        Graph::new(OPSET)
            .input("m", DatumType::I64, &[])
            .input_c("x", DatumType::F32, &[2])
            .input_c("step", DatumType::F32, &[2]),
        &["m", "", "x"],
        &["x_final"],
        b.graph_proto(),
    )
    .output("x_final", DatumType::F32);
    let out = run(
        &g,
        &[scalar_i64(4), tensor1(&[0f32, 0.]), tensor1(&[1f32, -2.])],
    )
    .unwrap();
    assert_eq!(f32s(&out[0]), [4., -8.]);
}

/// The body's If reads the body's `x_in` and the outer graph's `big`
/// through two levels of scope.
#[test]
fn an_if_in_the_body_takes_its_branch_at_each_iteration() {
    let then_branch = Graph::new(OPSET)
        .init("one", &tensor1(&[1f32]))
        .node("Add", &["x_in", "one"], &["t"], vec![])
        .output("t", DatumType::F32);
    let else_branch = Graph::new(OPSET)
        .node("Add", &["x_in", "big"], &["e"], vec![])
        .output("e", DatumType::F32);
    let b = body(&["x_in"], &[1])
        .init("two", &scalar_i64(2))
        .node("Identity", &["cond_in"], &["cond_out"], vec![])
        .node("Less", &["iter", "two"], &["early"], vec![])
        .if_node("early", &["x_out"], &then_branch, &else_branch)
        .output("cond_out", DatumType::Bool)
        .output("x_out", DatumType::F32);
    let g = with_loop(
        Graph::new(OPSET)
            .input("m", DatumType::I64, &[])
            .input_c("x", DatumType::F32, &[1])
            .input_c("big", DatumType::F32, &[1]),
        &["m", "", "x"],
        &["x_final"],
        b.graph_proto(),
    )
    .output("x_final", DatumType::F32);
    let out = run(&g, &[scalar_i64(4), tensor1(&[0f32]), tensor1(&[10f32])]).unwrap();
    assert_eq!(f32s(&out[0]), [22.]);
}

#[test]
fn a_loop_in_the_body_runs_to_completion_at_each_iteration() {
    let inner = Graph::new(OPSET)
        .input("j", DatumType::I64, &[])
        .input("c", DatumType::Bool, &[])
        .input_c("y_in", DatumType::F32, &[])
        .init("one", &tensor0(1f32))
        .node("Identity", &["c"], &["c_out"], vec![])
        .node("Add", &["y_in", "one"], &["y_out"], vec![])
        .output("c_out", DatumType::Bool)
        .output("y_out", DatumType::F32);
    // Each outer iteration adds `n` (an outer-scope value) ones.
    let b = body(&["x_in"], &[])
        .node(
            "Loop",
            &["n", "", "x_in"],
            &["x_out"],
            vec![attr_graph("body", inner.graph_proto())],
        )
        .node("Identity", &["cond_in"], &["cond_out"], vec![])
        .output("cond_out", DatumType::Bool)
        .output("x_out", DatumType::F32);
    let g = with_loop(
        Graph::new(OPSET)
            .input("m", DatumType::I64, &[])
            .input("n", DatumType::I64, &[])
            .input_c("x", DatumType::F32, &[]),
        &["m", "", "x"],
        &["x_final"],
        b.graph_proto(),
    )
    .output("x_final", DatumType::F32);
    let out = run(&g, &[scalar_i64(3), scalar_i64(5), tensor0(0f32)]).unwrap();
    assert_eq!(f32s(&out[0]), [15.]);
}

const ROWS: usize = 64;
const WIDTH: usize = 8;

/// The decode step: `buf[iter, :] = iter` by ScatterND, into a
/// preallocated `[ROWS, WIDTH]` buffer, with the iteration number as the
/// step's "token".
fn decode_loop() -> Graph {
    let b = body(&["buf_in"], &[ROWS, WIDTH])
        .init("axes", &tensor1(&[0i64, 1]))
        .init("ones", &tensor2(&[[1f32; WIDTH]]))
        .node("Identity", &["cond_in"], &["cond_out"], vec![])
        .node("Unsqueeze", &["iter", "axes"], &["idx"], vec![])
        .node(
            "Cast",
            &["iter"],
            &["token"],
            vec![graph::attr_int("to", 1)],
        )
        .node("Mul", &["ones", "token"], &["row"], vec![])
        .node("ScatterND", &["buf_in", "idx", "row"], &["buf_out"], vec![])
        .output("cond_out", DatumType::Bool)
        .output("buf_out", DatumType::F32);
    with_loop(
        Graph::new(OPSET).input("m", DatumType::I64, &[]).input_c(
            "buf",
            DatumType::F32,
            &[ROWS, WIDTH],
        ),
        &["m", "", "buf"],
        &["buf_final"],
        b.graph_proto(),
    )
    .output("buf_final", DatumType::F32)
}

/// The headline use case: each step writes its row in place. The buffer
/// given to the model is the one it returns: no iteration copied it.
#[test]
fn a_decode_loop_writes_one_row_per_step_into_the_buffer_in_place() {
    let plan = decode_loop().optimized().unwrap().into_runnable().unwrap();
    let buf = Tensor::zero::<f32>(&[ROWS, WIDTH]).unwrap();
    let before = buf.as_ptr::<f32>().unwrap() as usize;
    let steps = ROWS as i64 - 4;
    let out = plan
        .run(tvec![scalar_i64(steps).into_tvalue(), buf.into_tvalue()])
        .unwrap();
    assert_eq!(out[0].as_ptr::<f32>().unwrap() as usize, before);
    let values = f32s(&out[0]);
    for (r, row) in values.chunks(WIDTH).enumerate() {
        let expected = if (r as i64) < steps { r as f32 } else { 0. };
        assert!(row.iter().all(|&v| v == expected), "row {r}: {row:?}");
    }
}

#[test]
fn a_negative_trip_count_is_an_error_naming_the_node() {
    let plan = decode_loop().optimized().unwrap().into_runnable().unwrap();
    let err = plan
        .run(tvec![
            scalar_i64(-1).into_tvalue(),
            Tensor::zero::<f32>(&[ROWS, WIDTH]).unwrap().into_tvalue()
        ])
        .unwrap_err();
    assert!(
        chain(&err).contains("Loop node 'buf_final': trip count M is -1, negative"),
        "{err:#}"
    );
}

#[test]
fn the_iteration_limit_stops_a_loop_whose_condition_never_turns_false() {
    in_own_process(
        "onnx_loop::the_iteration_limit_stops_a_loop_whose_condition_never_turns_false",
        || {
            let g = with_loop(
                Graph::new(OPSET).input("m", DatumType::I64, &[]).input_c(
                    "x",
                    DatumType::F32,
                    &[2],
                ),
                &["m", "", "x"],
                &["x_final", "xs", "is"],
                counting_body().graph_proto(),
            )
            .output("x_final", DatumType::F32)
            .output("xs", DatumType::F32)
            .output("is", DatumType::I64);
            // The same with M a constant: no scan dim of i64::MAX rows at load.
            let constant = with_loop(
                Graph::new(OPSET).init("m", &scalar_i64(i64::MAX)).input_c(
                    "x",
                    DatumType::F32,
                    &[2],
                ),
                &["m", "", "x"],
                &["x_final", "xs", "is"],
                counting_body().graph_proto(),
            )
            .output("x_final", DatumType::F32)
            .output("xs", DatumType::F32)
            .output("is", DatumType::I64);
            LOOP_ITERATION_LIMIT.store(100, Ordering::Relaxed);
            let result = run(&g, &[scalar_i64(i64::MAX), tensor1(&[0f32, 0.])]);
            let at_limit = run(&g, &[scalar_i64(100), tensor1(&[0f32, 0.])]);
            let constant_fact = constant.optimized().map(|m| {
                let o = m.output_outlets().unwrap()[1];
                format!("{:?}", m.outlet_fact(o).unwrap())
            });
            let constant_result = run(&constant, &[tensor1(&[0f32, 0.])]);
            LOOP_ITERATION_LIMIT.store(DEFAULT_LOOP_ITERATION_LIMIT, Ordering::Relaxed);
            let constant_fact = constant_fact.unwrap();
            assert!(constant_fact.starts_with("loop"), "{constant_fact}");
            let err = constant_result.unwrap_err();
            assert!(
                chain(&err).contains("still running after 100 iterations"),
                "{err:#}"
            );
            let err = result.unwrap_err();
            assert!(
            chain(&err).contains("Loop node 'x_final': still running after 100 iterations (M: 9223372036854775807); the limit is tract_onnx_scatter::tract_overrides::onnx_loop::LOOP_ITERATION_LIMIT"),
            "{err:#}"
        );
            // Exactly the limit is allowed.
            assert_eq!(at_limit.unwrap()[2].shape(), [100]);
        },
    );
}

#[test]
fn a_body_with_the_wrong_number_of_outputs_is_a_load_error() {
    let b = body(&["x_in"], &[2])
        .node("Identity", &["cond_in"], &["cond_out"], vec![])
        .output("cond_out", DatumType::Bool);
    let g = with_loop(
        Graph::new(OPSET)
            .input("m", DatumType::I64, &[])
            .input_c("x", DatumType::F32, &[2]),
        &["m", "", "x"],
        &["x_final"],
        b.graph_proto(),
    )
    .output("x_final", DatumType::F32);
    let err = g.load().unwrap_err();
    assert!(
        chain(&err).contains("Loop node 'x_final': body has 1 outputs, expected at least 1 + 1 (cond, then one per loop-carried value; the node has 1)"),
        "{err:#}"
    );
}

#[test]
fn a_body_with_the_wrong_number_of_inputs_is_a_load_error() {
    let b = body(&["x_in", "extra"], &[2])
        .node("Identity", &["cond_in"], &["cond_out"], vec![])
        .output("cond_out", DatumType::Bool)
        .output("x_in", DatumType::F32);
    let g = with_loop(
        Graph::new(OPSET)
            .input("m", DatumType::I64, &[])
            .input_c("x", DatumType::F32, &[2]),
        &["m", "", "x"],
        &["x_final"],
        b.graph_proto(),
    )
    .output("x_final", DatumType::F32);
    let err = g.load().unwrap_err();
    assert!(
        chain(&err).contains("Loop node 'x_final': body has 4 inputs, expected 2 + 1"),
        "{err:#}"
    );
}

#[test]
fn a_body_changing_a_carried_type_is_a_typing_error() {
    let b = body(&["x_in"], &[2])
        .node("Identity", &["cond_in"], &["cond_out"], vec![])
        .node(
            "Cast",
            &["x_in"],
            &["x_out"],
            vec![graph::attr_int("to", 6)],
        )
        .output("cond_out", DatumType::Bool)
        .output("x_out", DatumType::I32);
    let g = with_loop(
        Graph::new(OPSET)
            .input("m", DatumType::I64, &[])
            .input_c("x", DatumType::F32, &[2]),
        &["m", "", "x"],
        &["x_final"],
        b.graph_proto(),
    )
    .output("x_final", DatumType::F32);
    let err = g.typed().unwrap_err();
    assert!(
        chain(&err).contains(
            "Loop node 'x_final': loop-carried value 0 enters the body as F32 and leaves it as I32"
        ),
        "{err:#}"
    );
}

/// tract's protobuf types know tensors only: a sequence-typed value is a
/// `TypeProto` without value.
#[test]
fn a_sequence_carried_value_is_a_load_error_naming_the_node_and_the_value() {
    let mut b = body(&["seq_in"], &[2])
        .node("Identity", &["cond_in"], &["cond_out"], vec![])
        .node("Identity", &["seq_in"], &["seq_out"], vec![])
        .output("cond_out", DatumType::Bool)
        .output("seq_out", DatumType::F32)
        .graph_proto();
    b.input[2].r#type = Some(TypeProto::default());
    let g = with_loop(
        Graph::new(OPSET)
            .input("m", DatumType::I64, &[])
            .input_c("x", DatumType::F32, &[2]),
        &["m", "", "x"],
        &["x_final"],
        b,
    )
    .output("x_final", DatumType::F32);
    let err = g.load().unwrap_err();
    assert!(
        chain(&err).contains("Loop node 'x_final': body input 'seq_in' (loop-carried value 0) is not a tensor (a sequence, optional or map value); tract_onnx_scatter's Loop supports tensor values only"),
        "{err:#}"
    );
}

/// A trip count only the run knows: the scan outputs' first dim is a
/// symbol, bound when the loop has run.
#[test]
fn a_run_time_trip_count_gives_the_scan_outputs_a_symbol_bound_at_run_time() {
    let g = with_loop(
        Graph::new(OPSET)
            .input("m", DatumType::I64, &[])
            .input("x", DatumType::F32, &[D::S("S")]),
        &["m", "", "x"],
        &["x_final", "xs"],
        body(&["x_in"], &[2])
            .init("one", &tensor1(&[1f32]))
            .node("Identity", &["cond_in"], &["cond_out"], vec![])
            .node("Add", &["x_in", "one"], &["x_out"], vec![])
            .node("Identity", &["x_out"], &["x_scan"], vec![])
            .output("cond_out", DatumType::Bool)
            .output("x_out", DatumType::F32)
            .output("x_scan", DatumType::F32)
            .graph_proto(),
    )
    .output("x_final", DatumType::F32)
    .output("xs", DatumType::F32);
    let model = g.optimized().unwrap();
    let outputs = model.output_outlets().unwrap();
    let carried = model.outlet_fact(outputs[0]).unwrap();
    assert_eq!(format!("{carried:?}"), "S,F32");
    let xs = model.outlet_fact(outputs[1]).unwrap();
    let rows = &xs.shape[0];
    assert!(
        rows.to_i64().is_err() && format!("{rows}").starts_with("loop"),
        "{xs:?}"
    );
    assert_eq!(xs.shape[1], model.symbols.sym("S").to_dim());
    let plan = model.into_runnable().unwrap();
    for m in [2i64, 5] {
        let out = plan
            .run(tvec![
                scalar_i64(m).into_tvalue(),
                tensor1(&[0f32, 1., 2.]).into_tvalue()
            ])
            .unwrap();
        assert_eq!(out[1].shape(), [m as usize, 3]);
    }
}

/// A carried value growing each iteration: its dim becomes a fresh symbol.
#[test]
fn a_carried_value_whose_shape_changes_gets_a_fresh_symbol() {
    let b = body(&["x_in"], &[1])
        .init("one", &tensor1(&[1f32]))
        .node("Identity", &["cond_in"], &["cond_out"], vec![])
        .node(
            "Concat",
            &["x_in", "one"],
            &["x_out"],
            vec![graph::attr_int("axis", 0)],
        )
        .output("cond_out", DatumType::Bool)
        .output("x_out", DatumType::F32);
    let g = with_loop(
        Graph::new(OPSET)
            .input("m", DatumType::I64, &[])
            .input_c("x", DatumType::F32, &[1]),
        &["m", "", "x"],
        &["x_final"],
        b.graph_proto(),
    )
    .output("x_final", DatumType::F32);
    let model = g.optimized().unwrap();
    let fact = model
        .outlet_fact(model.output_outlets().unwrap()[0])
        .unwrap();
    assert!(format!("{fact:?}").starts_with("loop"), "{fact:?}");
    let out = run(&g, &[scalar_i64(3), tensor1(&[0f32])]).unwrap();
    assert_eq!(f32s(&out[0]), [0., 1., 1., 1.]);
}

#[test]
fn without_the_override_stock_tract_still_lacks_loop() {
    let g = decode_loop();
    let stock = tract_onnx_scatter::Options {
        tract_overrides: tract_onnx_scatter::TractOverrides::ALL
            .without(tract_onnx_scatter::TractOverride::Loop),
        ..Default::default()
    }
    .onnx();
    let err = g.load_with(&stock).unwrap().into_typed().unwrap_err();
    assert!(chain(&err).contains("Unimplemented(Loop)"), "{err:#}");
}

/// No NNEF form: writing a model with a Loop is an error naming the node.
#[test]
fn writing_a_loop_to_nnef_is_an_error_naming_the_node() {
    let model = decode_loop().optimized().unwrap();
    let mut bytes = vec![];
    let err = tract_onnx_scatter::nnef()
        .write_to_tar(&model, &mut bytes)
        .unwrap_err();
    assert!(
        chain(&err).contains("No serializer found for node #2 \"buf_final\" Loop"),
        "{err:#}"
    );
}

/// tract types a Cast to int64 as TDim: the loop casts the carried value
/// back, so the counter stays int64 from one iteration to the next.
#[test]
fn an_int64_counter_stays_int64_across_iterations() {
    let b = Graph::new(OPSET)
        .input("iter", DatumType::I64, &[])
        .input("cond_in", DatumType::Bool, &[])
        .input("s_in", DatumType::I64, &[])
        .node("Identity", &["cond_in"], &["cond_out"], vec![])
        .node("Cast", &["iter"], &["i"], vec![graph::attr_int("to", 7)])
        .node("Add", &["s_in", "i"], &["s_out"], vec![])
        .output("cond_out", DatumType::Bool)
        .output("s_out", DatumType::I64);
    let g = with_loop(
        Graph::new(OPSET)
            .input("m", DatumType::I64, &[])
            .input("s", DatumType::I64, &[]),
        &["m", "", "s"],
        &["s_final"],
        b.graph_proto(),
    )
    .output("s_final", DatumType::I64);
    let out = run(&g, &[scalar_i64(5), scalar_i64(100)]).unwrap();
    assert_eq!(out[0].datum_type(), DatumType::I64);
    assert_eq!(i64s(&out[0]), [110]);
}

/// ONNX lets body inputs go untyped (the expanded `Range` function does):
/// they take the loop's facts.
#[test]
fn untyped_body_inputs_take_the_loop_s_facts() {
    let mut b = counting_body().graph_proto();
    for input in &mut b.input {
        input.r#type = None;
    }
    let g = with_loop(
        Graph::new(OPSET)
            .input("m", DatumType::I64, &[])
            .input_c("x", DatumType::F32, &[2]),
        &["m", "", "x"],
        &["x_final", "xs", "is"],
        b,
    )
    .output("x_final", DatumType::F32)
    .output("xs", DatumType::F32)
    .output("is", DatumType::I64);
    let out = run(&g, &[scalar_i64(2), tensor1(&[0f32, 10.])]).unwrap();
    assert_eq!(f32s(&out[0]), [2., 12.]);
    assert_eq!(i64s(&out[2]), [0, 1]);
}

/// A `torch.jit.script` decode loop exported by PyTorch 2.15's TorchScript
/// exporter (opset 17): `for i in range(n): h = tanh(h / 2 + i / 10);
/// buf[i] = h`, a Loop whose body reads the outer graph's constant cond and
/// ends in a ScatterND (`tests/fixtures/torchscript_decode_loop/gen.py`).
#[test]
fn a_torchscript_loop_export_matches_eager_pytorch() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/torchscript_decode_loop");
    let read = |name: &str| {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        onnx_golden::tensor_proto::decode_tensor_bytes(&bytes).unwrap()
    };
    let inputs: Vec<Tensor> = (0..3).map(|i| read(&format!("input_{i}.pb"))).collect();
    let expected = read("output_0.pb");
    let plan = tract_onnx_scatter::onnx()
        .model_for_path(dir.join("model.onnx"))
        .unwrap()
        .into_optimized()
        .unwrap()
        .into_runnable()
        .unwrap();
    let feed = |n: i64| -> TVec<TValue> {
        tvec![
            inputs[0].clone().into_tvalue(),
            inputs[1].clone().into_tvalue(),
            tensor0(n).into_tvalue()
        ]
    };
    let out = plan.run(feed(5)).unwrap();
    assert_eq!(out[0].shape(), expected.shape());
    let expected = expected.try_as_plain_ram().unwrap();
    for (got, want) in f32s(&out[0])
        .iter()
        .zip(expected.as_slice::<f32>().unwrap())
    {
        assert!((got - want).abs() <= 1e-6, "{got} vs {want}");
    }
    // No step: the buffer as given.
    let out = plan.run(feed(0)).unwrap();
    assert!(f32s(&out[0]).iter().all(|&v| v == 0.));
}

/// `x[i]` as jax2onnx, paddle2onnx and tf2onnx write it in a loop body:
/// `Slice(x, [i], [i + 1] or a computed end, axes [0], steps)` of the
/// outer graph's `x` (4×3), then `Squeeze` of axis 0. With the loop index a
/// run-time value, the slice's length on axis 0 is a run-time symbol and
/// tract's typing of `Squeeze` refused it ("Removing non-trivial axis");
/// the `Squeeze` override checks the axis is 1 when it runs. Sums the rows.
fn row_sum_loop(step: i64) -> Graph {
    row_sum_loop_slicing(step, "end", false)
}

/// [`row_sum_loop`] with the row's slice ending at `end` ("end": `i + 1`;
/// "past_any_axis": tf2onnx's int32 1e9), and when `reslice`, sliced again
/// on axis 0 from 0 to "past_any_axis" (tf2onnx's `x[i]` in full).
fn row_sum_loop_slicing(step: i64, end: &str, reslice: bool) -> Graph {
    let row = if reslice { "row_0" } else { "row_1" };
    let mut body = body(&["acc_in"], &[3])
        .init("zero_axis", &tensor1(&[0i64]))
        .init("one", &tensor1(&[1i64]))
        .init("step", &tensor1(&[step]))
        .init("past_any_axis", &tensor1(&[1_000_000_000i32]))
        .init("from_0", &tensor1(&[0i32]))
        .node("Unsqueeze", &["iter", "zero_axis"], &["start"], vec![])
        .node("Add", &["start", "one"], &["end"], vec![])
        .node(
            "Slice",
            &["x", "start", end, "zero_axis", "step"],
            &[row],
            vec![],
        );
    if reslice {
        body = body.node(
            "Slice",
            &["row_0", "from_0", "past_any_axis", "zero_axis"],
            &["row_1"],
            vec![],
        );
    }
    let body = body
        .node("Squeeze", &["row_1", "zero_axis"], &["row"], vec![])
        .node("Add", &["acc_in", "row"], &["acc_out"], vec![])
        .node("Identity", &["cond_in"], &["cond_out"], vec![])
        .node("Identity", &["row_1"], &["row_scan"], vec![])
        .output("cond_out", DatumType::Bool)
        .output("acc_out", DatumType::F32)
        .output("row_scan", DatumType::F32);
    with_loop(
        Graph::new(OPSET)
            .input_c("x", DatumType::F32, &[4, 3])
            .input_c("acc", DatumType::F32, &[3])
            .init("m", &tensor0(4i64)),
        &["m", "", "acc"],
        &["sum", "rows"],
        body.graph_proto(),
    )
    .output("sum", DatumType::F32)
    .output("rows", DatumType::F32)
}

fn four_rows() -> Tensor {
    tensor2(&[
        [1f32, 2., 3.],
        [10., 20., 30.],
        [100., 200., 300.],
        [1000., 2000., 3000.],
    ])
}

#[test]
fn a_body_squeezing_a_slice_at_the_loop_index_types_and_runs() {
    let out = run(&row_sum_loop(1), &[four_rows(), tensor1(&[0f32, 0., 0.])]).unwrap();
    assert_eq!(f32s(&out[0]), [1111., 2222., 3333.]);
    assert_eq!(out[1].shape(), [4, 1, 3]);
}

/// tf2onnx's `x[i]`: the same slice with step 1e9. tract typed that axis as
/// the whole of `x` and decluttered the slice away (each row scanned would
/// be all of `x`); its length is now a run-time symbol, like step 1's.
#[test]
fn a_slice_with_a_huge_step_at_the_loop_index_reads_one_row() {
    let out = run(
        &row_sum_loop(1_000_000_000),
        &[four_rows(), tensor1(&[0f32, 0., 0.])],
    )
    .unwrap();
    assert_eq!(f32s(&out[0]), [1111., 2222., 3333.]);
    assert_eq!(out[1].shape(), [4, 1, 3]);
    assert_eq!(f32s(&out[1])[9..], [1000., 2000., 3000.]);
}

/// tf2onnx's `x[i]` in full: the step-1e9 slice at the loop index (end
/// 1e9), then a slice of that row's axis from 0 to tf2onnx's "to the end",
/// an int32 1e9. tract clamps such an end only to an axis of known length;
/// on the run-time length of `x[i]` it typed the re-slice 0..1e9, which
/// failed when it ran ("Invalid range 0..1000000000"). That length is now
/// known to be at most 1, so the end is the axis's end.
#[test]
fn a_slice_to_tf2onnx_s_end_of_a_run_time_row_reads_the_row() {
    let g = row_sum_loop_slicing(1_000_000_000, "past_any_axis", true);
    let out = run(&g, &[four_rows(), tensor1(&[0f32, 0., 0.])]).unwrap();
    assert_eq!(f32s(&out[0]), [1111., 2222., 3333.]);
    assert_eq!(out[1].shape(), [4, 1, 3]);
}

/// The `Squeeze` contract holds at run time: a squeezed axis of length 2
/// (the slice reads two rows) is an error naming the node, not a reshape.
#[test]
fn squeezing_an_axis_that_turns_out_longer_than_one_is_an_error() {
    let body = body(&["acc_in"], &[3])
        .init("zero_axis", &tensor1(&[0i64]))
        .init("two", &tensor1(&[2i64]))
        .node("Unsqueeze", &["iter", "zero_axis"], &["start"], vec![])
        .node("Add", &["start", "two"], &["end"], vec![])
        .node(
            "Slice",
            &["x", "start", "end", "zero_axis"],
            &["rows"],
            vec![],
        )
        .node("Squeeze", &["rows", "zero_axis"], &["row"], vec![])
        .node("Add", &["acc_in", "row"], &["acc_out"], vec![])
        .node("Identity", &["cond_in"], &["cond_out"], vec![])
        .output("cond_out", DatumType::Bool)
        .output("acc_out", DatumType::F32);
    let g = with_loop(
        Graph::new(OPSET)
            .input_c("x", DatumType::F32, &[4, 3])
            .input_c("acc", DatumType::F32, &[3])
            .init("m", &tensor0(2i64)),
        &["m", "", "acc"],
        &["sum"],
        body.graph_proto(),
    )
    .output("sum", DatumType::F32);
    let err = run(&g, &[four_rows(), tensor1(&[0f32, 0., 0.])]).unwrap_err();
    let msg = chain(&err);
    assert!(
        msg.contains("Squeeze node") && msg.contains("has length 2"),
        "{msg}"
    );
}

/// paddle2onnx's loop counter: a loop-carried scalar the body gives back
/// as `[1]` (`c + [1.]` broadcasts), beside a buffer `x` of 2 the body adds
/// the counter to. onnxruntime runs it; the loop types its body twice, for
/// the first iteration (c a scalar) and the later ones (c of shape [1]).
/// `read_c` makes the final counter a graph output. (`body` declares every
/// carried input a scalar; the loop sets their facts from its inputs.)
fn rank_changing_counter_loop(m: Option<i64>, read_c: bool) -> Graph {
    let body = body(&["c_in", "x_in"], &[])
        .init("one", &tensor1(&[1f32]))
        .node("Add", &["c_in", "one"], &["c_out"], vec![])
        .node("Add", &["x_in", "c_out"], &["x_out"], vec![])
        .node("Identity", &["cond_in"], &["cond_out"], vec![])
        .output("cond_out", DatumType::Bool)
        .output("c_out", DatumType::F32)
        .output("x_out", DatumType::F32)
        .graph_proto();
    let outer = match m {
        Some(m) => Graph::new(OPSET).init("m", &scalar_i64(m)),
        None => Graph::new(OPSET).input("m", DatumType::I64, &[]),
    };
    let g = with_loop(
        outer
            .input_c("c", DatumType::F32, &[])
            .input_c("x", DatumType::F32, &[2]),
        &["m", "", "c", "x"],
        &["c_final", "x_final"],
        body,
    );
    let g = if read_c {
        g.output("c_final", DatumType::F32)
    } else {
        g
    };
    g.output("x_final", DatumType::F32)
}

fn output_facts(model: &TypedModel) -> Vec<String> {
    model
        .output_outlets()
        .unwrap()
        .iter()
        .map(|o| format!("{:?}", model.outlet_fact(*o).unwrap()))
        .collect()
}

#[test]
fn a_loop_carried_scalar_the_body_returns_with_rank_one_runs_as_onnxruntime_runs_it() {
    let g = rank_changing_counter_loop(None, true);
    let out = run(&g, &[scalar_i64(3), tensor0(0f32), tensor1(&[0f32, 10.])]).unwrap();
    assert_eq!(out[0].shape(), [1]);
    assert_eq!(f32s(&out[0]), [3.]);
    // x += 1, then 2, then 3.
    assert_eq!(f32s(&out[1]), [6., 16.]);
    assert_eq!(output_facts(&g.optimized().unwrap()), ["1,F32", "2,F32"]);
}

/// With a run-time M, no iteration may run: the final counter would then be
/// the scalar it entered as, a rank its fact cannot hold. The model reads
/// it, so that run is an error naming the node and the value.
#[test]
fn a_read_value_whose_rank_the_body_changes_is_an_error_when_no_iteration_runs() {
    let g = rank_changing_counter_loop(None, true);
    let err = run(&g, &[scalar_i64(0), tensor0(5f32), tensor1(&[0f32, 10.])]).unwrap_err();
    let msg = chain(&err);
    assert!(
        msg.contains(
            "Loop node 'c_final': ran no iteration, so loop-carried value 0 would be its initial value, of shape []; the model reads it with the rank 1 the body gives it"
        ),
        "{msg}"
    );
}

/// paddle2onnx names every output of its loops and reads few: a value
/// nobody reads does not stop a run of no iteration.
#[test]
fn an_unread_value_whose_rank_the_body_changes_lets_a_run_of_no_iteration_through() {
    let g = rank_changing_counter_loop(None, false);
    let out = run(&g, &[scalar_i64(0), tensor0(5f32), tensor1(&[0f32, 10.])]).unwrap();
    assert_eq!(f32s(&out[0]), [0., 10.]);
    let out = run(&g, &[scalar_i64(2), tensor0(0f32), tensor1(&[0f32, 10.])]).unwrap();
    assert_eq!(f32s(&out[0]), [3., 13.]);
}

/// A constant M of at least 1 with no condition: the loop runs at least
/// once, so the counter's fact is the body's and every run gives it.
#[test]
fn a_loop_that_provably_runs_once_types_the_changed_rank_without_a_run_time_check() {
    let g = rank_changing_counter_loop(Some(2), true);
    assert_eq!(output_facts(&g.optimized().unwrap()), ["1,F32", "2,F32"]);
    let out = run(&g, &[tensor0(0f32), tensor1(&[0f32, 10.])]).unwrap();
    assert_eq!(f32s(&out[0]), [2.]);
}

/// A value whose rank grows at every iteration has no typing that holds
/// past the first: a load error naming the node and the value.
#[test]
fn a_loop_carried_value_whose_rank_grows_every_iteration_is_a_load_error() {
    let body = body(&["x_in"], &[2])
        .init("zero_axis", &tensor1(&[0i64]))
        .node("Unsqueeze", &["x_in", "zero_axis"], &["x_out"], vec![])
        .node("Identity", &["cond_in"], &["cond_out"], vec![])
        .output("cond_out", DatumType::Bool)
        .output("x_out", DatumType::F32);
    let g = with_loop(
        Graph::new(OPSET)
            .input("m", DatumType::I64, &[])
            .input_c("x", DatumType::F32, &[2]),
        &["m", "", "x"],
        &["x_final"],
        body.graph_proto(),
    )
    .output("x_final", DatumType::F32);
    let err = g.typed().unwrap_err();
    let msg = chain(&err);
    assert!(
        msg.contains("Loop node 'x_final': loop-carried value 0 does not settle: after 16 typings"),
        "{msg}"
    );
}

/// A value that enters as a scalar, leaves the first iteration as `[1]`
/// and later ones as `[1, 1]` (`Reshape` to the first two dims of
/// `Shape(x) ++ [1]`), then settles: the later plan would not take what
/// the first gives, and two typings are all the loop makes.
#[test]
fn a_rank_that_changes_again_after_the_first_iteration_is_a_load_error() {
    let body = body(&["x_in"], &[])
        .init("one", &tensor1(&[1i64]))
        .init("zero", &tensor1(&[0i64]))
        .init("two", &tensor1(&[2i64]))
        .node("Shape", &["x_in"], &["dims"], vec![])
        .node(
            "Concat",
            &["dims", "one"],
            &["dims_1"],
            vec![attr_int("axis", 0)],
        )
        .node("Slice", &["dims_1", "zero", "two"], &["shape"], vec![])
        .node("Reshape", &["x_in", "shape"], &["x_out"], vec![])
        .node("Identity", &["cond_in"], &["cond_out"], vec![])
        .output("cond_out", DatumType::Bool)
        .output("x_out", DatumType::F32);
    let g = with_loop(
        Graph::new(OPSET)
            .input("m", DatumType::I64, &[])
            .input_c("x", DatumType::F32, &[]),
        &["m", "", "x"],
        &["x_final"],
        body.graph_proto(),
    )
    .output("x_final", DatumType::F32);
    let err = g.typed().unwrap_err();
    let msg = chain(&err);
    assert!(
        msg.contains("Loop node 'x_final': loop-carried value 0 enters the body as F32 [], leaves the first iteration as F32 [1] and later ones as F32 [1, 1]; its rank changes after the first iteration"),
        "{msg}"
    );
}

/// Scanning the counter as it enters: a scalar in the first iteration,
/// `[1]` in the later ones, so its rows could not be stacked.
#[test]
fn a_scan_output_whose_rank_differs_after_the_first_iteration_is_a_load_error() {
    let body = body(&["c_in"], &[])
        .init("one", &tensor1(&[1f32]))
        .node("Add", &["c_in", "one"], &["c_out"], vec![])
        .node("Identity", &["c_in"], &["c_scan"], vec![])
        .node("Identity", &["cond_in"], &["cond_out"], vec![])
        .output("cond_out", DatumType::Bool)
        .output("c_out", DatumType::F32)
        .output("c_scan", DatumType::F32);
    let g = with_loop(
        Graph::new(OPSET)
            .input("m", DatumType::I64, &[])
            .input_c("c", DatumType::F32, &[]),
        &["m", "", "c"],
        &["c_final", "cs"],
        body.graph_proto(),
    )
    .output("cs", DatumType::F32);
    let err = g.typed().unwrap_err();
    let msg = chain(&err);
    assert!(
        msg.contains("Loop node 'c_final': scan output 0 is F32 [] in the first iteration and F32 [1] in later ones"),
        "{msg}"
    );
}

/// The official node tests whose graphs hold a `Loop` over tensors only:
/// `test_loop11`, and the expanded `Range` functions (their bodies are
/// Loops; bfloat16 included, read as float32 holding bfloat16 values).
/// `test_loop13_seq` and `test_loop16_seq_none` carry a sequence and an
/// optional and are out of reach (see docs/contract.md, Loop).
#[test]
fn the_official_tensor_only_loop_tests_pass_with_the_data_s_facts() {
    use integration_tests::golden::all_ops_suite;
    use onnx_golden::{NamedFramework, Tract, run_suites};

    let plugin = tract_onnx_scatter::onnx();
    let frameworks = [NamedFramework {
        name: "plugin".into(),
        framework: &Tract::pinned(&plugin),
    }];
    let suite = all_ops_suite();
    let mut cases = Vec::new();
    for filter in ["test_loop", "test_range_"] {
        cases.extend(
            run_suites(
                std::slice::from_ref(&suite),
                &frameworks,
                Some(filter),
                &mut |_, _, _| {},
            )
            .expect("listing the official node tests"),
        );
    }
    let tensor_only = |test: &str| {
        let range = test.starts_with("test_range_");
        test == "test_loop11" || (range && test.ends_with("_expanded"))
    };
    let selected: Vec<_> = cases.iter().filter(|c| tensor_only(&c.test)).collect();
    let names: Vec<&str> = selected.iter().map(|c| c.test.as_str()).collect();
    assert_eq!(
        names,
        [
            "test_loop11",
            "test_range_bfloat16_type_positive_delta_expanded",
            "test_range_float16_type_positive_delta_expanded",
            "test_range_float_type_positive_delta_expanded",
            "test_range_int32_type_negative_delta_expanded",
        ]
    );
    for case in selected {
        assert!(
            case.outcomes[0].is_pass(),
            "{}: {:?}",
            case.test,
            case.outcomes[0]
        );
    }
}

/// jax2onnx's `fori_loop` with a `lax.cond` on a row it slices at the loop
/// index (`onnx-testdata/control-flow/if-onnx/fori_cond_capture_unknown_dim`):
/// the If output's value_info `float[?]` once kept the If's inference
/// reporting a change forever, and the branches could not type the row they
/// read from the body. Loaded on a thread of its own: a hang fails the test.
#[test]
fn an_if_in_a_loop_body_reading_a_row_at_the_loop_index_loads_and_runs() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../onnx-testdata/control-flow/if-onnx/fori_cond_capture_unknown_dim");
    let (tx, rx) = std::sync::mpsc::channel();
    let model = dir.join("model.onnx");
    std::thread::spawn(move || {
        let plan = tract_onnx_scatter::onnx()
            .model_for_path(&model)
            .and_then(|m| m.into_optimized())
            .and_then(|m| m.into_runnable());
        let _ = tx.send(plan.map_err(|e| format!("{e:#}")));
    });
    let plan = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("loading the model did not finish in 60 s")
        .unwrap();
    for set in ["test_data_set_0", "test_data_set_1"] {
        let read = |name: &str| {
            let bytes = std::fs::read(dir.join(set).join(name)).unwrap();
            onnx_golden::tensor_proto::decode_tensor_bytes(&bytes).unwrap()
        };
        let out = plan.run(tvec!(read("input_0.pb").into_tvalue())).unwrap();
        let expected = read("output_0.pb");
        let got = f32s(&out[0]);
        let want = f32s(&expected.into_tvalue());
        assert_eq!(got.len(), want.len(), "{set}");
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-5, "{set}: {got:?} != {want:?}");
        }
    }
}
