//! The run path: the run sequence of an indexed scatter, written once
//! (`sequence`), and the machinery a scatter's `eval` uses between its
//! inputs and its returned output. The checks of a scatter's inputs (`input_checks`), the
//! speed decisions of a call (`speed_policy`), the kept check of indices
//! that come back (`check_cache`), where an output buffer comes from
//! (`copy_target`, `output_pool`, `fresh_buffer`), and tract's threads as
//! the kernels' executor (`tract_threads`), and the tensors known to hold
//! bfloat16 values, which the bfloat16 check hands on unread
//! (`known_bfloat16`).
//!
//! Nothing here imports an op home or a rewrite (`crate::ops::rewrite`).

pub(crate) mod check_cache;
pub(crate) mod copy_target;
pub(crate) mod fresh_buffer;
pub(crate) mod input_checks;
pub(crate) mod known_bfloat16;
pub(crate) mod output_pool;
pub(crate) mod sequence;
pub(crate) mod speed_policy;
pub(crate) mod tract_threads;
