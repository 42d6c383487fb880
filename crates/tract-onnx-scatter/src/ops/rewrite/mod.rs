//! The declutter rewrites: graph patterns around a scatter that tract's
//! declutter replaces with a cheaper form. A constant-index ScatterND
//! assigning one block (`block_assignment`), scatters on a transposed view
//! of their data (`transpose_fold`), row indices broadcast along the other
//! axes (`broadcast_rows`); with the transposes read as one permutation
//! (`move_chains`) and the scatters' rules for tract's axis machinery
//! (`axis_changes`).
//!
//! A rewrite reads and builds the ops' values (`crate::ops::scatter_ops`),
//! never imports an op home, nor anything of the run path (`crate::ops::run`).

pub(crate) mod axis_changes;
pub(crate) mod block_assignment;
pub(crate) mod broadcast_rows;
pub(crate) mod move_chains;
pub(crate) mod transpose_fold;
