//! Exporter deviations: nodes that a later version of their own op defines,
//! written by exporters under an opset that does not (e.g. PyTorch's
//! TorchScript exporter writes `ScatterElements` with `reduction="max"` at
//! opsets 16 and 17, and tf2onnx writes `ScatterND` with `reduction="max"`
//! at 16; both reductions exist from version 18). onnxruntime and
//! `onnx.checker` accept these models, and their meaning is unambiguous:
//! the later version's. [`Deviations::Accept`] (what [`crate::onnx()`]
//! uses) builds them with that meaning and one `log::warn!` per node;
//! [`Deviations::Refuse`] ([`crate::onnx_strict()`]) refuses them at load.
//!
//! Only the op's own later versions are tried: an attribute no version
//! defines, a reduction no version allows, or an op used outside its
//! versions stays an error in both modes.

use crate::parse::opset::OpVersion;
use crate::parse::site::NodeSite;

/// What the ONNX builders do with a known exporter deviation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Deviations {
    /// Build it with the semantics of the first later version of the op
    /// that accepts it, and warn once per node.
    #[default]
    Accept,
    /// Refuse it at load, as the opset says.
    Refuse,
}

impl Deviations {
    /// The builder for this mode: `refusing`'s for [`Deviations::Refuse`],
    /// `accepting`'s for [`Deviations::Accept`] (each a builder made for
    /// one [`DeviationMode`]).
    pub(crate) fn pick<B>(self, refusing: B, accepting: B) -> B {
        match self {
            Deviations::Refuse => refusing,
            Deviations::Accept => accepting,
        }
    }
}

/// A [`Deviations`] mode as a type: an ONNX builder is a plain `fn`, which
/// captures nothing, so a builder generic over its mode
/// (`scatter_nd::<Refusing>`) carries it.
pub(crate) trait DeviationMode {
    /// The mode.
    const DEVIATIONS: Deviations;
}

/// [`Deviations::Accept`] as a type.
pub(crate) enum Accepting {}

impl DeviationMode for Accepting {
    const DEVIATIONS: Deviations = Deviations::Accept;
}

/// [`Deviations::Refuse`] as a type.
pub(crate) enum Refusing {}

impl DeviationMode for Refusing {
    const DEVIATIONS: Deviations = Deviations::Refuse;
}

/// The warning logged for a node accepted as a deviation: names the node,
/// its opset, what its declared version refuses and the version whose
/// semantics are used.
pub(crate) fn message(
    site: &NodeSite,
    declared: &OpVersion,
    used: &OpVersion,
    refusal: &str,
) -> String {
    format!(
        "{site}: exporter deviation accepted: {refusal}. Loaded with the semantics of {} \
         (the model declares {}); tract_onnx_scatter::onnx_strict() refuses this node",
        used.label(),
        declared.label()
    )
}

/// Logs [`message`] once, through `log::warn!`.
pub(crate) fn warn(site: &NodeSite, declared: &OpVersion, used: &OpVersion, refusal: &str) {
    log::warn!("{}", message(site, declared, used, refusal));
}
