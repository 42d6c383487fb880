//! Facts that may be symbolic, as the kernels' shape rules see them: the
//! rules are the kernels' (`ElementsPlan::check_shapes` and the like,
//! generic over [`FactDim`]), so a mistake the facts show at load gets the
//! words the plan gives it at run time; what is not known waits for the run.

use std::fmt;

use scatter_kernels::FactDim;
use tract_core::internal::*;

/// Concrete shapes of all `facts`, when every one is concrete.
pub(crate) fn all_concrete<'a>(facts: &[&'a TypedFact]) -> Option<Vec<&'a [usize]>> {
    facts.iter().map(|f| f.shape.as_concrete()).collect()
}

/// One of tract's dims as the kernels' rules see it: known when it is a
/// number, shown as tract shows it (`N`, `2*N`, `3`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SymDim<'a>(pub(crate) &'a TDim);

/// The dims of `fact`'s shape, for the kernels' rules.
pub(crate) fn sym_dims(fact: &TypedFact) -> TVec<SymDim<'_>> {
    fact.shape.iter().map(SymDim).collect()
}

impl fmt::Display for SymDim<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl FactDim for SymDim<'_> {
    fn known(&self) -> Option<usize> {
        self.0.to_i64().ok().and_then(|d| usize::try_from(d).ok())
    }

    /// Known when both are numbers and differ.
    fn known_ne(&self, other: &Self) -> bool {
        matches!((self.0.to_i64(), other.0.to_i64()), (Ok(a), Ok(b)) if a != b)
    }

    /// Known when both are numbers.
    fn known_gt(&self, other: &Self) -> bool {
        matches!((self.0.to_i64(), other.0.to_i64()), (Ok(a), Ok(b)) if a > b)
    }
}
