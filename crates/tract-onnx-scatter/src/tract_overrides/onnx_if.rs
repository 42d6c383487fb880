//! ONNX `If`, its condition known at load or only at run time.
//!
//! tract 0.23.9's `If` requires both branches to give equal facts, and its
//! typed op (`IfThenElse`) gives the then-branch's fact, constant value
//! included: a run-time condition whose then-branch is a constant is folded
//! to that constant, a silently wrong result. Here a condition known after
//! analysis takes its branch, inlined; a run-time condition whose branches
//! give equal facts and no value either branch alone holds keeps tract's
//! `IfThenElse` exactly; any other run-time condition is a [`RunTimeIf`],
//! whose facts hold what both branches give (docs/contract.md, "If").

use tract_core::ops::logic::IfThenElse;
use tract_hir::internal::*;
use tract_onnx::model::{ParseResult, ParsingContext};
use tract_onnx::pb::{GraphProto, NodeProto};

/// The most rounds [`InferIf::infer_facts`] takes for the branches' and the
/// node's facts to settle; still changing then is an error naming the fact.
pub(crate) const SETTLE_ROUNDS: usize = 64;

/// The builder registered for `If`.
pub(crate) fn if_then_else(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let name = &node.name;
    ensure!(
        node.input.len() == 1,
        "If node '{name}': has {} inputs, expected 1 (the condition)",
        node.input.len()
    );
    let branch = |attr: &str| -> TractResult<ParseResult> {
        ctx.parse_graph(node.get_attr(attr)?)
            .with_context(|| format!("If node '{name}': parsing its {attr}"))
    };
    let ParseResult {
        model: then_body,
        unresolved_inputs: then_inputs,
        ..
    } = branch("then_branch")?;
    let ParseResult {
        model: else_body,
        unresolved_inputs: else_inputs,
        ..
    } = branch("else_branch")?;
    // The node's inputs: the condition, then every name either branch
    // reads from the enclosing graphs, once each.
    let mut outer: Vec<String> = then_inputs.iter().chain(&else_inputs).cloned().collect();
    outer.sort();
    outer.dedup();
    let mapping = |names: &[String]| -> TractResult<Vec<usize>> {
        names
            .iter()
            .map(|n| {
                let p = outer.iter().position(|o| o == n).with_context(|| {
                    format!("If node '{name}': branch input '{n}' is not an outer value")
                })?;
                Ok(node.input.len() + p)
            })
            .collect()
    };
    let op = InferIf {
        node: name.clone(),
        output_uses: node
            .output
            .iter()
            .map(|output| RankUse::of(&ctx.parent_graphs, output, &mut 4096))
            .collect(),
        then_mapping: mapping(&then_inputs)?,
        else_mapping: mapping(&else_inputs)?,
        then_body,
        else_body,
    };
    op.check_mappings(1 + outer.len())?;
    Ok((Box::new(op), outer))
}

/// `If` at inference level; see the module documentation.
#[derive(Debug, Clone)]
pub(crate) struct InferIf {
    /// The ONNX node's name, for errors.
    pub(crate) node: String,
    /// The `then_branch` graph, run when the condition is true; names of
    /// the enclosing graphs it reads are its inputs.
    pub(crate) then_body: InferenceModel,
    /// For each input of `then_body`, its input position on the node.
    pub(crate) then_mapping: Vec<usize>,
    /// The `else_branch` graph, run when the condition is false; names of
    /// the enclosing graphs it reads are its inputs.
    pub(crate) else_body: InferenceModel,
    /// For each input of `else_body`, its input position on the node.
    pub(crate) else_mapping: Vec<usize>,
    /// For each output, how its uses read its rank ([`RankUse`]): whether
    /// a branch's value of lower rank may be padded.
    pub(crate) output_uses: Vec<RankUse>,
}

impl PartialEq for InferIf {
    fn eq(&self, _: &Self) -> bool {
        false
    }
}
impl Eq for InferIf {}

fn branch_name(cond: bool) -> &'static str {
    if cond { "then_branch" } else { "else_branch" }
}

impl InferIf {
    fn branch(&self, cond: bool) -> (&InferenceModel, &[usize]) {
        if cond {
            (&self.then_body, &self.then_mapping)
        } else {
            (&self.else_body, &self.else_mapping)
        }
    }

    fn branch_mut(&mut self, cond: bool) -> (&mut InferenceModel, &[usize]) {
        if cond {
            (&mut self.then_body, &self.then_mapping)
        } else {
            (&mut self.else_body, &self.else_mapping)
        }
    }

    /// Every branch input maps to a node input past the condition, and each
    /// branch has one input per mapping.
    fn check_mappings(&self, node_inputs: usize) -> TractResult<()> {
        for cond in [true, false] {
            let (body, mapping) = self.branch(cond);
            let which = branch_name(cond);
            ensure!(
                body.inputs.len() == mapping.len(),
                "If node '{}': its {which} has {} inputs but reads {} outer values",
                self.node,
                body.inputs.len(),
                mapping.len()
            );
            if let Some(ix) = mapping.iter().find(|&&ix| ix == 0 || ix >= node_inputs) {
                bail!(
                    "If node '{}': its {which} reads node input {ix}, expected 1..{node_inputs} (0 is the condition)",
                    self.node
                );
            }
        }
        Ok(())
    }

    /// A branch typed for the typed facts `inputs` of the node's inputs,
    /// with context for errors. Inference alone may leave a value the
    /// branch reads from an enclosing graph undetermined (a slice at a
    /// loop's index, whose length only typing works out); its typed fact
    /// is the branch's input fact.
    fn typed(&self, cond: bool, inputs: &[TypedFact]) -> TractResult<TypedModel> {
        let (body, mapping) = self.branch(cond);
        let mut body = body.clone();
        (|| -> TractResult<TypedModel> {
            for (body_ix, &outer_ix) in mapping.iter().enumerate() {
                let fact = body
                    .input_fact(body_ix)?
                    .unify(&inputs[outer_ix].clone().into())?;
                body.set_input_fact(body_ix, fact)?;
            }
            body.into_typed()
        })()
        .with_context(|| format!("If node '{}': typing its {}", self.node, branch_name(cond)))
    }
}

fn known_condition(fact: &InferenceFact) -> TractResult<Option<bool>> {
    fact.value
        .concretize()
        .map(|v| v.cast_to_scalar::<bool>())
        .transpose()
}

/// What both branches agree on of one output, at inference level: its
/// datum type, and its shape where both ranks are known (the rank of the
/// longer, dims where they agree once the shorter is padded with leading 1s).
fn agreed(a: &InferenceFact, b: &InferenceFact) -> InferenceFact {
    let mut fact = InferenceFact::default();
    if let (Some(x), Some(y)) = (a.datum_type.concretize(), b.datum_type.concretize())
        && x == y
    {
        fact = fact.with_datum_type(x);
    }
    let dims = |f: &InferenceFact| -> Option<Vec<DimFact>> {
        f.shape.rank().concretize()?;
        Some(f.shape.dims().cloned().collect())
    };
    if let (Some(x), Some(y)) = (dims(a), dims(b)) {
        let rank = x.len().max(y.len());
        let pad = |d: Vec<DimFact>| -> Vec<DimFact> {
            let mut p = vec![DimFact::from(TDim::from(1)); rank - d.len()];
            p.extend(d);
            p
        };
        let shape: TVec<DimFact> = pad(x)
            .into_iter()
            .zip(pad(y))
            .map(|(x, y)| if x == y { x } else { DimFact::default() })
            .collect();
        fact.shape = ShapeFactoid::closed(shape);
    }
    fact
}

/// The ops whose output is their inputs broadcast: a leading axis of size
/// 1 more on an input adds at most one to the output, and no value changes.
const BROADCASTING_ELEMENTWISE: &[&str] = &[
    "Identity",
    "Cast",
    "CastLike",
    "Not",
    "And",
    "Or",
    "Xor",
    "Equal",
    "Less",
    "Greater",
    "LessOrEqual",
    "GreaterOrEqual",
    "Where",
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Neg",
    "Abs",
    "Sign",
    "Min",
    "Max",
];

/// How the uses of a value read its rank, read from the ONNX graphs at
/// parse time. ONNX gives an `If` output the rank of the branch that ran;
/// tract needs one rank at load, so a branch of lower rank is padded with
/// leading axes of size 1. That is right only where no use sees the
/// difference: a condition (of an `If`, of a `Loop`, its body's first
/// output), which reads one element whatever the rank, or a broadcasting
/// elementwise op whose other operand has at least the padded rank (the
/// output is then the same), reached through such ops only. A reduction, a
/// softmax, a reshape, a graph's output, a value captured by a subgraph:
/// each sees the rank.
#[derive(Debug, Clone)]
pub(crate) enum RankUse {
    /// Every use ignores leading axes of size 1.
    Ignored,
    /// This use sees them (described for an error).
    Seen(String),
    /// An input of a broadcasting elementwise node, whose other inputs are
    /// the values `others` and whose outputs' uses are `outputs`.
    Broadcast {
        others: Vec<String>,
        outputs: Vec<RankUse>,
    },
    /// All of these uses.
    All(Vec<RankUse>),
}

impl RankUse {
    /// The uses of `name` in the last of `graphs` (the graph being parsed,
    /// inside the others), visiting at most `budget` values.
    fn of(graphs: &[&GraphProto], name: &str, budget: &mut usize) -> RankUse {
        let Some((graph, outer)) = graphs.split_last() else {
            return RankUse::Seen(format!("the use of '{name}'"));
        };
        // Each value is visited once per path to it: the budget bounds a
        // graph of many paths (chains of diamonds).
        let Some(left) = budget.checked_sub(1) else {
            return RankUse::Seen(format!("the uses of '{name}' (too many to follow)"));
        };
        *budget = left;
        let mut uses = vec![];
        for (k, _) in graph
            .output
            .iter()
            .enumerate()
            .filter(|(_, o)| o.name == name)
        {
            let owner = outer
                .last()
                .and_then(|parent| parent.node.iter().find(|n| owns(n, graph)));
            uses.push(match owner {
                Some(n) if n.op_type == "Loop" && k == 0 => RankUse::Ignored,
                Some(n) if n.op_type == "If" => match n.output.get(k).filter(|o| !o.is_empty()) {
                    // The enclosing graph's facts are not analysed yet:
                    // its uses count as seeing the rank unless ignored.
                    Some(up) => match RankUse::of(outer, up, budget).seen(usize::MAX, None) {
                        Some(seen) => RankUse::Seen(seen),
                        None => RankUse::Ignored,
                    },
                    None => RankUse::Ignored,
                },
                Some(n) => RankUse::Seen(format!(
                    "output {k} of the body of {} node '{}'",
                    n.op_type, n.name
                )),
                None => RankUse::Seen(format!("the graph output '{name}'")),
            });
        }
        for n in &graph.node {
            for (position, _) in n.input.iter().enumerate().filter(|(_, i)| *i == name) {
                uses.push(match n.op_type.as_str() {
                    "If" if position == 0 => RankUse::Ignored,
                    "Loop" if position == 1 => RankUse::Ignored,
                    op if BROADCASTING_ELEMENTWISE.contains(&op) => RankUse::Broadcast {
                        others: (n.input.iter().enumerate())
                            .filter(|&(ix, i)| ix != position && !i.is_empty())
                            .map(|(_, i)| i.clone())
                            .collect(),
                        outputs: n
                            .output
                            .iter()
                            .filter(|o| !o.is_empty())
                            .map(|o| RankUse::of(graphs, o, budget))
                            .collect(),
                    },
                    _ => RankUse::Seen(format!(
                        "input {position} of {} node '{}'",
                        n.op_type, n.name
                    )),
                });
            }
            if subgraphs(n).any(|g| reads(g, name)) {
                uses.push(RankUse::Seen(format!(
                    "a subgraph of {} node '{}', which reads it",
                    n.op_type, n.name
                )));
            }
        }
        RankUse::All(uses)
    }

    /// The first use that sees a value of rank `rank` padded with leading
    /// axes of size 1, described; `None` if none does. `graph`: the
    /// analysed graph holding the uses, for the ranks of a broadcasting
    /// op's other operands (without it, or without a rank, an operand
    /// counts as of lower rank).
    fn seen(&self, rank: usize, graph: Option<&InferenceModel>) -> Option<String> {
        match self {
            RankUse::Ignored => None,
            RankUse::Seen(what) => Some(what.clone()),
            RankUse::All(uses) => uses.iter().find_map(|u| u.seen(rank, graph)),
            RankUse::Broadcast { others, outputs } => {
                // A value of the graph: a node's output (labelled with its
                // ONNX name), or an input or initializer (a node so named).
                let rank_of = |name: &String| -> Option<usize> {
                    let graph = graph?;
                    let outlet = (graph.find_outlet_label(name))
                        .or_else(|| Some(OutletId::new(graph.node_by_name(name).ok()?.id, 0)))?;
                    let rank = graph.outlet_fact(outlet).ok()?.shape.rank().concretize()?;
                    usize::try_from(rank).ok()
                };
                let others: Vec<Option<usize>> = others.iter().map(rank_of).collect();
                // An operand of at least the padded rank fixes the output:
                // the same values and shape, padded or not.
                if others.iter().any(|r| r.is_some_and(|r| r >= rank)) {
                    return None;
                }
                let rank = others.iter().flatten().fold(rank, |a, &b| a.max(b));
                outputs.iter().find_map(|u| u.seen(rank, graph))
            }
        }
    }
}

/// The graphs in `node`'s attributes.
fn subgraphs(node: &NodeProto) -> impl Iterator<Item = &GraphProto> {
    node.attribute
        .iter()
        .flat_map(|a| a.g.iter().chain(a.graphs.iter()))
}

/// Whether `graph` is one of `node`'s subgraphs: the same graph, or a copy
/// the `Loop` builder made to type its inputs (same nodes and outputs).
fn owns(node: &NodeProto, graph: &GraphProto) -> bool {
    subgraphs(node)
        .any(|g| std::ptr::eq(g, graph) || (g.node == graph.node && g.output == graph.output))
}

/// Whether any node of `graph`, or of its subgraphs, reads `name`.
fn reads(graph: &GraphProto, name: &str) -> bool {
    graph.output.iter().any(|o| o.name == name)
        || graph
            .node
            .iter()
            .any(|n| n.input.iter().any(|i| i == name) || subgraphs(n).any(|g| reads(g, name)))
}

impl Op for InferIf {
    fn name(&self) -> StaticName {
        "If".into()
    }

    not_a_typed_op!();
}

impl EvalOp for InferIf {
    not_out_of_plan!();
}

impl InferenceOp for InferIf {
    fn infer_facts(
        &mut self,
        inputs: TVec<&InferenceFact>,
        outputs: TVec<&InferenceFact>,
        observed: TVec<&InferenceFact>,
    ) -> TractResult<(
        TVec<InferenceFact>,
        TVec<InferenceFact>,
        TVec<InferenceFact>,
    )> {
        self.check_mappings(inputs.len())?;
        let mut inputs: TVec<InferenceFact> = inputs.into_iter().cloned().collect();
        let mut outputs: TVec<InferenceFact> = outputs.into_iter().cloned().collect();
        inputs[0]
            .datum_type
            .unify_with(&bool::datum_type().into())?;
        // Facts only gain information, so this settles; the bound turns a
        // fact that keeps changing (a bug) into an error naming it.
        let mut last_change = String::new();
        for _ in 0..SETTLE_ROUNDS {
            let mut changed = false;
            let mut note = |what: String, c: bool| {
                if c {
                    changed = true;
                    last_change = what;
                }
            };
            match known_condition(&inputs[0])? {
                Some(cond) => {
                    // Only the taken branch: the other may not even be
                    // valid for these inputs (that is why it is not taken).
                    let which = branch_name(cond);
                    let (body, mapping) = self.branch_mut(cond);
                    for (body_ix, &outer_ix) in mapping.iter().enumerate() {
                        let c = body
                            .input_fact_mut(body_ix)?
                            .unify_with_mut(&mut inputs[outer_ix])?;
                        note(format!("input {outer_ix} ({which} input {body_ix})"), c);
                    }
                    for (ix, output) in outputs.iter_mut().enumerate() {
                        let c = body.output_fact_mut(ix)?.unify_with_mut(output)?;
                        note(format!("output {ix}"), c);
                    }
                    let c = body.analyse(false)?;
                    note(format!("a fact inside its {which}"), c);
                }
                None => {
                    // Not known yet (or only at run time): each branch
                    // learns from the inputs, and the outputs get what
                    // both branches agree on. A branch that fails to
                    // analyse may be the one a condition known later rules
                    // out; a run-time condition types both.
                    let mut analysed = vec![];
                    for cond in [true, false] {
                        let which = branch_name(cond);
                        let (body, mapping) = self.branch_mut(cond);
                        let mut trial_inputs = inputs.clone();
                        let mut trial_body = body.clone();
                        let trial = (|| -> TractResult<Option<String>> {
                            let mut change = None;
                            for (body_ix, &outer_ix) in mapping.iter().enumerate() {
                                if trial_body
                                    .input_fact_mut(body_ix)?
                                    .unify_with_mut(&mut trial_inputs[outer_ix])?
                                {
                                    change =
                                        Some(format!("input {outer_ix} ({which} input {body_ix})"));
                                }
                            }
                            if trial_body.analyse(false)? {
                                change = Some(format!("a fact inside its {which}"));
                            }
                            Ok(change)
                        })();
                        if let Ok(change) = trial {
                            *body = trial_body;
                            inputs = trial_inputs;
                            if let Some(what) = change {
                                note(what, true);
                            }
                            analysed.push(cond);
                        }
                    }
                    if analysed.len() == 2 {
                        for (ix, output) in outputs.iter_mut().enumerate() {
                            let both = agreed(
                                self.then_body.output_fact(ix)?,
                                self.else_body.output_fact(ix)?,
                            );
                            // Only the output is kept: what `both` would
                            // learn from it is no change (the output may
                            // know more than the branches agree on, from
                            // a value_info: `float[?]` against `..`).
                            let c = output.unify_with(&both)?;
                            note(format!("output {ix}"), c);
                        }
                    }
                }
            }
            if !changed {
                return Ok((inputs, outputs, observed.into_iter().cloned().collect()));
            }
        }
        bail!(
            "If node '{}': its facts do not settle after {SETTLE_ROUNDS} rounds of inference; {last_change} still changes",
            self.node
        )
    }

    fn nboutputs(&self) -> TractResult<usize> {
        let (then_outputs, else_outputs) =
            (self.then_body.outputs.len(), self.else_body.outputs.len());
        ensure!(
            then_outputs == else_outputs,
            "If node '{}': then_branch has {then_outputs} outputs and else_branch {else_outputs}; they must be equal",
            self.node
        );
        Ok(then_outputs)
    }

    fn to_typed(
        &self,
        source: &InferenceModel,
        node: &InferenceNode,
        target: &mut TypedModel,
        mapping: &HashMap<OutletId, OutletId>,
    ) -> TractResult<TVec<OutletId>> {
        let inputs: TVec<OutletId> = node.inputs.iter().map(|o| mapping[o]).collect();
        self.check_mappings(inputs.len())?;
        let facts: TVec<TypedFact> = inputs
            .iter()
            .map(|o| target.outlet_fact(*o).cloned())
            .collect::<TractResult<_>>()?;
        let condition = facts[0].konst.clone();
        if let Some(condition) = condition {
            let cond = condition.cast_to_scalar::<bool>()?;
            let (_, body_mapping) = self.branch(cond);
            let body = self.typed(cond, &facts)?;
            let branch_inputs: TVec<OutletId> = body_mapping.iter().map(|&i| inputs[i]).collect();
            return inline(target, &node.name, branch_name(cond), &body, &branch_inputs);
        }
        let then_body = self.typed(true, &facts)?;
        let else_body = self.typed(false, &facts)?;
        let then_mapping = self.then_mapping.clone();
        let else_mapping = self.else_mapping.clone();
        // Stock's `IfThenElse` types only a condition proved to hold one
        // value; one of symbolic shape (`[batch]`) is checked at run.
        let one_condition = facts[0].shape.volume().is_one();
        let stock_is_right = one_condition
            && (0..then_body.outputs.len()).all(|ix| {
                match (then_body.output_fact(ix), else_body.output_fact(ix)) {
                    (Ok(t), Ok(e)) => then_fact_holds_for_else(t, e),
                    _ => false,
                }
            });
        if stock_is_right {
            let op = IfThenElse {
                then_body,
                else_body,
                then_input_mapping: then_mapping,
                else_input_mapping: else_mapping,
            };
            return target.wire_node(&node.name, op, &inputs);
        }
        let op = RunTimeIf::new(
            &self.node,
            [(then_body, then_mapping), (else_body, else_mapping)],
            &target.symbols,
            &self
                .output_uses
                .iter()
                .map(|uses| Some((uses, source)))
                .collect::<Vec<_>>(),
        )?;
        target.wire_node(&node.name, op, &inputs)
    }

    as_op!();
}

/// Whether tract's `IfThenElse`, which gives the then-branch's fact `t`
/// whichever branch runs, is right for the else-branch's `e` too: the same
/// type and shape, and every value `t` claims (constant, uniform value,
/// symbolic value) claimed alike by `e`.
fn then_fact_holds_for_else(t: &TypedFact, e: &TypedFact) -> bool {
    fn same<T: PartialEq>(t: &Option<T>, e: &Option<T>) -> bool {
        t.is_none() || t == e
    }
    t.without_value() == e.without_value()
        && same(&t.konst, &e.konst)
        && same(&t.uniform, &e.uniform)
        && same(&t.uniform_tdim, &e.uniform_tdim)
        && same(&t.region_of_interest, &e.region_of_interest)
}

/// Wires `body` into `target` in place of an `If` named `name` taking
/// `branch`, its sources fed by `inputs`; gives the body's outputs.
fn inline(
    target: &mut TypedModel,
    name: &str,
    branch: &str,
    body: &TypedModel,
    inputs: &[OutletId],
) -> TractResult<TVec<OutletId>> {
    let mut wires: HashMap<OutletId, OutletId> = HashMap::default();
    for (outlet, &input) in body.input_outlets()?.iter().zip(inputs) {
        wires.insert(*outlet, input);
    }
    for id in body.eval_order()? {
        let inner = body.node(id);
        if TypedModel::is_source(&inner.op) {
            continue;
        }
        let node_inputs: TVec<OutletId> = inner.inputs.iter().map(|o| wires[o]).collect();
        let outs = target.wire_node(
            format!("{name}.{branch}.{}", inner.name),
            inner.op.clone(),
            &node_inputs,
        )?;
        for (slot, outlet) in outs.into_iter().enumerate() {
            wires.insert(OutletId::new(id, slot), outlet);
        }
    }
    body.outputs.iter().map(|o| Ok(wires[o])).collect()
}

/// One branch of a [`RunTimeIf`], typed and planned.
#[derive(Debug, Clone)]
pub(crate) struct RunTimeBranch {
    /// The branch, typed and decluttered: what a condition that becomes
    /// a constant inlines.
    pub(crate) body: TypedModel,
    /// The branch, optimized and planned once: what runs.
    pub(crate) plan: Arc<TypedSimplePlan>,
    /// For each input of the branch, its input position on the node.
    pub(crate) mapping: Vec<usize>,
    /// For each output, how many leading axes of size 1 it gains to take
    /// the output's rank (0 but for a branch of the lower rank).
    pub(crate) pad: Vec<usize>,
}

/// `If` whose condition only the run knows, its branches giving different
/// facts (or a value only one of them holds): runs the chosen branch; each
/// output's fact holds what both branches give. See docs/contract.md, "If".
#[derive(Debug, Clone)]
pub(crate) struct RunTimeIf {
    /// The ONNX node's name, for errors.
    pub(crate) node: String,
    /// The branch run when the condition is true.
    pub(crate) then_branch: RunTimeBranch,
    /// The branch run when the condition is false.
    pub(crate) else_branch: RunTimeBranch,
    /// The output facts: a dim the branches disagree on is a symbol of
    /// `minted`; a constant only where both branches hold the same.
    pub(crate) output_facts: TVec<TypedFact>,
    /// The symbols the outputs bind when the op runs (fresh at typing).
    pub(crate) minted: Vec<Symbol>,
}

impl PartialEq for RunTimeIf {
    fn eq(&self, other: &Self) -> bool {
        self.node == other.node
            && Arc::ptr_eq(&self.then_branch.plan, &other.then_branch.plan)
            && Arc::ptr_eq(&self.else_branch.plan, &other.else_branch.plan)
    }
}
impl Eq for RunTimeIf {}

impl RunTimeIf {
    /// The op for typed `branches` (then, else) and their input mappings;
    /// an error naming the node, the output and both facts where the two
    /// cannot give one fact. `output_uses`: per output, its uses and the
    /// analysed graph holding them, which decide whether a lower-rank
    /// branch may be padded ([`RankUse`]; an output past the end, or
    /// `None`, may be).
    pub(crate) fn new(
        node: &str,
        branches: [(TypedModel, Vec<usize>); 2],
        symbols: &SymbolScope,
        output_uses: &[Option<(&RankUse, &InferenceModel)>],
    ) -> TractResult<RunTimeIf> {
        let [(mut then_body, then_mapping), (mut else_body, else_mapping)] = branches;
        for ix in 0..then_body.outputs.len() {
            // tract types some int64 values as TDim (shapes, a Cast to
            // int64): where the other branch gives int64, so does this one.
            let (t, e) = (then_body.output_fact(ix)?, else_body.output_fact(ix)?);
            let (tdim, int64) = (TDim::datum_type(), i64::datum_type());
            if t.datum_type == tdim && e.datum_type == int64 {
                as_int64(&mut then_body, ix)?;
            } else if t.datum_type == int64 && e.datum_type == tdim {
                as_int64(&mut else_body, ix)?;
            }
        }
        let mut minted = vec![];
        let mut output_facts = tvec![];
        let (mut then_pad, mut else_pad) = (vec![], vec![]);
        for ix in 0..then_body.outputs.len() {
            let (t, e) = (then_body.output_fact(ix)?, else_body.output_fact(ix)?);
            let uses = output_uses.get(ix).copied().flatten();
            let (fact, pads) = union(node, ix, t, e, uses, symbols, &mut minted)?;
            output_facts.push(fact);
            then_pad.push(pads[0]);
            else_pad.push(pads[1]);
        }
        let branch = |body: TypedModel, mapping, pad, cond: bool| -> TractResult<RunTimeBranch> {
            let which = branch_name(cond);
            let body = body
                .into_decluttered()
                .with_context(|| format!("If node '{node}': decluttering its {which}"))?;
            let optimized = body
                .clone()
                .into_optimized()
                .with_context(|| format!("If node '{node}': optimizing its {which}"))?;
            Ok(RunTimeBranch {
                body,
                plan: SimplePlan::new(optimized)?,
                mapping,
                pad,
            })
        };
        Ok(RunTimeIf {
            node: node.to_string(),
            then_branch: branch(then_body, then_mapping, then_pad, true)?,
            else_branch: branch(else_body, else_mapping, else_pad, false)?,
            output_facts,
            minted,
        })
    }
}

/// Output `ix` of `body`, typed TDim, cast to int64.
fn as_int64(body: &mut TypedModel, ix: usize) -> TractResult<()> {
    let outlet = body.outputs[ix];
    let op = tract_core::ops::cast::cast(i64::datum_type());
    body.outputs[ix] = body.wire_node(format!("output_{ix}.as_i64"), op, &[outlet])?[0];
    Ok(())
}

/// `F32 [1, n]`: a fact's datum type and shape, for errors.
fn show(fact: &TypedFact) -> String {
    let dims: Vec<String> = fact.shape.iter().map(|d| d.to_string()).collect();
    format!("{:?} [{}]", fact.datum_type, dims.join(", "))
}

/// The fact of output `ix` holding both branches' facts `t` and `e`, and
/// the leading axes each branch's value gains. The datum types must agree;
/// the ranks too, or differ by leading axes of size 1 only where no use
/// sees them (`uses`, [`RankUse`]; the shorter is padded to the longer, as
/// broadcasting aligns them); dims that differ become fresh symbols
/// (prefix `if`), added to `minted`.
fn union(
    node: &str,
    ix: usize,
    t: &TypedFact,
    e: &TypedFact,
    uses: Option<(&RankUse, &InferenceModel)>,
    symbols: &SymbolScope,
    minted: &mut Vec<Symbol>,
) -> TractResult<(TypedFact, [usize; 2])> {
    let refuse = |why: &str| {
        format_err!(
            "If node '{node}': output {ix} is {} in then_branch and {} in else_branch; {why}",
            show(t),
            show(e)
        )
    };
    if t.datum_type != e.datum_type {
        return Err(refuse("the branches must give one datum type"));
    }
    let rank = t.rank().max(e.rank());
    let pads = [rank - t.rank(), rank - e.rank()];
    let padded = |f: &TypedFact, pad: usize| -> TVec<TDim> {
        let mut dims: TVec<TDim> = tvec![TDim::from(1); pad];
        dims.extend(f.shape.iter().cloned());
        dims
    };
    let (ts, es) = (padded(t, pads[0]), padded(e, pads[1]));
    // The axes the shorter branch gains must be of size 1 in the longer.
    let (pad, longer) = if pads[0] > 0 {
        (pads[0], &es)
    } else {
        (pads[1], &ts)
    };
    if !longer[..pad].iter().all(|d| d.is_one()) {
        return Err(refuse(
            "their ranks differ by more than leading axes of size 1 (the lower rank is padded with leading axes of size 1 only)",
        ));
    }
    if pad > 0
        && let Some(observer) = uses.and_then(|(uses, graph)| uses.seen(rank, Some(graph)))
    {
        return Err(refuse(&format!(
            "tract needs one rank at load, and padding the lower rank with leading axes of size 1 would change what {observer} computes (only a Loop or If condition, reached through broadcasting elementwise ops, may read an If output whose rank the run decides)"
        )));
    }
    let shape: TVec<TDim> = ts
        .iter()
        .zip(&es)
        .map(|(a, b)| {
            if a == b {
                a.clone()
            } else {
                let s = symbols.new_with_prefix("if");
                minted.push(s.clone());
                s.to_dim()
            }
        })
        .collect();
    let mut fact = t.datum_type.fact(shape);
    if let (Some(a), Some(b)) = (&t.konst, &e.konst)
        && pads == [0, 0]
        && a == b
    {
        fact.konst = Some(a.clone());
    }
    Ok((fact, pads))
}

impl Op for RunTimeIf {
    fn name(&self) -> StaticName {
        "If".into()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        Ok(vec![format!(
            "then_branch: {} nodes, else_branch: {} nodes, run-time dims: {}",
            self.then_branch.plan.model().nodes().len(),
            self.else_branch.plan.model().nodes().len(),
            self.minted.len()
        )])
    }

    fn mints_runtime_symbols(&self) -> bool {
        !self.minted.is_empty()
    }

    op_as_typed_op!();
}

impl EvalOp for RunTimeIf {
    not_out_of_plan!();

    fn eval(&self, ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let node = &self.node;
        let condition = inputs.first().context("no condition")?;
        ensure!(
            condition.len() == 1 && condition.datum_type() == bool::datum_type(),
            "If node '{node}': the condition must be one bool, got {:?} of shape {:?}",
            condition.datum_type(),
            condition.shape()
        );
        let cond = condition.try_as_plain_ram()?.as_slice::<bool>()?[0];
        let branch = if cond {
            &self.then_branch
        } else {
            &self.else_branch
        };
        let branch_inputs: TVec<TValue> = branch
            .mapping
            .iter()
            .map(|&ix| {
                inputs.get(ix).cloned().with_context(|| {
                    format!("If node '{node}': reads input {ix} of {}", inputs.len())
                })
            })
            .collect::<TractResult<_>>()?;
        drop(inputs);
        let mut state = TypedSimpleState::new(&branch.plan)?;
        // A branch reads values of the enclosing graph holding its symbols:
        // the run's values of those symbols, before its inputs bind the rest.
        state.turn_state.resolved_symbols = ctx.symbols.clone();
        let outputs = state
            .run(branch_inputs)
            .with_context(|| format!("If node '{node}': running its {}", branch_name(cond)))?;
        outputs
            .into_iter()
            .zip(&branch.pad)
            .map(|(v, &pad)| {
                if pad == 0 {
                    return Ok(v);
                }
                let mut t = v.into_tensor();
                for _ in 0..pad {
                    t.insert_axis(0)?;
                }
                Ok(t.into_tvalue())
            })
            .collect()
    }
}

impl TypedOp for RunTimeIf {
    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        let cond = inputs.first().context("no condition")?;
        let volume = cond.shape.volume();
        ensure!(
            cond.datum_type == bool::datum_type() && volume.as_i64().is_none_or(|v| v == 1),
            "If node '{}': the condition must be one bool, got {}",
            self.node,
            show(cond)
        );
        Ok(self.output_facts.clone())
    }

    fn declutter(
        &self,
        model: &TypedModel,
        node: &TypedNode,
    ) -> TractResult<Option<TypedModelPatch>> {
        // A condition that became a constant: the taken branch, inlined.
        let Some(cond) = &model.outlet_fact(node.inputs[0])?.konst else {
            return Ok(None);
        };
        let cond = cond.cast_to_scalar::<bool>()?;
        let branch = if cond {
            &self.then_branch
        } else {
            &self.else_branch
        };
        let mut patch = TypedModelPatch::default();
        let taps: TVec<OutletId> = branch
            .mapping
            .iter()
            .map(|&ix| patch.tap_model(model, node.inputs[ix]))
            .collect::<TractResult<_>>()?;
        let outputs = inline(
            &mut patch,
            &node.name,
            branch_name(cond),
            &branch.body,
            &taps,
        )?;
        for (slot, (mut outlet, &pad)) in outputs.into_iter().zip(&branch.pad).enumerate() {
            for _ in 0..pad {
                outlet = patch.wire_node(
                    format!("{}.pad_{slot}", node.name),
                    AxisOp::Add(0),
                    &[outlet],
                )?[0];
            }
            patch.shunt_outside(model, OutletId::new(node.id, slot), outlet)?;
        }
        Ok(Some(patch))
    }

    as_op!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use tract_core::ops::math::{add, mul};

    /// A branch of one input `x` of `fact`: `x + x` or `x * x`.
    fn doubling(fact: TypedFact, square: bool) -> TypedModel {
        let mut body = TypedModel::default();
        let x = body.add_source("x", fact).unwrap();
        let op = if square { mul() } else { add() };
        let y = body.wire_node("y", op, &[x, x]).unwrap();
        body.select_output_outlets(&y).unwrap();
        body
    }

    /// A branch giving the constant `value`, reading nothing.
    fn constant(value: Tensor) -> TypedModel {
        let mut body = TypedModel::default();
        let c = body.add_const("c", value).unwrap();
        body.select_output_outlets(&[c]).unwrap();
        body
    }

    /// Runs `op` in a model of inputs `(cond, x)`.
    fn run(op: &RunTimeIf, cond: bool, x: Tensor) -> TractResult<Tensor> {
        let mut model = TypedModel::default();
        let c = model.add_source("cond", bool::scalar_fact())?;
        let x_in = model.add_source("x", TypedFact::shape_and_dt_of(&x))?;
        let out = model.wire_node("if", op.clone(), &[c, x_in])?;
        model.select_output_outlets(&out)?;
        let inputs = tvec!(tensor0(cond).into_tvalue(), x.into_tvalue());
        let mut outputs = model.into_runnable()?.run(inputs)?;
        Ok(outputs.remove(0).into_tensor())
    }

    #[test]
    fn a_constant_then_branch_is_not_the_output_s_value() {
        let symbols = SymbolScope::default();
        let op = RunTimeIf::new(
            "choose",
            [
                (constant(tensor1(&[7f32, 7.0, 7.0])), vec![]),
                (doubling(f32::fact([3]), false), vec![1]),
            ],
            &symbols,
            &[],
        )
        .unwrap();
        assert!(op.output_facts[0].konst.is_none());
        assert_eq!(
            run(&op, true, tensor1(&[1f32, 2.0, 3.0])).unwrap(),
            tensor1(&[7f32, 7.0, 7.0])
        );
        assert_eq!(
            run(&op, false, tensor1(&[1f32, 2.0, 3.0])).unwrap(),
            tensor1(&[2f32, 4.0, 6.0])
        );
    }

    #[test]
    fn two_equal_constants_keep_their_value_in_the_fact() {
        let symbols = SymbolScope::default();
        let op = RunTimeIf::new(
            "choose",
            [
                (constant(tensor1(&[1f32, 2.0])), vec![]),
                (constant(tensor1(&[1f32, 2.0])), vec![]),
            ],
            &symbols,
            &[],
        )
        .unwrap();
        assert_eq!(
            op.output_facts[0].konst.as_deref(),
            Some(&tensor1(&[1f32, 2.0]))
        );
    }

    #[test]
    fn dims_the_branches_disagree_on_become_symbols_bound_by_the_run() {
        let symbols = SymbolScope::default();
        let op = RunTimeIf::new(
            "choose",
            [
                (constant(tensor1(&[1f32, 2.0])), vec![]),
                (doubling(f32::fact([3]), true), vec![1]),
            ],
            &symbols,
            &[],
        )
        .unwrap();
        assert_eq!(op.minted.len(), 1);
        assert_eq!(
            op.output_facts[0].shape.to_tvec(),
            tvec![op.minted[0].to_dim()]
        );
        assert!(op.mints_runtime_symbols());
        assert_eq!(
            run(&op, true, tensor1(&[1f32, 2.0, 3.0])).unwrap(),
            tensor1(&[1f32, 2.0])
        );
        assert_eq!(
            run(&op, false, tensor1(&[1f32, 2.0, 3.0])).unwrap(),
            tensor1(&[1f32, 4.0, 9.0])
        );
    }

    #[test]
    fn a_scalar_against_a_vector_of_one_gains_a_leading_axis() {
        let symbols = SymbolScope::default();
        let op = RunTimeIf::new(
            "flag",
            [
                (constant(tensor0(false)), vec![]),
                (constant(tensor1(&[true])), vec![]),
            ],
            &symbols,
            &[],
        )
        .unwrap();
        assert_eq!(op.output_facts[0].shape.to_tvec(), tvec![1.to_dim()]);
        assert_eq!(op.then_branch.pad, vec![1]);
        assert_eq!(op.else_branch.pad, vec![0]);
        assert!(op.output_facts[0].konst.is_none());
    }

    #[test]
    fn ranks_differing_by_an_axis_longer_than_one_are_an_error_naming_both_facts() {
        let symbols = SymbolScope::default();
        let err = RunTimeIf::new(
            "choose",
            [
                (constant(tensor2(&[[1f32, 2.0], [3.0, 4.0]])), vec![]),
                (constant(tensor1(&[1f32, 2.0, 3.0, 4.0])), vec![]),
            ],
            &symbols,
            &[],
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "If node 'choose': output 0 is F32 [2, 2] in then_branch and F32 [4] in else_branch; their ranks differ by more than leading axes of size 1 (the lower rank is padded with leading axes of size 1 only)"
        );
    }

    #[test]
    fn datum_types_that_differ_are_an_error_naming_both_facts() {
        let symbols = SymbolScope::default();
        let err = RunTimeIf::new(
            "choose",
            [
                (constant(tensor1(&[1f32])), vec![]),
                (constant(tensor1(&[1i32])), vec![]),
            ],
            &symbols,
            &[],
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "If node 'choose': output 0 is F32 [1] in then_branch and I32 [1] in else_branch; the branches must give one datum type"
        );
    }

    #[test]
    fn a_condition_that_becomes_a_constant_inlines_its_branch() {
        let symbols = SymbolScope::default();
        let op = RunTimeIf::new(
            "choose",
            [
                (constant(tensor0(5f32)), vec![]),
                (doubling(f32::fact([1]), false), vec![1]),
            ],
            &symbols,
            &[],
        )
        .unwrap();
        for (cond, want) in [(true, tensor1(&[5f32])), (false, tensor1(&[2f32]))] {
            let mut model = TypedModel::default();
            let c = model.add_const("cond", tensor0(cond)).unwrap();
            let x = model.add_const("x", tensor1(&[1f32])).unwrap();
            let out = model.wire_node("if", op.clone(), &[c, x]).unwrap();
            model.select_output_outlets(&out).unwrap();
            let model = model.into_decluttered().unwrap();
            assert!(!model.nodes().iter().any(|n| n.op.name() == "If"));
            let got = model.into_runnable().unwrap().run(tvec!()).unwrap();
            assert_eq!(got[0].clone().into_tensor(), want);
        }
    }
}
