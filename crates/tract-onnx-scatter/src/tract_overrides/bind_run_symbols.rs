//! Constants holding symbols only the run binds, fed to ops that need plain
//! numbers.
//!
//! tract types a value derived from a data-dependent dim (`Shape` of a
//! `Range` or `NonZero` output, say) as a TDim constant holding the
//! symbol. Ops that turn such a value into numbers themselves (`Cast` to
//! float) evaluate it without the session's symbol values and fail: "Undetermined symbol in expression:
//! range" (Piper's `/Cast_3`). For the ops listed in [`register`], every
//! such constant input goes through [`BindRunSymbols`] first, which
//! substitutes the run's values, ordered after the nodes binding them. Ops
//! whose inputs hold no such symbol are built exactly as tract builds them.

use tract_hir::internal::*;
use tract_onnx::model::{OnnxOpRegister, ParsingContext};
use tract_onnx::pb::NodeProto;

type Builder = fn(&ParsingContext, &NodeProto) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)>;

/// tract's own builder for `op`, read once from a stock register.
pub fn stock(op: &str) -> TractResult<Builder> {
    static STOCK: std::sync::OnceLock<OnnxOpRegister> = std::sync::OnceLock::new();
    STOCK
        .get_or_init(|| tract_onnx::onnx().op_register)
        .0
        .get(op)
        .copied()
        .with_context(|| format!("tract's ONNX register has no {op} builder"))
}

macro_rules! wrapped_builders {
    ($($name:ident => $op:literal);* $(;)?) => {
        $(
            fn $name(ctx: &ParsingContext, node: &NodeProto) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
                let (inner, extra_inputs) = stock($op)?(ctx, node)?;
                Ok((Box::new(BindingInputs(inner)), extra_inputs))
            }
        )*
        /// Wraps tract's builders of the ops that read TDim values as plain
        /// numbers.
        pub fn register(reg: &mut OnnxOpRegister) {
            $(reg.insert($op, $name);)*
        }
    };
}

// Only ops that read a TDim value as numbers in their own evaluation:
// shape-taking ops (Expand, Range, ConstantOfShape, Tile) keep the symbols
// in their output facts and evaluate them with the session's values.
wrapped_builders! {
    cast => "Cast";
}

/// Any inference op, its TDim constant inputs holding run-bound symbols
/// first bound with [`BindRunSymbols`] when typed.
#[derive(Debug, Clone)]
pub struct BindingInputs(pub Box<dyn InferenceOp>);

impl PartialEq for BindingInputs {
    fn eq(&self, _: &Self) -> bool {
        false
    }
}
impl Eq for BindingInputs {}

impl Op for BindingInputs {
    fn name(&self) -> StaticName {
        self.0.name()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        self.0.info()
    }

    not_a_typed_op!();
}

impl EvalOp for BindingInputs {
    fn eval_out_of_plan(&self, inputs: TVec<TValue>) -> TractResult<Option<TVec<TValue>>> {
        self.0.eval_out_of_plan(inputs)
    }

    fn eval(&self, ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        self.0.eval(ctx, inputs)
    }

    fn state(&self, ctx: &EvalContext) -> TractResult<Option<Box<dyn OpState>>> {
        self.0.state(ctx)
    }
}

impl InferenceOp for BindingInputs {
    fn infer(
        &mut self,
        inputs: TVec<&InferenceFact>,
        outputs: TVec<&InferenceFact>,
        observed: TVec<&InferenceFact>,
    ) -> TractResult<(
        TVec<InferenceFact>,
        TVec<InferenceFact>,
        TVec<InferenceFact>,
    )> {
        self.0.infer(inputs, outputs, observed)
    }

    fn infer_facts(
        &mut self,
        inputs: TVec<&InferenceFact>,
        outputs: TVec<&InferenceFact>,
        observed: TVec<&InferenceFact>,
    ) -> TractResult<(
        TVec<InferenceFact>,
        TVec<InferenceFact>,
        TVec<InferenceFact>,
    )> {
        self.0.infer_facts(inputs, outputs, observed)
    }

    fn incorporate(
        &self,
        model: &InferenceModel,
        node: &InferenceNode,
    ) -> TractResult<Option<InferenceModelPatch>> {
        self.0.incorporate(model, node)
    }

    fn nboutputs(&self) -> TractResult<usize> {
        self.0.nboutputs()
    }

    fn observe_outlets(
        &self,
        model: &InferenceModel,
        node: &InferenceNode,
    ) -> TractResult<Vec<OutletId>> {
        self.0.observe_outlets(model, node)
    }

    fn as_op(&self) -> &dyn Op {
        self
    }

    fn as_op_mut(&mut self) -> &mut dyn Op {
        self
    }

    fn to_typed(
        &self,
        source: &InferenceModel,
        node: &InferenceNode,
        target: &mut TypedModel,
        mapping: &HashMap<OutletId, OutletId>,
    ) -> TractResult<TVec<OutletId>> {
        let mut mapping = mapping.clone();
        for (ix, input) in node.inputs.iter().enumerate() {
            let mut outlet = mapping[input];
            let binders = super::run_symbols::binders(target, &[outlet])?;
            if !binders.is_empty() {
                let mut wires = tvec![outlet];
                wires.extend(binders);
                outlet = target.wire_node(
                    format!("{}.bind_symbols.{ix}", node.name),
                    BindRunSymbols,
                    &wires,
                )?[0];
            }
            mapping.insert(*input, outlet);
        }
        self.0.to_typed(source, node, target, &mapping)
    }
}

/// A TDim value with the run's symbol values substituted. Input 0 is the
/// value; further inputs only order the op after the nodes binding them.
/// Never folded at load: the values do not exist before the run.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub struct BindRunSymbols;

impl Op for BindRunSymbols {
    fn name(&self) -> StaticName {
        "BindRunSymbols".into()
    }

    op_as_typed_op!();
}

impl EvalOp for BindRunSymbols {
    fn eval_out_of_plan(&self, _inputs: TVec<TValue>) -> TractResult<Option<TVec<TValue>>> {
        Ok(None)
    }

    fn eval(&self, ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let value = &inputs[0];
        let bound: Vec<TDim> = value
            .try_as_plain_ram()?
            .as_slice::<TDim>()?
            .iter()
            .map(|d| d.eval(ctx.symbols))
            .collect();
        let array = tract_ndarray::ArrayD::from_shape_vec(value.shape(), bound)?;
        Ok(tvec!(Tensor::from(array).into_tvalue()))
    }
}

impl TypedOp for BindRunSymbols {
    as_op!();

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        ensure!(
            inputs[0].datum_type == TDim::datum_type(),
            "BindRunSymbols takes TDim, got {:?}",
            inputs[0].datum_type
        );
        Ok(tvec!(TDim::datum_type().fact(inputs[0].shape.clone())))
    }
}
