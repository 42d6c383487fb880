//! Which scatter op a node is (`ScatterOp`) and where it sits in the
//! user's model (`NodeSite`), for error messages.

use std::fmt;

use scatter_kernels::ScatterError;

/// The scatter ops this crate builds from ONNX.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScatterOp {
    /// ONNX `Scatter` (9, 10; deprecated since 11).
    Scatter,
    /// ONNX `ScatterElements` (11, 13, 16, 18).
    ScatterElements,
    /// ONNX `ScatterND` (11, 13, 16, 18).
    ScatterNd,
    /// ONNX `TensorScatter` (24).
    TensorScatter,
    /// OpenVINO `ScatterElementsUpdate-12` semantics, as a custom op.
    ScatterElementsUpdate,
    /// The gradient of ScatterElements (domain `tract_onnx_scatter.training`).
    ScatterElementsGrad,
    /// The gradient of ScatterND (domain `tract_onnx_scatter.training`).
    ScatterNdGrad,
}

impl ScatterOp {
    /// The ONNX `op_type`.
    pub fn onnx_name(self) -> &'static str {
        match self {
            ScatterOp::Scatter => "Scatter",
            ScatterOp::ScatterElements => "ScatterElements",
            ScatterOp::ScatterNd => "ScatterND",
            ScatterOp::TensorScatter => "TensorScatter",
            ScatterOp::ScatterElementsUpdate => "ScatterElementsUpdate",
            ScatterOp::ScatterElementsGrad => "ScatterElementsGrad",
            ScatterOp::ScatterNdGrad => "ScatterNDGrad",
        }
    }

    /// Ops outside the default domain: the model's default-domain opset
    /// does not govern them (and messages do not show it).
    pub fn is_custom(self) -> bool {
        matches!(
            self,
            ScatterOp::ScatterElementsUpdate
                | ScatterOp::ScatterElementsGrad
                | ScatterOp::ScatterNdGrad
        )
    }
}

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
    /// Where the positions a kernel error reports are in the node's own
    /// inputs.
    pub positions: IndexPositions,
}

/// How an index position a kernel reports maps back to the user's input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum IndexPositions {
    /// As the kernel reports them.
    #[default]
    AsGiven,
    /// The op is a ScatterND standing for a ScatterElements whose indices
    /// broadcast along whole rows ([`crate::ops::rewrite::broadcast_rows`]): the
    /// ScatterND tuple `[e, 0]` is the user's index `[e, 0, …, 0]`,
    /// `data_rank` long.
    BroadcastRows {
        /// The rank of the scatter's data.
        data_rank: usize,
    },
}

impl IndexPositions {
    /// `error` with its index position in the user's terms.
    pub fn map(self, error: ScatterError) -> ScatterError {
        match (self, error) {
            (
                IndexPositions::BroadcastRows { data_rank },
                ScatterError::OutOfBounds {
                    input,
                    mut position,
                    value,
                    axis,
                    dim,
                },
            ) if position.len() == 2 => {
                position.resize(data_rank.max(2), 0);
                ScatterError::OutOfBounds {
                    input,
                    position,
                    value,
                    axis,
                    dim,
                }
            }
            (_, other) => other,
        }
    }
}

impl NodeSite {
    /// The site of node `node` of `op`; `opset` as [`Self::opset`] says.
    pub fn new(op: ScatterOp, node: impl Into<String>, opset: Option<i64>) -> NodeSite {
        NodeSite {
            op,
            node: node.into(),
            opset,
            positions: IndexPositions::AsGiven,
        }
    }

    /// `reason`, prefixed with this site.
    pub fn error(&self, reason: impl fmt::Display) -> anyhow::Error {
        anyhow::anyhow!("{self}: {reason}")
    }
}

impl NodeSite {
    /// `error`, a kernel's refusal, at this site (its position mapped by
    /// [`Self::positions`]): a [`NodeError`], which a
    /// caller finds with `err.downcast_ref::<NodeError>()` through tract's
    /// context layers.
    pub fn scatter_error(&self, error: ScatterError) -> anyhow::Error {
        anyhow::Error::new(NodeError {
            site: self.clone(),
            error: self.positions.map(error),
        })
    }
}

/// A scatter-family node's refusal of its inputs: which node, and the
/// kernel's [`ScatterError`] with the offending value and the valid range.
///
/// Its message is the site and the error on one line (`ScatterND node 'x'
/// (opset 13): indices[0, 1] = 7 is out of bounds ...`), a single link of
/// the error chain: the `ScatterError` is a field, not a `source`.
///
/// ```
/// # use tract_onnx_scatter::site::{NodeError, NodeSite};
/// # use tract_onnx_scatter::opset::ScatterOp;
/// # use tract_onnx_scatter::scatter_kernels::{Input, ScatterError};
/// let site = NodeSite::new(ScatterOp::ScatterNd, "x", Some(13));
/// let error = ScatterError::TooLarge { input: Input::Data, shape: vec![usize::MAX, 2] };
/// let err = site.scatter_error(error.clone()).context("Evaluating #3 \"x\"");
/// let node_error = err.downcast_ref::<NodeError>().unwrap();
/// assert_eq!(node_error.site.node, "x");
/// assert_eq!(node_error.error, error);
/// assert!(format!("{err:#}").starts_with("Evaluating #3 \"x\": ScatterND node 'x' (opset 13): "));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeError {
    /// The node.
    pub site: NodeSite,
    /// What the kernel refused.
    pub error: ScatterError,
}

impl fmt::Display for NodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.site, self.error)
    }
}

impl std::error::Error for NodeError {}

impl fmt::Display for NodeSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} node '{}'", self.op.onnx_name(), self.node)?;
        if let Some(opset) = self.opset {
            write!(f, " (opset {opset})")?;
        }
        Ok(())
    }
}
