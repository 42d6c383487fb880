//! The ScatterND and ScatterElements ops as values: what their homes
//! (`scatter_nd.rs`, `scatter_elements.rs`) run, and what the declutter
//! rewrites (`transpose_fold`, `broadcast_rows`, `block_assignment`)
//! recognise and build, below both so neither imports the other.

use scatter_kernels::{Reduction, UpdateReduction};
use tract_hir::internal::*;

use crate::ops::run::check_cache::{ElementsCheckCache, NdCheckCache};
use crate::ops::run::output_pool::OutputPool;
use crate::parse::onnx_types::OnnxElement;
use crate::parse::site::NodeSite;

/// `output = data`, then for every index tuple `t` (row-major over
/// `indices.shape[:-1]`), the slice `data[t]` combined with its update slice.
///
/// Contract (checked at build time as far as the facts allow, the rest at
/// run time, always before any write): data rank `r >= 1`; indices rank
/// `q >= 1` with `k = indices.shape[-1] <= r`; `updates.shape ==
/// indices.shape[:-1] ++ data.shape[k:]`; each tuple component in
/// `[-d, d - 1]` for its own data dim `d`; data and updates of one type that
/// can do `reduction`. Runs in place when the data input is exclusive.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ScatterNd {
    /// The node it was built from (a ScatterND, or a ScatterElements a
    /// rewrite turned into one), named by every error.
    pub(crate) site: NodeSite,
    /// How an update combines with the value at its destination.
    pub(crate) reduction: Reduction,
    /// `Some(perm)`: the data input is stored untransposed, the scatter
    /// applies to `transpose(data, perm)` (shapes, indices and messages are
    /// in that view) and the output keeps data's stored layout, i.e. the
    /// op is `Transpose(perm) → ScatterND → inverse Transpose` without the
    /// transposes ([`crate::ops::rewrite::transpose_fold`]). `None`: plain ScatterND.
    pub(crate) layout: Option<TVec<usize>>,
    /// The ONNX element type data and updates hold, when tract has none
    /// of its own for it (bfloat16, complex).
    pub(crate) onnx_element: OnnxElement,
    /// Set at codegen when the output is a model output and nothing else:
    /// where the output buffer comes from when data is shared
    /// ([`crate::ops::run::output_pool`]). An execution detail: `None` until
    /// codegen, not serialized, ignored by equality.
    pub(crate) output_pool: Option<OutputPool>,
    /// The last check (and sort by destination block) of indices that
    /// may come back ([`crate::ops::run::check_cache`]): an execution detail,
    /// shared by clones of one layout, ignored by equality.
    pub(crate) check_cache: NdCheckCache,
}

impl ScatterNd {
    /// A plain ONNX ScatterND.
    pub(crate) fn onnx(site: NodeSite, reduction: Reduction) -> ScatterNd {
        ScatterNd {
            site,
            reduction,
            layout: None,
            onnx_element: OnnxElement::Native,
            output_pool: None,
            check_cache: NdCheckCache::default(),
        }
    }

    /// The same op on another `layout`, with a cache of its own: a check
    /// is of the plan of one layout.
    pub(crate) fn with_layout(&self, layout: Option<TVec<usize>>) -> ScatterNd {
        ScatterNd {
            layout,
            check_cache: NdCheckCache::default(),
            ..self.clone()
        }
    }
}

/// `output = data`, then every update written along `axis` at the position
/// its index gives, in row-major order of the indices.
///
/// Contract (checked at build time as far as the facts allow, the rest at
/// run time, always before any write): data rank `r >= 1`; indices and
/// updates of rank `r` and equal shape; `indices.shape[i] <= data.shape[i]`
/// for `i != axis`; index values in `[-s, s - 1]`, `s = data.shape[axis]`;
/// indices int32/int64; data and updates of one type that can do
/// `reduction`. Runs in place when the data input is exclusively owned.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ScatterElements {
    /// The node it was built from (Scatter, ScatterElements, or a
    /// ScatterElementsUpdate with a constant axis), named by every error.
    pub(crate) site: NodeSite,
    /// Normalized: `0 <= axis < rank`.
    pub(crate) axis: usize,
    /// How an update combines with the value at its destination (an ONNX
    /// reduction; `Mean` only for a ScatterElementsUpdate).
    pub(crate) reduction: UpdateReduction,
    /// OpenVINO's `use_init_val`; always true for ONNX ops.
    pub(crate) use_init_val: bool,
    /// The ONNX element type data and updates hold, when tract has none
    /// of its own for it (bfloat16, complex).
    pub(crate) onnx_element: OnnxElement,
    /// Set at codegen when the output is a model output and nothing else:
    /// where the output buffer comes from when data is shared
    /// ([`crate::ops::run::output_pool`]). An execution detail: `None` until
    /// codegen, not serialized, ignored by equality.
    pub(crate) output_pool: Option<OutputPool>,
    /// The last check of indices that may come back
    /// ([`crate::ops::run::check_cache`]): an execution detail, shared by
    /// clones of one axis, ignored by equality.
    pub(crate) check_cache: ElementsCheckCache,
}

impl ScatterElements {
    /// The op of an ONNX Scatter or ScatterElements node (`use_init_val`
    /// true), along the normalized `axis`, without pool or kept check.
    pub(crate) fn onnx(site: NodeSite, axis: usize, reduction: Reduction) -> ScatterElements {
        ScatterElements {
            site,
            axis,
            reduction: reduction.into(),
            use_init_val: true,
            onnx_element: OnnxElement::Native,
            output_pool: None,
            check_cache: ElementsCheckCache::default(),
        }
    }

    /// The data axis the indices index, normalized (`0 <= axis < rank`):
    /// public so a caller that finds the op in a model can bound random
    /// indices by that axis (`tract-scatter run`).
    pub fn axis(&self) -> usize {
        self.axis
    }

    /// The same op along another `axis`, with a cache of its own: a check
    /// is of the plan of one axis.
    pub(crate) fn with_axis(&self, axis: usize) -> ScatterElements {
        ScatterElements {
            axis,
            check_cache: ElementsCheckCache::default(),
            ..self.clone()
        }
    }
}
