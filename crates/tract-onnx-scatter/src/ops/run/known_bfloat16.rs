//! Tensors known to hold only bfloat16 values, by identity, so that a bfloat16 value coming
//! back into a model is not read again.
//!
//! A bfloat16 graph input is a float32 tensor that must hold bfloat16 values;
//! [`crate::load::round_to_bfloat16::RoundToBfloat16`] checks it (and rounds what is not) where
//! it enters. Checking reads the whole tensor: for a KV cache fed back as the next call's
//! input, that read would be the whole cost of a call that writes one position. So the plugin
//! keeps the identities ([`Known`], why they cannot go stale) of every bfloat16 output of a
//! model's main graph, marked by a [`KnownBfloat16`] node the loader puts before it (the loader
//! rounds every bfloat16 value the graph makes), and of every tensor someone else holds too
//! that a `RoundToBfloat16` checked and found holding only bfloat16 values ([`mark`],
//! [`is_known`]). Contract: docs/contract.md, "bfloat16" (the caller's bfloat16 inputs).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, DefaultHasher};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use tract_hir::internal::*;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;

/// The op type of the nodes the loader puts before each bfloat16 output
/// of the main graph (domain [`crate::load::bfloat16::DOMAIN`]).
pub(crate) const KNOWN_BFLOAT16: &str = "KnownBfloat16";

/// The identities, by the address of each `Arc`'s allocation: one table for the process (a
/// tensor holds bfloat16 values whichever model made it), dead ones pruned as the table
/// grows.
///
/// "The same tensor" is the `Arc` of a [`TValue`], kept as a [`Weak`]: its address cannot be
/// reused by another tensor while the `Weak` lives, and the tensor cannot be written while it
/// is known. tract writes a tensor only through an exclusive `Arc`: `Arc::get_mut` refuses
/// one a `Weak` points at, and `Arc::try_unwrap` (`TValue::into_tensor`) or `Arc::make_mut`
/// moves the tensor out, after which the `Weak` upgrades to nothing and the identity is
/// forgotten. A tensor rebuilt from one moved out is a new identity, checked again when it
/// enters. An exclusively owned tensor entering a model is forgotten as it enters
/// ([`is_known`]), so that its `Weak` does not stay on a tensor the model may now write in
/// place.
struct Known {
    tensors: HashMap<usize, Weak<Tensor>, BuildHasherDefault<DefaultHasher>>,
    /// The table's size at which dead identities are pruned next.
    prune_at: usize,
}

/// The table's size below which nothing is pruned.
const PRUNE_FROM: usize = 64;

fn known() -> MutexGuard<'static, Known> {
    static KNOWN: Mutex<Known> = Mutex::new(Known {
        tensors: HashMap::with_hasher(BuildHasherDefault::new()),
        prune_at: PRUNE_FROM,
    });
    // A poisoned lock only means another thread panicked holding it: the
    // table is still a valid table.
    KNOWN.lock().unwrap_or_else(|p| p.into_inner())
}

fn identity(value: &TValue) -> Option<&Arc<Tensor>> {
    value.as_arc_tensor()
}

/// Marks `value` as holding only bfloat16 values. The caller must know it
/// does: a [`KnownBfloat16`] node's input, or a tensor just checked.
pub(crate) fn mark(value: &TValue) {
    let Some(arc) = identity(value) else {
        return;
    };
    let mut known = known();
    known
        .tensors
        .insert(Arc::as_ptr(arc) as usize, Arc::downgrade(arc));
    if known.tensors.len() >= known.prune_at {
        known.tensors.retain(|_, weak| weak.strong_count() > 0);
        known.prune_at = (2 * known.tensors.len()).max(PRUNE_FROM);
    }
}

/// Whether `value` is known to hold only bfloat16 values ([`mark`]ed and
/// not moved out of its `Arc` since). An exclusively owned `value` is
/// forgotten as it is found: the model it enters may write it in place.
pub(crate) fn is_known(value: &TValue) -> bool {
    let Some(arc) = identity(value) else {
        return false;
    };
    let key = Arc::as_ptr(arc) as usize;
    let mut known = known();
    // The `Weak` keeps the allocation at `key` from being reused, so a
    // live entry at `value`'s address is `value` itself.
    let found = known
        .tensors
        .get(&key)
        .is_some_and(|weak| std::ptr::eq(weak.as_ptr(), Arc::as_ptr(arc)));
    if found && value.is_exclusive() {
        known.tensors.remove(&key);
    }
    found
}

/// The analysis rules of the bfloat16 check's nodes ([`KnownBfloat16`],
/// `RoundToBfloat16`): one float32 input, an output of its type and shape.
pub(crate) fn float32_in_float32_out<'r, 'p: 'r>(
    s: &mut Solver<'r>,
    inputs: &'p [TensorProxy],
    outputs: &'p [TensorProxy],
) -> InferenceResult {
    check_input_arity(inputs, 1)?;
    check_output_arity(outputs, 1)?;
    s.equals(&inputs[0].datum_type, f32::datum_type())?;
    s.equals(&outputs[0].datum_type, &inputs[0].datum_type)?;
    s.equals(&outputs[0].shape, &inputs[0].shape)
}

/// The builder registered for [`KNOWN_BFLOAT16`].
pub(crate) fn known_bfloat16_builder(
    _ctx: &ParsingContext,
    _node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    Ok((expand(MarkKnownBfloat16), vec![]))
}

/// The inference form of [`KnownBfloat16`]: one float32 input, the same
/// value out.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
struct MarkKnownBfloat16;

impl Expansion for MarkKnownBfloat16 {
    fn name(&self) -> StaticName {
        KNOWN_BFLOAT16.into()
    }

    fn rules<'r, 'p: 'r, 's: 'r>(
        &'s self,
        s: &mut Solver<'r>,
        inputs: &'p [TensorProxy],
        outputs: &'p [TensorProxy],
    ) -> InferenceResult {
        float32_in_float32_out(s, inputs, outputs)
    }

    fn wire(
        &self,
        prefix: &str,
        model: &mut TypedModel,
        inputs: &[OutletId],
    ) -> TractResult<TVec<OutletId>> {
        model.wire_node(prefix, KnownBfloat16, inputs)
    }
}

/// Its input, unchanged, marked as known to hold only bfloat16 values
/// (see the module): the loader puts one before each bfloat16 output of
/// the main graph, whose values the plugin rounded.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub(crate) struct KnownBfloat16;

impl Op for KnownBfloat16 {
    fn name(&self) -> StaticName {
        KNOWN_BFLOAT16.into()
    }

    op_as_typed_op!();
}

impl EvalOp for KnownBfloat16 {
    op_out_of_plan!();

    fn forwards_input(&self) -> Option<usize> {
        Some(0)
    }

    fn eval(&self, _ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let value = args_1!(inputs);
        if scatter_kernels::mechanisms::Mechanism::Bfloat16Check.is_on() {
            mark(&value);
        }
        Ok(tvec!(value))
    }
}

impl TypedOp for KnownBfloat16 {
    as_op!();

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        Ok(tvec!(inputs[0].clone()))
    }

    fn axes_mapping(
        &self,
        inputs: &[&TypedFact],
        outputs: &[&TypedFact],
    ) -> TractResult<AxesMapping> {
        AxesMapping::natural(inputs, outputs)
    }

    fn change_axes(
        &self,
        model: &TypedModel,
        node: &TypedNode,
        _io: InOut,
        change: &AxisOp,
    ) -> TractResult<Option<AxisChangeConsequence>> {
        Ok(Some(AxisChangeConsequence::new(model, node, None, change)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marked_tensor_is_known_until_it_is_moved_out_of_its_arc() {
        let value = tensor1(&[1.0f32, 2.0]).into_tvalue();
        assert!(!is_known(&value));
        mark(&value);
        let kept = value.clone();
        assert!(is_known(&value), "shared: known, and kept known");
        assert!(is_known(&kept));
        drop(kept);
        assert!(is_known(&value), "exclusive: known, then forgotten");
        assert!(!is_known(&value));
        mark(&value);
        let rebuilt = value.into_tensor().into_tvalue();
        assert!(
            !is_known(&rebuilt),
            "moved out and wrapped again: a new identity"
        );
    }

    #[test]
    fn a_tensor_equal_to_a_marked_one_is_not_known() {
        let value = tensor1(&[1.0f32, 2.0]).into_tvalue();
        mark(&value);
        let twin = tensor1(&[1.0f32, 2.0]).into_tvalue();
        assert!(!is_known(&twin));
    }
}
