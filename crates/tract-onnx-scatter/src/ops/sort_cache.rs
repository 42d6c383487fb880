//! A ScatterND's check of its indices, and their sort by destination
//! block, kept while its indices do not change.
//!
//! A ScatterND reads all its indices to check them before it writes; a
//! large random-index one also counting-sorts the update slices by
//! destination block in that pass ([`NdPlan::check_indices_sorted_par`]).
//! Either is about half of the run of a scatter of many small slices
//! (the benchmark's 1e6-element row with its sort; its 1M-update
//! histogram with the check alone). When the very same indices tensor
//! comes back — a constant of the model, or an input the caller keeps and
//! passes again — neither needs doing again.
//!
//! "The very same" is the tensor's identity, not its values: the cache
//! holds an `Arc` of the indices it sorted, so that tensor can be neither
//! freed (its address reused by another) nor written (tract writes a
//! tensor only through an exclusive `Arc`) while it is kept. Only indices
//! someone else also holds are kept (a constant node, the caller): a
//! value made for this call alone will not come back, and keeping it would
//! only keep its memory. One indices tensor per node is kept, the last
//! sorted, until another replaces it or the op is dropped.
//!
//! Like the output pool, the cache is an execution detail of the op: it
//! lives in the op (tract's `SimplePlan::run` spawns a new state per
//! call), is shared by its clones, and is ignored by equality and hashing.

use std::sync::{Arc, Mutex};

use scatter_kernels::{IndexValue, NdKeptCheck, NdPlan, ScatterError, SortedNdIndices};
use tract_core::internal::*;

/// What a check (and sort) was made from: the indices tensor (kept alive
/// and unwritten by this `Arc`; its shape is the plan's indices shape),
/// and the data shape and element size of the plan that checked it (the
/// updates shape follows from the two).
struct Kept {
    indices: Arc<Tensor>,
    data_shape: TVec<usize>,
    element_bytes: usize,
    sort: NdKeptCheck,
}

/// The last check (and sort) of a ScatterND node's indices, and how many
/// calls reused it; see the module.
#[derive(Clone, Default)]
pub struct SortCache(Arc<Mutex<State>>);

#[derive(Default)]
struct State {
    kept: Option<Kept>,
    reused: usize,
}

/// The indices a check may be kept for: `indices`' own tensor when the
/// slice `values` is its data and someone besides this call holds it.
pub fn keepable<'a, I>(indices: &'a TValue, values: &[I]) -> Option<&'a Arc<Tensor>> {
    let arc = indices.as_arc_tensor()?;
    let own = arc
        .try_as_plain_ram()
        .ok()
        .is_some_and(|b| std::ptr::eq(b.as_bytes().as_ptr(), values.as_ptr().cast()));
    (own && Arc::strong_count(arc) >= 2).then_some(arc)
}

impl SortCache {
    /// The token for `indices` (the data of `kept`, when given): from the
    /// kept check when it was made from the same tensor by an equal plan,
    /// else `check` (the check, and sort), which is then kept.
    pub fn sorted<'a, I: IndexValue>(
        &self,
        plan: &'a NdPlan,
        indices: &'a [I],
        kept: Option<&Arc<Tensor>>,
        element_bytes: usize,
        check: impl FnOnce() -> Result<SortedNdIndices<'a, I>, ScatterError>,
    ) -> Result<SortedNdIndices<'a, I>, ScatterError> {
        let Some(kept) = kept else {
            return check();
        };
        let same = |k: &Kept| {
            Arc::ptr_eq(&k.indices, kept)
                && k.element_bytes == element_bytes
                && k.data_shape[..] == *plan.data_shape()
        };
        let hit = {
            let mut state = self.lock();
            let hit = state
                .kept
                .as_ref()
                .filter(|k| same(k))
                .map(|k| k.sort.clone());
            state.reused += usize::from(hit.is_some());
            hit
        };
        if let Some(sort) = hit {
            // SAFETY: `indices` is the data of `kept` (`keepable`), the very
            // tensor the kept check was made from by a plan of the same
            // shapes (the op's layout is fixed): held by the cache since,
            // it was neither freed nor written (module doc), so these are
            // the values that check accepted.
            return unsafe { plan.from_kept_check(indices, &sort) };
        }
        let sorted = check()?;
        self.lock().kept = Some(Kept {
            indices: kept.clone(),
            data_shape: plan.data_shape().into(),
            element_bytes,
            sort: sorted.kept_check(),
        });
        Ok(sorted)
    }

    /// Whether a check is kept, and whether it holds a sort (for tests).
    pub fn kept(&self) -> Option<bool> {
        self.lock().kept.as_ref().map(|k| k.sort.is_sorted())
    }

    /// How many calls applied a kept check instead of checking again
    /// (for tests).
    pub fn reused(&self) -> usize {
        self.lock().reused
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

equal_as_kept_state!(SortCache);

impl std::fmt::Debug for SortCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "SortCache({})",
            match self.kept() {
                Some(true) => "sort kept",
                Some(false) => "check kept",
                None => "empty",
            }
        )
    }
}
