//! Where an op sits in the user's model, for error messages.

use std::fmt;

use crate::opset::ScatterOp;

/// The op, the node name and the opset a scatter node was built from.
///
/// Carried by every op of this crate so that an error at load or at run
/// time names the node, whatever tract did to the graph in between.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NodeSite {
    /// The op the node was built as.
    pub op: ScatterOp,
    /// The node's name as errors show it: the ONNX node's name (else its
    /// first output's, else its `op_type`), or the name an NNEF load gave
    /// it.
    pub node: String,
    /// The default-domain opset of the model; `None` for custom-domain ops
    /// and ops loaded from NNEF.
    pub opset: Option<i64>,
}

impl NodeSite {
    /// The site of node `node` of `op`; `opset` as [`Self::opset`] says.
    pub fn new(op: ScatterOp, node: impl Into<String>, opset: Option<i64>) -> NodeSite {
        NodeSite {
            op,
            node: node.into(),
            opset,
        }
    }

    /// `reason`, prefixed with this site.
    pub fn error(&self, reason: impl fmt::Display) -> anyhow::Error {
        anyhow::anyhow!("{self}: {reason}")
    }
}

impl fmt::Display for NodeSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} node '{}'", self.op.onnx_name(), self.node)?;
        if let Some(opset) = self.opset {
            write!(f, " (opset {opset})")?;
        }
        Ok(())
    }
}
