//! ONNX `ConstantOfShape`: the spec's default value, and shapes computed from data.
//!
//! tract 0.23.9's builder fills with an f64 zero when `value` is absent; ONNX says float32. GNN
//! exports size their aggregation buffer this way (`ConstantOfShape` then
//! `ScatterElements(reduction=add)` of float32 messages) and fail one node later on the type
//! mismatch. Here the value defaults to a float32 zero on every path (analysis, typing, eval),
//! and everything else is tract's op built with that value.
//!
//! tract also builds `ConstantOfShape` only from a shape known at load ("shape input is
//! variable"). tf2onnx's `unsorted_segment_*` sizes a buffer from the largest segment id
//! (`ReduceMax` over `Unique`'s output + 1): a shape only the run knows. Here, when the shape
//! input is not a constant, the output's dims are fresh symbols that
//! [`RunTimeConstantOfShape`] binds when it runs; with a constant shape, what tract wires: the
//! value broadcast to the shape, held back from folding past tract's budget
//! ([`wire_broadcast_constant`]).

use tract_hir::internal::*;
use tract_hir::ops::array::ConstantOfShape;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;

use super::fold_budget::wire_broadcast_constant;
use super::retyped::{Retyped, Typing};
use super::run_symbols::run_values;

/// The builder registered for `ConstantOfShape`.
pub(crate) fn constant_of_shape(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let value = fill_value(ctx, node)?;
    Ok((
        Box::new(Retyped {
            inner: expand(ConstantOfShape::new(value.clone())),
            typing: DataDependentShape {
                value,
                symbols: ctx.template.symbols.clone(),
                prefix: "const_of_shape".to_string(),
            },
        }),
        vec![],
    ))
}

/// The `value` attribute as a scalar; ONNX's float32 zero when absent.
pub(crate) fn fill_value(ctx: &ParsingContext, node: &NodeProto) -> TractResult<Arc<Tensor>> {
    let Some(value) = node.get_attr_opt("value")? else {
        return Ok(rctensor0(0.0f32));
    };
    let value = ctx.load_tensor(value)?;
    ensure!(
        value.len() == 1,
        "ConstantOfShape node '{}': attribute value must hold one element, got {} (shape {:?})",
        node.name,
        value.len(),
        value.shape()
    );
    Ok(value.nth(0)?.into_arc_tensor())
}

/// Typing of `ConstantOfShape`: what tract wires for a shape known at load, else
/// a [`RunTimeConstantOfShape`] whose dims are fresh symbols.
#[derive(Debug, Clone)]
pub(crate) struct DataDependentShape {
    value: Arc<Tensor>,
    symbols: SymbolScope,
    prefix: String,
}

impl Typing for DataDependentShape {
    /// A constant shape tract can build: every dim within i32 (tract
    /// carries shapes as TDim made through i32, so a larger one wraps:
    /// 2^53 + 6 becomes 6) and a volume whose bytes fit `isize`.
    fn check_inputs(&self, inputs: &[&InferenceFact]) -> TractResult<()> {
        let Some(shape) = inputs.first().and_then(|f| f.value.concretize()) else {
            return Ok(());
        };
        let Ok(shape) = shape.cast_to::<i64>() else {
            return Ok(());
        };
        let dims = shape.try_as_plain_ram()?.as_slice::<i64>()?.to_vec();
        if let Some(&dim) = dims.iter().find(|d| !(0..=i32::MAX as i64).contains(*d)) {
            bail!(
                "ConstantOfShape: shape {dims:?} holds {dim}, outside [0, {}] (tract 0.23.9 carries dims through i32)",
                i32::MAX
            );
        }
        let bytes = dims
            .iter()
            .try_fold(self.value.datum_type().size_of(), |acc, d| {
                acc.checked_mul(*d as usize)
            })
            .filter(|b| *b <= isize::MAX as usize);
        if bytes.is_none() {
            bail!(
                "ConstantOfShape: shape {dims:?} of {:?} is more than isize::MAX bytes",
                self.value.datum_type()
            );
        }
        Ok(())
    }

    fn to_typed(
        &self,
        _stock: &dyn InferenceOp,
        _source: &InferenceModel,
        node: &InferenceNode,
        target: &mut TypedModel,
        mapping: &HashMap<OutletId, OutletId>,
    ) -> TractResult<TVec<OutletId>> {
        let shape = mapping[&node.inputs[0]];
        let fact = target.outlet_fact(shape)?.clone();
        if let Some(shape) = &fact.konst {
            let shape = shape.cast_to::<TDim>()?;
            let shape = shape.try_as_plain_ram()?.as_slice::<TDim>()?.to_vec();
            return wire_broadcast_constant(target, &node.name, self.value.clone(), &shape);
        }
        let rank = fact
            .shape
            .as_concrete()
            .and_then(|s| s.first().copied())
            .with_context(|| {
                format!(
                    "ConstantOfShape node '{}': the shape input must be 1-D of known length",
                    node.name
                )
            })?;
        let dims = (0..rank)
            .map(|_| self.symbols.new_with_prefix(&self.prefix).to_dim())
            .collect();
        target.wire_node(
            &node.name,
            RunTimeConstantOfShape {
                value: self.value.clone(),
                dims,
            },
            &[shape],
        )
    }
}

/// A tensor of `dims` (symbols bound by this op when it runs) filled with
/// `value`; the dims come from the int64 input.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub struct RunTimeConstantOfShape {
    /// The fill value, a scalar ([`fill_value`]): its type is the output's.
    pub(crate) value: Arc<Tensor>,
    /// The output's dims, one fresh symbol per axis of the shape input;
    /// the run binds them to the input's values.
    pub(crate) dims: TVec<TDim>,
}

impl Op for RunTimeConstantOfShape {
    fn name(&self) -> StaticName {
        "RunTimeConstantOfShape".into()
    }

    fn mints_runtime_symbols(&self) -> bool {
        true
    }

    op_as_typed_op!();
}

impl EvalOp for RunTimeConstantOfShape {
    op_out_of_plan!();

    fn eval(&self, ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let shape: Vec<usize> = run_values(&inputs[0], ctx.symbols)
            .context("ConstantOfShape")?
            .into_iter()
            .map(|d| {
                usize::try_from(d)
                    .map_err(|_| format_err!("ConstantOfShape: negative dimension {d}"))
            })
            .collect::<TractResult<_>>()?;
        ensure!(
            shape.len() == self.dims.len(),
            "ConstantOfShape: shape {shape:?} has rank {}, expected {}",
            shape.len(),
            self.dims.len()
        );
        // Validate before allocating: a shape from data may be anything.
        let elements = shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d));
        let bytes = elements.and_then(|e| e.checked_mul(self.value.datum_type().size_of()));
        let bytes = bytes.filter(|b| *b <= isize::MAX as usize).with_context(|| {
            format!("ConstantOfShape: shape {shape:?} computed at run time holds more elements than memory can address")
        })?;
        // tract's tensor allocation panics when the system refuses it: ask
        // first, without touching the memory.
        if Vec::<u8>::new().try_reserve_exact(bytes).is_err() {
            bail!(
                "ConstantOfShape: shape {shape:?} computed at run time needs {bytes} bytes, which the system refuses"
            );
        }
        Ok(tvec!(
            self.value.broadcast_scalar_to_shape(&shape)?.into_tvalue()
        ))
    }
}

impl TypedOp for RunTimeConstantOfShape {
    as_op!();

    fn output_facts(&self, _inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        Ok(tvec!(self.value.datum_type().fact(self.dims.clone())))
    }
}
