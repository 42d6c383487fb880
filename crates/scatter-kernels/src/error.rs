use std::fmt;

use crate::{Dims, UpdateReduction};

/// Which input of a scatter op an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Input {
    /// `data` of ScatterElements, ScatterND, ScatterElementsUpdate and the
    /// gradient ops.
    Data,
    /// `indices` of ScatterElements, ScatterND, ScatterElementsUpdate and
    /// the gradient ops.
    Indices,
    /// `updates` of ScatterElements, ScatterND, ScatterElementsUpdate and
    /// the gradient ops.
    Updates,
    /// TensorScatter's `past_cache`.
    PastCache,
    /// TensorScatter's `update`.
    Update,
    /// TensorScatter's optional `write_indices`.
    WriteIndices,
    /// The gradient of a scatter's output (see `grad`).
    GradOutput,
    /// The gradient buffer written for `data`.
    GradData,
    /// The gradient buffer written for `updates`.
    GradUpdates,
}

impl Input {
    /// The input's ONNX name (`data`, `past_cache`, ...), as messages show
    /// it.
    pub fn as_str(self) -> &'static str {
        match self {
            Input::Data => "data",
            Input::Indices => "indices",
            Input::Updates => "updates",
            Input::PastCache => "past_cache",
            Input::Update => "update",
            Input::WriteIndices => "write_indices",
            Input::GradOutput => "grad_output",
            Input::GradData => "grad_data",
            Input::GradUpdates => "grad_updates",
        }
    }
}

impl fmt::Display for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a scatter was refused. Nothing has been written when one is returned.
///
/// The `Display` text leads with the category word users grep for
/// ("rank", "axis", "shape", "out of bounds", "reduction"), then names the
/// input, the offending value and the valid range. The op and node name are
/// added by the caller, which knows them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScatterError {
    /// `input` has the wrong rank; `expected` states the rule.
    Rank {
        /// The input whose rank is wrong.
        input: Input,
        /// Its rank.
        rank: usize,
        /// The rule, in words (`"rank >= 1"`, the rank of another input).
        expected: String,
    },
    /// The axis is outside `[-rank, rank - 1]`, or a value the op forbids.
    Axis {
        /// The axis as given (not normalized).
        axis: i64,
        /// The rank of the data (TensorScatter: `past_cache`) it applies
        /// to.
        rank: usize,
        /// The valid range, or the rule the axis breaks, in words.
        expected: String,
    },
    /// `input`'s shape breaks a rule; `expected` states the rule with the
    /// other shape involved. Shapes may hold symbols when a host checked
    /// its facts before the run ([`crate::FactDim`]).
    Shape {
        /// The input whose shape breaks the rule.
        input: Input,
        /// Its shape, symbols included.
        shape: Dims,
        /// The rule, with the other shape involved, in words.
        expected: String,
    },
    /// `input[position] = value` is not a valid index on data axis `axis`
    /// of size `dim`: valid values are `[-dim, dim - 1]`.
    OutOfBounds {
        /// The index input holding the value.
        input: Input,
        /// The value's coordinates in that input (for ScatterND, the tuple
        /// component's: its last coordinate is `axis`).
        position: Vec<usize>,
        /// The index value as given (not normalized).
        value: i64,
        /// The data axis it indexes, normalized to `[0, rank - 1]`.
        axis: usize,
        /// The size of that axis.
        dim: usize,
    },
    /// TensorScatter, linear mode: `write_indices[batch] = start` plus
    /// `len` updated positions runs past the end of the axis.
    WriteOutOfBounds {
        /// The batch entry `b`, the position in `write_indices`.
        batch: usize,
        /// `write_indices[b]`, the first position written.
        start: i64,
        /// The positions updated from `start`: `update.shape[axis]`.
        len: usize,
        /// The sequence axis, normalized to `[0, rank - 1]`.
        axis: usize,
        /// The size of that axis in `past_cache`.
        dim: usize,
    },
    /// The element type cannot do this reduction.
    Reduction {
        /// The reduction refused (an ONNX one, or `mean`).
        reduction: UpdateReduction,
        /// The ONNX name of the element type ([`crate::Element::NAME`]).
        element: &'static str,
        /// The reductions the type (or the op) supports, as the message
        /// lists them.
        supported: String,
    },
    /// The buffer behind `input` does not hold as many elements as its
    /// shape describes (a caller bug, not a model error, but never a panic).
    Length {
        /// The input whose buffer has the wrong length.
        input: Input,
        /// The shape it was given with.
        shape: Vec<usize>,
        /// The number of elements the buffer holds.
        len: usize,
    },
    /// The element count of `input`'s shape does not fit in `usize`.
    TooLarge {
        /// The input whose shape cannot be counted.
        input: Input,
        /// That shape.
        shape: Vec<usize>,
    },
}

fn valid_range(dim: usize) -> String {
    if dim == 0 {
        "no valid index: the axis has size 0".to_string()
    } else {
        format!("valid range [-{dim}, {}]", dim - 1)
    }
}

impl fmt::Display for ScatterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScatterError::Rank {
                input,
                rank,
                expected,
            } => {
                write!(f, "rank: {input} has rank {rank}, expected {expected}")
            }
            ScatterError::Axis {
                axis,
                rank,
                expected,
            } => {
                write!(
                    f,
                    "axis {axis} is invalid for data of rank {rank}: expected {expected}"
                )
            }
            ScatterError::Shape {
                input,
                shape,
                expected,
            } => {
                write!(f, "shape: {input} has shape {shape}, expected {expected}")
            }
            ScatterError::OutOfBounds {
                input,
                position,
                value,
                axis,
                dim,
            } => write!(
                f,
                "{input}{position:?} = {value} is out of bounds for data axis {axis} of size {dim} ({})",
                valid_range(*dim)
            ),
            ScatterError::WriteOutOfBounds {
                batch,
                start,
                len,
                axis,
                dim,
            } => write!(
                f,
                "write_indices[{batch}] = {start} with {len} updated positions is out of bounds \
                 for axis {axis} of size {dim} in linear mode (valid range [0, {}])",
                dim.saturating_sub(*len)
            ),
            ScatterError::Reduction {
                reduction,
                element,
                supported,
            } => write!(
                f,
                "reduction '{reduction}' is not supported for {element} data (supported: {supported})"
            ),
            ScatterError::Length { input, shape, len } => write!(
                f,
                "shape: {input} buffer holds {len} elements but its shape {shape:?} describes a different count"
            ),
            ScatterError::TooLarge { input, shape } => write!(
                f,
                "shape: {input} shape {shape:?} has more elements than this machine can address"
            ),
        }
    }
}

impl std::error::Error for ScatterError {}
