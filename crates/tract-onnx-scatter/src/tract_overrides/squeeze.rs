//! ONNX `Squeeze` of an axis whose length only the run knows.
//!
//! `x[i]` in a loop body is, for most exporters, a `Slice` of `x` from `i`
//! to `i + 1` (or with a huge step) on the first axis and a `Squeeze` of
//! that axis (tf2onnx's `strided_slice`, jax2onnx's `dynamic_slice`,
//! paddle2onnx's indexing). With the loop index a run-time value, the
//! slice's length on that axis is a symbol (see
//! [`RunTimeValueSlice`](super::slice::RunTimeValueSlice)),
//! and tract's typing of `Squeeze` refuses to remove an axis it cannot
//! prove to be 1 ("Removing non-trivial axis"). ONNX makes it the model's
//! contract: an axis listed in `axes` must be 1. Here each listed axis
//! whose length is not a known number first goes through [`UnitAxis`],
//! which checks at run time that it is 1 (an error naming the node
//! otherwise) and types it as 1; then tract's own typing removes it.
//! Squeezes whose listed axes have known lengths are exactly tract's.

use tract_hir::internal::*;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;

use super::retyped::{Retyped, Typing};

/// The builder registered for `Squeeze`: tract's, typed through
/// [`SymbolicAxes`].
pub(crate) fn squeeze(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    // Below opset 13 the axes are an attribute; from 13 on, input 1.
    let attribute_axes = if ctx.onnx_operator_set_version < 13 {
        node.get_attr_opt_vec::<i64>("axes")?
    } else {
        None
    };
    Retyped::stock_built("Squeeze", ctx, node, SymbolicAxes { attribute_axes })
}

/// Typing that pins, first, every squeezed axis of symbolic length to 1
/// with [`UnitAxis`]; then tract's own typing.
#[derive(Debug, Clone)]
pub(crate) struct SymbolicAxes {
    /// The `axes` attribute (opsets 1 and 11); `None` from 13 on, where they
    /// are input 1, or when absent (every axis of length 1: nothing to pin).
    attribute_axes: Option<Vec<i64>>,
}

impl Typing for SymbolicAxes {
    fn to_typed(
        &self,
        stock: &dyn InferenceOp,
        source: &InferenceModel,
        node: &InferenceNode,
        target: &mut TypedModel,
        mapping: &HashMap<OutletId, OutletId>,
    ) -> TractResult<TVec<OutletId>> {
        let axes: Option<Vec<i64>> = match (&self.attribute_axes, node.inputs.get(1)) {
            (Some(axes), _) => Some(axes.clone()),
            (None, Some(input)) => target
                .outlet_fact(mapping[input])?
                .konst
                .as_ref()
                .map(|k| -> TractResult<Vec<i64>> {
                    Ok(k.cast_to::<i64>()?
                        .try_as_plain_ram()?
                        .as_slice::<i64>()?
                        .to_vec())
                })
                .transpose()?,
            (None, None) => None,
        };
        let Some(axes) = axes else {
            return stock.to_typed(source, node, target, mapping);
        };
        let mut data = mapping[&node.inputs[0]];
        let rank = target.outlet_fact(data)?.rank() as i64;
        for axis in axes {
            let axis = if axis < 0 { axis + rank } else { axis };
            if !(0..rank).contains(&axis) {
                // Out of range: tract's typing gives the error.
                continue;
            }
            let axis = axis as usize;
            if target.outlet_fact(data)?.shape[axis].to_i64().is_ok() {
                continue;
            }
            data = target.wire_node(
                format!("{}.unit-axis-{axis}", node.name),
                UnitAxis {
                    axis,
                    node: node.name.clone(),
                },
                &[data],
            )?[0];
        }
        let mut mapping = mapping.clone();
        mapping.insert(node.inputs[0], data);
        stock.to_typed(source, node, target, &mapping)
    }
}

/// The input unchanged, its length on `axis` typed 1: at run time, an
/// error naming `node` unless that length is 1 (ONNX `Squeeze`'s contract).
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub(crate) struct UnitAxis {
    /// The input axis squeezed, whose length must be 1.
    pub(crate) axis: usize,
    /// The ONNX `Squeeze` node, for the error.
    pub(crate) node: String,
}

impl Op for UnitAxis {
    fn name(&self) -> StaticName {
        "UnitAxis".into()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        Ok(vec![format!("axis {} of length 1", self.axis)])
    }

    op_as_typed_op!();
}

impl EvalOp for UnitAxis {
    op_out_of_plan!();

    fn eval(&self, _ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let input = args_1!(inputs);
        ensure!(
            input.shape().get(self.axis) == Some(&1),
            "Squeeze node '{}': axis {} has length {} in this run (input shape {:?}); a squeezed axis must be 1",
            self.node,
            self.axis,
            input
                .shape()
                .get(self.axis)
                .map_or("none".to_string(), |d| d.to_string()),
            input.shape()
        );
        Ok(tvec!(input))
    }
}

impl TypedOp for UnitAxis {
    as_op!();

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        let mut shape: TVec<TDim> = inputs[0].shape.iter().cloned().collect();
        ensure!(
            self.axis < shape.len(),
            "Squeeze node '{}': axis {} of a rank {} input",
            self.node,
            self.axis,
            shape.len()
        );
        shape[self.axis] = 1.to_dim();
        Ok(tvec!(inputs[0].datum_type.fact(shape)))
    }
}
