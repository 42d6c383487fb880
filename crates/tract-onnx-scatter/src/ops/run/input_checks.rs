//! The checks every scatter of `(data, indices, updates)` runs before it
//! touches its data, in one order: input count, index type, data/updates
//! type, reduction; then, in the op, its own type rule, shapes (the
//! kernels' plan) and index values (the kernels' check). At run the op
//! calls [`scatter_inputs`] once; at load [`output_facts`] runs the same
//! checks on facts (symbolic dims through the kernels' `check_shapes`), so
//! a mistake the facts already show reads as the run would report it.

use std::borrow::Cow;

use scatter_kernels::{
    Bfloat16InFloat32, ComplexParts, Element, IndexValue, Reduction, ScatterError, UpdateReduction,
};
use tract_core::internal::*;
use tract_core::tract_data::TooEarly;

use crate::ops::element_dispatch::{dispatch_element, onnx_type, with_index_slice};
use crate::ops::shapes::{SymDim, all_concrete, sym_dims};
use crate::parse::onnx_types::OnnxElement;
use crate::parse::site::NodeSite;

/// A scatter's inputs once [`scatter_inputs`] accepted them.
pub(crate) struct ScatterInputs {
    /// The data input, untouched.
    pub(crate) data: TValue,
    /// The indices as int32 or int64 values: the input itself, or its
    /// TDim values evaluated with the run's symbols.
    pub(crate) indices: TValue,
    /// The updates input, of data's type.
    pub(crate) updates: TValue,
    /// Whether someone besides this call holds the indices (a constant,
    /// the caller): they may come back, and their check may be kept.
    pub(crate) indices_held_elsewhere: bool,
}

/// The shared run-time checks of a scatter of `(data, indices, updates)`
/// holding `element` values with `reduction`: input count, index type,
/// data/updates type and reduction, each an error naming `site`.
pub(crate) fn scatter_inputs(
    site: &NodeSite,
    inputs: TVec<TValue>,
    symbols: &SymbolValues,
    element: OnnxElement,
    reduction: UpdateReduction,
) -> TractResult<ScatterInputs> {
    expect_three_inputs(site, inputs.len())?;
    let (data, indices, updates) = args_3!(inputs);
    check_indices_type(site, "indices", indices.datum_type())?;
    check_same_type(site, data.datum_type(), updates.datum_type())?;
    check_reduction_for(site, data.datum_type(), element, reduction)?;
    let (indices, indices_held_elsewhere) = match plain_indices(site, "indices", &indices, symbols)?
    {
        Cow::Borrowed(_) => {
            let held = indices
                .as_arc_tensor()
                .is_some_and(|a| std::sync::Arc::strong_count(a) >= 2);
            (indices, held)
        }
        Cow::Owned(values) => (values.into_tvalue(), false),
    };
    Ok(ScatterInputs {
        data,
        indices,
        updates,
        indices_held_elsewhere,
    })
}

/// `axis` as a position in `[0, rank - 1]`, or the kernels' "axis" error
/// for this node (the ScatterElements family: Scatter, ScatterElements,
/// ScatterElementsUpdate, ScatterElementsGrad).
pub(crate) fn elements_axis(site: &NodeSite, axis: i64, rank: usize) -> TractResult<usize> {
    scatter_kernels::elements_axis(axis, rank).map_err(|e| site.scatter_error(e))
}

/// An op's own rules, which the load-time checks ([`output_facts`]) call.
pub(crate) trait ScatterRules {
    /// The kernels' plan for concrete shapes.
    type Plan;

    /// The node the op was built from, named by every error.
    fn site(&self) -> &NodeSite;

    /// The op's reduction, checked against the data type before the
    /// shapes.
    fn reduction(&self) -> UpdateReduction;

    /// The ONNX element type data and updates hold: for complex values,
    /// the plan and its checks see the complex shapes.
    fn onnx_element(&self) -> OnnxElement;

    /// A type rule of this op beyond the reduction's (none by default).
    fn check_op_type(&self, dt: DatumType) -> TractResult<()> {
        let _ = dt;
        Ok(())
    }

    /// The plan's shape rules on dims the facts may not know.
    fn check_fact_shapes(
        &self,
        data: &[SymDim],
        indices: &[SymDim],
        updates: &[SymDim],
    ) -> Result<(), ScatterError>;

    /// The plan for concrete shapes, or the error naming this node.
    fn plan(&self, data: &[usize], indices: &[usize], updates: &[usize])
    -> TractResult<Self::Plan>;

    /// The plan's check of index values.
    fn check_index_values<I: IndexValue>(
        plan: &Self::Plan,
        indices: &[I],
    ) -> Result<(), ScatterError>;
}

/// The output fact of `op` (data's), once the checks on facts accepted the
/// inputs: everything the facts know, constant index values included.
pub(crate) fn output_facts<S: ScatterRules>(
    op: &S,
    inputs: &[&TypedFact],
) -> TractResult<TVec<TypedFact>> {
    let site = op.site();
    expect_three_inputs(site, inputs.len())?;
    let (data, indices, updates) = (inputs[0], inputs[1], inputs[2]);
    check_indices_type(site, "indices", indices.datum_type)?;
    check_same_type(site, data.datum_type, updates.datum_type)?;
    check_reduction_for(site, data.datum_type, op.onnx_element(), op.reduction())?;
    op.check_op_type(data.datum_type)?;
    let element = op.onnx_element();
    let (d, i, u) = (sym_dims(data), sym_dims(indices), sym_dims(updates));
    let (d, u) = element.data_and_updates_shapes(site, &d, &u)?;
    op.check_fact_shapes(d, &i, u)
        .map_err(|e| site.scatter_error(e))?;
    if let Some(shapes) = all_concrete(&[data, indices, updates]) {
        let (d, u) = element.data_and_updates_shapes(site, shapes[0], shapes[2])?;
        let plan = op.plan(d, shapes[1], u)?;
        // Constant indices are checked now: the error surfaces at load.
        if let Some(konst) = &indices.konst
            && let Some(konst) = known_indices(site, "indices", konst)?
        {
            with_index_slice!(konst, |idx| S::check_index_values(&plan, idx))
                .map_err(|e| site.scatter_error(e))?;
        }
    }
    Ok(tvec!(data.datum_type.fact(data.shape.clone())))
}

/// The three-input ops (data, indices, updates) refuse any other count.
pub(crate) fn expect_three_inputs(site: &NodeSite, given: usize) -> TractResult<()> {
    if given != 3 {
        bail!(site.error(format!(
            "expects 3 inputs (data, indices, updates), got {given}"
        )));
    }
    Ok(())
}

/// data and updates must be of one type: no promotion.
pub(crate) fn check_same_type(
    site: &NodeSite,
    data: DatumType,
    updates: DatumType,
) -> TractResult<()> {
    if data != updates {
        bail!(site.error(format!(
            "type: updates has element type {} but data has {}; they must be the same (no promotion)", onnx_type(updates), onnx_type(data)
        )));
    }
    Ok(())
}

/// Indices are int32 or int64; TDim is how tract carries int64 shape
/// arithmetic.
pub(crate) fn check_indices_type(site: &NodeSite, name: &str, dt: DatumType) -> TractResult<()> {
    if !matches!(dt, DatumType::I32 | DatumType::I64 | DatumType::TDim) {
        bail!(site.error(format!(
            "type: {name} has element type {}, expected int32 or int64",
            onnx_type(dt)
        )));
    }
    Ok(())
}

/// The data type is one the ops hold and it can do `reduction` (an ONNX
/// one, or OpenVINO's `mean`); for data holding another ONNX type
/// (`element`), that type can.
pub(crate) fn check_reduction_for(
    site: &NodeSite,
    dt: DatumType,
    element: OnnxElement,
    reduction: UpdateReduction,
) -> TractResult<()> {
    fn check<T: Element>(site: &NodeSite, r: UpdateReduction) -> TractResult<()> {
        T::check_reduction(r).map_err(|e| site.scatter_error(e))
    }
    match (element, dt) {
        (OnnxElement::Native, _) => (),
        (OnnxElement::Bfloat16, DatumType::F32) => {
            return check::<Bfloat16InFloat32>(site, reduction);
        }
        (OnnxElement::Complex, DatumType::F32) => {
            return check::<ComplexParts<f32>>(site, reduction);
        }
        (OnnxElement::Complex, DatumType::F64) => {
            return check::<ComplexParts<f64>>(site, reduction);
        }
        (element, dt) => bail!(site.error(format!(
            "type: data of element type {} cannot hold {} values",
            onnx_type(dt),
            element.as_str()
        ))),
    }
    dispatch_element!(dt, site, "data", |T| { check::<T>(site, reduction) }, tdim => {
        symbolic_reduction(site, reduction).map(drop)
    })
}

/// `reduction` as symbolic (TDim) data can do it: an ONNX one; `mean`
/// is refused.
pub(crate) fn symbolic_reduction(
    site: &NodeSite,
    reduction: UpdateReduction,
) -> TractResult<Reduction> {
    match reduction {
        UpdateReduction::Onnx(r) => Ok(r),
        UpdateReduction::Mean => {
            bail!(site.error("reduction 'mean' is not supported for symbolic (TDim) data"))
        }
    }
}

/// `t` as int32 or int64 indices: borrowed when it already is one, a
/// concrete int64 copy when tract carries it as TDim (shape arithmetic),
/// each value evaluated with `symbols` (the run's, in a plan). A value
/// still symbolic is an error whose root cause is tract's `TooEarly`:
/// ahead of the run (analysis, constant folding) that means "not yet",
/// which tract skips.
pub(crate) fn plain_indices<'a>(
    site: &NodeSite,
    name: &str,
    t: &'a Tensor,
    symbols: &SymbolValues,
) -> TractResult<Cow<'a, Tensor>> {
    match t.datum_type() {
        DatumType::I32 | DatumType::I64 => Ok(Cow::Borrowed(t)),
        DatumType::TDim => {
            let values = t
                .try_as_plain_ram()?
                .as_slice::<TDim>()?
                .iter()
                .map(|d| d.eval(symbols).to_i64())
                .collect::<Result<Vec<i64>, TooEarly>>()
                .map_err(|e| {
                    anyhow::Error::from(e).context(format!(
                        "{site}: type: {name} holds symbolic values that are not known yet"
                    ))
                })?;
            Ok(Cow::Owned(Tensor::from_shape(t.shape(), &values)?))
        }
        dt => bail!(site.error(format!(
            "type: {name} has element type {}, expected int32 or int64",
            onnx_type(dt)
        ))),
    }
}

/// Constant indices for a check at load: `None` while they hold symbols
/// only the run binds (the run checks them).
pub(crate) fn known_indices<'a>(
    site: &NodeSite,
    name: &str,
    konst: &'a Tensor,
) -> TractResult<Option<Cow<'a, Tensor>>> {
    match plain_indices(site, name, konst, &SymbolValues::default()) {
        Ok(indices) => Ok(Some(indices)),
        Err(e) if e.root_cause().is::<TooEarly>() => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    //! One mistake, one message: a shape mistake the facts already show at load
    //! (`output_facts`, with a symbolic dim) reads as the run's message for the
    //! same mistake on concrete shapes, the symbol shown where the run shows its
    //! value. Both come from the kernels' rules (`ElementsPlan::check_shapes`
    //! and the like), one family at a time.

    use crate::ops::scatter_grad::{GradKind, LdaCoeff};
    use crate::ops::{
        ScatterElements, ScatterElementsUpdate, ScatterGrad, ScatterNd, TensorScatter,
    };
    use crate::opset::ScatterOp;
    use crate::scatter_kernels::{GradSpec, Reduction, TensorScatterMode};
    use crate::site::NodeSite;
    use crate::tract_core::internal::*;
    use crate::tract_core::num_traits;

    /// A dim of a fact: a number, or the symbol `N` (or `B`).
    enum D {
        V(usize),
        S(&'static str),
    }
    use D::{S, V};

    fn fact(scope: &SymbolScope, dt: DatumType, dims: &[D]) -> TypedFact {
        let dims: TVec<TDim> = dims
            .iter()
            .map(|d| match d {
                V(v) => TDim::Val(*v as i64),
                S(s) => TDim::Sym(scope.sym(s)),
            })
            .collect();
        dt.fact(dims)
    }

    /// The message typing gives on `facts` (no context: the op's own error).
    fn load_message(op: &dyn TypedOp, facts: &[TypedFact]) -> String {
        let facts: TVec<&TypedFact> = facts.iter().collect();
        match op.output_facts(&facts) {
            Ok(out) => panic!("typed to {out:?}, expected an error at load"),
            Err(e) => format!("{e:#}"),
        }
    }

    /// The message running gives on `inputs`.
    fn run_message(op: &dyn EvalOp, inputs: TVec<TValue>) -> String {
        match op.eval(&EvalContext::out_of_plan(), inputs) {
            Ok(out) => panic!("ran to {out:?}, expected an error at run"),
            Err(e) => format!("{e:#}"),
        }
    }

    fn zeros<T: Datum + num_traits::Zero>(shape: &[usize]) -> TValue {
        Tensor::zero::<T>(shape).unwrap().into_tvalue()
    }

    /// `load`, each symbolic shape replaced by the run's, is `run`; and `load`
    /// shows the symbolic shapes.
    fn assert_same_but_symbols(load: &str, run: &str, shapes: &[(&str, &str)]) {
        let mut concrete = load.to_string();
        for (symbolic, value) in shapes {
            assert!(
                load.contains(symbolic),
                "load message does not show {symbolic}: {load}"
            );
            concrete = concrete.replace(symbolic, value);
        }
        assert_eq!(concrete, run, "load: {load}");
    }

    fn site(op: ScatterOp, opset: Option<i64>) -> NodeSite {
        NodeSite::new(op, "scatter_node", opset)
    }

    #[test]
    fn scatter_elements_indices_of_another_rank_than_symbolic_data_read_alike_at_load_and_at_run() {
        let scope = SymbolScope::default();
        let op = ScatterElements::onnx(
            site(ScatterOp::ScatterElements, Some(13)),
            0,
            Reduction::None,
        );
        let load = load_message(
            &op,
            &[
                fact(&scope, f32::datum_type(), &[S("N"), V(3)]),
                fact(&scope, i64::datum_type(), &[V(3)]),
                fact(&scope, f32::datum_type(), &[V(3)]),
            ],
        );
        let run = run_message(
            &op,
            tvec![
                zeros::<f32>(&[4, 3]),
                zeros::<i64>(&[3]),
                zeros::<f32>(&[3])
            ],
        );
        assert!(
            load.contains("rank: indices has rank 1, expected 2"),
            "{load}"
        );
        assert_same_but_symbols(&load, &run, &[("[N, 3]", "[4, 3]")]);
    }

    #[test]
    fn scatter_elements_indices_longer_than_symbolic_data_off_the_axis_read_alike_at_load_and_at_run()
     {
        let scope = SymbolScope::default();
        let op = ScatterElements::onnx(
            site(ScatterOp::ScatterElements, Some(13)),
            1,
            Reduction::None,
        );
        let load = load_message(
            &op,
            &[
                fact(&scope, f32::datum_type(), &[V(3), S("N")]),
                fact(&scope, i64::datum_type(), &[V(4), V(2)]),
                fact(&scope, f32::datum_type(), &[V(4), V(2)]),
            ],
        );
        let run = run_message(
            &op,
            tvec![
                zeros::<f32>(&[3, 5]),
                zeros::<i64>(&[4, 2]),
                zeros::<f32>(&[4, 2])
            ],
        );
        assert!(
            load.contains("shape: indices has shape [4, 2], expected dim 0 <= 3"),
            "{load}"
        );
        assert_same_but_symbols(&load, &run, &[("[3, N]", "[3, 5]")]);
    }

    #[test]
    fn scatter_nd_updates_unlike_indices_prefix_and_symbolic_data_suffix_read_alike_at_load_and_at_run()
     {
        let scope = SymbolScope::default();
        let op = ScatterNd::onnx(site(ScatterOp::ScatterNd, Some(18)), Reduction::None);
        let load = load_message(
            &op,
            &[
                fact(&scope, f32::datum_type(), &[S("N"), V(3)]),
                fact(&scope, i64::datum_type(), &[V(2), V(1)]),
                fact(&scope, f32::datum_type(), &[V(2), V(2)]),
            ],
        );
        let run = run_message(
            &op,
            tvec![
                zeros::<f32>(&[4, 3]),
                zeros::<i64>(&[2, 1]),
                zeros::<f32>(&[2, 2])
            ],
        );
        assert!(
            load.contains("shape: updates has shape [2, 2], expected [2, 3]"),
            "{load}"
        );
        assert_same_but_symbols(&load, &run, &[("[N, 3]", "[4, 3]")]);
    }

    #[test]
    fn scatter_nd_index_tuples_longer_than_symbolic_data_rank_read_alike_at_load_and_at_run() {
        let scope = SymbolScope::default();
        let op = ScatterNd::onnx(site(ScatterOp::ScatterNd, Some(18)), Reduction::None);
        let load = load_message(
            &op,
            &[
                fact(&scope, f32::datum_type(), &[S("N"), V(3)]),
                fact(&scope, i64::datum_type(), &[V(2), V(3)]),
                fact(&scope, f32::datum_type(), &[V(2)]),
            ],
        );
        let run = run_message(
            &op,
            tvec![
                zeros::<f32>(&[4, 3]),
                zeros::<i64>(&[2, 3]),
                zeros::<f32>(&[2])
            ],
        );
        assert!(load.contains("has tuples of length 3"), "{load}");
        assert_same_but_symbols(&load, &run, &[("[N, 3]", "[4, 3]")]);
    }

    #[test]
    fn tensor_scatter_update_longer_than_a_symbolic_batch_cache_reads_alike_at_load_and_at_run() {
        let scope = SymbolScope::default();
        let op = TensorScatter {
            site: site(ScatterOp::TensorScatter, Some(24)),
            axis: 2,
            mode: TensorScatterMode::Linear,
            output_pool: None,
        };
        let load = load_message(
            &op,
            &[
                fact(&scope, f32::datum_type(), &[S("B"), V(2), V(8), V(4)]),
                fact(&scope, f32::datum_type(), &[S("B"), V(2), V(9), V(4)]),
            ],
        );
        let run = run_message(
            &op,
            tvec![zeros::<f32>(&[1, 2, 8, 4]), zeros::<f32>(&[1, 2, 9, 4])],
        );
        assert!(load.contains("shape: update has shape"), "{load}");
        assert_same_but_symbols(
            &load,
            &run,
            &[
                ("[B, 2, 8, 4]", "[1, 2, 8, 4]"),
                ("[B, 2, 9, 4]", "[1, 2, 9, 4]"),
            ],
        );
    }

    #[test]
    fn scatter_elements_update_indices_of_another_rank_than_symbolic_data_read_alike_at_load_and_at_run()
     {
        let scope = SymbolScope::default();
        let op = ScatterElementsUpdate {
            site: site(ScatterOp::ScatterElementsUpdate, None),
            reduction: Reduction::None.into(),
            use_init_val: true,
        };
        // The axis is an input the facts do not know: the rules needing it wait.
        let load = load_message(
            &op,
            &[
                fact(&scope, f32::datum_type(), &[S("N"), V(3)]),
                fact(&scope, i64::datum_type(), &[V(3)]),
                fact(&scope, f32::datum_type(), &[V(3)]),
                fact(&scope, i64::datum_type(), &[]),
            ],
        );
        let run = run_message(
            &op,
            tvec![
                zeros::<f32>(&[4, 3]),
                zeros::<i64>(&[3]),
                zeros::<f32>(&[3]),
                tensor0(0i64).into_tvalue()
            ],
        );
        assert!(
            load.contains("rank: indices has rank 1, expected 2"),
            "{load}"
        );
        assert_same_but_symbols(&load, &run, &[("[N, 3]", "[4, 3]")]);
    }

    #[test]
    fn scatter_grad_output_unlike_symbolic_data_reads_alike_at_load_and_at_run() {
        let scope = SymbolScope::default();
        for (op, kind, indices) in [
            (
                ScatterOp::ScatterElementsGrad,
                GradKind::Elements { axis: 0 },
                [2, 3],
            ),
            (ScatterOp::ScatterNdGrad, GradKind::Nd, [2, 1]),
        ] {
            let op = ScatterGrad {
                site: site(op, None),
                kind,
                spec: GradSpec::onnx(Reduction::Add),
                lda_coeff: LdaCoeff(1.0),
            };
            let load = load_message(
                &op,
                &[
                    fact(&scope, f32::datum_type(), &[S("N"), V(3)]),
                    fact(&scope, i64::datum_type(), &[V(indices[0]), V(indices[1])]),
                    fact(&scope, f32::datum_type(), &[V(2), V(3)]),
                    fact(&scope, f32::datum_type(), &[S("N"), V(2)]),
                ],
            );
            let run = run_message(
                &op,
                tvec![
                    zeros::<f32>(&[4, 3]),
                    zeros::<i64>(&indices),
                    zeros::<f32>(&[2, 3]),
                    zeros::<f32>(&[4, 2])
                ],
            );
            assert!(load.contains("shape: grad_output has shape"), "{load}");
            assert_same_but_symbols(&load, &run, &[("[N, 2]", "[4, 2]"), ("[N, 3]", "[4, 3]")]);
        }
    }
}
