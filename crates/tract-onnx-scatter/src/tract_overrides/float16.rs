//! float16 ops that accumulate, computed in float32 and rounded once to float16, as onnxruntime
//! computes them.
//!
//! tract 0.23.9 computes a float16 `Conv`, `ConvTranspose`, `CumSum`, `ReduceProd`, softmax,
//! some normalizations and `GlobalAveragePool` in float16 arithmetic (and does not type a
//! float16 `Gemm` at all): over an accumulation of hundreds of terms the result drifts several
//! float16 steps from the exact one. Keras mixed-precision models compute their convolutions in
//! float16. For the ops of [`IN_FLOAT32`] the plugin keeps tract's op and its analysis (the
//! inference facts stay float16) and, where an input is float16, types tract's op on float32
//! between casts (`InFloat32`); a model without a float16 input to such an op is typed
//! exactly as stock tract types it.
//!
//! Contract, and the measured errors of every op (stock, plugin, onnxruntime): docs/contract.md,
//! "float16 arithmetic".

use tract_hir::internal::*;
use tract_onnx::model::{OnnxOpRegister, ParsingContext};
use tract_onnx::pb::NodeProto;

use super::retyped::{Fence, Retyped, Typing, fenced, is_fenced_stock, stock};

/// How the plugin computes the float16 ops that accumulate ([`IN_FLOAT32`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Float16Accumulation {
    /// In float32, rounded once to float16, as onnxruntime computes them
    /// (the default): within one float16 step of the exact result.
    #[default]
    Float32,
    /// In tract 0.23.9's own float16 arithmetic.
    Stock,
}

/// The ONNX ops whose float16 result tract 0.23.9 computes less exactly
/// than onnxruntime 1.31.1 (docs/contract.md, "float16 arithmetic"); with
/// [`Float16Accumulation::Float32`] the plugin computes them in float32.
pub const IN_FLOAT32: &[&str] = &[
    "Conv",
    "ConvTranspose",
    "ReduceProd",
    "Softmax",
    "LogSoftmax",
    "BatchNormalization",
    "InstanceNormalization",
    "GlobalAveragePool",
    "CumSum",
    "Gemm",
];

impl Float16Accumulation {
    /// With [`Float16Accumulation::Float32`], puts the ops of
    /// [`IN_FLOAT32`] whose builder in `reg` is still tract's own (fenced)
    /// behind [`in_float32`]; a builder the caller registered stays.
    pub(crate) fn register(self, reg: &mut OnnxOpRegister) {
        if self == Float16Accumulation::Stock {
            return;
        }
        for op in IN_FLOAT32 {
            if let Some(builder) = reg.0.get_mut(*op)
                && is_fenced_stock(*builder)
            {
                *builder = in_float32;
            }
        }
    }
}

/// tract's builder for the node's op type, fenced, its float16 inputs
/// typed in float32 ([`InFloat32`]).
fn in_float32(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let (stock, extra_inputs) = fenced(&node.op_type, Fence::Tract, || {
        stock(&node.op_type)?(ctx, node)
    })?;
    Ok((
        Box::new(Retyped {
            inner: stock,
            typing: InFloat32,
        }),
        extra_inputs,
    ))
}

/// Types tract's op on float32 where an input is float16, its float16
/// outputs rounded once to float16; stock's typing otherwise.
#[derive(Debug, Clone, Copy)]
pub(crate) struct InFloat32;

impl Typing for InFloat32 {
    fn to_typed(
        &self,
        stock: &dyn InferenceOp,
        source: &InferenceModel,
        node: &InferenceNode,
        target: &mut TypedModel,
        mapping: &HashMap<OutletId, OutletId>,
    ) -> TractResult<TVec<OutletId>> {
        let inputs = node
            .inputs
            .iter()
            .map(|i| {
                mapping
                    .get(i)
                    .copied()
                    .with_context(|| format!("{}: input {i:?} is not typed yet", node.name))
            })
            .collect::<TractResult<TVec<OutletId>>>()?;
        let mut any_half = false;
        for wire in &inputs {
            any_half |= target.outlet_fact(*wire)?.datum_type == DatumType::F16;
        }
        if !any_half {
            return stock.to_typed(source, node, target, mapping);
        }
        // Never worse: an op tract cannot wire on float32 (a float32 rule
        // its float16 path lacks) keeps stock's float16 typing. Tried on a
        // scratch model holding only the inputs, so `target` is untouched.
        let mut scratch = TypedModel {
            symbols: target.symbols.clone(),
            ..TypedModel::default()
        };
        let mut scratch_inputs = tvec!();
        for (ix, wire) in inputs.iter().enumerate() {
            let fact = target.outlet_fact(*wire)?.clone();
            scratch_inputs.push(match fact.konst.clone() {
                Some(k) => scratch.add_const(format!("input_{ix}"), k)?,
                None => scratch.add_source(format!("input_{ix}"), fact)?,
            });
        }
        if wire_in_f32(stock, source, node, &mut scratch, &scratch_inputs).is_err() {
            return stock.to_typed(source, node, target, mapping);
        }
        wire_in_f32(stock, source, node, target, &inputs)
    }
}

/// Wires tract's op on `inputs` of `target`, each float16 one cast to
/// float32 (a constant becomes the float32 constant: tract's wiring of some
/// ops reads their constant inputs' values), and each output `node` has as
/// float16 rounded once to float16.
fn wire_in_f32(
    stock: &dyn InferenceOp,
    source: &InferenceModel,
    node: &InferenceNode,
    target: &mut TypedModel,
    inputs: &[OutletId],
) -> TractResult<TVec<OutletId>> {
    let mut in_f32 = HashMap::with_capacity(inputs.len());
    for (ix, (input, wire)) in node.inputs.iter().zip(inputs).enumerate() {
        let fact = target.outlet_fact(*wire)?.clone();
        let wire = if fact.datum_type != DatumType::F16 {
            *wire
        } else if let Some(k) = fact.konst {
            target.add_const(
                format!("{}.input_{ix}_in_f32", node.name),
                k.cast_to::<f32>()?.into_owned(),
            )?
        } else {
            target.wire_node(
                format!("{}.input_{ix}_in_f32", node.name),
                tract_core::ops::cast::cast(DatumType::F32),
                &[*wire],
            )?[0]
        };
        in_f32.insert(*input, wire);
    }
    let mut f32_node = node.clone();
    for output in &mut f32_node.outputs {
        if output.fact.datum_type.concretize() == Some(DatumType::F16) {
            output.fact.datum_type = GenericFactoid::Only(DatumType::F32);
        }
    }
    let wires = stock.to_typed(source, &f32_node, target, &in_f32)?;
    let mut rounded = tvec!();
    for (ix, wire) in wires.into_iter().enumerate() {
        let half = node
            .outputs
            .get(ix)
            .is_some_and(|o| o.fact.datum_type.concretize() == Some(DatumType::F16));
        if half && target.outlet_fact(wire)?.datum_type == DatumType::F32 {
            rounded.push(
                target.wire_node(
                    format!("{}.output_{ix}_to_f16", node.name),
                    tract_core::ops::cast::cast(DatumType::F16),
                    &[wire],
                )?[0],
            );
        } else {
            rounded.push(wire);
        }
    }
    Ok(rounded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tract_overrides::retyped::{Builder, fence_stock_builders};

    fn fenced_register() -> OnnxOpRegister {
        let mut reg = tract_onnx::onnx().op_register;
        fence_stock_builders(&mut reg);
        reg
    }

    fn address(reg: &OnnxOpRegister, op: &str) -> Option<usize> {
        reg.0.get(op).map(|b| *b as usize)
    }

    #[test]
    fn float32_accumulation_replaces_exactly_the_ops_of_the_list() {
        let mut reg = fenced_register();
        Float16Accumulation::Float32.register(&mut reg);
        let fenced = fenced_register();
        for op in fenced.0.keys() {
            let replaced = address(&reg, op) == Some(in_float32 as Builder as usize);
            assert_eq!(replaced, IN_FLOAT32.contains(&op.as_str()), "{op}");
        }
    }

    #[test]
    fn every_op_of_the_list_has_a_tract_builder() {
        let reg = tract_onnx::onnx().op_register;
        for op in IN_FLOAT32 {
            assert!(reg.0.contains_key(*op), "{op}");
        }
    }

    #[test]
    fn stock_accumulation_and_a_caller_s_own_builder_leave_the_register_as_it_is() {
        let mut reg = fenced_register();
        Float16Accumulation::Stock.register(&mut reg);
        let fenced = fenced_register();
        for op in fenced.0.keys() {
            assert_eq!(address(&reg, op), address(&fenced, op), "{op}");
        }
        let mut reg = fenced_register();
        let theirs: Builder = |_, _| bail!("the caller's Conv");
        reg.insert("Conv", theirs);
        Float16Accumulation::Float32.register(&mut reg);
        assert_eq!(address(&reg, "Conv"), Some(theirs as usize));
    }
}
