use std::fmt;

/// How an update combines with the value already at its destination: the
/// ONNX reductions of `ScatterElements` and `ScatterND`.
///
/// OpenVINO's `ScatterElementsUpdate` has one more, `mean`: see
/// [`UpdateReduction`]. ONNX has none, so the ONNX kernels cannot be asked
/// for it:
///
/// ```compile_fail
/// let _ = scatter_kernels::Reduction::Mean;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Reduction {
    /// The update replaces the destination; with duplicates the last wins.
    #[default]
    None,
    /// The destination becomes `destination + update`
    /// ([`crate::Element::add`]).
    Add,
    /// The destination becomes `destination * update`
    /// ([`crate::Element::mul`]).
    Mul,
    /// The destination becomes the larger of the two
    /// ([`crate::Element::max`]).
    Max,
    /// The destination becomes the smaller of the two
    /// ([`crate::Element::min`]).
    Min,
}

impl Reduction {
    /// Every ONNX reduction, in the order errors list the supported ones.
    pub const ALL: [Reduction; 5] = [
        Reduction::None,
        Reduction::Add,
        Reduction::Mul,
        Reduction::Max,
        Reduction::Min,
    ];

    /// The ONNX spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Reduction::None => "none",
            Reduction::Add => "add",
            Reduction::Mul => "mul",
            Reduction::Max => "max",
            Reduction::Min => "min",
        }
    }

    /// Parses the ONNX spelling; `None` for anything else (`mean`
    /// included: see [`UpdateReduction::from_name`]).
    pub fn from_onnx(s: &str) -> Option<Reduction> {
        Reduction::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

impl fmt::Display for Reduction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The reductions of OpenVINO's `ScatterElementsUpdate`
/// ([`crate::CheckedElementsIndices::apply_update`]) and of the
/// ScatterElements gradient ([`crate::GradSpec`]): ONNX's, plus `mean`.
///
/// OpenVINO spells `add` and `mul` `sum` and `prod`; here, as in every
/// message, they keep their ONNX names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UpdateReduction {
    /// An ONNX reduction.
    Onnx(Reduction),
    /// The sum of the values taken at a destination divided by their count
    /// ([`crate::Element::mean`]).
    Mean,
}

impl UpdateReduction {
    /// `UpdateReduction::Onnx(Reduction::None)`.
    pub const NONE: UpdateReduction = UpdateReduction::Onnx(Reduction::None);

    /// Every reduction, in the order errors list the supported ones.
    pub const ALL: [UpdateReduction; 6] = [
        UpdateReduction::Onnx(Reduction::None),
        UpdateReduction::Onnx(Reduction::Add),
        UpdateReduction::Onnx(Reduction::Mul),
        UpdateReduction::Onnx(Reduction::Max),
        UpdateReduction::Onnx(Reduction::Min),
        UpdateReduction::Mean,
    ];

    /// The ONNX spelling, `mean` for [`UpdateReduction::Mean`].
    pub fn as_str(self) -> &'static str {
        match self {
            UpdateReduction::Onnx(r) => r.as_str(),
            UpdateReduction::Mean => "mean",
        }
    }

    /// Parses [`Self::as_str`]'s spelling; `None` for anything else.
    pub fn from_name(s: &str) -> Option<UpdateReduction> {
        UpdateReduction::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// The ONNX reduction, `None` for `Mean`.
    pub fn onnx(self) -> Option<Reduction> {
        match self {
            UpdateReduction::Onnx(r) => Some(r),
            UpdateReduction::Mean => None,
        }
    }
}

impl Default for UpdateReduction {
    fn default() -> UpdateReduction {
        UpdateReduction::NONE
    }
}

impl From<Reduction> for UpdateReduction {
    fn from(r: Reduction) -> UpdateReduction {
        UpdateReduction::Onnx(r)
    }
}

impl PartialEq<Reduction> for UpdateReduction {
    fn eq(&self, other: &Reduction) -> bool {
        *self == UpdateReduction::Onnx(*other)
    }
}

impl fmt::Display for UpdateReduction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
