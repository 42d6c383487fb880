//! tract's own inference op with only its typing replaced.
//!
//! Several overrides keep everything tract does before typing (rules,
//! analysis, evaluation of constants) and change only what the op becomes
//! in the typed model. [`Retyped`] delegates every inference method to
//! tract's op and hands `to_typed` to a [`Typing`].
//!
//! tract 0.23.9's analysis and typing of some of these ops panic on
//! hostile constants (a `Squeeze` axis past the rank, a negative
//! `ConstantOfShape` or `Expand` dim). Where the plugin stands in front of tract's op, it turns such a
//! panic into an error naming the op and tract's message ([`fenced`]): the
//! process survives when panics unwind (the default `panic = "unwind"`).
//! The fence also bounds the constants tract computes while loading
//! ([`fold_budget`](super::fold_budget)).

use std::fmt::Debug;

use tract_hir::internal::*;
use tract_onnx::model::{OnnxOpRegister, ParsingContext};
use tract_onnx::pb::NodeProto;

use super::fold_budget::{skips_eager_eval, wire_unfolded};

/// What a [`Retyped`] op becomes in the typed model.
pub(crate) trait Typing: Debug + Clone + Send + Sync + 'static {
    /// Refuses, before tract's analysis sees them, inputs on which tract's
    /// op would compute something other than ONNX's result (by default,
    /// none).
    fn check_inputs(&self, _inputs: &[&InferenceFact]) -> TractResult<()> {
        Ok(())
    }

    /// Whose code the fence around the op runs (by default the plugin's:
    /// a typing of its own).
    fn fence(&self) -> Fence {
        Fence::Plugin
    }

    /// Wires the node into `target`; `stock` is tract's op, whose own
    /// `to_typed` may be called.
    fn to_typed(
        &self,
        stock: &dyn InferenceOp,
        source: &InferenceModel,
        node: &InferenceNode,
        target: &mut TypedModel,
        mapping: &HashMap<OutletId, OutletId>,
    ) -> TractResult<TVec<OutletId>>;
}

/// `inner` (the op a builder made: tract's, or an override's) with
/// `typing` in place of its `to_typed`.
#[derive(Debug, Clone)]
pub(crate) struct Retyped<T> {
    /// The op a builder made (tract's, or one of the plugin's
    /// overrides): its analysis rules are the wrapper's.
    pub(crate) inner: Box<dyn InferenceOp>,
    /// What replaces `stock`'s `to_typed`.
    pub(crate) typing: T,
}

/// An ONNX op builder, as tract's register holds them.
pub(crate) type Builder =
    fn(&ParsingContext, &NodeProto) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)>;

/// tract's own builder for `op`, read once from a stock register.
pub(crate) fn stock(op: &str) -> TractResult<Builder> {
    static STOCK: std::sync::OnceLock<OnnxOpRegister> = std::sync::OnceLock::new();
    STOCK
        .get_or_init(|| tract_onnx::onnx().op_register)
        .0
        .get(op)
        .copied()
        .with_context(|| format!("tract's ONNX register has no {op} builder"))
}

impl<T: Typing> Retyped<T> {
    /// What tract's builder for `op` makes of `node`, typed with `typing`.
    pub(crate) fn stock_built(
        op: &str,
        ctx: &ParsingContext,
        node: &NodeProto,
        typing: T,
    ) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
        let (stock, extra_inputs) = self::stock(op)?(ctx, node)?;
        Ok((
            Box::new(Retyped {
                inner: stock,
                typing,
            }),
            extra_inputs,
        ))
    }
}

/// tract's own ops whose type tract's code looks for in an inference
/// model: `Const` (tract-hir's `add_const` reuses an equal one) and
/// `Multinomial` (`tract_onnx::Onnx::determinize` seeds it). Their builders
/// stay unwrapped.
const LOOKED_UP_BY_TYPE: &[&str] = &["Constant", "Multinomial"];

/// Puts every builder of `reg` that is tract's own behind [`fenced`]: the
/// builder's call, and its op's analysis, evaluation and typing (a
/// [`Retyped`] with [`OwnTyping`]). The typed model is the one tract
/// builds, op for op; only a panic in tract's code becomes an error naming
/// the op. A builder the caller registered in tract's place stays as it
/// is. Run before the plugin registers its own builders, which replace
/// some of these.
pub(crate) fn fence_stock_builders(reg: &mut OnnxOpRegister) {
    for (op, builder) in reg.0.iter_mut() {
        if LOOKED_UP_BY_TYPE.contains(&op.as_str()) {
            continue;
        }
        if stock(op).is_ok_and(|stock| std::ptr::fn_addr_eq(*builder, stock)) {
            *builder = fenced_stock;
        }
    }
}

/// Whether `builder` is tract's own behind the fence
/// ([`fence_stock_builders`]), not one a caller registered.
pub(crate) fn is_fenced_stock(builder: Builder) -> bool {
    std::ptr::fn_addr_eq(builder, fenced_stock as Builder)
}

/// tract's builder for the node's op type, its call and its op fenced
/// ([`fence_stock_builders`]).
fn fenced_stock(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    fenced_build(stock(&node.op_type)?, Fence::Tract, ctx, node)
}

/// What `builder` makes of `node`, with the call and the op it makes
/// behind [`fenced`]: the op's analysis, evaluation and typing are its
/// own, a panic in them an error naming the node's op type and `fence`,
/// whose code `builder` is.
pub(crate) fn fenced_build(
    builder: Builder,
    fence: Fence,
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let (stock, extra_inputs) = fenced(&node.op_type, fence, || builder(ctx, node))?;
    Ok((
        Box::new(Retyped {
            inner: stock,
            typing: OwnTyping {
                rank_input: rank_input(&node.op_type),
                fence,
            },
        }),
        extra_inputs,
    ))
}

/// The most dims the plugin lets a tensor have when an input's length
/// gives them (numpy's limit).
pub const MAX_RANK: usize = 64;

/// The ONNX ops whose output (or data) rank is the length of one 1-D input,
/// divided by the values it holds per dim: (op type, input, values per dim).
/// tract's analysis builds a fact of that many dims from the input's
/// declared length alone, before any value is known.
pub(crate) const RANK_INPUTS: &[(&str, usize, usize)] = &[
    ("ConstantOfShape", 0, 1),
    ("Expand", 1, 1),
    ("Reshape", 1, 1),
    ("Tile", 1, 1),
    ("Pad", 1, 2),
];

fn rank_input(op_type: &str) -> Option<&'static (&'static str, usize, usize)> {
    RANK_INPUTS.iter().find(|(op, _, _)| *op == op_type)
}

/// The typing of the built op itself: a [`Retyped`] with it changes nothing
/// but the fence, and refuses an input whose length would give a tensor
/// more than [`MAX_RANK`] dims.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OwnTyping {
    /// The op, the input whose length gives a rank, and its values per
    /// dim ([`RANK_INPUTS`]).
    pub(crate) rank_input: Option<&'static (&'static str, usize, usize)>,
    /// Whose builder made the op: tract's, or one of the plugin's
    /// overrides.
    pub(crate) fence: Fence,
}

impl Typing for OwnTyping {
    fn fence(&self) -> Fence {
        self.fence
    }

    /// A 1-D input declared with 2^32 values made tract's analysis build
    /// a shape fact of 2^32 dims (137 GB): refused first, naming its length.
    fn check_inputs(&self, inputs: &[&InferenceFact]) -> TractResult<()> {
        let Some(&(op, index, per_dim)) = self.rank_input else {
            return Ok(());
        };
        let Some(len) = inputs
            .get(index)
            .and_then(|f| f.shape.dims().next().and_then(|d| d.concretize()))
            .and_then(|d| d.to_usize().ok())
        else {
            return Ok(());
        };
        ensure!(
            len <= MAX_RANK * per_dim,
            "{op}: input {index} holds {len} values, a tensor of {} dims; at most {MAX_RANK} dims are supported",
            len / per_dim
        );
        Ok(())
    }

    fn to_typed(
        &self,
        stock: &dyn InferenceOp,
        source: &InferenceModel,
        node: &InferenceNode,
        target: &mut TypedModel,
        mapping: &HashMap<OutletId, OutletId>,
    ) -> TractResult<TVec<OutletId>> {
        stock.to_typed(source, node, target, mapping)
    }
}

/// Whose code a [`fenced`] call runs, for its panic's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fence {
    /// tract's own: a builder of tract's and the op it made.
    Tract,
    /// The plugin's: an override's builder or op, or a typing of the
    /// plugin's, which call tract's code in turn.
    Plugin,
}

/// `f`'s result, or an error naming `op`, whose code panicked (`fence`)
/// and the panic's message when `f` panics.
pub(crate) fn fenced<R>(
    op: &str,
    fence: Fence,
    f: impl FnOnce() -> TractResult<R>,
) -> TractResult<R> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".into());
        match fence {
            Fence::Tract => bail!("{op}: tract 0.23.9 panicked on this node's inputs ({message})"),
            Fence::Plugin => bail!(
                "{op}: tract-onnx-scatter's code, or tract 0.23.9's under it, panicked on \
                 this node's inputs ({message})"
            ),
        }
    })
}

impl<T> PartialEq for Retyped<T> {
    fn eq(&self, _: &Self) -> bool {
        false
    }
}
impl<T> Eq for Retyped<T> {}

impl<T: Typing> Op for Retyped<T> {
    fn name(&self) -> StaticName {
        self.inner.name()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        self.inner.info()
    }

    not_a_typed_op!();
}

impl<T: Typing> EvalOp for Retyped<T> {
    fn eval_out_of_plan(&self, inputs: TVec<TValue>) -> TractResult<Option<TVec<TValue>>> {
        fenced(&self.inner.name(), self.typing.fence(), || {
            self.inner.eval_out_of_plan(inputs)
        })
    }

    fn eval(&self, ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        fenced(&self.inner.name(), self.typing.fence(), || {
            self.inner.eval(ctx, inputs)
        })
    }

    fn state(&self, ctx: &EvalContext) -> TractResult<Option<Box<dyn OpState>>> {
        self.inner.state(ctx)
    }
}

type Facts = (
    TVec<InferenceFact>,
    TVec<InferenceFact>,
    TVec<InferenceFact>,
);

impl<T: Typing> InferenceOp for Retyped<T> {
    fn infer(
        &mut self,
        inputs: TVec<&InferenceFact>,
        outputs: TVec<&InferenceFact>,
        observed: TVec<&InferenceFact>,
    ) -> TractResult<Facts> {
        self.typing.check_inputs(&inputs)?;
        let name = self.inner.name();
        fenced(&name, self.typing.fence(), || {
            // tract's `infer` evaluates constant inputs, then weighs the
            // result: weigh the facts first (`fold_budget`).
            if inputs.iter().all(|i| i.value.concretize().is_some()) {
                let facts =
                    self.inner
                        .infer_facts(inputs.clone(), outputs.clone(), observed.clone())?;
                if skips_eager_eval(&facts.0, &facts.1) {
                    return Ok(facts);
                }
            }
            self.inner.infer(inputs, outputs, observed)
        })
    }

    fn infer_facts(
        &mut self,
        inputs: TVec<&InferenceFact>,
        outputs: TVec<&InferenceFact>,
        observed: TVec<&InferenceFact>,
    ) -> TractResult<Facts> {
        self.typing.check_inputs(&inputs)?;
        let name = self.inner.name();
        fenced(&name, self.typing.fence(), || {
            self.inner.infer_facts(inputs, outputs, observed)
        })
    }

    fn incorporate(
        &self,
        model: &InferenceModel,
        node: &InferenceNode,
    ) -> TractResult<Option<InferenceModelPatch>> {
        self.inner.incorporate(model, node)
    }

    fn nboutputs(&self) -> TractResult<usize> {
        self.inner.nboutputs()
    }

    fn observe_outlets(
        &self,
        model: &InferenceModel,
        node: &InferenceNode,
    ) -> TractResult<Vec<OutletId>> {
        self.inner.observe_outlets(model, node)
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
        // On a panic the half-wired `target` is dropped with the error:
        // tract's `into_typed` stops at the first failing node.
        fenced(&self.inner.name(), self.typing.fence(), || {
            let inner = self.inner.as_ref();
            let wire = |target: &mut TypedModel, mapping: &HashMap<OutletId, OutletId>| {
                self.typing.to_typed(inner, source, node, target, mapping)
            };
            if let Some(wired) = wire_unfolded(wire, source, node, target, mapping)? {
                return Ok(wired);
            }
            self.typing.to_typed(inner, source, node, target, mapping)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn panic_message(fence: Fence) -> String {
        fenced::<()>("Op", fence, || panic!("boom"))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn a_panic_behind_tract_s_builders_blames_tract() {
        assert_eq!(
            panic_message(Fence::Tract),
            "Op: tract 0.23.9 panicked on this node's inputs (boom)"
        );
    }

    #[test]
    fn a_panic_behind_the_plugin_s_code_names_the_plugin_first() {
        assert_eq!(
            panic_message(Fence::Plugin),
            "Op: tract-onnx-scatter's code, or tract 0.23.9's under it, panicked on this node's \
             inputs (boom)"
        );
    }

    #[test]
    fn an_error_passes_the_fence_unchanged() {
        let err = fenced::<()>("Op", Fence::Tract, || bail!("refused")).unwrap_err();
        assert_eq!(err.to_string(), "refused");
    }
}
