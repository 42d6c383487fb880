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
    pub(crate) fn is_custom(self) -> bool {
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
    pub(crate) positions: IndexPositions,
}

/// How an index position a kernel reports maps back to the user's input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub(crate) enum IndexPositions {
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
    pub(crate) fn map(self, error: ScatterError) -> ScatterError {
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
    pub(crate) fn new(op: ScatterOp, node: impl Into<String>, opset: Option<i64>) -> NodeSite {
        NodeSite {
            op,
            node: node.into(),
            opset,
            positions: IndexPositions::AsGiven,
        }
    }

    /// `reason`, prefixed with this site.
    pub(crate) fn error(&self, reason: impl fmt::Display) -> anyhow::Error {
        anyhow::anyhow!("{self}: {reason}")
    }
}

impl NodeSite {
    /// `error`, a kernel's refusal, at this site (its position mapped by
    /// [`Self::positions`]): a [`NodeError`], which a
    /// caller finds with `err.downcast_ref::<NodeError>()` through tract's
    /// context layers.
    pub(crate) fn scatter_error(&self, error: ScatterError) -> anyhow::Error {
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
/// A caller finds it in the error a run returns:
///
/// ```no_run
/// use tract_onnx_scatter::site::NodeError;
/// use tract_onnx_scatter::tract_onnx::prelude::*;
///
/// let plan = tract_onnx_scatter::onnx()
///     .model_for_path("model.onnx")?
///     .into_optimized()?
///     .into_runnable()?;
/// # let inputs: TVec<TValue> = tvec![];
/// if let Err(err) = plan.run(inputs) {
///     if let Some(refusal) = err.downcast_ref::<NodeError>() {
///         eprintln!("node {}: {}", refusal.site.node, refusal.error);
///     }
/// }
/// # Ok::<(), anyhow::Error>(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use scatter_kernels::Input;

    #[test]
    fn a_node_error_is_one_link_of_the_chain_and_found_by_downcasting() {
        let site = NodeSite::new(ScatterOp::ScatterNd, "x", Some(13));
        let error = ScatterError::TooLarge {
            input: Input::Data,
            shape: vec![usize::MAX, 2],
        };
        let err = site
            .scatter_error(error.clone())
            .context("Evaluating #3 \"x\"");
        let node_error = err.downcast_ref::<NodeError>().unwrap();
        assert_eq!(node_error.site.node, "x");
        assert_eq!(node_error.error, error);
        assert!(
            format!("{err:#}").starts_with("Evaluating #3 \"x\": ScatterND node 'x' (opset 13): "),
            "{err:#}"
        );
    }
}
