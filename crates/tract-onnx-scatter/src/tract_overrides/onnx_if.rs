//! ONNX `If` whose condition is a constant once the input facts are known.
//!
//! PyTorch's TorchScript exporter wraps `scatter_reduce` (opsets 16, 17) in
//! `If(Size(Shape(x)) == 0)`, with branches of different ranks. tract's `If`
//! requires both branches to produce equal facts, even when the condition
//! is known at load, so such models fail in `into_typed`. Here, a condition
//! known after analysis takes one branch: only that branch is analysed and
//! typed, and it is inlined in the outer graph; the other one never matters.
//! A condition only known at run time keeps tract's `If` (both branches,
//! equal facts required) exactly.

use tract_core::ops::logic::IfThenElse;
use tract_hir::internal::*;
use tract_onnx::model::{ParseResult, ParsingContext};
use tract_onnx::pb::NodeProto;

/// The builder registered for `If`.
pub fn if_then_else(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let ParseResult {
        model: then_body,
        unresolved_inputs: then_inputs,
        ..
    } = ctx.parse_graph(node.get_attr("then_branch")?)?;
    let ParseResult {
        model: else_body,
        unresolved_inputs: else_inputs,
        ..
    } = ctx.parse_graph(node.get_attr("else_branch")?)?;
    // Outer inputs: the condition, then every name either branch reads from
    // the enclosing graphs, once each.
    let mut outer: Vec<String> = then_inputs.iter().chain(&else_inputs).cloned().collect();
    outer.sort();
    outer.dedup();
    let position = |name: &String| outer.iter().position(|o| o == name).map(|p| p + 1);
    let then_mapping = then_inputs.iter().filter_map(position).collect();
    let else_mapping = else_inputs.iter().filter_map(position).collect();
    Ok((
        Box::new(ConstantIf {
            then_body,
            then_mapping,
            else_body,
            else_mapping,
        }),
        outer,
    ))
}

/// `If` at inference level; see the module documentation.
#[derive(Debug, Clone)]
pub struct ConstantIf {
    /// The `then_branch` graph, run when the condition is true; names of
    /// the enclosing graphs it reads are its inputs.
    pub then_body: InferenceModel,
    /// For each input of `then_body`, its input position on the node.
    pub then_mapping: Vec<usize>,
    /// The `else_branch` graph, run when the condition is false; names of
    /// the enclosing graphs it reads are its inputs.
    pub else_body: InferenceModel,
    /// For each input of `else_body`, its input position on the node.
    pub else_mapping: Vec<usize>,
}

impl PartialEq for ConstantIf {
    fn eq(&self, _: &Self) -> bool {
        false
    }
}
impl Eq for ConstantIf {}

impl ConstantIf {
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
}

fn known_condition(fact: &InferenceFact) -> TractResult<Option<bool>> {
    fact.value
        .concretize()
        .map(|v| v.cast_to_scalar::<bool>())
        .transpose()
}

impl Op for ConstantIf {
    fn name(&self) -> StaticName {
        "If".into()
    }

    not_a_typed_op!();
}

impl EvalOp for ConstantIf {
    op_out_of_plan!();

    fn eval(&self, _ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let (body, mapping) = self.branch(inputs[0].cast_to_scalar::<bool>()?);
        let inputs: TVec<TValue> = mapping.iter().map(|&ix| inputs[ix].clone()).collect();
        body.clone().into_runnable()?.run(inputs)
    }
}

impl InferenceOp for ConstantIf {
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
        let mut inputs: TVec<InferenceFact> = inputs.into_iter().cloned().collect();
        let mut outputs: TVec<InferenceFact> = outputs.into_iter().cloned().collect();
        inputs[0]
            .datum_type
            .unify_with(&bool::datum_type().into())?;
        loop {
            let mut changed = false;
            match known_condition(&inputs[0])? {
                Some(cond) => {
                    // Only the taken branch: the other may not even be
                    // valid for these inputs (that is why it is not taken).
                    let (body, mapping) = self.branch_mut(cond);
                    for (body_ix, &outer_ix) in mapping.iter().enumerate() {
                        changed |= body
                            .input_fact_mut(body_ix)?
                            .unify_with_mut(&mut inputs[outer_ix])?;
                    }
                    for (ix, output) in outputs.iter_mut().enumerate() {
                        changed |= body.output_fact_mut(ix)?.unify_with_mut(output)?;
                    }
                    changed |= body.analyse(false)?;
                }
                None => {
                    // Not known yet (or only at run time): learn from the
                    // branches what they agree on. A branch that disagrees,
                    // or fails to analyse, may be the one a condition known
                    // later rules out; a run-time condition is checked by
                    // tract's If when typed.
                    for cond in [true, false] {
                        let (body, mapping) = self.branch_mut(cond);
                        let mut trial_inputs = inputs.clone();
                        let mut trial_outputs = outputs.clone();
                        let mut trial_body = body.clone();
                        let trial = (|| -> TractResult<bool> {
                            let mut changed = false;
                            for (body_ix, &outer_ix) in mapping.iter().enumerate() {
                                changed |= trial_body
                                    .input_fact_mut(body_ix)?
                                    .unify_with_mut(&mut trial_inputs[outer_ix])?;
                            }
                            for (ix, output) in trial_outputs.iter_mut().enumerate() {
                                let fact = trial_body.output_fact_mut(ix)?;
                                changed |= fact.shape.unify_with_mut(&mut output.shape)?;
                                changed |=
                                    fact.datum_type.unify_with_mut(&mut output.datum_type)?;
                            }
                            changed |= trial_body.analyse(false)?;
                            Ok(changed)
                        })();
                        if let Ok(trial_changed) = trial {
                            *body = trial_body;
                            inputs = trial_inputs;
                            outputs = trial_outputs;
                            changed |= trial_changed;
                        }
                    }
                }
            }
            if !changed {
                return Ok((inputs, outputs, observed.into_iter().cloned().collect()));
            }
        }
    }

    fn nboutputs(&self) -> TractResult<usize> {
        let (then_outputs, else_outputs) =
            (self.then_body.outputs.len(), self.else_body.outputs.len());
        ensure!(
            then_outputs == else_outputs,
            "If: then_branch has {then_outputs} outputs and else_branch {else_outputs}; they must be equal"
        );
        Ok(then_outputs)
    }

    fn to_typed(
        &self,
        _source: &InferenceModel,
        node: &InferenceNode,
        target: &mut TypedModel,
        mapping: &HashMap<OutletId, OutletId>,
    ) -> TractResult<TVec<OutletId>> {
        let inputs: TVec<OutletId> = node.inputs.iter().map(|o| mapping[o]).collect();
        let condition = target.outlet_fact(inputs[0])?.konst.clone();
        let Some(condition) = condition else {
            let op = IfThenElse {
                then_body: self.then_body.clone().into_typed()?,
                else_body: self.else_body.clone().into_typed()?,
                then_input_mapping: self.then_mapping.clone(),
                else_input_mapping: self.else_mapping.clone(),
            };
            return target.wire_node(&node.name, op, &inputs);
        };
        let cond = condition.cast_to_scalar::<bool>()?;
        let branch = if cond { "then_branch" } else { "else_branch" };
        let (body, body_mapping) = self.branch(cond);
        let body = body.clone().into_typed().with_context(|| {
            format!(
                "If node '{}': typing its {branch} (condition constant {cond})",
                node.name
            )
        })?;
        // Inline the taken branch: its sources are the node's inputs.
        let mut wires: HashMap<OutletId, OutletId> = HashMap::default();
        for (outlet, &outer_ix) in body.input_outlets()?.iter().zip(body_mapping) {
            wires.insert(*outlet, inputs[outer_ix]);
        }
        for id in body.eval_order()? {
            let inner = body.node(id);
            if TypedModel::is_source(&inner.op) {
                continue;
            }
            let node_inputs: TVec<OutletId> = inner.inputs.iter().map(|o| wires[o]).collect();
            let outs = target.wire_node(
                format!("{}.{branch}.{}", node.name, inner.name),
                inner.op.clone(),
                &node_inputs,
            )?;
            for (slot, outlet) in outs.into_iter().enumerate() {
                wires.insert(OutletId::new(id, slot), outlet);
            }
        }
        body.outputs.iter().map(|o| Ok(wires[o])).collect()
    }

    as_op!();
}
