use std::fmt;

use crate::{Element, ScatterError};

/// How an update combines with the value already at its destination.
///
/// ONNX defines `None`, `Add`, `Mul`, `Max`, `Min`; `Mean` exists only for
/// OpenVINO's `ScatterElementsUpdate` (see [`crate::scatter_elements_update`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Reduction {
    /// The update replaces the destination; with duplicates the last wins.
    #[default]
    None,
    /// The destination becomes `destination + update` ([`Element::add`]).
    Add,
    /// The destination becomes `destination * update` ([`Element::mul`]).
    Mul,
    /// The destination becomes the larger of the two ([`Element::max`]).
    Max,
    /// The destination becomes the smaller of the two ([`Element::min`]).
    Min,
    /// OpenVINO's `mean`: the sum of the values taken at a destination
    /// divided by their count ([`Element::mean`]); not an ONNX reduction.
    Mean,
}

impl Reduction {
    /// Every reduction, in the order errors list the supported ones.
    pub const ALL: [Reduction; 6] = [
        Reduction::None,
        Reduction::Add,
        Reduction::Mul,
        Reduction::Max,
        Reduction::Min,
        Reduction::Mean,
    ];

    /// The ONNX spelling (`mean` is OpenVINO's).
    pub fn as_str(self) -> &'static str {
        match self {
            Reduction::None => "none",
            Reduction::Add => "add",
            Reduction::Mul => "mul",
            Reduction::Max => "max",
            Reduction::Min => "min",
            Reduction::Mean => "mean",
        }
    }

    /// Parses the ONNX spelling; `None` for anything else.
    pub fn from_onnx(s: &str) -> Option<Reduction> {
        Reduction::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// What the ONNX scatters' `apply` takes: `T`'s own reductions, `Mean`
    /// refused (it is OpenVINO's); `mean_hint` follows the list of the
    /// supported ones in the error, to say where `Mean` lives instead.
    pub(crate) fn check_onnx<T: Element>(self, mean_hint: &str) -> Result<(), ScatterError> {
        T::check_reduction(self)?;
        if self == Reduction::Mean {
            return Err(ScatterError::Reduction {
                reduction: self,
                element: T::NAME,
                supported: format!("none, add, mul, max, min{mean_hint}"),
            });
        }
        Ok(())
    }
}

impl fmt::Display for Reduction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
