//! The overrides of tract operators outside the scatter family
//! (`tract_onnx_scatter::tract_overrides`): `If` with a condition known at
//! load takes its branch whatever the other branch's facts; a run-time
//! condition is tract's `If` where the branches agree and runs the chosen
//! branch where they do not; `Reshape` keeps symbolic shapes and
//! checks the volume at run time where tract cannot prove it at load, and
//! is tract's own Reshape wherever tract's loads. `tract_overrides: false`
//! gives stock behaviour back.

use crate::graph;

use graph::{Graph, attr_int, attr_ints, attr_string, op_names, tensor};
use tract_onnx_scatter::Options;
use tract_onnx_scatter::tract_onnx::prelude::*;

fn chain(e: &anyhow::Error) -> String {
    format!("{e:#}")
}

fn no_overrides() -> tract_onnx_scatter::Onnx {
    Options {
        tract_overrides: tract_onnx_scatter::TractOverrides::NONE,
        ..Options::default()
    }
    .onnx()
}

fn run_with(
    g: &Graph,
    onnx: &impl graph::Loader,
    inputs: TVec<TValue>,
) -> TractResult<TVec<TValue>> {
    g.load_with(onnx)?
        .into_optimized()?
        .into_runnable()?
        .run(inputs)
}

/// TorchScript's scatter_reduce wrapper: `If(Size(x) == 0)` whose then
/// branch flattens x (rank 1) and whose else branch scatters (rank 2).
fn scatter_reduce_in_an_if() -> Graph {
    let dt = DatumType::F32;
    let then_branch = Graph::new(18)
        .init("flat", &tensor(DatumType::I64, &[1], &[-1]))
        .node("Reshape", &["x", "flat"], &["then_out"], vec![])
        .output("then_out", dt);
    let else_branch = Graph::new(18)
        .node(
            "ScatterElements",
            &["x", "idx", "upd"],
            &["else_out"],
            vec![attr_int("axis", 1), attr_string("reduction", "max")],
        )
        .output("else_out", dt);
    Graph::new(18)
        .input_c("x", dt, &[4, 2])
        .input_c("idx", DatumType::I64, &[4, 2])
        .input_c("upd", dt, &[4, 2])
        .init("zero", &tensor(DatumType::I64, &[], &[0]))
        .node("Size", &["x"], &["size"], vec![])
        .node("Equal", &["size", "zero"], &["empty"], vec![])
        .if_node("empty", &["out"], &then_branch, &else_branch)
        .output("out", dt)
}

fn scatter_inputs() -> TVec<TValue> {
    tvec![
        tensor2(&[[1f32, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]).into(),
        tensor2(&[[1i64, 1], [0, 0], [1, 0], [0, 1]]).into(),
        tensor2(&[[9f32, -9.0], [0.0, 5.0], [6.0, 6.0], [-1.0, 10.0]]).into(),
    ]
}

#[test]
fn an_if_with_a_constant_condition_runs_its_branch_whatever_the_other_branch() {
    let out = run_with(
        &scatter_reduce_in_an_if(),
        &tract_onnx_scatter::onnx(),
        scatter_inputs(),
    )
    .unwrap();
    assert_eq!(
        out[0].clone().into_tensor(),
        tensor2(&[[1f32, 9.0], [5.0, 4.0], [6.0, 6.0], [7.0, 10.0]])
    );
}

#[test]
fn the_constant_if_is_inlined_in_the_optimized_plan() {
    let model = scatter_reduce_in_an_if()
        .load()
        .unwrap()
        .into_optimized()
        .unwrap();
    let ops = op_names(&model);
    assert!(!ops.iter().any(|o| o.contains("If")), "{ops:?}");
    assert!(ops.iter().any(|o| o == "ScatterElements"), "{ops:?}");
}

#[test]
fn stock_if_refuses_branches_of_different_facts_and_the_switch_restores_it() {
    let g = scatter_reduce_in_an_if();
    let stock = run_with(
        &g,
        &tract_onnx_scatter::tract_onnx::onnx(),
        scatter_inputs(),
    )
    .unwrap_err();
    let off = run_with(&g, &no_overrides(), scatter_inputs()).unwrap_err();
    assert!(chain(&stock).contains("\"out\" If"), "{}", chain(&stock));
    assert!(chain(&off).contains("\"out\" If"), "{}", chain(&off));
}

/// `If(cond)` with cond a graph input: then x + 1, else x * 2.
fn runtime_if(else_rank_differs: bool) -> Graph {
    let dt = DatumType::F32;
    let then_branch = Graph::new(18)
        .init("one", &tensor(dt, &[], &[1]))
        .node("Add", &["x", "one"], &["then_out"], vec![])
        .output("then_out", dt);
    let mut else_branch = Graph::new(18).init("two", &tensor(dt, &[], &[2]));
    else_branch = if else_rank_differs {
        else_branch
            .init("flat", &tensor(DatumType::I64, &[1], &[-1]))
            .node("Reshape", &["x", "flat"], &["else_out"], vec![])
    } else {
        else_branch.node("Mul", &["x", "two"], &["else_out"], vec![])
    };
    let else_branch = else_branch.output("else_out", dt);
    Graph::new(18)
        .input_c("cond", DatumType::Bool, &[])
        .input_c("x", dt, &[2, 2])
        .if_node("cond", &["out"], &then_branch, &else_branch)
        .output("out", dt)
}

#[test]
fn an_if_with_a_run_time_condition_takes_either_branch_as_tract_does() {
    let g = runtime_if(false);
    let x = tensor2(&[[1f32, 2.0], [3.0, 4.0]]);
    for (cond, want) in [
        (true, [[2f32, 3.0], [4.0, 5.0]]),
        (false, [[2f32, 4.0], [6.0, 8.0]]),
    ] {
        let inputs = || tvec![tensor0(cond).into(), x.clone().into()];
        let ours = run_with(&g, &tract_onnx_scatter::onnx(), inputs()).unwrap();
        let stock = run_with(&g, &tract_onnx_scatter::tract_onnx::onnx(), inputs()).unwrap();
        assert_eq!(ours[0].clone().into_tensor(), tensor2(&want));
        assert_eq!(ours[0], stock[0]);
    }
}

#[test]
fn a_run_time_condition_keeps_stock_s_if_when_the_branches_agree() {
    let model = runtime_if(false).load().unwrap().into_typed().unwrap();
    let ops = op_names(&model);
    assert!(ops.iter().any(|o| o == "IfThenElse"), "{ops:?}");
}

#[test]
fn ranks_differing_by_more_than_unit_axes_are_an_error_naming_the_node_and_both_facts() {
    let err = runtime_if(true)
        .load()
        .and_then(|m| m.into_typed())
        .map(drop)
        .unwrap_err();
    let err = chain(&err);
    assert!(
        err.contains(
            "If node 'out': output 0 is F32 [2, 2] in then_branch and F32 [4] in else_branch"
        ),
        "{err}"
    );
}

/// `If(cond)`: then `x` (`[1, 3]`), else `y` (`[3]`), the output read by
/// `consumer` (an op of the output and `w` (`w_shape`), or `None`: the
/// output itself is the graph's).
fn if_of_ranks_2_and_1(consumer: Option<&str>, w_shape: &[usize]) -> Graph {
    let dt = DatumType::F32;
    let then_branch = Graph::new(18)
        .node("Identity", &["x"], &["then_out"], vec![])
        .output("then_out", dt);
    let else_branch = Graph::new(18)
        .node("Identity", &["y"], &["else_out"], vec![])
        .output("else_out", dt);
    let g = Graph::new(18)
        .input_c("cond", DatumType::Bool, &[])
        .input_c("x", dt, &[1, 3])
        .input_c("y", dt, &[3])
        .input_c("w", dt, w_shape)
        .if_node("cond", &["chosen"], &then_branch, &else_branch);
    match consumer {
        Some(op) => g
            .node(op, &["chosen", "w"], &["out"], vec![])
            .output("out", dt),
        None => g.output("chosen", dt),
    }
}

fn if_of_ranks_inputs(cond: bool, w: Tensor) -> TVec<TValue> {
    tvec![
        tensor0(cond).into(),
        tensor2(&[[1f32, 2.0, 3.0]]).into(),
        tensor1(&[4f32, 5.0, 6.0]).into(),
        w.into(),
    ]
}

#[test]
fn a_lower_rank_branch_is_padded_where_a_broadcast_of_higher_rank_absorbs_the_axis() {
    // `Mul` by `w` of rank 3: ONNX's output is [2, 1, 3] whichever branch
    // runs, so padding the else-branch's [3] to [1, 3] changes nothing.
    let g = if_of_ranks_2_and_1(Some("Mul"), &[2, 1, 3]);
    let w = Tensor::from_shape(&[2, 1, 3], &[1f32, 1.0, 1.0, 2.0, 2.0, 2.0]).unwrap();
    for (cond, row) in [(true, [1f32, 2.0, 3.0]), (false, [4f32, 5.0, 6.0])] {
        let out = run_with(
            &g,
            &tract_onnx_scatter::onnx(),
            if_of_ranks_inputs(cond, w.clone()),
        )
        .unwrap();
        let want: Vec<f32> = row
            .iter()
            .chain(&row)
            .zip([1f32, 1.0, 1.0, 2.0, 2.0, 2.0])
            .map(|(a, b)| a * b)
            .collect();
        assert_eq!(
            out[0].clone().into_tensor(),
            Tensor::from_shape(&[2, 1, 3], &want).unwrap(),
            "cond {cond}"
        );
    }
}

#[test]
fn a_lower_rank_branch_is_refused_where_a_use_would_see_the_padded_axis() {
    // Each use below computes another shape or value from [1, 3] than from
    // [3]: ONNX gives the rank of the branch that ran, tract one rank.
    let cases = [
        (if_of_ranks_2_and_1(None, &[3]), "the graph output 'chosen'"),
        (
            if_of_ranks_2_and_1(Some("Mul"), &[3]),
            "the graph output 'out'",
        ),
        (
            if_of_ranks_2_and_1(Some("MatMul"), &[3]),
            "input 0 of MatMul node",
        ),
    ];
    for (g, seen) in cases {
        let err = g.load().and_then(|m| m.into_typed()).map(drop).unwrap_err();
        let err = chain(&err);
        assert!(
            err.contains("output 0 is F32 [1, 3] in then_branch and F32 [3] in else_branch")
                && err.contains(&format!("would change what {seen}")),
            "{err}"
        );
    }
}

/// Exporters' `If`s whose branches differ by a leading axis, read by a
/// reduction or a softmax along axis 0 or by `Shape`
/// (`tests/fixtures/if_branch_ranks/`, from tf2onnx 1.17 and PyTorch 2.15's
/// TorchScript exporter): padding gave other values than onnxruntime's, so
/// each is a load error naming what would see the rank.
#[test]
fn exported_ifs_whose_branch_ranks_a_use_would_see_are_load_errors() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/if_branch_ranks");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "onnx"))
        .collect();
    names.sort();
    assert_eq!(names.len(), 3, "{names:?}");
    let messages: Vec<String> = names
        .iter()
        .map(|path| {
            let err = tract_onnx_scatter::onnx()
                .model_for_path(path)
                .and_then(|m| m.into_optimized())
                .map(drop)
                .unwrap_err();
            let file = path.file_name().unwrap().to_string_lossy();
            format!("{file}: {}", err.root_cause())
        })
        .collect();
    insta::assert_snapshot!(messages.join("\n"));
}

/// `If(cond)`: then the constant `[7, 7]`, else `x + x`; the output negated
/// (a consumer reading the `If` alone, which tract folds when it can).
fn constant_then_branch() -> Graph {
    let dt = DatumType::F32;
    let then_branch = Graph::new(18)
        .node(
            "Constant",
            &[],
            &["then_out"],
            vec![graph::attr_tensor("value", &tensor(dt, &[2], &[7, 7]))],
        )
        .output("then_out", dt);
    let else_branch = Graph::new(18)
        .node("Add", &["x", "x"], &["else_out"], vec![])
        .output("else_out", dt);
    Graph::new(18)
        .input_c("cond", DatumType::Bool, &[])
        .input_c("x", dt, &[2])
        .if_node("cond", &["chosen"], &then_branch, &else_branch)
        .node("Neg", &["chosen"], &["out"], vec![])
        .output("out", dt)
}

#[test]
fn a_constant_then_branch_is_not_folded_into_a_run_time_condition() {
    let g = constant_then_branch();
    let x = tensor1(&[1f32, 3.0]);
    let inputs = |cond: bool| tvec![tensor0(cond).into(), x.clone().into()];
    let ours = |cond| run_with(&g, &tract_onnx_scatter::onnx(), inputs(cond)).unwrap();
    assert_eq!(ours(true)[0].clone().into_tensor(), tensor1(&[-7f32, -7.0]));
    assert_eq!(
        ours(false)[0].clone().into_tensor(),
        tensor1(&[-2f32, -6.0])
    );
    // Stock tract folds the output to the then-branch's constant: the
    // else-branch never runs.
    let stock = run_with(&g, &tract_onnx_scatter::tract_onnx::onnx(), inputs(false)).unwrap();
    assert_eq!(stock[0].clone().into_tensor(), tensor1(&[-7f32, -7.0]));
}

#[test]
fn an_if_of_more_than_one_input_is_an_error_naming_the_node() {
    let g = runtime_if(false);
    let mut proto = g.proto();
    proto.graph.as_mut().unwrap().node[0].input.push("x".into());
    let err = tract_onnx_scatter::onnx()
        .model_for_proto_model(&proto)
        .map(drop)
        .unwrap_err();
    assert!(
        chain(&err).contains("If node 'out': has 2 inputs, expected 1 (the condition)"),
        "{}",
        chain(&err)
    );
}

/// jax2onnx's drop-mode filter: `Reshape(x, [count, 3])` where `count` is
/// the number of true entries of `mask` (NonZero): valid only when all of
/// `x`'s rows are kept.
fn reshape_to_a_nonzero_count() -> Graph {
    let dt = DatumType::F32;
    Graph::new(18)
        .input_c("x", dt, &[3, 3])
        .input_c("mask", DatumType::Bool, &[3])
        .init("one", &tensor(DatumType::I64, &[1], &[1]))
        .init("three", &tensor(DatumType::I64, &[1], &[3]))
        .node("NonZero", &["mask"], &["nz"], vec![])
        .node("Shape", &["nz"], &["nz_shape"], vec![])
        .node("Slice", &["nz_shape", "one", "two_end"], &["count"], vec![])
        .init("two_end", &tensor(DatumType::I64, &[1], &[2]))
        .node(
            "Concat",
            &["count", "three"],
            &["target"],
            vec![attr_int("axis", 0)],
        )
        .node("Reshape", &["x", "target"], &["out"], vec![])
        .output("out", dt)
}

#[test]
fn a_reshape_to_a_data_dependent_shape_runs_when_the_volumes_agree() {
    let x = tensor2(&[[1f32, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]);
    let out = run_with(
        &reshape_to_a_nonzero_count(),
        &tract_onnx_scatter::onnx(),
        tvec![x.clone().into(), tensor1(&[true, true, true]).into()],
    )
    .unwrap();
    assert_eq!(out[0].clone().into_tensor(), x);
}

#[test]
fn a_reshape_to_a_data_dependent_shape_is_a_run_time_error_when_they_do_not() {
    let x = tensor2(&[[1f32, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]);
    let err = run_with(
        &reshape_to_a_nonzero_count(),
        &tract_onnx_scatter::onnx(),
        tvec![x.into(), tensor1(&[true, false, true]).into()],
    )
    .unwrap_err();
    let err = chain(&err);
    assert!(
        err.contains("Reshape node 'out'")
            && err.contains("[3, 3]")
            && err.contains("[2, 3]")
            && err.contains("9 input elements, 6 in the target"),
        "{err}"
    );
}

#[test]
fn stock_reshape_refuses_the_data_dependent_shape_at_load_and_the_switch_restores_it() {
    let g = reshape_to_a_nonzero_count();
    let inputs = || tvec![tensor2(&[[0f32; 3]; 3]).into(), tensor1(&[true; 3]).into()];
    let stock =
        chain(&run_with(&g, &tract_onnx_scatter::tract_onnx::onnx(), inputs()).unwrap_err());
    let off = chain(&run_with(&g, &no_overrides(), inputs()).unwrap_err());
    assert!(stock.contains("Reshape"), "{stock}");
    assert_eq!(stock, off);
}

#[test]
fn a_reshape_to_a_run_time_shape_input_runs_with_onnx_rules() {
    let dt = DatumType::F32;
    let g = Graph::new(18)
        .input_c("x", dt, &[2, 3, 4])
        .input_c("shape", DatumType::I64, &[2])
        .node("Reshape", &["x", "shape"], &["out"], vec![])
        .output("out", dt);
    let x: Tensor = tensor(dt, &[2, 3, 4], &(0..24).collect::<Vec<_>>());
    let out = run_with(
        &g,
        &tract_onnx_scatter::onnx(),
        tvec![x.clone().into(), tensor1(&[0i64, -1]).into()],
    )
    .unwrap();
    assert_eq!(out[0].shape(), &[2, 12]);
    let err = run_with(
        &g,
        &tract_onnx_scatter::onnx(),
        tvec![x.into(), tensor1(&[5i64, -1]).into()],
    )
    .unwrap_err();
    assert!(chain(&err).contains("do not divide"), "{}", chain(&err));
}

/// A Reshape to a run-time target of `len` entries, of 1s when run.
fn reshape_to_a_run_time_target_of(len: usize) -> Graph {
    Graph::new(18)
        .input_c("x", DatumType::F32, &[1])
        .input_c("shape", DatumType::I64, &[len])
        .node("Reshape", &["x", "shape"], &["out"], vec![])
        .output("out", DatumType::F32)
}

#[test]
fn a_run_time_reshape_target_of_64_dims_runs_and_of_65_is_a_load_error() {
    use tract_onnx_scatter::tract_overrides::MAX_RANK;
    let max = MAX_RANK;
    let ones = vec![1i64; max];
    let out = run_with(
        &reshape_to_a_run_time_target_of(max),
        &tract_onnx_scatter::onnx(),
        tvec![tensor1(&[7f32]).into(), tensor1(&ones).into()],
    )
    .unwrap();
    assert_eq!(out[0].shape(), &vec![1; max][..]);
    let err = reshape_to_a_run_time_target_of(max + 1)
        .load_with(&tract_onnx_scatter::onnx())
        .and_then(|m| m.into_typed())
        .unwrap_err();
    assert!(
        chain(&err).contains(
            "Reshape: input 1 holds 65 values, a tensor of 65 dims; at most 64 dims are supported"
        ),
        "{}",
        chain(&err)
    );
}

/// `Slice(x, [4], ends, [step])` on x = [0, 1, 2, 3, 4], ends fed.
fn slice_with_step(step: i64) -> Graph {
    Graph::new(18)
        .input_c("x", DatumType::F32, &[5])
        .init("starts", &tensor1(&[4i64]))
        .input_c("ends", DatumType::I64, &[1])
        .init("axes", &tensor1(&[0i64]))
        .init("steps", &tensor1(&[step]))
        .node(
            "Slice",
            &["x", "starts", "ends", "axes", "steps"],
            &["out"],
            vec![],
        )
        .output("out", DatumType::F32)
}

#[test]
fn a_slice_step_of_i64_min_takes_one_element_as_numpy_does() {
    let out = run_with(
        &slice_with_step(i64::MIN),
        &tract_onnx_scatter::onnx(),
        tvec![
            tensor1(&[0f32, 1., 2., 3., 4.]).into(),
            tensor1(&[-10i64]).into()
        ],
    )
    .unwrap();
    assert_eq!(out[0].clone().into_tensor(), tensor1(&[4f32]));
}

#[test]
fn a_slice_step_of_0_is_a_load_error_naming_the_node() {
    let err = slice_with_step(0)
        .load_with(&tract_onnx_scatter::onnx())
        .and_then(|m| m.into_typed())
        .unwrap_err();
    assert!(
        chain(&err).contains("Slice node 'out': steps[0] is 0; a step must not be 0"),
        "{}",
        chain(&err)
    );
}

#[test]
fn where_stock_reshape_loads_the_plan_is_stock_s() {
    let dt = DatumType::F32;
    let g = Graph::new(18)
        .input_c("x", dt, &[2, 3, 4])
        .init("shape", &tensor(DatumType::I64, &[3], &[4, 0, -1]))
        .node("Reshape", &["x", "shape"], &["r"], vec![])
        .node(
            "Transpose",
            &["r"],
            &["out"],
            vec![attr_ints("perm", &[2, 1, 0])],
        )
        .output("out", dt);
    let ours = g.load().unwrap().into_optimized().unwrap();
    let stock = g
        .load_with(&tract_onnx_scatter::tract_onnx::onnx())
        .unwrap()
        .into_optimized()
        .unwrap();
    assert_eq!(op_names(&ours), op_names(&stock));
    assert_eq!(
        format!("{:?}", ours.output_fact(0).unwrap()),
        format!("{:?}", stock.output_fact(0).unwrap())
    );
}

/// `x[:, n - 1:]` as exporters write it: `Slice(x, Concat(0, n - 1),
/// Concat(rows, INT64_MAX))` with `n` from `Shape`. tract casts the int64
/// end to a symbolic dim through i32 (INT64_MAX becomes -1).
fn slice_to_the_end_after_a_shape_dim() -> Graph {
    let dt = DatumType::F32;
    Graph::new(13)
        .input_c("x", dt, &[3, 5])
        .init("zero", &tensor(DatumType::I64, &[1], &[0]))
        .init("one", &tensor(DatumType::I64, &[], &[1]))
        .init("axis1", &tensor(DatumType::I64, &[1], &[1]))
        .init("end", &tensor(DatumType::I64, &[1], &[i64::MAX]))
        .init("axes", &tensor(DatumType::I64, &[2], &[0, 1]))
        .node("Shape", &["x"], &["shape"], vec![])
        .node(
            "Gather",
            &["shape", "zero"],
            &["rows"],
            vec![attr_int("axis", 0)],
        )
        .node(
            "Gather",
            &["shape", "axis1"],
            &["n"],
            vec![attr_int("axis", 0)],
        )
        .node("Sub", &["n", "one"], &["start"], vec![])
        .node(
            "Concat",
            &["zero", "start"],
            &["starts"],
            vec![attr_int("axis", 0)],
        )
        .node(
            "Concat",
            &["rows", "end"],
            &["ends"],
            vec![attr_int("axis", 0)],
        )
        .node("Slice", &["x", "starts", "ends", "axes"], &["out"], vec![])
        .output("out", dt)
}

#[test]
fn a_slice_to_int64_max_concatenated_with_a_shape_dim_reaches_the_end() {
    let x = tensor(DatumType::F32, &[3, 5], &(0..15).collect::<Vec<_>>());
    let out = run_with(
        &slice_to_the_end_after_a_shape_dim(),
        &tract_onnx_scatter::onnx(),
        tvec![x.clone().into()],
    )
    .unwrap();
    assert_eq!(
        out[0].clone().into_tensor(),
        tensor(DatumType::F32, &[3, 1], &[4, 9, 14])
    );
    // Stock tract's i32 detour makes the end -1: the slice comes out empty.
    let stock = run_with(
        &slice_to_the_end_after_a_shape_dim(),
        &tract_onnx_scatter::tract_onnx::onnx(),
        tvec![x.into()],
    )
    .unwrap();
    assert_eq!(stock[0].shape(), &[3, 0]);
}

/// `x[:count]` with `count` the number of true entries of `mask`.
fn slice_to_a_nonzero_count() -> Graph {
    let dt = DatumType::F32;
    Graph::new(13)
        .input_c("x", dt, &[4, 2])
        .input_c("mask", DatumType::Bool, &[4])
        .init("zero", &tensor(DatumType::I64, &[1], &[0]))
        .init("one", &tensor(DatumType::I64, &[1], &[1]))
        .init("two", &tensor(DatumType::I64, &[1], &[2]))
        .node("NonZero", &["mask"], &["nz"], vec![])
        .node("Shape", &["nz"], &["nz_shape"], vec![])
        .node("Slice", &["nz_shape", "one", "two"], &["count"], vec![])
        .node("Slice", &["x", "zero", "count", "zero"], &["out"], vec![])
        .output("out", dt)
}

#[test]
fn a_slice_bound_by_a_nonzero_count_is_evaluated_with_the_run_s_symbols() {
    let x = tensor(DatumType::F32, &[4, 2], &(0..8).collect::<Vec<_>>());
    let mask = tensor1(&[true, false, true, true]);
    let out = run_with(
        &slice_to_a_nonzero_count(),
        &tract_onnx_scatter::onnx(),
        tvec![x.clone().into(), mask.clone().into()],
    )
    .unwrap();
    assert_eq!(
        out[0].clone().into_tensor(),
        tensor(DatumType::F32, &[3, 2], &[0, 1, 2, 3, 4, 5])
    );
    let stock = run_with(
        &slice_to_a_nonzero_count(),
        &tract_onnx_scatter::tract_onnx::onnx(),
        tvec![x.into(), mask.into()],
    );
    assert!(stock.is_err_and(|e| chain(&e).contains("Undetermined symbol")));
}

/// `Unique(x)` with all four outputs, flattened or along `axis`.
fn unique_graph(
    shape: &[usize],
    attrs: Vec<tract_onnx_scatter::tract_onnx::pb::AttributeProto>,
) -> Graph {
    Graph::new(13)
        .input_c("x", DatumType::I64, shape)
        .node(
            "Unique",
            &["x"],
            &["y", "indices", "inverse", "counts"],
            attrs,
        )
        .output("y", DatumType::I64)
        .output("indices", DatumType::I64)
        .output("inverse", DatumType::I64)
        .output("counts", DatumType::I64)
}

fn run_all(g: &Graph, inputs: TVec<TValue>) -> Vec<Tensor> {
    run_with(g, &tract_onnx_scatter::onnx(), inputs)
        .unwrap()
        .into_iter()
        .map(|t| t.into_tensor())
        .collect()
}

#[test]
fn unique_sorts_the_flattened_values_by_default_as_onnx_s_example_2() {
    let g = unique_graph(&[6], vec![]);
    let out = run_all(&g, tvec![tensor1(&[2i64, 1, 1, 3, 4, 3]).into()]);
    assert_eq!(out[0], tensor1(&[1i64, 2, 3, 4]));
    assert_eq!(out[1], tensor1(&[1i64, 0, 3, 4]));
    assert_eq!(out[2], tensor1(&[1i64, 0, 0, 2, 3, 2]));
    assert_eq!(out[3], tensor1(&[2i64, 1, 2, 1]));
}

#[test]
fn unique_unsorted_keeps_the_order_of_first_occurrence() {
    let g = unique_graph(&[6], vec![attr_int("sorted", 0)]);
    let out = run_all(&g, tvec![tensor1(&[2i64, 1, 1, 3, 4, 3]).into()]);
    assert_eq!(out[0], tensor1(&[2i64, 1, 3, 4]));
    assert_eq!(out[1], tensor1(&[0i64, 1, 3, 4]));
    assert_eq!(out[2], tensor1(&[0i64, 1, 1, 2, 3, 2]));
    assert_eq!(out[3], tensor1(&[1i64, 2, 2, 1]));
}

#[test]
fn unique_along_an_axis_compares_whole_slices_as_onnx_s_example_3() {
    let g = unique_graph(&[3, 3], vec![attr_int("axis", 0)]);
    let x = tensor2(&[[1i64, 0, 0], [1, 0, 0], [2, 3, 4]]);
    let out = run_all(&g, tvec![x.into()]);
    assert_eq!(out[0], tensor2(&[[1i64, 0, 0], [2, 3, 4]]));
    assert_eq!(out[1], tensor1(&[0i64, 2]));
    assert_eq!(out[2], tensor1(&[0i64, 0, 1]));
    assert_eq!(out[3], tensor1(&[2i64, 1]));
}

#[test]
fn unique_of_floats_puts_nan_last_as_one_value_as_numpy_does() {
    let g = Graph::new(13)
        .input_c("x", DatumType::F32, &[8])
        .node(
            "Unique",
            &["x"],
            &["y", "indices", "inverse", "counts"],
            vec![],
        )
        .output("y", DatumType::F32)
        .output("indices", DatumType::I64)
        .output("inverse", DatumType::I64)
        .output("counts", DatumType::I64);
    let nan = f32::NAN;
    let x = tensor1(&[nan, 2.0f32, nan, 1.0, 2.0, -nan, 0.5, nan]);
    let out = run_all(&g, tvec![x.into()]);
    let y: Vec<f32> = out[0]
        .to_plain_array_view::<f32>()
        .unwrap()
        .iter()
        .copied()
        .collect();
    assert_eq!(&y[..3], &[0.5, 1.0, 2.0]);
    assert!(y.len() == 4 && y[3].is_nan());
    assert_eq!(out[1], tensor1(&[6i64, 3, 1, 0]));
    assert_eq!(out[2], tensor1(&[3i64, 2, 3, 1, 2, 3, 0, 3]));
    assert_eq!(out[3], tensor1(&[1i64, 1, 2, 4]));
}

#[test]
fn unique_with_an_axis_out_of_range_is_an_error_naming_it() {
    let g = unique_graph(&[3, 3], vec![attr_int("axis", 2)]);
    let err = chain(&g.load().and_then(|m| m.into_typed()).map(drop).unwrap_err());
    assert!(err.contains("axis 2") && err.contains("[-2, 1]"), "{err}");
}

/// `ConstantOfShape(ReduceMax(ids) + 1)`: a buffer sized from data.
#[test]
fn constant_of_shape_from_data_values_runs_with_the_run_s_shape() {
    let g = Graph::new(13)
        .input_c("ids", DatumType::I64, &[4])
        .init("one", &tensor(DatumType::I64, &[1], &[1]))
        .node(
            "ReduceMax",
            &["ids"],
            &["max"],
            vec![attr_int("keepdims", 1)],
        )
        .node("Add", &["max", "one"], &["size"], vec![])
        .node("ConstantOfShape", &["size"], &["out"], vec![])
        .output("out", DatumType::F32);
    let out = run_with(
        &g,
        &tract_onnx_scatter::onnx(),
        tvec![tensor1(&[0i64, 4, 2, 1]).into()],
    )
    .unwrap();
    assert_eq!(out[0].clone().into_tensor(), tensor1(&[0f32; 5]));
    let stock = run_with(
        &g,
        &tract_onnx_scatter::tract_onnx::onnx(),
        tvec![tensor1(&[0i64, 4, 2, 1]).into()],
    )
    .unwrap_err();
    assert!(
        chain(&stock).contains("shape input is variable"),
        "{}",
        chain(&stock)
    );
}

#[test]
fn constant_of_shape_from_data_refuses_negative_and_unaddressable_shapes_without_panicking() {
    let g = Graph::new(13)
        .input_c("dims", DatumType::I64, &[2])
        .node("ConstantOfShape", &["dims"], &["out"], vec![])
        .output("out", DatumType::F32);
    for (dims, word) in [
        ([-1i64, 3], "negative"),
        ([i64::MAX, i64::MAX], "more elements"),
    ] {
        let err = run_with(
            &g,
            &tract_onnx_scatter::onnx(),
            tvec![tensor1(&dims).into()],
        )
        .unwrap_err();
        assert!(chain(&err).contains(word), "{dims:?}: {}", chain(&err));
    }
}

/// `y = Expand(1, Shape(x[s:e]))` with `s`, `e` model inputs: tract types
/// the slice's length as a symbol of a scratch scope (`StridedSlice::
/// output_facts` types on a model of its own), gone once typed; the
/// `Expand` then waits on a symbol nothing binds (SLANet's decoder).
fn expand_to_a_run_time_slice() -> Graph {
    Graph::new(13)
        .input_c("x", DatumType::F32, &[6])
        .input_c("s", DatumType::I64, &[1])
        .input_c("e", DatumType::I64, &[1])
        .init("one", &tensor1(&[1f32]))
        .node("Slice", &["x", "s", "e"], &["sliced"], vec![])
        .node("Shape", &["sliced"], &["shape"], vec![])
        .node("Expand", &["one", "shape"], &["y"], vec![])
        .output("y", DatumType::F32)
}

#[test]
fn a_shape_taken_from_a_slice_with_run_time_bounds_is_bound_when_the_slice_runs() {
    let inputs = || {
        tvec![
            tensor1(&[0f32, 1., 2., 3., 4., 5.]).into_tvalue(),
            tensor1(&[1i64]).into_tvalue(),
            tensor1(&[4i64]).into_tvalue(),
        ]
    };
    let out = run_with(
        &expand_to_a_run_time_slice(),
        &tract_onnx_scatter::onnx(),
        inputs(),
    )
    .unwrap();
    assert_eq!(out[0].shape(), [3]);
    let stock = run_with(&expand_to_a_run_time_slice(), &no_overrides(), inputs()).unwrap_err();
    assert!(chain(&stock).contains("Undetermined symbol"), "{stock:#}");
}

/// `Slice(x, starts, ends, [axis], [1])` with its starts and ends fed,
/// on a data input declared `[rows, cols]`.
fn slice_of_fed_bounds(axis: i64) -> Graph {
    let i64s = DatumType::I64;
    Graph::new(13)
        .input(
            "x",
            DatumType::F32,
            &[graph::D::S("rows"), graph::D::S("cols")],
        )
        .input_c("starts", i64s, &[1])
        .input_c("ends", i64s, &[1])
        .init("axes", &tensor(i64s, &[1], &[axis]))
        .init("steps", &tensor(i64s, &[1], &[1]))
        .node(
            "Slice",
            &["x", "starts", "ends", "axes", "steps"],
            &["out"],
            vec![],
        )
        .output("out", DatumType::F32)
}

fn run_slice_of_fed_bounds(axis: i64, x: Tensor) -> TractResult<Tensor> {
    let i64s = |v: i64| tensor(DatumType::I64, &[1], &[v]).into();
    let g = slice_of_fed_bounds(axis);
    let model = g.load_with(&tract_onnx_scatter::onnx())?.into_typed()?;
    let out = model
        .into_runnable()?
        .run(tvec![x.into(), i64s(0), i64s(2)])?;
    Ok(out[0].clone().into_tensor())
}

#[test]
fn a_slice_of_fed_bounds_runs_on_a_valid_axis() {
    let x = tensor(DatumType::F32, &[2, 3], &(0..6).collect::<Vec<_>>());
    assert_eq!(
        run_slice_of_fed_bounds(-1, x).unwrap(),
        tensor(DatumType::F32, &[2, 2], &[0, 1, 3, 4])
    );
}

/// One case of `onnx-testdata/control-flow/float16/` (written by
/// `onnx-testdata/control-flow/gen/float16.py`): a float16 op that
/// accumulates, its float64 result (`reference/output_0.pb`), and what
/// `float16.toml` records of it.
struct Float16Case {
    name: String,
    test: onnx_golden::NodeTest,
    reference: Tensor,
    op: String,
    shape: String,
    /// One float16 step at the reference's largest magnitude.
    ulp: f64,
    /// onnxruntime 1.31.1's largest error against the reference.
    onnxruntime: f64,
}

fn float16_cases() -> Vec<Float16Case> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../onnx-testdata/control-flow/float16");
    let mut cases = vec![];
    for dir in onnx_golden::node_test::discover(&root).unwrap() {
        // The Keras model is a whole network, without a float64 reference.
        if !dir.join("float16.toml").is_file() {
            continue;
        }
        let test = onnx_golden::NodeTest::load(&dir).unwrap();
        let bytes = std::fs::read(dir.join("reference/output_0.pb")).unwrap();
        let reference = onnx_golden::tensor_proto::decode_tensor_bytes(&bytes).unwrap();
        let toml = std::fs::read_to_string(dir.join("float16.toml")).unwrap();
        let field = |key: &str| -> String {
            toml.lines()
                .find_map(|l| l.strip_prefix(key)?.trim().strip_prefix('='))
                .unwrap_or_else(|| panic!("{dir:?}: float16.toml has no {key}"))
                .trim()
                .trim_matches('"')
                .to_string()
        };
        cases.push(Float16Case {
            name: test.name.clone(),
            reference,
            op: field("op "),
            shape: field("shape "),
            ulp: field("ulp ").parse().unwrap(),
            onnxruntime: field("onnxruntime_max_error ").parse().unwrap(),
            test,
        });
    }
    assert!(cases.len() >= 19, "float16 cases: {}", cases.len());
    cases
}

/// The case's output through `onnx`, optimized (the casts the plugin wires
/// must survive `into_optimized`), with the data set's input facts pinned.
fn float16_run(case: &Float16Case, onnx: &impl graph::Loader) -> Tensor {
    float16_try_run(case, onnx).unwrap_or_else(|e| panic!("{}: {e:#}", case.name))
}

/// [`float16_run`], an error where loading or running fails.
fn float16_try_run(case: &Float16Case, onnx: &impl graph::Loader) -> TractResult<Tensor> {
    let set = &case.test.data_sets[0];
    let mut model = onnx.model_for_path(case.test.model_path())?;
    for (ix, input) in set.inputs.iter().enumerate() {
        model.set_input_fact(ix, InferenceFact::dt_shape_from_tensor(input))?;
    }
    let inputs = set
        .inputs
        .iter()
        .cloned()
        .map(|t| t.into_tvalue())
        .collect();
    let mut outputs = model.into_optimized()?.into_runnable()?.run(inputs)?;
    Ok(outputs.remove(0).into_tensor())
}

/// The largest `|got - reference|`; `got` must be float16 of the
/// reference's shape.
fn float16_error(case: &Float16Case, got: &Tensor) -> f64 {
    assert_eq!(got.datum_type(), DatumType::F16, "{}", case.name);
    assert_eq!(got.shape(), case.reference.shape(), "{}", case.name);
    let got = got.cast_to::<f64>().unwrap();
    let got = got.try_as_plain_ram().unwrap();
    let want = case.reference.try_as_plain_ram().unwrap();
    got.as_slice::<f64>()
        .unwrap()
        .iter()
        .zip(want.as_slice::<f64>().unwrap())
        .map(|(g, w)| (g - w).abs())
        .fold(0.0, f64::max)
}

fn float16_stock_accumulation() -> tract_onnx_scatter::Onnx {
    Options {
        float16_accumulation: tract_onnx_scatter::Float16Accumulation::Stock,
        ..Options::default()
    }
    .onnx()
}

/// docs/contract.md's float16 table: every op's largest error against the
/// float64 result through stock tract, the plugin and onnxruntime (printed
/// with `-- --nocapture`); the plugin is within onnxruntime's error or one
/// float16 step of it, on every op.
#[test]
fn float16_ops_that_accumulate_are_within_onnxruntime_s_error_or_one_float16_step() {
    let stock = tract_onnx_scatter::tract_onnx::onnx();
    let plugin = tract_onnx_scatter::onnx();
    println!("| op | input shape | stock tract | plugin | onnxruntime 1.31.1 | float16 ulp |");
    println!("|---|---|---|---|---|---|");
    let mut worse = vec![];
    for case in float16_cases() {
        // Stock tract does not type a float16 `Gemm`.
        let stock_error = match float16_try_run(&case, &stock) {
            Ok(got) => format!("{:.3e}", float16_error(&case, &got)),
            Err(_) => "load error".to_string(),
        };
        let plugin_error = float16_error(&case, &float16_run(&case, &plugin));
        println!(
            "| {} | {} | {stock_error} | {plugin_error:.3e} | {:.3e} | {:.3e} |",
            case.op, case.shape, case.onnxruntime, case.ulp
        );
        if plugin_error > case.onnxruntime.max(case.ulp) {
            worse.push(format!("{}: {plugin_error} (ulp {})", case.name, case.ulp));
        }
    }
    assert!(worse.is_empty(), "past onnxruntime's error: {worse:?}");
}

/// The plugin's float16 `Conv` stays within half a float16 step of the
/// float64 result (float32 accumulation rounded once), where tract's own
/// float16 arithmetic is several steps off; `Float16Accumulation::Stock`
/// gives tract's result back, bit for bit.
#[test]
fn a_float16_conv_is_computed_in_float32_and_the_switch_gives_stock_s_result_back() {
    let case = float16_cases()
        .into_iter()
        .find(|c| c.op == "Conv")
        .unwrap();
    let stock = float16_run(&case, &tract_onnx_scatter::tract_onnx::onnx());
    let plugin = float16_run(&case, &tract_onnx_scatter::onnx());
    let stock_error = float16_error(&case, &stock);
    let plugin_error = float16_error(&case, &plugin);
    assert!(
        plugin_error <= case.ulp / 2.0,
        "plugin {plugin_error}, ulp {}",
        case.ulp
    );
    assert!(stock_error > 2.0 * case.ulp, "stock {stock_error}");
    let switched = float16_run(&case, &float16_stock_accumulation());
    assert_eq!(switched, stock);
}

fn global_lp_pool(p: i64) -> Graph {
    Graph::new(18)
        .input_c("x", DatumType::F32, &[1, 1, 2])
        .node("GlobalLpPool", &["x"], &["y"], vec![attr_int("p", p)])
        .output("y", DatumType::F32)
}

/// ONNX's `GlobalLpPool` is the norm `(Σ |x|^p)^(1/p)`; stock tract divides
/// the sum by the spatial size before the root and drops the absolute
/// value, without an error.
#[test]
fn global_lp_pool_is_onnx_s_norm_where_stock_divides_by_the_spatial_size() {
    let x = || tvec![tensor3(&[[[3f32, -4.0]]]).into_tvalue()];
    let ours = run_with(&global_lp_pool(2), &tract_onnx_scatter::onnx(), x()).unwrap();
    assert_eq!(ours[0].clone().into_tensor(), tensor3(&[[[5f32]]]));
    let ours = run_with(&global_lp_pool(1), &tract_onnx_scatter::onnx(), x()).unwrap();
    assert_eq!(ours[0].clone().into_tensor(), tensor3(&[[[7f32]]]));
    let stock = |p| {
        let out = run_with(
            &global_lp_pool(p),
            &tract_onnx_scatter::tract_onnx::onnx(),
            x(),
        )
        .unwrap();
        out[0].clone().into_tensor()
    };
    // √(25 / 2) and (-1) / 2.
    assert_eq!(stock(2), tensor3(&[[[12.5f32.sqrt()]]]));
    assert_eq!(stock(1), tensor3(&[[[-0.5f32]]]));
    let err = global_lp_pool(0)
        .load_with(&tract_onnx_scatter::onnx())
        .unwrap_err();
    assert!(
        chain(&err)
            .contains("GlobalLpPool node \"y\": attribute p is 0, valid values are integers >= 1"),
        "{}",
        chain(&err)
    );
}
