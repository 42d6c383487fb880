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
pub struct CheckCache<K>(Arc<Mutex<State<K>>>);

/// A ScatterND's cache: the check and, when it sorted, the sort.
pub type NdCheckCache = CheckCache<NdKeptCheck>;

/// A ScatterElements' (or Scatter's) cache.
pub type ElementsCheckCache = CheckCache<ElementsKeptCheck>;

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
pub struct NdCheck<'e> {
    /// Where and with which schedule the check runs.
    pub exec: Execution<'e>,
    /// Whether the check sorts the update slices by destination block.
    pub block_sort: BlockSort,
    /// `Some`: a kept check is sorted by destination for a split over
    /// these threads, once.
    pub split: Option<Execution<'e>>,
    /// The size of a data element, for both sorts.
    pub element_bytes: usize,
}

/// A kernels' plan whose check of indices a host may keep: how it checks,
/// what it keeps of a token, and the token again from that, without
/// reading the indices.
pub trait KeepsChecks {
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
    pub fn checked<'a, P: KeepsChecks<Kept = K>, I: IndexValue>(
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

    /// The kept check, if any (for tests).
    pub fn kept(&self) -> Option<K> {
        self.lock().kept.as_ref().map(|k| k.check.clone())
    }

    /// How many calls applied a kept check instead of checking again
    /// (for tests).
    pub fn reused(&self) -> usize {
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
