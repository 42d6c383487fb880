//! Scatter kernels on row-major typed slices: ONNX `ScatterElements`,
//! `ScatterND`, `TensorScatter`, and OpenVINO `ScatterElementsUpdate`
//! (`mean`, `use_init_val`).
//!
//! Every kernel works in three steps, one entry point each: a *plan*
//! validates shapes and the axis (no index values, no allocation
//! proportional to any dimension); its `check_indices`
//! ([`ElementsPlan::check_indices`], [`NdPlan::check_indices`],
//! [`TensorScatterPlan::check_write_indices`]) reads every index once and
//! returns a proof token; the token's `apply` writes. Only a token lets the
//! write pass run, so no write ever happens before the whole input is known
//! to be valid, and the write pass cannot go out of bounds.
//!
//! Each `apply` takes where to write ([`Destination`]: the data in place,
//! or a [`CopyOf`] the data fused with the scatter) and how to run
//! ([`Execution`]: the host's threads and the [`Schedule`] of when to
//! split or block; [`Execution::SERIAL`] for the plain serial kernel).
//! Every execution gives the serial result bit for bit, and the serial
//! errors before any write.
//!
//! The crate knows nothing of tract: element types are Rust types
//! implementing [`Element`], shapes are `&[usize]`, indices are `i32`/`i64`
//! slices ([`IndexValue`]).
//!
//! A scatter into a copy of its data can copy as it scatters
//! ([`CopyOf`]): its destination is a [`MaybeUninit<T>`] slice, which may
//! be memory never written (a fresh output buffer), and `apply` hands it
//! back as `&mut [T]` once every element is written. No `&mut [T]` is ever
//! formed over memory not yet written: the kernels write such memory only
//! through [`write_copy`] and its kin, and each copying path promises (and
//! proves beside its code) a destination written whole before `apply`
//! turns it into values.
//!
//! [`MaybeUninit<T>`]: std::mem::MaybeUninit

#![deny(missing_docs)]

mod axis;
mod combiner;
mod element;
mod error;
mod exec;
mod fact_dim;
mod fused_copy;
mod grad;
mod index;
pub mod mechanisms;
mod parallel;
mod prefetch;
mod reduction;
mod scatter_elements;
mod scatter_elements_par;
mod scatter_nd;
mod scatter_nd_par;
mod shape;
mod tensor_scatter;
mod uninit;
mod update;

pub use axis::{elements_axis, tensor_scatter_axis};
pub use element::{Bfloat16InFloat32, ComplexPart, ComplexParts, Element};
pub use error::{Input, ScatterError};
pub use exec::{CheckedIndices, CopyOf, Destination, Execution};
pub use fact_dim::{Dims, FactDim};
pub use fused_copy::copy_in_pieces;
pub use grad::{GradCalc, GradElement, GradSpec, GradToken, check_grad_output_shape};
pub use index::IndexValue;
pub use parallel::{Parallel, Schedule, Serial};
pub use reduction::{Reduction, UpdateReduction};
pub use scatter_elements::{CheckedElementsIndices, ElementsKeptCheck, ElementsPlan};
pub use scatter_nd::{BlockSort, CheckedNdIndices, NdKeptCheck, NdPlan};
pub use shape::{element_count, row_major_strides};
pub use tensor_scatter::{CheckedWriteIndices, TensorScatterMode, TensorScatterPlan};
pub use uninit::{write_copy, write_copy_in_pieces, write_copy_par};
pub use update::scatter_elements_update;

/// Validates everything, then scatters `updates` into `data` along `axis`
/// (ONNX `ScatterElements`). On `Err`, `data` is untouched.
pub fn scatter_elements<T: Element, I: IndexValue>(
    data: &mut [T],
    data_shape: &[usize],
    indices: &[I],
    indices_shape: &[usize],
    updates: &[T],
    axis: i64,
    reduction: Reduction,
) -> Result<(), ScatterError> {
    let plan = ElementsPlan::new(data_shape, indices_shape, indices_shape, axis)?;
    T::check_reduction(reduction)?;
    let checked = plan.check_indices(indices, Execution::SERIAL)?;
    checked
        .apply(data, updates, reduction, Execution::SERIAL)
        .map(drop)
}

/// Validates everything, then scatters `updates` slices into `data` at the
/// index tuples of `indices` (ONNX `ScatterND`). On `Err`, `data` is
/// untouched.
pub fn scatter_nd<T: Element, I: IndexValue>(
    data: &mut [T],
    data_shape: &[usize],
    indices: &[I],
    indices_shape: &[usize],
    updates: &[T],
    updates_shape: &[usize],
    reduction: Reduction,
) -> Result<(), ScatterError> {
    let plan = NdPlan::new(data_shape, indices_shape, updates_shape)?;
    T::check_reduction(reduction)?;
    let checked = plan.check_indices(indices, Execution::SERIAL, BlockSort::Off)?;
    checked
        .apply(data, updates, reduction, Execution::SERIAL)
        .map(drop)
}

/// Validates everything, then writes the gradients of [`scatter_elements`]
/// (or, with `spec.include_self == false` or `Mean`, of
/// [`scatter_elements_update`]) at `(data, updates)`: `grad_data` (len =
/// data) and `grad_updates` (len = updates) for `grad_output` (len = data),
/// both multiplied by `lda_coeff`. Semantics: docs/contract.md, "Gradient
/// ops". On `Err` nothing has been written.
#[allow(clippy::too_many_arguments)]
pub fn scatter_elements_grad<T: GradElement, I: IndexValue>(
    data: &[T],
    data_shape: &[usize],
    indices: &[I],
    indices_shape: &[usize],
    updates: &[T],
    axis: i64,
    grad_output: &[T],
    spec: GradSpec,
    lda_coeff: T,
    grad_data: &mut [T],
    grad_updates: &mut [T],
) -> Result<(), ScatterError> {
    let plan = ElementsPlan::new(data_shape, indices_shape, indices_shape, axis)?;
    T::check_reduction(spec.reduction)?;
    let checked = plan.check_indices(indices, Execution::SERIAL)?;
    checked.grad(
        data,
        updates,
        grad_output,
        spec,
        lda_coeff,
        grad_data,
        grad_updates,
    )
}

/// Validates everything, then writes the gradients of [`scatter_nd`] (with
/// `spec.include_self`; `Mean` is refused) at `(data, updates)`, as
/// [`scatter_elements_grad`] does. On `Err` nothing has been written.
#[allow(clippy::too_many_arguments)]
pub fn scatter_nd_grad<T: GradElement, I: IndexValue>(
    data: &[T],
    data_shape: &[usize],
    indices: &[I],
    indices_shape: &[usize],
    updates: &[T],
    updates_shape: &[usize],
    grad_output: &[T],
    spec: GradSpec,
    lda_coeff: T,
    grad_data: &mut [T],
    grad_updates: &mut [T],
) -> Result<(), ScatterError> {
    let plan = NdPlan::new(data_shape, indices_shape, updates_shape)?;
    T::check_reduction(spec.reduction)?;
    let checked = plan.check_indices(indices, Execution::SERIAL, BlockSort::Off)?;
    checked.grad(
        data,
        updates,
        grad_output,
        spec,
        lda_coeff,
        grad_data,
        grad_updates,
    )
}

/// The crate's README, whose examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
