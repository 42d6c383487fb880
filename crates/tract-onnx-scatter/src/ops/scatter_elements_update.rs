//! The typed OpenVINO `ScatterElementsUpdate-12` op whose axis is an input
//! known only at run time. With a constant axis the ONNX front end wires
//! [`ScatterElements`] directly, and `declutter` turns this op into one as
//! soon as the axis becomes constant.

use scatter_kernels::Reduction;
use tract_core::internal::*;

use crate::ops::ScatterElements;
use crate::ops::shapes::{expect_rank, known_different};
use crate::ops::types;
use crate::site::NodeSite;

/// [`ScatterElements`] with OpenVINO's `reduction`/`use_init_val`, taking
/// the axis as a fourth input: an int32/int64 scalar or 1-element tensor in
/// `[-r, r - 1]`, read at run time before anything else is done.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ScatterElementsUpdate {
    pub site: NodeSite,
    pub reduction: Reduction,
    pub use_init_val: bool,
}

/// The value of an axis input: int32/int64, exactly one element.
pub fn axis_value(site: &NodeSite, axis: &Tensor, symbols: &SymbolValues) -> TractResult<i64> {
    let dt = axis.datum_type();
    if !matches!(dt, DatumType::I32 | DatumType::I64 | DatumType::TDim) {
        bail!(site.error(format!(
            "axis: input 'axis' has element type {}, expected int32 or int64",
            crate::ops::types::onnx_type(dt)
        )));
    }
    if axis.len() != 1 {
        bail!(site.error(format!(
            "axis: input 'axis' has shape {:?}, expected a scalar or a 1-element tensor",
            axis.shape()
        )));
    }
    let axis = types::plain_indices(site, "axis", axis, symbols)?;
    Ok(match axis.datum_type() {
        DatumType::I32 => types::slice::<i32>(&axis)?[0] as i64,
        _ => types::slice::<i64>(&axis)?[0],
    })
}

impl ScatterElementsUpdate {
    /// The [`ScatterElements`] this op is for `axis` on data of rank `rank`.
    pub fn with_axis(
        &self,
        axis: &Tensor,
        rank: usize,
        symbols: &SymbolValues,
    ) -> TractResult<ScatterElements> {
        let axis = axis_value(&self.site, axis, symbols)?;
        let axis = crate::ops::scatter_elements::axis_position(&self.site, axis, rank)?;
        Ok(ScatterElements {
            site: self.site.clone(),
            axis,
            reduction: self.reduction,
            use_init_val: self.use_init_val,
            output_pool: None,
        })
    }

    fn check_facts(
        &self,
        data: &TypedFact,
        indices: &TypedFact,
        updates: &TypedFact,
        axis: &TypedFact,
    ) -> TractResult<()> {
        let site = &self.site;
        types::check_indices_type(site, "indices", indices.datum_type)?;
        types::check_same_type(site, data.datum_type, updates.datum_type)?;
        types::check_reduction_for(site, data.datum_type, self.reduction)?;
        if let Some(konst) = &axis.konst
            && types::known_indices(site, "axis", konst)?.is_some()
        {
            // A constant axis: the full ScatterElements checks apply now.
            let op = self.with_axis(konst, data.rank(), &SymbolValues::default())?;
            op.output_facts(&[data, indices, updates])?;
            return Ok(());
        }
        if !matches!(
            axis.datum_type,
            DatumType::I32 | DatumType::I64 | DatumType::TDim
        ) {
            bail!(site.error(format!(
                "axis: input 'axis' has element type {}, expected int32 or int64",
                crate::ops::types::onnx_type(axis.datum_type)
            )));
        }
        if let Ok(n) = axis.shape.volume().to_i64()
            && n != 1
        {
            bail!(site.error(format!(
                "axis: input 'axis' has shape {:?}, expected a scalar or a 1-element tensor",
                axis.shape
            )));
        }
        let rank = data.rank();
        if rank == 0 {
            bail!(site.error(format!(
                "rank: data has rank 0 (shape {:?}), expected rank >= 1",
                data.shape
            )));
        }
        expect_rank(site, "indices", indices, rank, "the rank of data")?;
        expect_rank(site, "updates", updates, rank, "the rank of indices")?;
        if updates
            .shape
            .iter()
            .zip(indices.shape.iter())
            .any(|(u, i)| known_different(u, i))
        {
            bail!(site.error(format!(
                "shape: updates has shape {:?}, expected {:?} (the shape of indices)",
                updates.shape, indices.shape
            )));
        }
        Ok(())
    }
}

impl Op for ScatterElementsUpdate {
    fn name(&self) -> StaticName {
        "ScatterElementsUpdate".into()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        Ok(vec![format!(
            "axis: (input) reduction: {} use_init_val: {}",
            self.reduction, self.use_init_val
        )])
    }

    op_as_typed_op!();
}

fn check_arity(site: &NodeSite, n: usize) -> TractResult<()> {
    if n != 4 {
        bail!(site.error(format!(
            "expects 4 inputs (data, indices, updates, axis), got {n}"
        )));
    }
    Ok(())
}

impl EvalOp for ScatterElementsUpdate {
    op_out_of_plan!();

    fn eval(&self, ctx: &EvalContext, mut inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        check_arity(&self.site, inputs.len())?;
        let axis = inputs.pop().expect("4 inputs");
        let op = self.with_axis(&axis, inputs[0].rank(), ctx.symbols)?;
        op.eval(ctx, inputs)
    }
}

impl TypedOp for ScatterElementsUpdate {
    as_op!();

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        check_arity(&self.site, inputs.len())?;
        self.check_facts(inputs[0], inputs[1], inputs[2], inputs[3])?;
        Ok(tvec!(inputs[0].datum_type.fact(inputs[0].shape.clone())))
    }

    /// A constant axis makes this a plain [`ScatterElements`].
    fn declutter(
        &self,
        model: &TypedModel,
        node: &TypedNode,
    ) -> TractResult<Option<TypedModelPatch>> {
        let facts = model.node_input_facts(node.id)?;
        rule_if!(facts.len() == 4);
        rule_if_some!(axis = &facts[3].konst);
        rule_if_some!(_known = types::known_indices(&self.site, "axis", axis)?);
        let op = self.with_axis(axis, facts[0].rank(), &SymbolValues::default())?;
        Ok(Some(TypedModelPatch::replace_single_op(
            model,
            node,
            &node.inputs[..3],
            op,
        )?))
    }

    fn cost(&self, inputs: &[&TypedFact]) -> TractResult<TVec<(Cost, TDim)>> {
        Ok(tvec!((
            Cost::Buffer(inputs[0].datum_type),
            inputs[2].shape.volume()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opset::ScatterOp;

    fn op(reduction: Reduction, use_init_val: bool) -> ScatterElementsUpdate {
        ScatterElementsUpdate {
            site: NodeSite::new(ScatterOp::ScatterElementsUpdate, "seu", None),
            reduction,
            use_init_val,
        }
    }

    fn run(op: &ScatterElementsUpdate, axis: Tensor) -> TractResult<Tensor> {
        let inputs = tvec!(
            tensor1(&[2i32, 3, 4, 6]).into_tvalue(),
            tensor1(&[1i64, 0, 0, 2, 3, 2]).into_tvalue(),
            tensor1(&[10i32, 20, 30, 40, 70, 60]).into_tvalue(),
            axis.into_tvalue()
        );
        Ok(op
            .eval(&EvalContext::out_of_plan(), inputs)?
            .remove(0)
            .into_tensor())
    }

    #[test]
    fn the_openvino_spec_example_runs_with_an_axis_read_at_run_time() {
        assert_eq!(
            run(&op(Reduction::Add, false), tensor0(0i64)).unwrap(),
            tensor1(&[50i32, 10, 100, 70])
        );
        assert_eq!(
            run(&op(Reduction::Add, false), tensor1(&[-1i32])).unwrap(),
            tensor1(&[50i32, 10, 100, 70])
        );
    }

    #[test]
    fn a_bad_axis_input_is_an_axis_error() {
        for axis in [
            tensor0(1i64),
            tensor0(-2i32),
            tensor1(&[0i64, 0]),
            tensor0(0f32),
        ] {
            let err = run(&op(Reduction::None, true), axis)
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with("ScatterElementsUpdate node 'seu': axis"),
                "{err}"
            );
        }
    }

    #[test]
    fn declutter_turns_a_constant_axis_into_scatter_elements() {
        let mut model = TypedModel::default();
        let data = model.add_source("data", f32::fact([2, 3])).unwrap();
        let indices = model.add_const("indices", tensor2(&[[0i64, 2]])).unwrap();
        let updates = model.add_source("updates", f32::fact([1, 2])).unwrap();
        let axis = model.add_const("axis", tensor0(-1i64)).unwrap();
        let out = model
            .wire_node(
                "seu",
                op(Reduction::Mean, false),
                &[data, indices, updates, axis],
            )
            .unwrap();
        model.select_output_outlets(&out).unwrap();
        let model = model.into_decluttered().unwrap();
        let se = model
            .nodes()
            .iter()
            .find_map(|n| n.op_as::<ScatterElements>())
            .expect("a ScatterElements");
        assert_eq!(
            (se.axis, se.reduction, se.use_init_val),
            (1, Reduction::Mean, false)
        );
        assert!(
            model
                .nodes()
                .iter()
                .all(|n| n.op_as::<ScatterElementsUpdate>().is_none())
        );
    }

    #[test]
    fn bool_mean_is_refused_by_the_facts() {
        let data = bool::fact([2]);
        let indices = i64::fact([1]);
        let axis = i64::fact([1]);
        let err = op(Reduction::Mean, true)
            .output_facts(&[&data, &indices, &data, &axis])
            .unwrap_err();
        assert!(err.to_string().contains("reduction"), "{err}");
    }
}
