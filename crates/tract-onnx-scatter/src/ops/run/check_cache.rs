//! A scatter's check of its indices (and a ScatterND's sort of them by
//! destination block), kept while its indices do not change.
//!
//! Why it is safe to key on a tensor's identity, and what is kept, is on
//! [`CheckCache`].

use std::sync::{Arc, Mutex};

use scatter_kernels::CheckedIndices;
use scatter_kernels::{
    BlockSort, CheckedElementsIndices, CheckedNdIndices, ElementsKeptCheck, ElementsPlan,
    Execution, IndexValue, NdKeptCheck, NdPlan, ScatterError,
};
use tract_core::internal::*;

/// What a check was made from: the indices tensor (kept alive and
/// unwritten by this `Arc`; its shape is the plan's indices shape), and
/// the data shape of the plan that checked it and the element size its
/// sorts were for; and what the kernels gave to keep of it.
struct Kept<K> {
    indices: Arc<Tensor>,
    data_shape: TVec<usize>,
    element_bytes: Option<usize>,
    check: K,
}

/// The last check of a scatter node's indices (`K`: what the kernels
/// keep of it), and how many calls reused it.
///
/// A scatter reads all its indices to check them before it writes; a
/// large random-index ScatterND also counting-sorts the update slices by
/// destination block in that pass ([`NdPlan::check_indices`] with
/// [`scatter_kernels::BlockSort::ForElementBytes`]).
/// Either can be half of the run of a scatter of many small slices (the
/// benchmark's 1e6-element ScatterND with its sort; its 1M-update
/// histogram with the check alone). When the very same indices tensor
/// comes back — a constant of the model, or an input the caller keeps and
/// passes again — neither needs doing again.
///
/// "The very same" is the tensor's identity, not its values: the cache
/// holds an `Arc` of the indices it checked, so that tensor can be neither
/// freed (its address reused by another) nor written (tract writes a
/// tensor only through an exclusive `Arc`) while it is kept. Only indices
/// someone else also holds are kept (a constant node, the caller): a
/// value made for this call alone will not come back, and keeping it would
/// only keep its memory. One indices tensor per node is kept, the last
/// checked, until another replaces it or the op is dropped. A kept check
/// is reused only by a plan of the same data shape and element size, and
/// the kernels refuse one made against other dimensions
/// ([`NdPlan::reuse_check`], [`ElementsPlan::reuse_check`]): then
/// the indices are checked again.
///
/// Like the output pool, the cache is an execution detail of the op: it
/// lives in the op (tract's `SimplePlan::run` spawns a new state per
/// call), is shared by its clones, and is ignored by equality and hashing.
pub(crate) struct CheckCache<K>(Arc<Mutex<State<K>>>);

/// A ScatterND's cache: the check and, when it sorted, the sort.
pub(crate) type NdCheckCache = CheckCache<NdKeptCheck>;

/// A ScatterElements' (or Scatter's) cache.
pub(crate) type ElementsCheckCache = CheckCache<ElementsKeptCheck>;

struct State<K> {
    kept: Option<Kept<K>>,
    reused: usize,
}

impl<K> Clone for CheckCache<K> {
    fn clone(&self) -> Self {
        CheckCache(self.0.clone())
    }
}

impl<K> Default for CheckCache<K> {
    fn default() -> Self {
        CheckCache(Arc::new(Mutex::new(State {
            kept: None,
            reused: 0,
        })))
    }
}

/// How a ScatterND's indices are checked: on which threads and schedule,
/// sorted by destination block or not, and, for a kept check, whether
/// it is sorted for a split once (all decided by
/// [`crate::ops::run::speed_policy::scatter_nd`]).
#[derive(Clone, Copy)]
pub(crate) struct NdCheck<'e> {
    /// Where and with which schedule the check runs.
    pub(crate) exec: Execution<'e>,
    /// Whether the check sorts the update slices by destination block.
    pub(crate) block_sort: BlockSort,
    /// `Some`: a kept check is sorted by destination for a split over
    /// these threads, once.
    pub(crate) split: Option<Execution<'e>>,
    /// The size of a data element, for both sorts.
    pub(crate) element_bytes: usize,
}

/// A kernels' plan whose check of indices a host may keep: how it checks,
/// what it keeps of a token, and the token again from that, without
/// reading the indices.
pub(crate) trait KeepsChecks {
    /// What is kept.
    type Kept: Clone;
    /// The checked token, whose scatter a copy of the data can be fused
    /// with.
    type Token<'a, I: IndexValue>: CheckedIndices
    where
        Self: 'a;
    /// How the indices are checked.
    type How<'e>: Copy;

    /// The data shape the plan checks against, part of what a kept check
    /// must match to be reused.
    fn data_shape(&self) -> &[usize];

    /// The element size a check made `how` sorts for, also part of what a
    /// kept check must match (`None`: the check does not depend on it).
    fn element_bytes(how: &Self::How<'_>) -> Option<usize>;

    /// The kernels' check of `indices`.
    fn check<'a, I: IndexValue>(
        &'a self,
        indices: &'a [I],
        how: Self::How<'_>,
    ) -> Result<Self::Token<'a, I>, ScatterError>;

    /// A better token made of a reused one (work worth paying once for
    /// indices that come back, not on every call for indices that may
    /// not), or `None`.
    fn refine<'a, I: IndexValue>(
        token: &Self::Token<'a, I>,
        how: Self::How<'_>,
    ) -> Option<Self::Token<'a, I>>
    where
        Self: 'a;

    /// What to keep of `token` to make it again with [`Self::reuse`].
    fn keep<I: IndexValue>(token: &Self::Token<'_, I>) -> Self::Kept;

    /// The token for `indices` from `kept`; `Err` when the kernel refuses
    /// it (other dimensions or length).
    ///
    /// # Safety
    /// As the kernels' `reuse_check`: `indices` are the very values a
    /// check accepted when it made `kept`, unchanged since.
    unsafe fn reuse<'a, I: IndexValue>(
        &'a self,
        indices: &'a [I],
        kept: &Self::Kept,
    ) -> Result<Self::Token<'a, I>, ScatterError>;
}

impl KeepsChecks for NdPlan {
    type Kept = NdKeptCheck;
    type Token<'a, I: IndexValue> = CheckedNdIndices<'a, I>;
    type How<'e> = NdCheck<'e>;

    fn data_shape(&self) -> &[usize] {
        NdPlan::data_shape(self)
    }

    fn element_bytes(how: &NdCheck<'_>) -> Option<usize> {
        Some(how.element_bytes)
    }

    fn check<'a, I: IndexValue>(
        &'a self,
        indices: &'a [I],
        how: NdCheck<'_>,
    ) -> Result<CheckedNdIndices<'a, I>, ScatterError> {
        self.check_indices(indices, how.exec, how.block_sort)
    }

    fn refine<'a, I: IndexValue>(
        token: &CheckedNdIndices<'a, I>,
        how: NdCheck<'_>,
    ) -> Option<CheckedNdIndices<'a, I>>
    where
        Self: 'a,
    {
        token.sorted_for_split(how.element_bytes, how.split?)
    }

    fn keep<I: IndexValue>(token: &CheckedNdIndices<'_, I>) -> NdKeptCheck {
        token.kept_check()
    }

    unsafe fn reuse<'a, I: IndexValue>(
        &'a self,
        indices: &'a [I],
        kept: &NdKeptCheck,
    ) -> Result<CheckedNdIndices<'a, I>, ScatterError> {
        // SAFETY: the caller's promise, passed on.
        unsafe { self.reuse_check(indices, kept) }
    }
}

impl KeepsChecks for ElementsPlan {
    type Kept = ElementsKeptCheck;
    type Token<'a, I: IndexValue> = CheckedElementsIndices<'a, I>;
    type How<'e> = Execution<'e>;

    fn data_shape(&self) -> &[usize] {
        ElementsPlan::data_shape(self)
    }

    fn element_bytes(_exec: &Execution<'_>) -> Option<usize> {
        None
    }

    fn check<'a, I: IndexValue>(
        &'a self,
        indices: &'a [I],
        exec: Execution<'_>,
    ) -> Result<CheckedElementsIndices<'a, I>, ScatterError> {
        self.check_indices(indices, exec)
    }

    /// Nothing to refine: a kept check is all there is.
    fn refine<'a, I: IndexValue>(
        _token: &CheckedElementsIndices<'a, I>,
        _exec: Execution<'_>,
    ) -> Option<CheckedElementsIndices<'a, I>>
    where
        Self: 'a,
    {
        None
    }

    fn keep<I: IndexValue>(token: &CheckedElementsIndices<'_, I>) -> ElementsKeptCheck {
        token.kept_check()
    }

    unsafe fn reuse<'a, I: IndexValue>(
        &'a self,
        indices: &'a [I],
        kept: &ElementsKeptCheck,
    ) -> Result<CheckedElementsIndices<'a, I>, ScatterError> {
        // SAFETY: the caller's promise, passed on.
        unsafe { self.reuse_check(indices, kept) }
    }
}

impl<K: Clone> CheckCache<K> {
    /// The token for `indices`: from the kept check when `kept` is given,
    /// `indices` are its data, and the check was made from that same
    /// tensor by a plan of the same data shape, for the same element size
    /// ([`KeepsChecks::element_bytes`] of `how`; and the kernel accepts it
    /// for `plan`); else the plan's check `how`, which is
    /// then kept when `kept` is given. `kept`: the indices tensor when
    /// someone besides this call holds it (a constant, the caller), so it
    /// may come back.
    ///
    /// When the kept check is reused, [`KeepsChecks::refine`] may make a
    /// better token of it, which is kept instead, so that it is made once.
    pub(crate) fn checked<'a, P: KeepsChecks<Kept = K>, I: IndexValue>(
        &self,
        plan: &'a P,
        indices: &'a [I],
        kept: Option<&Arc<Tensor>>,
        how: P::How<'_>,
    ) -> Result<P::Token<'a, I>, ScatterError> {
        let element_bytes = P::element_bytes(&how);
        let own = |t: &Arc<Tensor>| {
            t.try_as_plain_ram()
                .is_ok_and(|b| std::ptr::eq(b.as_bytes().as_ptr(), indices.as_ptr().cast()))
        };
        let Some(kept) = kept.filter(|t| own(t)) else {
            return plan.check(indices, how);
        };
        let same = |k: &Kept<K>| {
            Arc::ptr_eq(&k.indices, kept)
                && k.element_bytes == element_bytes
                && k.data_shape[..] == *plan.data_shape()
        };
        let hit = self
            .lock()
            .kept
            .as_ref()
            .filter(|k| same(k))
            .map(|k| k.check.clone());
        // SAFETY: `indices` is the data of `kept` (`own`), the very
        // tensor the kept check was made from by a plan of the same data
        // shape: held by the cache since, it was neither freed nor written
        // (module doc), so these are the values that check accepted. The
        // kernel refuses a check of other dimensions or another length.
        if let Some(token) = hit.and_then(|k| unsafe { plan.reuse(indices, &k) }.ok()) {
            let Some(refined) = P::refine(&token, how) else {
                self.lock().reused += 1;
                return Ok(token);
            };
            let mut state = self.lock();
            state.reused += 1;
            // Another call may have kept other indices meanwhile.
            if let Some(k) = state.kept.as_mut().filter(|k| same(k)) {
                k.check = P::keep(&refined);
            }
            return Ok(refined);
        }
        let token = plan.check(indices, how)?;
        self.lock().kept = Some(Kept {
            indices: kept.clone(),
            data_shape: plan.data_shape().into(),
            element_bytes,
            check: P::keep(&token),
        });
        Ok(token)
    }

    /// The kept check, if any: only tests read it.
    #[cfg(test)]
    pub(crate) fn kept(&self) -> Option<K> {
        self.lock().kept.as_ref().map(|k| k.check.clone())
    }

    /// How many calls applied a kept check instead of checking again
    /// (only tests read it).
    #[cfg(test)]
    pub(crate) fn reused(&self) -> usize {
        self.lock().reused
    }
}

impl<K> CheckCache<K> {
    fn lock(&self) -> std::sync::MutexGuard<'_, State<K>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

equal_as_kept_state!(CheckCache<K>);

impl<K> std::fmt::Debug for CheckCache<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = if self.lock().kept.is_some() {
            "kept"
        } else {
            "empty"
        };
        write!(f, "CheckCache({state})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(values: &[i64], shape: &[usize]) -> Arc<Tensor> {
        Arc::new(
            tract_ndarray::ArrayD::from_shape_vec(shape, values.to_vec())
                .unwrap()
                .into(),
        )
    }

    fn nd_check(element_bytes: usize) -> NdCheck<'static> {
        NdCheck {
            exec: Execution::SERIAL,
            block_sort: BlockSort::ForElementBytes(element_bytes),
            split: None,
            element_bytes,
        }
    }

    #[test]
    fn a_scatter_nd_check_is_reused_only_for_the_element_size_it_was_sorted_for() {
        let plan = NdPlan::new(&[4, 3], &[2, 1], &[2, 3]).unwrap();
        let indices = held(&[3, 1], &[2, 1]);
        let values = indices.try_as_plain_ram().unwrap();
        let values = values.as_slice::<i64>().unwrap();
        let cache = NdCheckCache::default();
        for (element_bytes, reused) in [(4, 0), (4, 1), (8, 1), (8, 2), (4, 2)] {
            cache
                .checked(&plan, values, Some(&indices), nd_check(element_bytes))
                .unwrap();
            assert_eq!(
                cache.reused(),
                reused,
                "after a check for {element_bytes} bytes"
            );
        }
    }

    #[test]
    fn a_scatter_elements_check_is_reused_whatever_the_element_size() {
        let plan = ElementsPlan::new(&[4, 3], &[2, 3], &[2, 3], 0).unwrap();
        let indices = held(&[3, 1, 0, 2, 2, 1], &[2, 3]);
        let values = indices.try_as_plain_ram().unwrap();
        let values = values.as_slice::<i64>().unwrap();
        let cache = ElementsCheckCache::default();
        for reused in [0, 1, 2] {
            cache
                .checked(&plan, values, Some(&indices), Execution::SERIAL)
                .unwrap();
            assert_eq!(cache.reused(), reused);
        }
    }

    #[test]
    fn indices_whose_slice_is_not_the_kept_tensor_are_checked_and_not_kept() {
        let plan = NdPlan::new(&[4, 3], &[2, 1], &[2, 3]).unwrap();
        let indices = held(&[3, 1], &[2, 1]);
        let cache = NdCheckCache::default();
        for _ in 0..2 {
            cache
                .checked(&plan, &[3i64, 1], Some(&indices), nd_check(4))
                .unwrap();
        }
        assert!(cache.kept().is_none());
        assert_eq!(cache.reused(), 0);
    }
}

#[cfg(test)]
mod through_a_plan {
    //! A ScatterND or ScatterElements keeps the check (and, for a large
    //! random-index ScatterND, the sort) of indices that come back
    //! (`crate::ops::run::check_cache`): the same indices tensor passed
    //! again (or a constant of the model) is neither checked nor sorted again,
    //! and gives the output a fresh check gives; any other tensor, whatever its
    //! values, is checked (and sorted) again.
    //!
    //! `LARGE` is just past the kernels' blocking thresholds
    //! (`scatter_kernels::Schedule::DEFAULT`: 8 MiB of output, 64 updates per
    //! 256 KiB block), where the ScatterND sorts its updates; `SMALL` is far
    //! below them, where it only checks them.

    use crate::graph;

    use crate::ops::{ScatterElements, ScatterNd};
    use crate::tract_core::tract_linalg::multithread::{Executor, multithread_tract_scope};
    use crate::tract_onnx::prelude::*;
    use graph::Graph;

    /// The data shape and the number of index tuples of a test graph.
    #[derive(Clone, Copy)]
    struct Size {
        data: [usize; 2],
        tuples: usize,
    }

    const LARGE: Size = Size {
        data: [2048, 1024],
        tuples: 1 << 14,
    };

    const SMALL: Size = Size {
        data: [64, 32],
        tuples: 1 << 10,
    };

    /// Index tuples of `LARGE` in `[-d, d)` per component, from `seed`.
    fn indices(seed: u64) -> Tensor {
        indices_of(LARGE, seed)
    }

    /// Index tuples of `size` in `[-d, d)` per component, from `seed`.
    fn indices_of(Size { data, tuples }: Size, seed: u64) -> Tensor {
        let mut s = seed;
        let mut below = |n: usize| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 33) % (2 * n as u64)) as i64 - n as i64
        };
        let v: Vec<i64> = (0..tuples)
            .flat_map(|_| [below(data[0]), below(data[1])])
            .collect();
        Tensor::from_shape(&[tuples, 2], &v).unwrap()
    }

    fn floats(n: usize, scale: f32) -> Vec<f32> {
        (0..n).map(|i| (i % 97) as f32 * scale).collect()
    }

    fn data() -> Tensor {
        data_of(LARGE)
    }

    fn data_of(Size { data, .. }: Size) -> Tensor {
        Tensor::from_shape(&data, &floats(data[0] * data[1], 0.5)).unwrap()
    }

    fn updates() -> Tensor {
        updates_of(LARGE)
    }

    fn updates_of(Size { tuples, .. }: Size) -> Tensor {
        Tensor::from_shape(&[tuples], &floats(tuples, -1.25)).unwrap()
    }

    /// ScatterND(add) of `[tuples]` updates into `data`; `indices` an
    /// initializer when given, else an input.
    fn graph(Size { data, tuples }: Size, constant: Option<&Tensor>) -> Graph {
        let g = Graph::new(18).input_c("data", DatumType::F32, &data);
        let g = match constant {
            Some(t) => g.init("indices", t),
            None => g.input_c("indices", DatumType::I64, &[tuples, 2]),
        };
        g.input_c("updates", DatumType::F32, &[tuples])
            .node(
                "ScatterND",
                &["data", "indices", "updates"],
                &["out"],
                vec![graph::attr_string("reduction", "add")],
            )
            .output("out", DatumType::F32)
    }

    fn plan(constant: Option<&Tensor>) -> Arc<TypedSimplePlan> {
        plan_of(LARGE, constant)
    }

    fn plan_of(size: Size, constant: Option<&Tensor>) -> Arc<TypedSimplePlan> {
        graph(size, constant)
            .optimized()
            .unwrap()
            .into_runnable()
            .unwrap()
    }

    /// Whether the plan's ScatterND keeps a check (`Some`), whether that holds
    /// a sort (`Some(true)`), and how many calls reused one.
    fn kept(plan: &Arc<TypedSimplePlan>) -> (Option<bool>, usize) {
        let cache = &only_op::<ScatterNd>(plan).check_cache;
        (cache.kept().map(|k| k.is_sorted()), cache.reused())
    }

    /// The plan's one op of type `O`.
    fn only_op<O: TypedOp>(plan: &Arc<TypedSimplePlan>) -> &O {
        let ops: Vec<&O> = plan
            .model()
            .nodes()
            .iter()
            .filter_map(|n| n.op_as::<O>())
            .collect();
        assert_eq!(
            ops.len(),
            1,
            "one {} in the plan",
            std::any::type_name::<O>()
        );
        ops[0]
    }

    /// A run of a plan of `size` on a copy of `indices` nobody else holds.
    fn run_alone(size: Size, plan: &Arc<TypedSimplePlan>, indices: &Tensor) -> Tensor {
        let out = plan
            .run(tvec![
                data_of(size).into_tvalue(),
                indices.clone().into_tvalue(),
                updates_of(size).into_tvalue()
            ])
            .unwrap();
        out[0].clone().into_tensor()
    }

    /// The output of a plan of `size` that never saw any indices before, on
    /// one thread, from a copy of `indices` nobody else holds.
    fn fresh_output_of(size: Size, indices: &Tensor) -> Tensor {
        run_alone(size, &plan_of(size, None), indices)
    }

    /// A run of a plan of `size` with `indices` held by the caller too.
    fn run_of(size: Size, plan: &Arc<TypedSimplePlan>, indices: &TValue) -> TractResult<Tensor> {
        let out = plan.run(tvec![
            data_of(size).into_tvalue(),
            indices.clone(),
            updates_of(size).into_tvalue()
        ])?;
        Ok(out[0].clone().into_tensor())
    }

    /// The output of a `LARGE` plan that never saw any indices before.
    fn fresh_output(indices: &Tensor) -> Tensor {
        fresh_output_of(LARGE, indices)
    }

    /// A run of a `LARGE` plan with `indices` held by the caller too.
    fn run_keeping(plan: &Arc<TypedSimplePlan>, indices: &TValue) -> TractResult<Tensor> {
        run_of(LARGE, plan, indices)
    }

    #[test]
    fn indices_the_caller_passes_again_reuse_their_sort_with_the_same_output() {
        let plan = plan(None);
        let a = indices(1).into_tvalue();
        let want = fresh_output(&a);
        assert_eq!(kept(&plan), (None, 0));
        assert_eq!(run_keeping(&plan, &a).unwrap(), want);
        assert_eq!(
            kept(&plan),
            (Some(true), 0),
            "the sort of kept indices is kept"
        );
        for calls in 1..=2 {
            assert_eq!(run_keeping(&plan, &a).unwrap(), want);
            assert_eq!(kept(&plan), (Some(true), calls), "and reused");
        }
    }

    #[test]
    fn another_indices_tensor_is_checked_and_sorted_again_whatever_its_values() {
        let plan = plan(None);
        let a = indices(1).into_tvalue();
        run_keeping(&plan, &a).unwrap();
        assert_eq!(kept(&plan), (Some(true), 0));
        // Other values: the output of their own sort, not of the kept one.
        let b = indices(2).into_tvalue();
        assert_eq!(run_keeping(&plan, &b).unwrap(), fresh_output(&b));
        // The same values in another tensor, and the first tensor again.
        let a_copy = (*a).clone().into_tvalue();
        let want = fresh_output(&a);
        assert_eq!(run_keeping(&plan, &a_copy).unwrap(), want);
        assert_eq!(run_keeping(&plan, &a).unwrap(), want);
        assert_eq!(
            kept(&plan),
            (Some(true), 0),
            "no call reused another's sort"
        );
        // Out-of-bounds values after a kept sort: refused, as ever.
        let mut bad = (*a).clone();
        bad.try_as_plain_ram_mut()
            .unwrap()
            .as_slice_mut::<i64>()
            .unwrap()[7] = 5000;
        let err = run_keeping(&plan, &bad.into_tvalue()).unwrap_err();
        let message = format!("{err:#}");
        assert!(message.contains("out of bounds"), "{message}");
        assert!(message.contains("5000"), "{message}");
    }

    #[test]
    fn indices_nobody_else_holds_are_not_kept() {
        let plan = plan(None);
        let out = run_alone(LARGE, &plan, &indices(1));
        assert_eq!(out, fresh_output(&indices(1)));
        assert_eq!(
            kept(&plan),
            (None, 0),
            "a value made for one call is not kept"
        );
    }

    #[test]
    fn constant_indices_are_sorted_once_and_give_the_fresh_output_every_call() {
        let constant = indices(3);
        let plan = plan(Some(&constant));
        let want = fresh_output(&constant);
        for calls in 0..3 {
            let out = plan
                .run(tvec![data().into_tvalue(), updates().into_tvalue()])
                .unwrap();
            assert_eq!(out[0].clone().into_tensor(), want);
            assert_eq!(
                kept(&plan),
                (Some(true), calls),
                "the sort of a constant is kept"
            );
        }
    }

    /// A run of a `SMALL` plan with `indices` held by the caller too.
    fn run_small(plan: &Arc<TypedSimplePlan>, indices: &TValue) -> TractResult<Tensor> {
        run_of(SMALL, plan, indices)
    }

    #[test]
    fn the_check_of_unsorted_indices_passed_again_is_kept_and_reused() {
        let plan = plan_of(SMALL, None);
        let a = indices_of(SMALL, 1).into_tvalue();
        let want = fresh_output_of(SMALL, &a);
        assert_eq!(run_small(&plan, &a).unwrap(), want);
        assert_eq!(kept(&plan), (Some(false), 0), "the check alone is kept");
        for calls in 1..=2 {
            assert_eq!(run_small(&plan, &a).unwrap(), want);
            assert_eq!(kept(&plan), (Some(false), calls), "and reused");
        }
        // Another tensor with a bad value: checked, and refused.
        let mut bad = (*a).clone();
        bad.try_as_plain_ram_mut()
            .unwrap()
            .as_slice_mut::<i64>()
            .unwrap()[9] = -65;
        let err = run_small(&plan, &bad.into_tvalue()).unwrap_err();
        let message = format!("{err:#}");
        assert!(message.contains("out of bounds"), "{message}");
        assert!(message.contains("-65"), "{message}");
        assert_eq!(
            kept(&plan),
            (Some(false), 2),
            "the refused call reused nothing"
        );
    }

    /// Single elements into 16 KiB, far below the blocking thresholds, but
    /// past the kernels' split threshold (1 MiB of updates and indices).
    const SPLIT: Size = Size {
        data: [64, 64],
        tuples: 1 << 17,
    };

    fn on_two_threads<R>(f: impl FnOnce() -> R) -> R {
        multithread_tract_scope(Executor::multithread(2), f)
    }

    #[test]
    fn short_slices_passed_again_on_threads_are_sorted_once_for_a_split() {
        let a = indices_of(SPLIT, 5).into_tvalue();
        let want = fresh_output_of(SPLIT, &a);
        let plan = plan_of(SPLIT, None);
        on_two_threads(|| {
            assert_eq!(run_of(SPLIT, &plan, &a).unwrap(), want);
            assert_eq!(kept(&plan), (Some(false), 0), "first seen: not sorted");
            for calls in 1..=2 {
                assert_eq!(run_of(SPLIT, &plan, &a).unwrap(), want);
                assert_eq!(kept(&plan), (Some(true), calls), "came back: sorted");
            }
        });
        // New tensors each call (the same values): never kept, never sorted.
        let plan = plan_of(SPLIT, None);
        on_two_threads(|| {
            for _ in 0..2 {
                assert_eq!(run_alone(SPLIT, &plan, &a), want);
                assert_eq!(kept(&plan), (None, 0));
            }
        });
        // One thread: nothing to split, the check alone is kept.
        let plan = plan_of(SPLIT, None);
        for calls in 0..3 {
            assert_eq!(run_of(SPLIT, &plan, &a).unwrap(), want);
            assert_eq!(kept(&plan), (Some(false), calls));
        }
    }

    #[test]
    fn the_check_of_small_constant_indices_is_made_once() {
        let constant = indices_of(SMALL, 4);
        let plan = plan_of(SMALL, Some(&constant));
        let want = plan_of(SMALL, None)
            .run(tvec![
                data_of(SMALL).into_tvalue(),
                constant.clone().into_tvalue(),
                updates_of(SMALL).into_tvalue()
            ])
            .unwrap()[0]
            .clone()
            .into_tensor();
        for calls in 0..3 {
            let out = plan
                .run(tvec![
                    data_of(SMALL).into_tvalue(),
                    updates_of(SMALL).into_tvalue()
                ])
                .unwrap();
            assert_eq!(out[0].clone().into_tensor(), want);
            assert_eq!(
                kept(&plan),
                (Some(false), calls),
                "the check of a constant is kept"
            );
        }
    }

    /// ScatterElements(add) along axis 0 of `[256, 32]` updates into
    /// `SMALL.data`; `indices` an initializer when given, else an input.
    fn elements_plan(constant: Option<&Tensor>) -> Arc<TypedSimplePlan> {
        let g = Graph::new(18).input_c("data", DatumType::F32, &SMALL.data);
        let g = match constant {
            Some(t) => g.init("indices", t),
            None => g.input_c("indices", DatumType::I64, &ELEMENTS),
        };
        g.input_c("updates", DatumType::F32, &ELEMENTS)
            .node(
                "ScatterElements",
                &["data", "indices", "updates"],
                &["out"],
                vec![
                    graph::attr_int("axis", 0),
                    graph::attr_string("reduction", "add"),
                ],
            )
            .output("out", DatumType::F32)
            .optimized()
            .unwrap()
            .into_runnable()
            .unwrap()
    }

    const ELEMENTS: [usize; 2] = [256, 32];

    /// ScatterElements indices of `ELEMENTS`' shape in `[-64, 64)`.
    fn element_indices(seed: u64) -> Tensor {
        let tuples = indices_of(
            Size {
                data: [SMALL.data[0], SMALL.data[0]],
                tuples: ELEMENTS[0] * ELEMENTS[1] / 2,
            },
            seed,
        );
        tuples.into_shape(&ELEMENTS).unwrap()
    }

    /// Whether the plan's ScatterElements keeps a check, and how many calls
    /// reused one.
    fn elements_kept(plan: &Arc<TypedSimplePlan>) -> (bool, usize) {
        let cache = &only_op::<ScatterElements>(plan).check_cache;
        (cache.kept().is_some(), cache.reused())
    }

    /// A run of an elements plan, `indices` given when an input.
    fn run_elements(plan: &Arc<TypedSimplePlan>, indices: Option<&TValue>) -> TractResult<Tensor> {
        let updates = Tensor::from_shape(&ELEMENTS, &floats(ELEMENTS[0] * ELEMENTS[1], -1.25))?;
        let mut inputs = tvec![data_of(SMALL).into_tvalue()];
        inputs.extend(indices.cloned());
        inputs.push(updates.into_tvalue());
        Ok(plan.run(inputs)?[0].clone().into_tensor())
    }

    #[test]
    fn element_indices_passed_again_reuse_their_check_and_another_tensor_is_checked() {
        let plan = elements_plan(None);
        let a = element_indices(5).into_tvalue();
        // From a plan that never saw them, a value nobody else holds.
        let want = run_elements(&elements_plan(None), Some(&(*a).clone().into_tvalue())).unwrap();
        assert_eq!(run_elements(&plan, Some(&a)).unwrap(), want);
        assert_eq!(elements_kept(&plan), (true, 0), "the check is kept");
        for calls in 1..=2 {
            assert_eq!(run_elements(&plan, Some(&a)).unwrap(), want);
            assert_eq!(elements_kept(&plan), (true, calls), "and reused");
        }
        // The same values in another tensor: checked again, the same output.
        let a_copy = (*a).clone().into_tvalue();
        assert_eq!(run_elements(&plan, Some(&a_copy)).unwrap(), want);
        assert_eq!(elements_kept(&plan), (true, 2));
        // Another tensor with a bad value: checked, and refused.
        let mut bad = (*a).clone();
        bad.try_as_plain_ram_mut()
            .unwrap()
            .as_slice_mut::<i64>()
            .unwrap()[33] = 64;
        let err = run_elements(&plan, Some(&bad.into_tvalue())).unwrap_err();
        let message = format!("{err:#}");
        assert!(message.contains("out of bounds"), "{message}");
        assert!(message.contains("64"), "{message}");
        assert_eq!(
            elements_kept(&plan),
            (true, 2),
            "the refused call reused nothing"
        );
    }

    #[test]
    fn the_check_of_constant_element_indices_is_made_once() {
        let constant = element_indices(6);
        let plan = elements_plan(Some(&constant));
        let want =
            run_elements(&elements_plan(None), Some(&constant.clone().into_tvalue())).unwrap();
        for calls in 0..3 {
            assert_eq!(run_elements(&plan, None).unwrap(), want);
            assert_eq!(
                elements_kept(&plan),
                (true, calls),
                "the check of a constant is kept"
            );
        }
    }
}
