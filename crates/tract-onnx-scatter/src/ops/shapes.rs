//! Shape checks on facts that may be symbolic: what is known is checked at
//! model-build time, what is not waits for run time.

use tract_core::internal::*;

use crate::site::NodeSite;

/// Concrete shapes of all `facts`, when every one is concrete.
pub fn all_concrete<'a>(facts: &[&'a TypedFact]) -> Option<Vec<&'a [usize]>> {
    facts.iter().map(|f| f.shape.as_concrete()).collect()
}

/// Fails with a "rank" message unless `fact` has rank `expected`.
pub fn expect_rank(
    site: &NodeSite,
    name: &str,
    fact: &TypedFact,
    expected: usize,
    why: &str,
) -> TractResult<()> {
    if fact.rank() != expected {
        bail!(site.error(format!(
            "rank: {name} has rank {} (shape {:?}), expected {expected} ({why})",
            fact.rank(),
            fact.shape
        )));
    }
    Ok(())
}

/// True when `a` and `b` are known to differ (both concrete, unequal).
pub fn known_different(a: &TDim, b: &TDim) -> bool {
    matches!((a.to_i64(), b.to_i64()), (Ok(a), Ok(b)) if a != b)
}

/// True when `a > b` is known.
pub fn known_greater(a: &TDim, b: &TDim) -> bool {
    matches!((a.to_i64(), b.to_i64()), (Ok(a), Ok(b)) if a > b)
}
