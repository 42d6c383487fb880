//! Loops that build a list, as scan outputs.
//!
//! A scripted PyTorch loop that appends to a list (`outputs.append(h)`, then
//! `torch.stack(outputs)`) exports as a `Loop` carrying an ONNX sequence: `SequenceEmpty`
//! before the loop, `SequenceInsert` in the body, `ConcatFromSequence` / `SequenceAt` /
//! `SequenceLength` after it. tract has no sequence values, but such a list holds one tensor
//! per iteration, appended in order: exactly a `Loop` scan output, the values stacked on a new
//! first axis. [`rewrite`], run before tract parses the model, turns every such loop-carried
//! list into a scan output. Contract: docs/contract.md, "Loop (tract override)", row "lists".
//!
//! One difference remains: a list whose elements change shape between iterations fails at run
//! time (a scan output keeps its shape), where `ConcatFromSequence` along an existing axis
//! accepts it.

use std::collections::HashSet;

use tract_onnx::pb::{AttributeProto, GraphProto, ModelProto, NodeProto, ValueInfoProto};

/// The op type of the node that replaces a `ConcatFromSequence` of a
/// rewritten list: the same `axis` and `new_axis` attributes, its input the
/// list's elements stacked on a new first axis.
pub(crate) const CONCAT_FROM_STACK: &str = "ConcatFromSequenceStack";

/// The op type of the node that replaces a `SequenceLength` of a rewritten
/// list: the stacked values' first dim, an int64 scalar.
pub(crate) const LENGTH_OF_STACK: &str = "SequenceLengthStack";

/// The domain of [`CONCAT_FROM_STACK`] and [`LENGTH_OF_STACK`] nodes.
pub(crate) const DOMAIN: &str = "tract_onnx_scatter.load";

/// Whether `model` holds a `Loop` fed by a `SequenceEmpty` (the cheap test
/// before a copy of the model is rewritten).
pub(crate) fn may_rewrite(model: &ModelProto) -> bool {
    fn any(graph: &GraphProto) -> bool {
        let lists: HashSet<&str> = graph
            .node
            .iter()
            .filter(|n| n.op_type == "SequenceEmpty")
            .flat_map(|n| n.output.iter().map(String::as_str))
            .collect();
        graph.node.iter().any(|n| {
            (n.op_type == "Loop" && n.input.iter().skip(2).any(|i| lists.contains(i.as_str())))
                || n.attribute
                    .iter()
                    .any(|a| a.g.iter().chain(&a.graphs).any(any))
        })
    }
    model.graph.as_ref().is_some_and(any)
}

/// Rewrites every loop-carried list of `model` into a scan output; returns how many. A list
/// is rewritten when:
///
/// - the loop-carried value starts as `SequenceEmpty`, the body reads it only to
///   `SequenceInsert` one value at the end (no position), and that insertion is the body's
///   loop-carried output;
/// - after the loop, the list is read only by `ConcatFromSequence` (then a
///   [`CONCAT_FROM_STACK`] of the stacked values, same attributes), `SequenceAt(i)` (then
///   `Gather(axis 0)`) and `SequenceLength` (then a [`LENGTH_OF_STACK`]: the first dim of the
///   stacked values).
///
/// Any other use of a sequence is left as it is, so the `Loop` builder's error names it.
/// Nested graphs are rewritten first, so a list built by a loop inside a loop body is found
/// too.
pub(crate) fn rewrite(model: &mut ModelProto) -> usize {
    let Some(graph) = &mut model.graph else {
        return 0;
    };
    let mut names = Names::of(graph);
    rewrite_graph(graph, &mut names)
}

fn rewrite_graph(graph: &mut GraphProto, names: &mut Names) -> usize {
    let mut count = 0;
    for node in &mut graph.node {
        for attr in &mut node.attribute {
            for g in attr.g.iter_mut().chain(&mut attr.graphs) {
                count += rewrite_graph(g, names);
            }
        }
    }
    let loops: Vec<usize> = (0..graph.node.len())
        .filter(|&i| graph.node[i].op_type == "Loop")
        .collect();
    for ix in loops {
        let carried = graph.node[ix].input.len().saturating_sub(2);
        for j in (0..carried).rev() {
            if let Some(plan) = plan(graph, ix, j) {
                apply(graph, ix, j, plan, names);
                count += 1;
            }
        }
    }
    count
}

/// What a rewrite of loop-carried value `j` of `graph.node[ix]` needs.
struct Plan {
    /// The body node appending to the list, and the value it appends.
    insert: usize,
    /// The list after the loop, when the node names it, and its readers.
    list: Option<String>,
    readers: Vec<usize>,
}

/// Every name `graph` and its nested graphs read (node inputs).
fn reads(graph: &GraphProto, into: &mut Vec<String>) {
    for node in &graph.node {
        into.extend(node.input.iter().cloned());
        for attr in &node.attribute {
            for g in attr.g.iter().chain(&attr.graphs) {
                reads(g, into);
            }
        }
    }
}

fn body(node: &NodeProto) -> Option<&GraphProto> {
    node.attribute
        .iter()
        .find(|a| a.name == "body")
        .and_then(|a| a.g.as_ref())
}

fn body_mut(node: &mut NodeProto) -> Option<&mut GraphProto> {
    node.attribute
        .iter_mut()
        .find(|a| a.name == "body")
        .and_then(|a| a.g.as_mut())
}

fn plan(graph: &GraphProto, ix: usize, j: usize) -> Option<Plan> {
    let node = &graph.node[ix];
    let initial = node.input.get(2 + j)?;
    let starts_empty = graph
        .node
        .iter()
        .any(|n| n.op_type == "SequenceEmpty" && n.output.first() == Some(initial));
    if !starts_empty {
        return None;
    }
    let body = body(node)?;
    let list_in = &body.input.get(2 + j)?.name;
    let list_out = &body.output.get(1 + j)?.name;
    let insert = body.node.iter().position(|n| {
        n.op_type == "SequenceInsert"
            && n.input.len() == 2
            && &n.input[0] == list_in
            && n.output.first() == Some(list_out)
    })?;
    // The body reads the list only to append to it, and nothing reads the
    // appended list but the loop.
    let mut body_reads = vec![];
    reads(body, &mut body_reads);
    let uses = |name: &String| body_reads.iter().filter(|r| *r == name).count();
    if uses(list_in) != 1 || uses(list_out) != 0 {
        return None;
    }
    if body.output.iter().filter(|o| &o.name == list_out).count() != 1
        || body.output.iter().any(|o| &o.name == list_in)
    {
        return None;
    }
    // After the loop: read only by the three readers this rewrite knows.
    let list = node.output.get(j).filter(|s| !s.is_empty()).cloned();
    let mut readers = vec![];
    if let Some(list) = &list {
        if graph.output.iter().any(|o| &o.name == list) {
            return None;
        }
        for (k, n) in graph.node.iter().enumerate() {
            let direct = n.input.iter().filter(|i| *i == list).count();
            let mut nested = vec![];
            for attr in &n.attribute {
                for g in attr.g.iter().chain(&attr.graphs) {
                    reads(g, &mut nested);
                }
            }
            if nested.contains(list) {
                return None;
            }
            if direct == 0 {
                continue;
            }
            let known = match n.op_type.as_str() {
                "ConcatFromSequence" | "SequenceLength" => n.input.len() == 1,
                "SequenceAt" => n.input.len() == 2 && n.input[0] != n.input[1],
                _ => false,
            };
            if !known || direct != 1 || n.input[0] != *list {
                return None;
            }
            readers.push(k);
        }
    }
    Some(Plan {
        insert,
        list,
        readers,
    })
}

fn apply(graph: &mut GraphProto, ix: usize, j: usize, plan: Plan, names: &mut Names) {
    let loop_name = graph.node[ix].name.clone();
    let node = &mut graph.node[ix];
    let carried = node.input.len() - 2;
    let Some(body) = body_mut(node) else {
        return; // `plan` found the body: not reached
    };
    let stacked = names.fresh(&format!("{loop_name}.list_{j}.stacked"));
    let scans = body.output.len().saturating_sub(1 + carried);
    let insert = body.node.remove(plan.insert);
    let appended = insert.input[1].clone();
    body.input.remove(2 + j);
    body.output.remove(1 + j);
    // The appended value, as a scan output of its own name.
    let scan_value = names.fresh(&format!("{appended}.scan"));
    body.node.push(NodeProto {
        name: scan_value.clone(),
        op_type: "Identity".into(),
        input: vec![appended],
        output: vec![scan_value.clone()],
        ..Default::default()
    });
    body.output.push(ValueInfoProto {
        name: scan_value,
        ..Default::default()
    });
    node.input.remove(2 + j);
    if j < node.output.len() {
        node.output.remove(j);
    }
    if plan.list.is_some() {
        // carried - 1 loop-carried outputs, then the scans, then this one.
        let position = carried - 1 + scans;
        if node.output.len() < position {
            node.output.resize(position, String::new());
        }
        node.output.truncate(position);
        node.output.push(stacked.clone());
    }
    for &k in &plan.readers {
        let reader = &mut graph.node[k];
        reader.input[0] = stacked.clone();
        match reader.op_type.as_str() {
            "ConcatFromSequence" => {
                reader.op_type = CONCAT_FROM_STACK.into();
                reader.domain = DOMAIN.into();
            }
            "SequenceAt" => {
                reader.op_type = "Gather".into();
                reader.domain = String::new();
                reader.attribute = vec![int_attr("axis", 0)];
            }
            _ => {
                reader.op_type = LENGTH_OF_STACK.into();
                reader.domain = DOMAIN.into();
            }
        }
    }
}

fn int_attr(name: &str, i: i64) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: 2, // INT
        i,
        ..Default::default()
    }
}

/// The names a model uses, to make fresh ones.
struct Names(HashSet<String>);

impl Names {
    fn of(graph: &GraphProto) -> Names {
        fn collect(graph: &GraphProto, into: &mut HashSet<String>) {
            for info in graph
                .input
                .iter()
                .chain(&graph.output)
                .chain(&graph.value_info)
            {
                into.insert(info.name.clone());
            }
            for init in &graph.initializer {
                into.insert(init.name.clone());
            }
            for node in &graph.node {
                into.insert(node.name.clone());
                into.extend(node.input.iter().cloned());
                into.extend(node.output.iter().cloned());
                for attr in &node.attribute {
                    for g in attr.g.iter().chain(&attr.graphs) {
                        collect(g, into);
                    }
                }
            }
        }
        let mut names = HashSet::new();
        collect(graph, &mut names);
        Names(names)
    }

    /// `base`, or `base.1`, `base.2`, ... the first the model does not use.
    fn fresh(&mut self, base: &str) -> String {
        let mut name = base.to_string();
        let mut k = 0usize;
        while self.0.contains(&name) {
            k += 1;
            name = format!("{base}.{k}");
        }
        self.0.insert(name.clone());
        name
    }
}
