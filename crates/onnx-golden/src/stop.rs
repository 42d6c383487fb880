//! Where a failing run stopped: its phase, and the node of the ONNX graph
//! it stopped at, so two frameworks' failures on one model can be ordered.
//!
//! tract's errors name nodes as `#<id> "<name>" <op>` ("Failed analyse for
//! node #512 \"/enc/Reshape_13\" ...", "Translating node #7 ...",
//! "Evaluating #40 ..."). Ids differ between an inference and a typed
//! model, names do not: a typed node keeps its ONNX node's name or extends
//! it with `.suffix` parts. So the first node named in the error chain is
//! placed by name, at the position of its ONNX node in the graph.

use crate::outcome::{Outcome, Phase};
use anyhow::{Context, Result};
use prost::Message;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::path::Path;
use tract_onnx::pb::ModelProto;

/// A failure's place in the pipeline. Ordered by phase, then by node
/// position; a stop whose node is unknown ties with any stop of its phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stop {
    /// The phase the run stopped in.
    pub phase: Phase,
    /// Position of the node in the ONNX graph (0 = first node; graph inputs
    /// and initializers come before every node).
    pub node: Option<usize>,
}

impl Stop {
    /// `Less` when `self` stopped before `other`.
    pub fn order(&self, other: &Stop) -> Ordering {
        match self.phase.cmp(&other.phase) {
            Ordering::Equal => match (self.node, other.node) {
                (Some(a), Some(b)) => a.cmp(&b),
                _ => Ordering::Equal,
            },
            unequal => unequal,
        }
    }
}

/// Positions of a model's nodes by the name tract gives them: the node's
/// name, else its first output's name, else (unnamed, no output) none.
/// Graph inputs and initializers, which tract turns into nodes too, take
/// position 0 ahead of every node (`#0` at most ties with them).
#[derive(Debug, Clone, Default)]
pub struct NodePositions {
    by_name: HashMap<String, usize>,
}

impl NodePositions {
    /// The positions of the nodes of the model file at `model_path`; an
    /// error when it cannot be read or decoded.
    pub fn load(model_path: &Path) -> Result<NodePositions> {
        let bytes = std::fs::read(model_path).with_context(|| format!("reading {model_path:?}"))?;
        let model = ModelProto::decode(bytes.as_slice())
            .with_context(|| format!("decoding {model_path:?} as ModelProto"))?;
        Ok(NodePositions::of(&model))
    }

    /// The positions of the nodes of `model` (none without a graph); a name
    /// met twice keeps its first position.
    pub fn of(model: &ModelProto) -> NodePositions {
        let mut by_name = HashMap::new();
        let Some(graph) = &model.graph else {
            return NodePositions { by_name };
        };
        for name in graph.input.iter().map(|i| &i.name) {
            by_name.entry(name.clone()).or_insert(0);
        }
        for name in graph.initializer.iter().map(|i| &i.name) {
            by_name.entry(name.clone()).or_insert(0);
        }
        for (ix, node) in graph.node.iter().enumerate() {
            let name = if !node.name.is_empty() {
                &node.name
            } else if let Some(output) = node.output.first().filter(|o| !o.is_empty()) {
                output
            } else {
                continue;
            };
            by_name.entry(name.clone()).or_insert(ix);
        }
        NodePositions { by_name }
    }

    /// The position of the ONNX node a tract node named `name` comes from:
    /// the name itself, else its longest prefix ending before a `.`.
    pub fn position(&self, name: &str) -> Option<usize> {
        let mut candidate = name;
        loop {
            if let Some(&ix) = self.by_name.get(candidate) {
                return Some(ix);
            }
            candidate = &candidate[..candidate.rfind('.')?];
        }
    }
}

/// The name of the first node an error text mentions as `#<id> "<name>"`.
pub fn first_named_node(text: &str) -> Option<&str> {
    let mut rest = text;
    while let Some(hash) = rest.find('#') {
        let after = &rest[hash + 1..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0
            && let Some(quoted) = after[digits..].strip_prefix(" \"")
            && let Some(end) = quoted.find('"')
        {
            return Some(&quoted[..end]);
        }
        rest = after;
    }
    None
}

/// Where `outcome` stopped (`None` for a pass), its node placed with
/// `positions` when its text names one.
pub fn stop_of(outcome: &Outcome, positions: &NodePositions) -> Option<Stop> {
    let (phase, text) = match outcome {
        Outcome::Pass => return None,
        Outcome::Fail { phase, reason } => (*phase, reason),
        Outcome::Panic { phase, message } => (*phase, message),
    };
    Some(Stop {
        phase,
        node: first_named_node(text).and_then(|name| positions.position(name)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tract_onnx::pb::{GraphProto, NodeProto, ValueInfoProto};

    fn model() -> ModelProto {
        let node = |name: &str, output: &str| NodeProto {
            name: name.into(),
            output: vec![output.into()],
            ..NodeProto::default()
        };
        ModelProto {
            graph: Some(GraphProto {
                input: vec![ValueInfoProto {
                    name: "x".into(),
                    ..ValueInfoProto::default()
                }],
                node: vec![
                    node("/enc/Shape", "a"),
                    node("", "unnamed_out"),
                    node("/enc/layer.0/Slice", "b"),
                ],
                ..GraphProto::default()
            }),
            ..ModelProto::default()
        }
    }

    #[test]
    fn a_typed_node_is_placed_at_its_onnx_node_through_dotted_suffixes() {
        let p = NodePositions::of(&model());
        assert_eq!(p.position("/enc/layer.0/Slice"), Some(2));
        assert_eq!(p.position("/enc/layer.0/Slice.bind_symbols.1"), Some(2));
        assert_eq!(p.position("unnamed_out"), Some(1));
        assert_eq!(p.position("x"), Some(0));
        assert_eq!(p.position("elsewhere.0"), None);
    }

    #[test]
    fn the_first_node_named_in_an_error_chain_is_found() {
        let text = "Failed analyse for node #512 \"/enc/Reshape_13\" Reshape: Infering facts: #3 \"other\"";
        assert_eq!(first_named_node(text), Some("/enc/Reshape_13"));
        assert_eq!(first_named_node("issue #12 is not a node"), None);
        assert_eq!(first_named_node("Evaluating #40 \"a.b\" Add"), Some("a.b"));
    }

    #[test]
    fn stops_order_by_phase_then_by_node_and_unknown_nodes_tie() {
        let at = |phase, node| Stop { phase, node };
        assert_eq!(
            at(Phase::Analyse, Some(9)).order(&at(Phase::Typing, Some(1))),
            Ordering::Less
        );
        assert_eq!(
            at(Phase::Run, Some(1)).order(&at(Phase::Run, Some(5))),
            Ordering::Less
        );
        assert_eq!(
            at(Phase::Run, None).order(&at(Phase::Run, Some(5))),
            Ordering::Equal
        );
    }
}
