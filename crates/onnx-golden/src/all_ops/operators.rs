//! Which operator each node test exercises, read from its model (the only
//! node; a `*_expanded*` test takes its base test's operator; otherwise the
//! first non-Constant node). It must not depend on the cache, the report or
//! any framework: it reads `model.onnx` files and nothing else.

use anyhow::{Context, Result};
use prost::Message;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::PathBuf;
use tract_onnx::pb::ModelProto;

/// The operator a node test exercises, read from its model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestOperator {
    /// `op_type`, prefixed with `domain.` outside the default domain
    /// (`ai.onnx.ml.LabelEncoder`).
    pub operator: String,
    /// Where the operator came from (see [`assign_operators`]).
    pub rule: OperatorRule,
}

/// How [`assign_operators`] named a test's operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OperatorRule {
    /// The model's only node.
    SingleNode,
    /// A function-expanded test (`<base>_expanded*`): the operator of `<base>`.
    Expanded,
    /// A model of several nodes: the first node that is not a `Constant`.
    FirstNonConstant,
}

/// The operator label of a model: its only node's; with several nodes the
/// first node that is not a `Constant`. `None` for a model without nodes.
pub fn model_operator(model: &ModelProto) -> Option<(String, OperatorRule)> {
    let nodes = &model.graph.as_ref()?.node;
    let label = |n: &tract_onnx::pb::NodeProto| {
        if n.domain.is_empty() || n.domain == "ai.onnx" {
            n.op_type.clone()
        } else {
            format!("{}.{}", n.domain, n.op_type)
        }
    };
    match nodes.as_slice() {
        [] => None,
        [only] => Some((label(only), OperatorRule::SingleNode)),
        several => several
            .iter()
            .find(|n| n.op_type != "Constant")
            .or(several.first())
            .map(|n| (label(n), OperatorRule::FirstNonConstant)),
    }
}

/// Names the operator of each test directory (`name`, `model.onnx` path).
///
/// The rule, in order:
/// 1. a test whose name contains `_expanded` (`_expanded`, `_expanded_ver18`,
///    ...) is the function-expanded twin of the test named by what precedes
///    `_expanded`; when that test exists and has an operator, the expanded
///    one counts under the same operator (its graph is the function body:
///    its first node says nothing about the operator under test);
/// 2. otherwise the model decides ([`model_operator`]): its only node, or,
///    in a model of several nodes, the first node that is not a `Constant`.
///
/// Test names (`test_<op>_<variant>`) are not used beyond rule 1: they do
/// not reliably name the operator (`test_mvn` is MeanVarianceNormalization).
/// A model that cannot be read, or has no node, is an error naming the test.
pub fn assign_operators(tests: &[(String, PathBuf)]) -> BTreeMap<String, Result<TestOperator>> {
    let mut from_model: HashMap<&str, Result<(String, OperatorRule)>> = HashMap::new();
    for (name, model_path) in tests {
        let read = fs::read(model_path)
            .with_context(|| format!("reading {model_path:?}"))
            .and_then(|bytes| {
                ModelProto::decode(bytes.as_slice())
                    .with_context(|| format!("decoding {model_path:?} as ModelProto"))
            })
            .and_then(|model| {
                model_operator(&model)
                    .with_context(|| format!("{model_path:?}: the graph has no node"))
            });
        from_model.insert(name.as_str(), read);
    }
    let mut assigned = BTreeMap::new();
    for (name, _) in tests {
        let base = name
            .find("_expanded")
            .map(|at| &name[..at])
            .and_then(|base| match from_model.get(base) {
                Some(Ok((operator, _))) => Some(operator.clone()),
                _ => None,
            });
        let operator = match (base, &from_model[name.as_str()]) {
            (Some(operator), _) => Ok(TestOperator {
                operator,
                rule: OperatorRule::Expanded,
            }),
            (None, Ok((operator, rule))) => Ok(TestOperator {
                operator: operator.clone(),
                rule: *rule,
            }),
            (None, Err(e)) => Err(anyhow::anyhow!("{e:#}")),
        };
        assigned.insert(name.clone(), operator);
    }
    assigned
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::all_ops::test_support::{model, node, temp_dir};

    #[test]
    fn operators_come_from_the_model_and_expanded_tests_from_their_base() {
        let dir = temp_dir("operators");
        let write = |name: &str, m: Option<ModelProto>| {
            let path = dir.join(format!("{name}.onnx"));
            match m {
                Some(m) => fs::write(&path, m.encode_to_vec()).unwrap(),
                None => fs::write(&path, b"\xff\xff not protobuf").unwrap(),
            }
            (name.to_string(), path)
        };
        let tests = vec![
            // The name says "mvn", the model says which operator it is.
            write(
                "test_mvn",
                Some(model(vec![node("MeanVarianceNormalization", "")])),
            ),
            write(
                "test_mvn_expanded",
                Some(model(vec![node("Constant", ""), node("ReduceMean", "")])),
            ),
            write(
                "test_softmax_expanded_ver18",
                Some(model(vec![node("Constant", ""), node("ReduceMax", "")])),
            ),
            write(
                "test_label_encoder",
                Some(model(vec![node("LabelEncoder", "ai.onnx.ml")])),
            ),
            write("test_empty", Some(model(vec![]))),
            write("test_garbage", None),
        ];
        let got: Vec<String> = assign_operators(&tests)
            .into_iter()
            .map(|(name, op)| match op {
                Ok(t) => format!("{name}: {} ({:?})", t.operator, t.rule),
                Err(e) => format!("{name}: error ({})", e.to_string().contains(&name)),
            })
            .collect();
        assert_eq!(
            got,
            [
                "test_empty: error (true)",
                "test_garbage: error (true)",
                "test_label_encoder: ai.onnx.ml.LabelEncoder (SingleNode)",
                "test_mvn: MeanVarianceNormalization (SingleNode)",
                "test_mvn_expanded: MeanVarianceNormalization (Expanded)",
                // No `test_softmax` beside it: the model decides.
                "test_softmax_expanded_ver18: ReduceMax (FirstNonConstant)",
            ]
        );
        fs::remove_dir_all(&dir).ok();
    }
}
