//! Reusing a scatter node's previous output buffer when its data input is
//! shared.
//!
//! With data shared the op must return a new tensor. Above glibc's mmap
//! threshold a new allocation takes fresh pages every run (a page fault and
//! the kernel's zeroing per 4 KiB, several times a warm memcpy). So a node
//! whose output is a model output and nothing else (flagged at codegen,
//! [`output_is_terminal`]) keeps a reference to the last output it returned
//! ([`RecycleState`]); once the caller has dropped theirs, the next run
//! copies data into that warm buffer instead of allocating.

use std::marker::PhantomData;

use tract_core::internal::*;

use crate::ops::types::dispatch_element;
use crate::site::NodeSite;

/// Whether `node`'s single output is a model output read by no other node:
/// holding one more reference to it then cannot make any op of the graph
/// see a shared input (and copy it).
pub fn output_is_terminal(model: &TypedModel, node: &TypedNode) -> bool {
    node.outputs.len() == 1
        && node.outputs[0].successors.is_empty()
        && model.outputs.contains(&OutletId::new(node.id, 0))
}

/// `EvalOp::state` of a recycling op: a [`RecycleState`] when the op was
/// flagged at codegen, none otherwise.
pub fn state_for<O: Recycling>(reuse_output: bool) -> TractResult<Option<Box<dyn OpState>>> {
    Ok(reuse_output.then(|| Box::new(RecycleState::<O>::new()) as Box<dyn OpState>))
}

/// `TypedOp::codegen` of a recycling op: replaces `node` by `flagged()`
/// (the op with `reuse_output` set) when its output is terminal and it is
/// not flagged yet.
pub fn flag_if_terminal<O: TypedOp>(
    model: &TypedModel,
    node: &TypedNode,
    already_flagged: bool,
    flagged: impl FnOnce() -> O,
) -> TractResult<Option<TypedModelPatch>> {
    rule_if!(!already_flagged && output_is_terminal(model, node));
    Ok(Some(TypedModelPatch::replace_single_op(
        model,
        node,
        &node.inputs,
        flagged(),
    )?))
}

/// A scatter op that can write its output into a recycled buffer.
pub trait Recycling: Op + Clone {
    /// Evaluates the op, taking the output buffer through `slot` (see
    /// [`take_output`]); `None` when evaluated without a plan.
    fn eval_recycling(
        &self,
        inputs: TVec<TValue>,
        slot: Option<&mut Option<TValue>>,
    ) -> TractResult<TValue>;
}

/// Per-node state of a flagged scatter node: the last output it returned.
pub struct RecycleState<O> {
    last: Option<TValue>,
    op: PhantomData<fn() -> O>,
}

impl<O> RecycleState<O> {
    pub fn new() -> RecycleState<O> {
        RecycleState {
            last: None,
            op: PhantomData,
        }
    }
}

impl<O> Default for RecycleState<O> {
    fn default() -> Self {
        Self::new()
    }
}

impl<O> Clone for RecycleState<O> {
    /// A clone shares the retained output: neither copy sees it exclusive,
    /// so neither reuses it while the other holds it.
    fn clone(&self) -> Self {
        RecycleState {
            last: self.last.clone(),
            op: PhantomData,
        }
    }
}

impl<O> std::fmt::Debug for RecycleState<O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecycleState")
            .field(
                "last",
                &self.last.as_ref().map(|t| (t.datum_type(), t.shape())),
            )
            .finish()
    }
}

impl<O: Recycling> OpState for RecycleState<O> {
    fn eval(
        &mut self,
        _ctx: &EvalContext,
        op: &dyn Op,
        inputs: TVec<TValue>,
    ) -> TractResult<TVec<TValue>> {
        let op = op
            .downcast_ref::<O>()
            .with_context(|| format!("RecycleState evaluating a {}", op.name()))?;
        let output = op.eval_recycling(inputs, Some(&mut self.last))?;
        self.last = Some(output.clone());
        Ok(tvec!(output))
    }

    /// The retained output is a cache any stream may use once nobody holds
    /// it (it is fully overwritten before use): nothing is per lane.
    fn reset_lanes(&mut self, _lanes: &[LaneId]) -> TractResult<()> {
        Ok(())
    }
}

/// The tensor a validated scatter writes into, made from `data`:
/// - `data` itself, without a copy, when exclusively owned (after dropping
///   the retained output when it *is* `data`: the KV-cache feedback);
/// - else a copy of `data` into the retained output's buffer, when the
///   caller has dropped that output and it has data's type and shape;
/// - else a fresh copy.
///
/// Call only once every check has passed: this is where the retained
/// output is consumed.
pub fn take_output(
    site: &NodeSite,
    input: &str,
    data: TValue,
    slot: Option<&mut Option<TValue>>,
) -> TractResult<Tensor> {
    let Some(last) = slot else {
        return Ok(data.into_tensor());
    };
    if last
        .as_ref()
        .is_some_and(|l| std::ptr::eq::<Tensor>(&**l, &*data))
    {
        *last = None;
    }
    if data.is_exclusive() {
        return Ok(data.into_tensor());
    }
    let fits = |l: &TValue| {
        l.is_exclusive() && l.datum_type() == data.datum_type() && l.shape() == data.shape()
    };
    let Some(recycled) = last.take_if(|l| fits(l)) else {
        return Ok(data.into_tensor());
    };
    // Exclusive: unwrapped without a copy.
    let mut out = recycled.into_tensor();
    copy_into(site, input, &mut out, &data)?;
    Ok(out)
}

/// `dst = src`, for tensors of one type and shape (a byte copy for plain
/// types: `clone_from_slice` specializes to `copy_from_slice`).
fn copy_into(site: &NodeSite, input: &str, dst: &mut Tensor, src: &Tensor) -> TractResult<()> {
    let mut view = dst.try_as_plain_ram_mut()?;
    dispatch_element!(src.datum_type(), site, input, |T| {
        view.as_slice_mut::<T>()?.clone_from_slice(crate::ops::types::slice::<T>(src)?);
        Ok(())
    }, tdim => {
        view.as_slice_mut::<TDim>()?.clone_from_slice(crate::ops::types::slice::<TDim>(src)?);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::{ScatterElements, ScatterNd, TensorScatter};
    use crate::opset::ScatterOp;
    use scatter_kernels::{Reduction, TensorScatterMode};

    fn nd() -> ScatterNd {
        ScatterNd::onnx(
            NodeSite::new(ScatterOp::ScatterNd, "snd", Some(18)),
            Reduction::None,
        )
    }

    /// data [4, 3] f32, indices [1, 1] i64, updates [1, 3]: `op` writes a
    /// row; with `tail`, its output also feeds a Neg and both are outputs.
    fn model(op: impl Into<Box<dyn TypedOp>>, tail: bool) -> TypedModel {
        let mut model = TypedModel::default();
        let data = model.add_source("data", f32::fact([4, 3])).unwrap();
        let indices = model.add_source("indices", i64::fact([1, 1])).unwrap();
        let updates = model.add_source("updates", f32::fact([1, 3])).unwrap();
        let out = model
            .wire_node("scatter", op.into(), &[data, indices, updates])
            .unwrap();
        let mut outputs = out.to_vec();
        if tail {
            let neg = model
                .wire_node("neg", tract_core::ops::math::neg(), &out)
                .unwrap();
            outputs.push(neg[0]);
        }
        model.select_output_outlets(&outputs).unwrap();
        model.into_optimized().unwrap()
    }

    fn plan(model: TypedModel) -> TypedSimpleState {
        TypedSimplePlan::new(model).unwrap().spawn().unwrap()
    }

    fn flagged(model: &TypedModel) -> bool {
        model.nodes().iter().any(|n| {
            n.op_as::<ScatterNd>().is_some_and(|o| o.reuse_output)
                || n.op_as::<ScatterElements>().is_some_and(|o| o.reuse_output)
                || n.op_as::<TensorScatter>().is_some_and(|o| o.reuse_output)
        })
    }

    fn data(seed: f32) -> TValue {
        Tensor::from_shape(
            &[4, 3],
            &(0..12).map(|i| seed + i as f32).collect::<Vec<_>>(),
        )
        .unwrap()
        .into_tvalue()
    }

    fn inputs(data: &TValue, row: i64, value: f32) -> TVec<TValue> {
        tvec!(
            data.clone(),
            tensor2(&[[row]]).into_tvalue(),
            tensor2(&[[value; 3]]).into_tvalue()
        )
    }

    fn expected(seed: f32, row: usize, value: f32) -> Tensor {
        let mut v: Vec<f32> = (0..12).map(|i| seed + i as f32).collect();
        v[row * 3..row * 3 + 3].fill(value);
        Tensor::from_shape(&[4, 3], &v).unwrap()
    }

    fn ptr(t: &Tensor) -> *const f32 {
        t.try_as_plain_ram()
            .unwrap()
            .as_slice::<f32>()
            .unwrap()
            .as_ptr()
    }

    #[test]
    fn only_a_terminal_model_output_is_flagged() {
        assert!(flagged(&model(nd(), false)));
        assert!(!flagged(&model(nd(), true)));
    }

    #[test]
    fn a_dropped_output_is_reused_when_data_is_shared() {
        let mut state = plan(model(nd(), false));
        let d = data(0.);
        let first = state.run(inputs(&d, 1, 9.)).unwrap().remove(0);
        assert_eq!(*first, expected(0., 1, 9.));
        let p = ptr(&first);
        drop(first);
        let second = state.run(inputs(&d, 2, 7.)).unwrap().remove(0);
        assert_eq!(ptr(&second), p, "the dropped output's buffer is reused");
        assert_eq!(*second, expected(0., 2, 7.));
        assert_eq!(*d, *data(0.), "shared data is untouched");
    }

    #[test]
    fn a_held_output_is_not_reused_and_stays_independent() {
        let mut state = plan(model(nd(), false));
        let d = data(0.);
        let first = state.run(inputs(&d, 1, 9.)).unwrap().remove(0);
        let second = state.run(inputs(&d, 2, 7.)).unwrap().remove(0);
        assert_ne!(ptr(&first), ptr(&second));
        assert_eq!(*first, expected(0., 1, 9.));
        assert_eq!(*second, expected(0., 2, 7.));
        // The state now retains `second`; `first` is the caller's alone.
        drop(second);
        let third = state.run(inputs(&d, 0, 5.)).unwrap().remove(0);
        assert_eq!(*first, expected(0., 1, 9.));
        assert_eq!(*third, expected(0., 0, 5.));
    }

    #[test]
    fn runs_with_different_data_stay_correct() {
        let mut state = plan(model(nd(), false));
        let mut held = vec![];
        for step in 0..8 {
            let seed = step as f32 * 100.;
            let d = data(seed);
            let row = step % 4;
            let out = state
                .run(inputs(
                    &d,
                    row as i64 - 4 * (step % 2) as i64,
                    -1. - step as f32,
                ))
                .unwrap()
                .remove(0);
            assert_eq!(*out, expected(seed, row, -1. - step as f32), "step {step}");
            assert_eq!(*d, *data(seed));
            // Keep every third output: the next run must not write into it.
            if step % 3 == 0 {
                held.push((out, seed, row, -1. - step as f32));
            }
        }
        for (out, seed, row, value) in held {
            assert_eq!(*out, expected(seed, row, value));
        }
    }

    #[test]
    fn fed_back_output_is_written_in_place() {
        let mut state = plan(model(nd(), false));
        let d = data(0.);
        let mut cache = state.run(inputs(&d, 0, 1.)).unwrap().remove(0);
        drop(d);
        let p = ptr(&cache);
        for step in 1..4 {
            let ins = tvec!(
                cache,
                tensor2(&[[step as i64]]).into_tvalue(),
                tensor2(&[[1f32; 3]]).into_tvalue()
            );
            cache = state.run(ins).unwrap().remove(0);
            assert_eq!(
                ptr(&cache),
                p,
                "the retained reference is dropped, not copied"
            );
        }
        assert!(types_all_ones(&cache));
    }

    fn types_all_ones(t: &Tensor) -> bool {
        t.try_as_plain_ram()
            .unwrap()
            .as_slice::<f32>()
            .unwrap()
            .iter()
            .all(|x| *x == 1.)
    }

    #[test]
    fn an_invalid_run_leaves_the_retained_output_usable() {
        let mut state = plan(model(nd(), false));
        let d = data(0.);
        let first = state.run(inputs(&d, 1, 9.)).unwrap().remove(0);
        let p = ptr(&first);
        drop(first);
        let err = state.run(inputs(&d, 4, 0.)).unwrap_err();
        assert!(format!("{err:#}").contains("out of bounds"), "{err:#}");
        let next = state.run(inputs(&d, 3, 2.)).unwrap().remove(0);
        assert_eq!(ptr(&next), p);
        assert_eq!(*next, expected(0., 3, 2.));
    }

    #[test]
    fn scatter_elements_and_tensor_scatter_reuse_too() {
        let se = ScatterElements::onnx(
            NodeSite::new(ScatterOp::ScatterElements, "se", Some(18)),
            0,
            Reduction::None,
        );
        let ts = TensorScatter {
            site: NodeSite::new(ScatterOp::TensorScatter, "ts", Some(24)),
            axis: 1,
            mode: TensorScatterMode::Linear,
            reuse_output: false,
        };
        // ScatterElements: indices [1, 3] at row `r` on every column.
        let mut m = TypedModel::default();
        let data = m.add_source("data", f32::fact([4, 3])).unwrap();
        let indices = m.add_source("indices", i64::fact([1, 3])).unwrap();
        let updates = m.add_source("updates", f32::fact([1, 3])).unwrap();
        let out = m.wire_node("se", se, &[data, indices, updates]).unwrap();
        m.select_output_outlets(&out).unwrap();
        let m = m.into_optimized().unwrap();
        assert!(flagged(&m));
        let mut state = plan(m);
        let d = data_value();
        let mut last = None;
        for r in 0..4i64 {
            let out = state
                .run(tvec!(
                    d.clone(),
                    tensor2(&[[r; 3]]).into_tvalue(),
                    tensor2(&[[-(r as f32); 3]]).into_tvalue()
                ))
                .unwrap()
                .remove(0);
            assert_eq!(*out, expected(0., r as usize, -(r as f32)));
            if let Some(p) = last {
                assert_eq!(ptr(&out), p);
            }
            last = Some(ptr(&out));
        }
        // TensorScatter: cache [1, 4, 3], update [1, 1, 3] at position `w`.
        let mut m = TypedModel::default();
        let cache = m.add_source("cache", f32::fact([1, 4, 3])).unwrap();
        let update = m.add_source("update", f32::fact([1, 1, 3])).unwrap();
        let write = m.add_source("write", i64::fact([1])).unwrap();
        let out = m.wire_node("ts", ts, &[cache, update, write]).unwrap();
        m.select_output_outlets(&out).unwrap();
        let m = m.into_optimized().unwrap();
        assert!(flagged(&m));
        let mut state = plan(m);
        let c = data_value()
            .into_tensor()
            .into_shape(&[1, 4, 3])
            .unwrap()
            .into_tvalue();
        let mut last = None;
        for w in 0..4i64 {
            let out = state
                .run(tvec!(
                    c.clone(),
                    tensor3(&[[[w as f32 + 0.5; 3]]]).into_tvalue(),
                    tensor1(&[w]).into_tvalue()
                ))
                .unwrap()
                .remove(0);
            let want = expected(0., w as usize, w as f32 + 0.5)
                .into_shape(&[1, 4, 3])
                .unwrap();
            assert_eq!(*out, want);
            if let Some(p) = last {
                assert_eq!(ptr(&out), p);
            }
            last = Some(ptr(&out));
        }
    }

    fn data_value() -> TValue {
        data(0.)
    }

    #[test]
    fn strings_are_recycled_by_clone() {
        let mut m = TypedModel::default();
        let data = m.add_source("data", String::fact([3])).unwrap();
        let indices = m.add_source("indices", i64::fact([1, 1])).unwrap();
        let updates = m.add_source("updates", String::fact([1])).unwrap();
        let out = m.wire_node("snd", nd(), &[data, indices, updates]).unwrap();
        m.select_output_outlets(&out).unwrap();
        let mut state = plan(m.into_optimized().unwrap());
        let d = tensor1(&["a".to_string(), "b".into(), "c".into()]).into_tvalue();
        for (i, s) in ["x", "y", "z"].iter().enumerate() {
            let out = state
                .run(tvec!(
                    d.clone(),
                    tensor2(&[[i as i64]]).into_tvalue(),
                    tensor1(&[s.to_string()]).into_tvalue()
                ))
                .unwrap()
                .remove(0);
            let mut want = vec!["a".to_string(), "b".into(), "c".into()];
            want[i] = s.to_string();
            assert_eq!(*out, tensor1(&want));
        }
    }
}
