//! Where a scatter node's output buffer comes from when its data input is
//! shared (the caller keeps its tensor, so the op cannot write in place).
//!
//! Why the pool exists and which buffer a call leaves in it is on
//! [`OutputPool`].

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use scatter_kernels::mechanisms::Mechanism;
use tract_core::internal::*;

use super::known_bfloat16::KnownBfloat16;

/// Outputs a pool keeps unless told otherwise: one per scatter node.
pub(crate) const DEFAULT_CAPACITY: usize = 1;

/// The outputs a scatter node returned, kept to be written again once their
/// callers have dropped them. Cloning shares the pool.
///
/// An execution detail of an optimized model: two pools always compare
/// equal and hash alike, so op equality ignores them, and none is
/// serialized.
///
/// Above glibc's mmap threshold a new allocation takes fresh pages on every
/// run: a page fault and the kernel's zeroing per 4 KiB, several times a
/// warm memcpy. tract's plan keeps no state across `SimplePlan::run` calls,
/// so a node flagged at codegen (its output is a model output and nothing
/// else, `output_is_terminal`) carries an [`OutputPool`] in the op itself:
/// the outputs it returned, shared by every state and thread running the
/// plan. A retained output is reused only once the pool holds its last
/// reference (the caller dropped theirs), checked atomically by
/// `Arc::try_unwrap`, so a live tensor is never written. When no buffer can
/// be reused, the fresh one gets huge-page advice before its first touch
/// (`crate::ops::run::fresh_buffer::fresh_uninit`).
///
/// The pool keeps at most `capacity` outputs (1 by default), the oldest
/// dropped first; [`crate::ops::output_pools`] reaches every pool of a
/// model to resize or release them.
///
/// Which buffer a call leaves in the pool depends on what the caller does
/// with it next. Usually it is the output: the caller drops it before the
/// next call, which writes into it. But a caller that feeds the output back
/// as the next data while keeping it during the call (a KV cache passed as
/// `cache.clone()`) drops the *data* after the call, never the output it
/// now holds: keeping the output would make every call allocate afresh. So
/// when the data input is the pool's last output and the caller holds it
/// too, the pool keeps the data instead; the two buffers then take turns
/// and no call allocates, within the same one retained output.
#[derive(Clone)]
pub struct OutputPool(Arc<Mutex<Retained>>);

struct Retained {
    capacity: usize,
    outputs: VecDeque<TValue>,
    /// The output of the last call, to recognize it when it comes back as
    /// data. A `Weak` keeps only the `Arc`'s header alive, never the
    /// buffer, and stops the address from being reused by another tensor.
    last: Weak<Tensor>,
}

impl OutputPool {
    /// An empty pool keeping at most `capacity` outputs (0 keeps none).
    pub(crate) fn new(capacity: usize) -> OutputPool {
        OutputPool(Arc::new(Mutex::new(Retained {
            capacity,
            outputs: VecDeque::new(),
            last: Weak::new(),
        })))
    }

    /// A poisoned lock only means another thread panicked while holding it:
    /// the queue is still a valid queue.
    fn lock(&self) -> MutexGuard<'_, Retained> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How many outputs the pool keeps at most.
    pub fn capacity(&self) -> usize {
        self.lock().capacity
    }

    /// Keep at most `capacity` outputs from now on (0 keeps none), dropping
    /// the oldest beyond it.
    pub fn set_capacity(&self, capacity: usize) {
        let mut retained = self.lock();
        retained.capacity = capacity;
        let excess = retained.outputs.len().saturating_sub(capacity);
        retained.outputs.drain(..excess);
    }

    /// Drops every retained output (the capacity stays).
    pub fn release(&self) {
        self.lock().outputs.clear();
    }

    /// How many outputs the pool holds now, in use by a caller or not.
    pub fn len(&self) -> usize {
        self.lock().outputs.len()
    }

    /// Whether the pool holds no output now.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of every retained output, in use by a caller or not.
    pub fn retained_bytes(&self) -> usize {
        self.lock()
            .outputs
            .iter()
            .map(|o| o.len() * o.datum_type().size_of())
            .sum()
    }

    /// Bytes the pool alone keeps alive: the retained outputs no caller
    /// holds any more.
    pub fn idle_bytes(&self) -> usize {
        self.lock()
            .outputs
            .iter()
            .filter(|o| o.is_exclusive())
            .map(|o| o.len() * o.datum_type().size_of())
            .sum()
    }

    /// Forgets the retained output that *is* `data` when the pool's
    /// reference is the only other one: the caller moved the last output
    /// back in (a KV cache), and our reference would force a copy instead
    /// of a write in place. When the caller also keeps it, it stays: it
    /// becomes reusable once the caller lets it go.
    fn forget_if_only_other_holder(&self, data: &TValue) {
        let mut retained = self.lock();
        let Some(position) = retained
            .outputs
            .iter()
            .position(|o| std::ptr::eq::<Tensor>(&**o, &**data))
        else {
            return;
        };
        // Under the lock, with us holding `data` and the pool its twin, a
        // count of two cannot rise: nobody else has a reference to clone.
        if data
            .as_arc_tensor()
            .is_some_and(|a| Arc::strong_count(a) == 2)
        {
            retained.outputs.remove(position);
        }
    }

    /// Removes and returns a retained output no caller holds, of `dt` and
    /// `shape`.
    pub(crate) fn take_idle(&self, dt: DatumType, shape: &[usize]) -> Option<Tensor> {
        let mut retained = self.lock();
        let position = retained
            .outputs
            .iter()
            .position(|o| o.is_exclusive() && o.datum_type() == dt && o.shape() == shape)?;
        let output = retained.outputs.remove(position)?;
        // Under the lock with a strong count of one, the pool's reference is
        // the only one: nobody can clone it meanwhile. Were a `Weak` upgraded
        // (tract makes none), this fails and the buffer stays its holder's.
        Arc::try_unwrap(output.into_arc_tensor()).ok()
    }

    /// The data input to keep instead of the output, if `data` is the last
    /// output fed back while its caller keeps it: beside `data` itself,
    /// someone other than the pool holds a reference.
    fn kept_feedback(&self, data: &TValue) -> Option<TValue> {
        let retained = self.lock();
        let arc = data.as_arc_tensor()?;
        if !std::ptr::eq(retained.last.as_ptr(), Arc::as_ptr(arc)) {
            return None;
        }
        let pooled = retained
            .outputs
            .iter()
            .filter(|o| std::ptr::eq::<Tensor>(&***o, &**data))
            .count();
        // A count that moves meanwhile (another thread's clone) only
        // changes which buffer is kept, never what is written where.
        (Arc::strong_count(arc) > 1 + pooled).then(|| data.clone())
    }

    /// Keeps a reference to `kept` (the fed-back data, when
    /// [`OutputPool::kept_feedback`] found it), else to `output` unless it
    /// was written `in_place` into data the caller moved in, dropping the
    /// oldest beyond capacity; remembers `output` as the last one.
    fn retain(&self, output: &TValue, kept: Option<TValue>, in_place: bool) {
        let mut retained = self.lock();
        if let Some(arc) = output.as_arc_tensor() {
            retained.last = Arc::downgrade(arc);
        }
        if retained.capacity == 0 || (in_place && kept.is_none()) {
            return;
        }
        let keep = kept.unwrap_or_else(|| output.clone());
        if !retained
            .outputs
            .iter()
            .any(|o| std::ptr::eq::<Tensor>(&**o, &*keep))
        {
            retained.outputs.push_back(keep);
        }
        let excess = retained.outputs.len().saturating_sub(retained.capacity);
        retained.outputs.drain(..excess);
    }
}

// The pool is a cache of buffers: equal whatever it retains. It lives in
// the op, not in an `OpState`, because `SimplePlan::run` spawns a new
// state for every call and the pool must outlive the call to be any use.
equal_as_kept_state!(OutputPool);

impl std::fmt::Debug for OutputPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let retained = self.lock();
        f.debug_struct("OutputPool")
            .field("capacity", &retained.capacity)
            .field(
                "outputs",
                &retained
                    .outputs
                    .iter()
                    .map(|t| (t.datum_type(), t.shape()))
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// What a call's pool must know of its data input before the data is
/// taken, to leave the right buffer in the pool when the call returns
/// ([`Returning::output`]).
pub(crate) struct Returning<'p> {
    pool: Option<&'p OutputPool>,
    /// The data input, when it is the last output fed back and its caller
    /// keeps it ([`OutputPool::kept_feedback`]): kept instead of the output.
    kept: Option<TValue>,
    /// The address of data's buffer: an output there was written in place.
    data_buffer: Option<usize>,
}

impl OutputPool {
    /// Notes what `pool` (if any) must know of `data` before a call takes
    /// it, and forgets a retained output that is `data` when the pool's
    /// reference is the only other one: the caller moved the last output
    /// back in, and the pool's reference would force a copy.
    pub(crate) fn before_taking<'p>(pool: Option<&'p OutputPool>, data: &TValue) -> Returning<'p> {
        let Some(p) = pool else {
            return Returning {
                pool,
                kept: None,
                data_buffer: None,
            };
        };
        let kept = p.kept_feedback(data);
        p.forget_if_only_other_holder(data);
        Returning {
            pool,
            kept,
            data_buffer: buffer_address(data),
        }
    }
}

impl Returning<'_> {
    /// `output` as the call returns it, after leaving the right buffer in
    /// the pool, if any: the output, or the data input when the caller fed
    /// the last output back and keeps it. An output written in place into
    /// data the caller moved in is not kept: it is the caller's own buffer,
    /// and keeping it would only make a later call free it inside `run` (a
    /// caller moving a fresh cache into each call).
    pub(crate) fn output(self, output: Tensor) -> TValue {
        let output = output.into_tvalue();
        if let Some(pool) = self.pool {
            let in_place =
                self.data_buffer.is_some() && self.data_buffer == buffer_address(&output);
            pool.retain(&output, self.kept, in_place);
        }
        output
    }
}

/// The address of `t`'s plain bytes, when it has any: a scatter written in
/// place returns its data's buffer in another `Tensor` value.
fn buffer_address(t: &Tensor) -> Option<usize> {
    let bytes = t.try_as_plain_ram().ok()?;
    let bytes = bytes.as_bytes();
    (!bytes.is_empty()).then_some(bytes.as_ptr() as usize)
}

/// Whether `node`'s single output is a model output read by no other node
/// (but a [`KnownBfloat16`] mark that hands it on as a model output, read
/// by no other node either): a pool holding one more reference to it then
/// cannot make any op of the graph see a shared input (and copy it).
pub(crate) fn output_is_terminal(model: &TypedModel, node: &TypedNode) -> bool {
    if node.outputs.len() != 1 {
        return false;
    }
    let successors = &node.outputs[0].successors;
    match successors.as_slice() {
        [] => model.outputs.contains(&OutletId::new(node.id, 0)),
        [mark] if !model.outputs.contains(&OutletId::new(node.id, 0)) => {
            let mark = model.node(mark.node);
            mark.op_is::<KnownBfloat16>() && output_is_terminal(model, mark)
        }
        _ => false,
    }
}

/// `TypedOp::codegen` of a pooling op: replaces `node` by `pooled(pool)`
/// when its output is terminal and it has no pool yet.
pub(crate) fn pool_if_terminal<O: TypedOp>(
    model: &TypedModel,
    node: &TypedNode,
    has_pool: bool,
    pooled: impl FnOnce(OutputPool) -> O,
) -> TractResult<Option<TypedModelPatch>> {
    rule_if!(Mechanism::OutputPool.is_on() && !has_pool && output_is_terminal(model, node));
    Ok(Some(TypedModelPatch::replace_single_op(
        model,
        node,
        &node.inputs,
        pooled(OutputPool::new(DEFAULT_CAPACITY)),
    )?))
}

/// An op that keeps an [`OutputPool`] once codegen gave it one
/// ([`pool_if_terminal`]) and takes its output through it
/// ([`OutputPool::before_taking`]).
pub(crate) trait PooledOp: TypedOp {
    /// The op's pool; `None` before codegen gave it one, or when its
    /// output is not terminal.
    fn output_pool(&self) -> Option<&OutputPool>;
}

/// `op` as a [`PooledOp`] when it is an `O`: a home's `as_pooled`.
pub(crate) fn downcast_pooled<O: PooledOp>(op: &dyn TypedOp) -> Option<&dyn PooledOp> {
    op.downcast_ref::<O>().map(|o| o as &dyn PooledOp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::{ScatterElements, ScatterNd, TensorScatter, output_pools};
    use crate::parse::opset::ScatterOp;
    use crate::parse::site::NodeSite;
    use scatter_kernels::{Reduction, TensorScatterMode};
    use std::collections::HashSet;

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

    fn plan(model: TypedModel) -> Arc<TypedSimplePlan> {
        TypedSimplePlan::new(model).unwrap()
    }

    fn pool(plan: &TypedSimplePlan) -> &OutputPool {
        let pools = output_pools(plan.model());
        assert_eq!(pools.len(), 1, "{pools:?}");
        pools[0].1
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

    fn ptr(t: &Tensor) -> *const u8 {
        t.try_as_plain_ram().unwrap().as_bytes().as_ptr()
    }

    #[test]
    fn only_a_terminal_model_output_gets_a_pool() {
        assert_eq!(output_pools(&model(nd(), false)).len(), 1);
        assert!(output_pools(&model(nd(), true)).is_empty());
    }

    #[test]
    fn a_dropped_output_is_reused_by_the_next_one_shot_run() {
        let plan = plan(model(nd(), false));
        let d = data(0.);
        // `SimplePlan::run` makes a fresh state every call.
        let first = plan.run(inputs(&d, 1, 9.)).unwrap().remove(0);
        assert_eq!(*first, expected(0., 1, 9.));
        let p = ptr(&first);
        drop(first);
        assert_eq!(pool(&plan).idle_bytes(), 48);
        let second = plan.run(inputs(&d, 2, 7.)).unwrap().remove(0);
        assert_eq!(ptr(&second), p, "the dropped output's buffer is reused");
        assert_eq!(*second, expected(0., 2, 7.));
        assert_eq!(*d, *data(0.), "shared data is untouched");
    }

    #[test]
    fn a_held_output_is_not_reused_and_stays_independent() {
        let plan = plan(model(nd(), false));
        let d = data(0.);
        let first = plan.run(inputs(&d, 1, 9.)).unwrap().remove(0);
        let second = plan.run(inputs(&d, 2, 7.)).unwrap().remove(0);
        assert_ne!(ptr(&first), ptr(&second));
        assert_eq!(*first, expected(0., 1, 9.));
        assert_eq!(*second, expected(0., 2, 7.));
        // The pool now retains `second` only; `first` is the caller's alone.
        assert_eq!(pool(&plan).len(), 1);
        drop(second);
        let third = plan.run(inputs(&d, 0, 5.)).unwrap().remove(0);
        assert_eq!(*first, expected(0., 1, 9.));
        assert_eq!(*third, expected(0., 0, 5.));
    }

    #[test]
    fn runs_with_different_data_stay_correct() {
        let plan = plan(model(nd(), false));
        let mut state = plan.spawn().unwrap();
        let mut held = vec![];
        for step in 0..8 {
            let seed = step as f32 * 100.;
            let d = data(seed);
            let row = step % 4;
            let ins = inputs(&d, row as i64 - 4 * (step % 2) as i64, -1. - step as f32);
            // Alternate a persistent state and one-shot runs: one pool.
            let out = if step % 3 == 1 {
                plan.run(ins)
            } else {
                state.run(ins)
            }
            .unwrap()
            .remove(0);
            assert_eq!(*out, expected(seed, row, -1. - step as f32), "step {step}");
            assert_eq!(*d, *data(seed));
            // Keep every third output: no later run may write into it.
            if step % 3 == 0 {
                held.push((out, seed, row, -1. - step as f32));
            }
        }
        for (out, seed, row, value) in held {
            assert_eq!(*out, expected(seed, row, value));
        }
    }

    #[test]
    fn outputs_kept_across_threads_are_never_written_again() {
        let plan = plan(model(nd(), false));
        pool(&plan).set_capacity(2);
        let d = data(0.);
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let (plan, d) = (plan.clone(), d.clone());
                std::thread::spawn(move || {
                    let mut kept = vec![];
                    for step in 0..200 {
                        let (row, value) = (step % 4, (t * 1000 + step) as f32);
                        let out = plan.run(inputs(&d, row as i64, value)).unwrap().remove(0);
                        assert_eq!(*out, expected(0., row, value));
                        // Keep one output in five, drop the others at once.
                        if step % 5 == 0 {
                            kept.push((out, row, value));
                        }
                    }
                    kept
                })
            })
            .collect();
        for thread in threads {
            for (out, row, value) in thread.join().unwrap() {
                assert_eq!(
                    *out,
                    expected(0., row, value),
                    "a kept output was overwritten"
                );
            }
        }
        assert!(pool(&plan).len() <= 2);
        assert_eq!(*d, *data(0.));
    }

    #[test]
    fn fed_back_output_is_written_in_place() {
        let plan = plan(model(nd(), false));
        let d = data(0.);
        let mut cache = plan.run(inputs(&d, 0, 1.)).unwrap().remove(0);
        drop(d);
        let p = ptr(&cache);
        for step in 1..4 {
            let ins = tvec!(
                cache,
                tensor2(&[[step as i64]]).into_tvalue(),
                tensor2(&[[1f32; 3]]).into_tvalue()
            );
            cache = plan.run(ins).unwrap().remove(0);
            assert_eq!(
                ptr(&cache),
                p,
                "the pool's reference is dropped, not copied"
            );
        }
        let values = cache.try_as_plain_ram().unwrap();
        assert!(values.as_slice::<f32>().unwrap().iter().all(|x| *x == 1.));
    }

    /// A caller that owns its data and moves a fresh tensor into each call:
    /// every output is written in place into the buffer moved in, and the
    /// pool keeps none of them (the caller frees its own, outside `run`);
    /// the outputs the caller keeps are never written again.
    #[test]
    fn data_moved_in_fresh_each_call_is_written_in_place_and_never_retained() {
        let plan = plan(model(nd(), false));
        let mut kept = vec![];
        for step in 0..4 {
            let fresh = data(step as f32);
            let buffer = ptr(&fresh);
            let ins = tvec!(
                fresh,
                tensor2(&[[step as i64]]).into_tvalue(),
                tensor2(&[[-1f32; 3]]).into_tvalue()
            );
            let out = plan.run(ins).unwrap().remove(0);
            assert_eq!(ptr(&out), buffer, "step {step}: written in place");
            assert!(pool(&plan).is_empty(), "step {step}: nothing retained");
            kept.push(out);
        }
        for (step, out) in kept.iter().enumerate() {
            assert_eq!(**out, expected(step as f32, step, -1.), "step {step}");
        }
    }

    /// Feeds each output back as the next data, the caller keeping it
    /// during the call (`inputs` clones), for `steps` calls at `capacity`;
    /// checks every output and returns the buffers of the calls after the
    /// second and the most outputs the pool held at once.
    fn keep_and_feed_back(capacity: usize, steps: usize) -> (HashSet<*const u8>, usize) {
        let plan = plan(model(nd(), false));
        pool(&plan).set_capacity(capacity);
        let mut cache = data(0.);
        let mut want: Vec<f32> = (0..12).map(|i| i as f32).collect();
        let (mut buffers, mut most) = (HashSet::new(), 0);
        for step in 0..steps {
            let out = plan
                .run(inputs(&cache, (step % 4) as i64, step as f32))
                .unwrap()
                .remove(0);
            want[step % 4 * 3..step % 4 * 3 + 3].fill(step as f32);
            assert_eq!(*out, Tensor::from_shape(&[4, 3], &want).unwrap());
            most = most.max(pool(&plan).len());
            cache = out;
            if step >= 2 {
                buffers.insert(ptr(&cache));
            }
        }
        (buffers, most)
    }

    #[test]
    fn a_cache_kept_and_fed_back_alternates_two_buffers_at_the_default_capacity() {
        let (buffers, most) = keep_and_feed_back(DEFAULT_CAPACITY, 10);
        assert_eq!(buffers.len(), 2, "double buffering, no fresh allocation");
        assert_eq!(most, 1, "one retained output, the previous cache");
    }

    #[test]
    fn a_cache_kept_and_fed_back_alternates_two_buffers_at_capacity_two() {
        let (buffers, most) = keep_and_feed_back(2, 10);
        assert_eq!(buffers.len(), 2);
        assert!(most <= 2);
    }

    #[test]
    fn a_kept_former_output_used_again_and_again_reuses_after_one_call() {
        let plan = plan(model(nd(), false));
        let d = data(0.);
        let base = plan.run(inputs(&d, 0, 1.)).unwrap().remove(0);
        let mut buffers = HashSet::new();
        for step in 0..6 {
            // `base` was the pool's last output: kept once, then the outputs.
            let out = plan.run(inputs(&base, 1, step as f32)).unwrap().remove(0);
            let mut want = expected(0., 0, 1.);
            want.try_as_plain_ram_mut()
                .unwrap()
                .as_slice_mut::<f32>()
                .unwrap()[3..6]
                .fill(step as f32);
            assert_eq!(*out, want);
            if step >= 2 {
                buffers.insert(ptr(&out));
            }
            assert_ne!(ptr(&out), ptr(&base));
        }
        assert_eq!(buffers.len(), 1, "the dropped output is reused");
        assert_eq!(*base, expected(0., 0, 1.));
    }

    #[test]
    fn an_invalid_run_leaves_the_retained_output_usable() {
        let plan = plan(model(nd(), false));
        let d = data(0.);
        let first = plan.run(inputs(&d, 1, 9.)).unwrap().remove(0);
        let p = ptr(&first);
        drop(first);
        let err = plan.run(inputs(&d, 4, 0.)).unwrap_err();
        assert!(format!("{err:#}").contains("out of bounds"), "{err:#}");
        let next = plan.run(inputs(&d, 3, 2.)).unwrap().remove(0);
        assert_eq!(ptr(&next), p);
        assert_eq!(*next, expected(0., 3, 2.));
    }

    #[test]
    fn release_and_capacity_zero_free_the_retained_output() {
        let plan = plan(model(nd(), false));
        let d = data(0.);
        drop(plan.run(inputs(&d, 1, 9.)).unwrap());
        let pool = pool(&plan);
        assert_eq!((pool.capacity(), pool.len(), pool.idle_bytes()), (1, 1, 48));
        pool.release();
        assert_eq!((pool.len(), pool.idle_bytes()), (0, 0));
        pool.set_capacity(0);
        let out = plan.run(inputs(&d, 2, 3.)).unwrap().remove(0);
        assert!(
            out.is_exclusive(),
            "a pool of capacity 0 keeps no reference"
        );
        assert!(pool.is_empty());
        pool.set_capacity(1);
        drop(plan.run(inputs(&d, 2, 3.)).unwrap());
        assert_eq!(pool.len(), 1);
    }

    #[test]
    fn capacity_two_alternates_buffers_while_the_caller_holds_the_last() {
        let plan = plan(model(nd(), false));
        pool(&plan).set_capacity(2);
        let d = data(0.);
        let mut previous = plan.run(inputs(&d, 0, 1.)).unwrap().remove(0);
        let mut current = plan.run(inputs(&d, 1, 2.)).unwrap().remove(0);
        let buffers = [ptr(&previous), ptr(&current)];
        for step in 2..10 {
            drop(previous);
            let next = plan
                .run(inputs(&d, step % 4, step as f32))
                .unwrap()
                .remove(0);
            assert!(buffers.contains(&ptr(&next)), "step {step}: a third buffer");
            assert_eq!(*next, expected(0., step as usize % 4, step as f32));
            (previous, current) = (current, next);
        }
        assert_eq!(*current, expected(0., 1, 9.));
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
            output_pool: None,
        };
        // ScatterElements: indices [1, 3] at row `r` on every column.
        let mut m = TypedModel::default();
        let data_in = m.add_source("data", f32::fact([4, 3])).unwrap();
        let indices = m.add_source("indices", i64::fact([1, 3])).unwrap();
        let updates = m.add_source("updates", f32::fact([1, 3])).unwrap();
        let out = m.wire_node("se", se, &[data_in, indices, updates]).unwrap();
        m.select_output_outlets(&out).unwrap();
        let plan_se = plan(m.into_optimized().unwrap());
        let d = data(0.);
        let mut last = None;
        for r in 0..4i64 {
            let out = plan_se
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
        let plan_ts = plan(m.into_optimized().unwrap());
        let c = data(0.)
            .into_tensor()
            .into_shape(&[1, 4, 3])
            .unwrap()
            .into_tvalue();
        let mut last = None;
        for w in 0..4i64 {
            let out = plan_ts
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

    #[test]
    fn strings_are_reused_by_clone() {
        let mut m = TypedModel::default();
        let data = m.add_source("data", String::fact([3])).unwrap();
        let indices = m.add_source("indices", i64::fact([1, 1])).unwrap();
        let updates = m.add_source("updates", String::fact([1])).unwrap();
        let out = m.wire_node("snd", nd(), &[data, indices, updates]).unwrap();
        m.select_output_outlets(&out).unwrap();
        let plan = plan(m.into_optimized().unwrap());
        let d = tensor1(&["a".to_string(), "b".into(), "c".into()]).into_tvalue();
        for (i, s) in ["x", "y", "z"].iter().enumerate() {
            let out = plan
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

    #[test]
    fn a_fresh_copy_equals_its_source_whatever_its_size() {
        let site = NodeSite::new(ScatterOp::ScatterNd, "snd", Some(18));
        let fresh_copy = |src: &Tensor| {
            let shared = src.clone().into_tvalue();
            let _caller = shared.clone();
            let plain = crate::ops::run::speed_policy::plain_copy(&scatter_kernels::Serial);
            let (taken, _) = crate::ops::run::copy_target::take::<
                crate::ops::run::fresh_buffer::NoFusion,
            >(&site, "data", shared, None, plain, None)
            .unwrap();
            let (crate::ops::run::copy_target::Taken::Data(t)
            | crate::ops::run::copy_target::Taken::Scattered(t)) = taken;
            t
        };
        for len in [0usize, 1, 1000, (5 << 20) / 4 + 3] {
            let src = Tensor::from_shape(&[len], &(0..len).map(|i| i as f32).collect::<Vec<_>>())
                .unwrap();
            assert_eq!(fresh_copy(&src), src, "{len} floats");
        }
        let s = tensor1(&["a".to_string(), "bc".into()]);
        assert_eq!(fresh_copy(&s), s);
        let b = tensor2(&[[true, false], [false, true]]);
        assert_eq!(fresh_copy(&b), b);
    }

    #[test]
    fn two_pools_never_make_two_ops_differ() {
        use std::hash::{BuildHasher, RandomState};
        let pooled = |capacity| ScatterNd {
            output_pool: Some(OutputPool::new(capacity)),
            ..nd()
        };
        let (a, b) = (pooled(1), pooled(2));
        assert_eq!(a, b);
        let state = RandomState::new();
        assert_eq!(state.hash_one(&a), state.hash_one(&b));
    }
}
