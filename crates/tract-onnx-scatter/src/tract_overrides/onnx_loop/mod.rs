//! ONNX `Loop` (opsets 1, 11, 13, 16, 19, 21), which tract 0.23.9 does not
//! implement ("Unimplemented(Loop)").
//!
//! Decoders write one row per step into a preallocated buffer with a
//! `ScatterND`/`ScatterElements` inside a `Loop` body (SLANet, TorchScript
//! `while` loops). `InferLoop` types the body from the outer facts
//! (`body_typing`; `iterations` proves a counted loop runs its trip
//! count) and runs it as one plan state over every iteration. Loop-carried
//! values move between iterations: the body gets them as the only
//! reference, so a scatter into a carried buffer writes in place.
//!
//! The contract (inputs, outputs, facts, [`LOOP_ITERATION_LIMIT`] and
//! [`LOOP_MEMORY_BUDGET`]) is docs/contract.md's "Loop (tract override)".

pub(crate) mod body_typing;
pub(crate) mod iterations;

use std::sync::atomic::{AtomicUsize, Ordering};

use self::body_typing::{covers, show, type_body, widen};
use tract_hir::infer::{DimFact, ShapeFactoid};
use tract_hir::internal::*;
use tract_onnx::model::{ParseResult, ParsingContext};
use tract_onnx::pb::tensor_proto::DataType;
use tract_onnx::pb::{NodeProto, TypeProto, ValueInfoProto, type_proto};

/// The default of [`LOOP_ITERATION_LIMIT`]: 2^20 iterations.
pub const DEFAULT_LOOP_ITERATION_LIMIT: usize = 1 << 20;

/// The most iterations any `Loop` runs, process-wide; a loop that would run
/// one more fails, naming its node and this limit. Change it with
/// `LOOP_ITERATION_LIMIT.store(n, Ordering::Relaxed)`; it is read once at
/// the start of each loop's evaluation.
pub static LOOP_ITERATION_LIMIT: AtomicUsize = AtomicUsize::new(DEFAULT_LOOP_ITERATION_LIMIT);

/// The default of [`LOOP_MEMORY_BUDGET`]: 4 GiB.
pub const DEFAULT_LOOP_MEMORY_BUDGET: usize = 1 << 32;

/// The most bytes any `Loop`'s loop-carried values and scan outputs may
/// hold together, process-wide: a body that grows a carried value or
/// emits scan rows every step would otherwise exhaust memory long before
/// the iteration limit. Past it, the loop fails naming its node, the
/// iteration and this budget. Change it with
/// `LOOP_MEMORY_BUDGET.store(n, Ordering::Relaxed)`; read once at the start
/// of each loop's evaluation.
pub static LOOP_MEMORY_BUDGET: AtomicUsize = AtomicUsize::new(DEFAULT_LOOP_MEMORY_BUDGET);

/// The bytes `v` holds (its elements; a string counts its `String`).
fn held_bytes(v: &TValue) -> usize {
    v.len().saturating_mul(v.datum_type().size_of())
}

/// The builder registered for `Loop`.
pub(crate) fn onnx_loop(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let name = &node.name;
    let body_proto = node
        .get_attr_opt::<&tract_onnx::pb::GraphProto>("body")?
        .with_context(|| format!("Loop node '{name}': has no `body` graph attribute"))?;
    let present = |ix: usize| node.input.get(ix).is_some_and(|s| !s.is_empty());
    let has_trip_count = present(0);
    let has_cond = present(1);
    let carried = node.input.len().saturating_sub(2);
    if let Some(ix) = (2..node.input.len()).find(|&ix| node.input[ix].is_empty()) {
        bail!(
            "Loop node '{name}': loop-carried initial value {} (input {ix}) has an empty name; loop-carried values cannot be omitted",
            ix - 2
        );
    }
    let body_inputs = body_proto.input.len();
    ensure!(
        body_inputs == 2 + carried,
        "Loop node '{name}': body has {body_inputs} inputs, expected 2 + {carried} (iteration_num, cond, then one per loop-carried value; the node has {carried})"
    );
    let body_outputs = body_proto.output.len();
    ensure!(
        body_outputs > carried,
        "Loop node '{name}': body has {body_outputs} outputs, expected at least 1 + {carried} (cond, then one per loop-carried value; the node has {carried})"
    );
    let scan = body_outputs - 1 - carried;
    ensure!(
        node.output.len() <= carried + scan,
        "Loop node '{name}': has {} outputs, expected at most {} ({carried} loop-carried values and {scan} scan outputs, as its body gives)",
        node.output.len(),
        carried + scan
    );
    let role = |ix: usize, input: bool| match (input, ix) {
        (true, 0) => "iteration_num".to_string(),
        (true, 1) | (false, 0) => "cond".to_string(),
        (true, ix) => format!("loop-carried value {}", ix - 2),
        (false, ix) if ix <= carried => format!("loop-carried value {}", ix - 1),
        (false, ix) => format!("scan output {}", ix - 1 - carried),
    };
    let check_tensor = |info: &ValueInfoProto, ix: usize, input: bool| -> TractResult<()> {
        let kind = if input { "input" } else { "output" };
        if let Some(t) = &info.r#type {
            ensure!(
                t.value.is_some(),
                "Loop node '{name}': body {kind} '{}' ({}) is not a tensor (a sequence, optional or map value); tract_onnx_scatter's Loop supports tensor values only",
                info.name,
                role(ix, input)
            );
        }
        Ok(())
    };
    for (ix, info) in body_proto.input.iter().enumerate() {
        check_tensor(info, ix, true)?;
    }
    for (ix, info) in body_proto.output.iter().enumerate() {
        check_tensor(info, ix, false)?;
    }
    // ONNX lets body inputs go untyped (the expanded `Range` function of
    // the official tests does); tract's parser needs a type. Any will do:
    // the loop sets every body input's fact before analysing the body.
    let mut body_proto = body_proto.clone();
    for (ix, input) in body_proto.input.iter_mut().enumerate() {
        if input.r#type.is_none() {
            let elem_type = match ix {
                0 => DataType::Int64,
                1 => DataType::Bool,
                _ => DataType::Float,
            };
            input.r#type = Some(TypeProto {
                value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                    elem_type: elem_type as i32,
                    shape: None,
                })),
                ..Default::default()
            });
        }
    }
    let ParseResult {
        model: body,
        unresolved_inputs,
        ..
    } = ctx
        .parse_graph(&body_proto)
        .with_context(|| format!("Loop node '{name}': parsing its body"))?;
    let outputs: Vec<usize> = (0..node.output.len())
        .filter(|&i| !node.output[i].is_empty())
        .collect();
    Ok((
        Box::new(InferLoop {
            node: name.clone(),
            body,
            has_trip_count,
            has_cond,
            carried,
            scan,
            outputs,
        }),
        unresolved_inputs,
    ))
}

/// The typed `Loop`; see the module documentation.
#[derive(Debug, Clone)]
pub(crate) struct Loop {
    /// The ONNX node's name, for errors.
    pub(crate) node: String,
    /// The body, typed and optimized once; its inputs are
    /// `(iteration_num, cond, v_1..v_N, outer-scope values)`. It runs every
    /// iteration, but the first when `first_plan` is there.
    pub(crate) plan: Arc<TypedSimplePlan>,
    /// The body typed for the first iteration, when a loop-carried value
    /// leaves it with another rank than it entered (see
    /// [`body_typing`]).
    pub(crate) first_plan: Option<Arc<TypedSimplePlan>>,
    /// Whether the node's first input, the trip count `M`, is given (not
    /// an empty name).
    pub(crate) has_trip_count: bool,
    /// Whether the node's second input, the initial `cond`, is given (not
    /// an empty name).
    pub(crate) has_cond: bool,
    /// N, the number of loop-carried values.
    pub(crate) carried: usize,
    /// K, the number of scan outputs.
    pub(crate) scan: usize,
    /// The N + K output facts, fixed when the loop was typed.
    pub(crate) output_facts: TVec<TypedFact>,
    /// The symbols this loop's outputs bind (fresh at typing).
    pub(crate) minted: Vec<Symbol>,
    /// For each loop-carried output, what a run of no iteration gives.
    pub(crate) no_iteration: TVec<NoIteration>,
}

/// What a loop-carried output is when no iteration runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoIteration {
    /// Its initial value, which its fact holds.
    Initial,
    /// An error: the body changes its rank, its fact has the body's rank
    /// (a fact holds one rank), and the model reads it.
    Error,
    /// Zeros of its fact's shape: the body changes its rank, and no node of
    /// the model reads it (paddle2onnx names every output of its loops).
    Zeros,
}

impl PartialEq for Loop {
    fn eq(&self, other: &Self) -> bool {
        self.node == other.node
            && Arc::ptr_eq(&self.plan, &other.plan)
            && match (&self.first_plan, &other.first_plan) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                (a, b) => a.is_none() && b.is_none(),
            }
    }
}
impl Eq for Loop {}

impl Loop {
    fn body(&self) -> &TypedModel {
        self.plan.model()
    }

    fn scalar_i64(&self, what: &str, v: &TValue, symbols: &SymbolValues) -> TractResult<i64> {
        ensure!(
            v.len() == 1,
            "Loop node '{}': {what} must hold one value, got shape {:?}",
            self.node,
            v.shape()
        );
        let values = crate::tract_overrides::run_symbols::run_values(v, symbols)
            .with_context(|| format!("Loop node '{}': reading {what}", self.node))?;
        Ok(values[0])
    }

    fn scalar_bool(&self, what: &str, v: &TValue) -> TractResult<bool> {
        ensure!(
            v.len() == 1 && v.datum_type() == bool::datum_type(),
            "Loop node '{}': {what} must be one bool, got {:?} of shape {:?}",
            self.node,
            v.datum_type(),
            v.shape()
        );
        Ok(v.try_as_plain_ram()?.as_slice::<bool>()?[0])
    }

    /// `fact`'s shape with the run's symbols (dims it cannot tell: 0).
    fn eval_shape(&self, fact: &TypedFact, symbols: &SymbolValues) -> Vec<usize> {
        fact.shape
            .iter()
            .map(|d| {
                let d = d.eval(symbols).to_i64().ok();
                d.and_then(|d| usize::try_from(d).ok()).unwrap_or(0)
            })
            .collect()
    }

    /// Stacks scan output `k`'s per-iteration values along a new first axis.
    fn stack(&self, k: usize, values: Vec<TValue>, symbols: &SymbolValues) -> TractResult<Tensor> {
        let fact = &self.output_facts[self.carried + k];
        let Some(first) = values.first() else {
            // No iteration: 0 rows of the body's fact.
            let mut shape = self.eval_shape(fact, symbols);
            shape[0] = 0;
            return Tensor::zero_dt(fact.datum_type, &shape);
        };
        let (dt, shape) = (first.datum_type(), first.shape().to_vec());
        for (i, v) in values.iter().enumerate() {
            ensure!(
                v.datum_type() == dt && v.shape() == &*shape,
                "Loop node '{}': scan output {k} is {dt:?} {shape:?} at iteration 0 but {:?} {:?} at iteration {i}; scan outputs must keep their type and shape",
                self.node,
                v.datum_type(),
                v.shape()
            );
        }
        let rows: Vec<Tensor> = values
            .into_iter()
            .map(|v| {
                let mut t = v.into_tensor();
                t.insert_axis(0)?;
                Ok(t)
            })
            .collect::<TractResult<_>>()?;
        Tensor::stack_tensors(0, &rows)
    }
}

impl Op for Loop {
    fn name(&self) -> StaticName {
        "Loop".into()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        let mut info = vec![format!(
            "trip count: {} cond: {} carried: {} scan: {} body: {} nodes",
            self.has_trip_count,
            self.has_cond,
            self.carried,
            self.scan,
            self.body().nodes().len()
        )];
        if let Some(first) = &self.first_plan {
            info.push(format!(
                "first iteration's body: {} nodes",
                first.model().nodes().len()
            ));
        }
        Ok(info)
    }

    fn mints_runtime_symbols(&self) -> bool {
        !self.minted.is_empty()
    }

    op_as_typed_op!();
}

impl EvalOp for Loop {
    not_out_of_plan!();

    fn eval(&self, ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let limit = LOOP_ITERATION_LIMIT.load(Ordering::Relaxed) as u64;
        let budget = LOOP_MEMORY_BUDGET.load(Ordering::Relaxed);
        self.run(ctx, inputs, limit, budget)
    }
}

impl Loop {
    /// The loop's evaluation with an iteration `limit` and a memory
    /// `budget` in bytes.
    fn run(
        &self,
        ctx: &EvalContext,
        inputs: TVec<TValue>,
        limit: u64,
        budget: usize,
    ) -> TractResult<TVec<TValue>> {
        let node = &self.node;
        let fixed = self.has_trip_count as usize + self.has_cond as usize + self.carried;
        let outer = self.body().inputs.len() - 2 - self.carried;
        ensure!(
            inputs.len() == fixed + outer,
            "Loop node '{node}': expects {} inputs, got {}",
            fixed + outer,
            inputs.len()
        );
        let mut inputs = inputs.into_iter();
        let trip_count = if self.has_trip_count {
            let m = inputs.next().context("no trip count")?;
            let m = self.scalar_i64("trip count M", &m, ctx.symbols)?;
            ensure!(m >= 0, "Loop node '{node}': trip count M is {m}, negative");
            Some(m as u64)
        } else {
            None
        };
        let mut cond = match self.has_cond {
            true => self.scalar_bool("cond", &inputs.next().context("no cond")?)?,
            false => true,
        };
        let mut carried: TVec<TValue> = inputs.by_ref().take(self.carried).collect();
        let outer: TVec<TValue> = inputs.collect();
        // The bytes the scan outputs hold so far.
        let mut scanned: usize = 0;
        let mut scans: Vec<Vec<TValue>> = vec![vec![]; self.scan];
        let mut state = TypedSimpleState::new(&self.plan)?;
        let mut first_state = match &self.first_plan {
            Some(plan) => Some(TypedSimpleState::new(plan)?),
            None => None,
        };
        let mut i: u64 = 0;
        while cond && trip_count.is_none_or(|m| i < m) {
            ensure!(
                i < limit,
                "Loop node '{node}': still running after {limit} iterations (M: {}); the limit is tract_onnx_scatter::tract_overrides::onnx_loop::LOOP_ITERATION_LIMIT",
                trip_count.map_or("absent".to_string(), |m| m.to_string())
            );
            let mut body_inputs: TVec<TValue> =
                tvec![tensor0(i as i64).into_tvalue(), tensor0(cond).into_tvalue()];
            // Moved, not cloned: the body gets the only reference.
            body_inputs.extend(carried.drain(..));
            body_inputs.extend(outer.iter().cloned());
            let body = match (&mut first_state, i) {
                (Some(first), 0) => first,
                _ => &mut state,
            };
            // The body reads values of the enclosing graph holding its
            // symbols (`2 * time` in a loop bound): the run's values of
            // those symbols, before its own inputs bind the rest.
            body.turn_state.resolved_symbols = ctx.symbols.clone();
            let mut outputs = body
                .run(body_inputs)
                .with_context(|| format!("Loop node '{node}': iteration {i}"))?
                .into_iter();
            let body_cond = outputs.next().context("the body gave no output")?;
            cond = self.scalar_bool("the body's cond output", &body_cond)?;
            carried.extend(outputs.by_ref().take(self.carried));
            for (k, v) in outputs.enumerate() {
                scanned = scanned.saturating_add(held_bytes(&v));
                scans[k].push(v);
            }
            let held = carried
                .iter()
                .map(held_bytes)
                .fold(scanned, usize::saturating_add);
            ensure!(
                held <= budget,
                "Loop node '{node}': after iteration {i} its loop-carried values and scan outputs hold {held} bytes, past the budget of {budget} bytes (tract_onnx_scatter::tract_overrides::onnx_loop::LOOP_MEMORY_BUDGET)"
            );
            i += 1;
        }
        let mut results = carried;
        if i == 0 {
            for (k, v) in results.iter_mut().enumerate() {
                let fact = &self.output_facts[k];
                match self.no_iteration[k] {
                    NoIteration::Initial => {}
                    NoIteration::Error => bail!(
                        "Loop node '{node}': ran no iteration, so loop-carried value {k} would be its initial value, of shape {:?}; the model reads it with the rank {} the body gives it (a tract value has one rank)",
                        v.shape(),
                        fact.rank()
                    ),
                    NoIteration::Zeros => {
                        *v = Tensor::zero_dt(fact.datum_type, &self.eval_shape(fact, ctx.symbols))?
                            .into_tvalue()
                    }
                }
            }
        }
        for (k, values) in scans.into_iter().enumerate() {
            results.push(self.stack(k, values, ctx.symbols)?.into_tvalue());
        }
        Ok(results)
    }
}

impl TypedOp for Loop {
    as_op!();

    fn output_facts(&self, _inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        Ok(self.output_facts.clone())
    }
}

/// `Loop` before typing: the body as parsed, and which of the N + K
/// outputs the node names.
#[derive(Debug, Clone)]
pub(crate) struct InferLoop {
    /// The ONNX node's name, for errors.
    pub(crate) node: String,
    /// The body graph as `ctx.parse_graph` gives it: inputs
    /// `(iteration_num, cond, v_1..v_N)`, then the outer-scope values it
    /// reads; outputs `(cond, v_1..v_N, scan_1..scan_K)`.
    pub(crate) body: InferenceModel,
    /// Whether the node's first input, the trip count `M`, is given (not
    /// an empty name).
    pub(crate) has_trip_count: bool,
    /// Whether the node's second input, the initial `cond`, is given (not
    /// an empty name).
    pub(crate) has_cond: bool,
    /// N, the number of loop-carried values.
    pub(crate) carried: usize,
    /// K, the number of scan outputs (the body's outputs after `cond` and
    /// the N carried values).
    pub(crate) scan: usize,
    /// The positions (in carried ++ scan) of the outputs the node names.
    pub(crate) outputs: Vec<usize>,
}

impl PartialEq for InferLoop {
    fn eq(&self, _: &Self) -> bool {
        false
    }
}
impl Eq for InferLoop {}

impl InferLoop {
    /// Whether the body gives loop-carried value `j` back unchanged (its
    /// output is its input, through `Identity` nodes).
    fn passes_on(&self, j: usize) -> bool {
        let (Ok(inputs), Ok(outputs)) = (self.body.input_outlets(), self.body.output_outlets())
        else {
            return false;
        };
        let (Some(&input), Some(&output)) = (inputs.get(2 + j), outputs.get(1 + j)) else {
            return false;
        };
        let mut outlet = output;
        for _ in 0..self.body.nodes().len() {
            if outlet == input {
                return true;
            }
            let node = &self.body.nodes()[outlet.node];
            if node.op.name() != "Identity" || node.inputs.len() != 1 {
                return false;
            }
            outlet = node.inputs[0];
        }
        false
    }

    /// Node input position of the first loop-carried value.
    fn first_carried(&self) -> usize {
        self.has_trip_count as usize + self.has_cond as usize
    }

    /// Node input position of body input `ix` (`ix` ≥ 2).
    fn node_input(&self, body_ix: usize) -> usize {
        self.first_carried() + body_ix - 2
    }

    /// The body typed for these facts of the node's inputs (the carried
    /// ones as given, the outer-scope ones with their constants), decluttered.
    fn typed_body(&self, carried: &[TypedFact], outer: &[TypedFact]) -> TractResult<TypedModel> {
        let mut body = self.body.clone();
        body.set_input_fact(0, i64::scalar_fact().into())?;
        body.set_input_fact(1, bool::scalar_fact().into())?;
        for (ix, fact) in carried.iter().chain(outer).enumerate() {
            body.set_input_fact(2 + ix, fact.clone().into())?;
        }
        body.into_typed()?.into_decluttered()
    }
}

impl Op for InferLoop {
    fn name(&self) -> StaticName {
        "Loop".into()
    }

    not_a_typed_op!();
}

impl EvalOp for InferLoop {
    not_out_of_plan!();
}

impl InferenceOp for InferLoop {
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
        let inputs: TVec<InferenceFact> = inputs.into_iter().cloned().collect();
        let mut outputs: TVec<InferenceFact> = outputs.into_iter().cloned().collect();
        let first = self.first_carried();
        // What the body tells about its outputs for the first iteration's
        // inputs (best effort: datum types and ranks only, as shapes may
        // change from one iteration to the next).
        let mut body = self.body.clone();
        let analysed = (|| -> TractResult<()> {
            body.set_input_fact(0, i64::scalar_fact().into())?;
            body.set_input_fact(1, bool::scalar_fact().into())?;
            for ix in 2..body.inputs.len() {
                let fact = inputs[self.node_input(ix)].clone();
                body.set_input_fact(ix, fact)?;
            }
            body.analyse(false)?;
            Ok(())
        })()
        .is_ok();
        let rank_fact = |dt: Option<DatumType>, rank: Option<usize>| {
            let mut fact = InferenceFact::default();
            if let Some(dt) = dt {
                fact = fact.with_datum_type(dt);
            }
            if let Some(rank) = rank {
                fact.shape = ShapeFactoid::closed(tvec![DimFact::default(); rank]);
            }
            fact
        };
        for (slot, &which) in self.outputs.iter().enumerate() {
            let fact = if which < self.carried {
                let input = &inputs[first + which];
                let rank = input.shape.rank().concretize();
                // A body changing the rank: the output has the body's
                // rank, or the initial value's when no iteration runs.
                let body_rank = match analysed {
                    true => body.output_fact(1 + which)?.shape.rank().concretize(),
                    false => None,
                };
                let rank = match (rank, body_rank) {
                    (Some(r), Some(b)) if r != b => None,
                    (rank, _) => rank,
                };
                rank_fact(input.datum_type.concretize(), rank.map(|r| r as usize))
            } else if analysed {
                let inner = body.output_fact(1 + which)?;
                rank_fact(
                    inner.datum_type.concretize(),
                    inner.shape.rank().concretize().map(|r| r as usize + 1),
                )
            } else {
                continue;
            };
            outputs[slot].unify_with(&fact)?;
        }
        Ok((inputs, outputs, observed.into_iter().cloned().collect()))
    }

    fn nboutputs(&self) -> TractResult<usize> {
        Ok(self.outputs.len())
    }

    fn to_typed(
        &self,
        source: &InferenceModel,
        node: &InferenceNode,
        target: &mut TypedModel,
        mapping: &HashMap<OutletId, OutletId>,
    ) -> TractResult<TVec<OutletId>> {
        let name = &self.node;
        let inputs: TVec<OutletId> = node.inputs.iter().map(|o| mapping[o]).collect();
        let facts: TVec<TypedFact> = inputs
            .iter()
            .map(|o| target.outlet_fact(*o).cloned())
            .collect::<TractResult<_>>()?;
        let first = self.first_carried();
        let mut trip_count: Option<TDim> = None;
        if self.has_trip_count {
            let m = &facts[0];
            ensure!(
                m.datum_type.is_integer() || m.datum_type == TDim::datum_type(),
                "Loop node '{name}': trip count M is {:?}, expected int64",
                m.datum_type
            );
            if let Some(k) = &m.konst
                && k.len() == 1
            {
                trip_count = Some(
                    k.cast_to::<TDim>()?
                        .try_as_plain_ram()?
                        .as_slice::<TDim>()?[0]
                        .clone(),
                );
            }
        }
        if self.has_cond {
            ensure!(
                facts[first - 1].datum_type == bool::datum_type(),
                "Loop node '{name}': cond is {:?}, expected bool",
                facts[first - 1].datum_type
            );
        }
        // A loop-carried value the body passes on unchanged (tf2onnx carries
        // its loop invariants so, `batch` among them) keeps its constant:
        // the body's shapes may depend on it (a `tf.fill` of `[batch, n]`).
        let initial: Vec<TypedFact> = facts[first..first + self.carried]
            .iter()
            .enumerate()
            .map(|(j, f)| match (&f.konst, self.passes_on(j)) {
                (Some(k), true) => TypedFact::try_from(k.clone())
                    .unwrap_or_else(|_| f.datum_type.fact(f.shape.clone())),
                _ => f.datum_type.fact(f.shape.clone()),
            })
            .collect();
        let outer: Vec<TypedFact> = facts[first + self.carried..].to_vec();
        let typing = |carried: &[TypedFact]| -> TractResult<(TypedModel, Vec<TypedFact>)> {
            let mut body = self
                .typed_body(carried, &outer)
                .with_context(|| format!("Loop node '{name}': typing its body"))?;
            let mut outs = vec![];
            for (ix, fact) in carried.iter().enumerate() {
                let outlet = body.outputs[1 + ix];
                if body.outlet_fact(outlet)?.datum_type == TDim::datum_type()
                    && fact.datum_type == i64::datum_type()
                {
                    // tract types some int64 values as TDim (a Cast to
                    // int64, shapes): back to the int64 the loop carries.
                    let op = tract_core::ops::cast::cast(i64::datum_type());
                    let cast =
                        body.wire_node(format!("{name}.carried_{ix}.as_i64"), op, &[outlet])?;
                    body.outputs[1 + ix] = cast[0];
                }
                let out = body.output_fact(1 + ix)?;
                ensure!(
                    out.datum_type == fact.datum_type,
                    "Loop node '{name}': loop-carried value {ix} enters the body as {:?} and leaves it as {:?}",
                    fact.datum_type,
                    out.datum_type
                );
                outs.push(out.datum_type.fact(out.shape.clone()));
            }
            Ok((body, outs))
        };
        let mut minted: Vec<Symbol> = vec![];
        let typed = type_body(name, &initial, &typing, &target.symbols, &mut minted)?;
        let bodies: Vec<&TypedModel> = typed.first.iter().chain([&typed.rest]).collect();
        for body in &bodies {
            let cond_out = body.output_fact(0)?;
            ensure!(
                cond_out.datum_type == bool::datum_type() && cond_out.shape.volume().is_one(),
                "Loop node '{name}': the body's cond output is {cond_out:?}, expected one bool"
            );
        }
        // Does the loop provably run M times? Its condition must never turn
        // false: the body's is constant true, or passes the node's on, which
        // is absent or constant true.
        let cond_in_true = !self.has_cond
            || facts[first - 1]
                .konst
                .as_ref()
                .is_some_and(|k| k.cast_to_scalar::<bool>().unwrap_or(false));
        let body_cond_true = bodies.iter().all(|body| match &body.output_fact(0) {
            Ok(TypedFact { konst: Some(k), .. }) => k.cast_to_scalar::<bool>().unwrap_or(false),
            _ => body.outputs[0] == body.inputs[1] && cond_in_true,
        });
        // Does it provably run at least once? The node's condition is true
        // and M, if any, is at least 1.
        let runs_once = cond_in_true
            && (!self.has_trip_count
                || trip_count
                    .as_ref()
                    .is_some_and(|m| m.prove_strict_positive()));
        // A constant M beyond the iteration limit never runs to the end: no
        // dim that large (shape arithmetic on it could overflow).
        let limit = LOOP_ITERATION_LIMIT.load(Ordering::Relaxed) as i64;
        let runs_m = |m: &TDim| match m.to_i64() {
            Ok(m) => (0..=limit).contains(&m),
            Err(_) => true,
        };
        // A counted loop whose condition turns false only when M ends it
        // anyway (tf2onnx's `counter < time`) runs M times too.
        let counted = |m: &TDim| {
            typed.first.is_none()
                && self::iterations::runs_trip_count(
                    &typed.rest,
                    &facts[first..first + self.carried],
                    target,
                    self.has_cond.then(|| inputs[first - 1]),
                    m,
                )
        };
        let iterations = match (&trip_count, body_cond_true) {
            (Some(m), true) if runs_m(m) => m.clone(),
            (Some(m), false) if runs_m(m) && counted(m) => m.clone(),
            _ => {
                let s = target.symbols.new_with_prefix("loop");
                minted.push(s.clone());
                s.to_dim()
            }
        };
        // Whether the model reads loop-carried output `k`.
        let read = |k: usize| {
            self.outputs
                .iter()
                .position(|&p| p == k)
                .is_some_and(|slot| {
                    !node.outputs[slot].successors.is_empty()
                        || source.outputs.contains(&OutletId::new(node.id, slot))
                })
        };
        // A loop-carried output holds its initial value (no iteration) and
        // what the later iterations give.
        let mut output_facts: TVec<TypedFact> = tvec![];
        let mut no_iteration: TVec<NoIteration> = tvec![];
        for (k, (init, fact)) in initial.iter().zip(&typed.carried).enumerate() {
            let (fact, none) = if covers(fact, init, &minted) {
                (fact.clone(), NoIteration::Initial)
            } else if fact.rank() == init.rank() {
                let wider = widen(fact, init, &target.symbols, &mut minted);
                (wider.unwrap_or_else(|| fact.clone()), NoIteration::Initial)
            } else if runs_once || read(k) {
                (fact.clone(), NoIteration::Error)
            } else {
                (fact.clone(), NoIteration::Zeros)
            };
            output_facts.push(fact);
            no_iteration.push(none);
        }
        for k in 0..self.scan {
            let slot = 1 + self.carried + k;
            let rest = typed.rest.output_fact(slot)?;
            let rest = rest.datum_type.fact(rest.shape.clone());
            let inner = match &typed.first {
                None => rest,
                Some(first) => {
                    let first = first.output_fact(slot)?;
                    ensure!(
                        first.datum_type == rest.datum_type && first.rank() == rest.rank(),
                        "Loop node '{name}': scan output {k} is {} in the first iteration and {} in later ones; scan outputs must keep their type and rank",
                        show(first),
                        show(&rest)
                    );
                    let first = first.datum_type.fact(first.shape.clone());
                    widen(&rest, &first, &target.symbols, &mut minted).unwrap_or(rest)
                }
            };
            let shape: TVec<TDim> = std::iter::once(iterations.clone())
                .chain(inner.shape.iter().cloned())
                .collect();
            output_facts.push(inner.datum_type.fact(shape));
        }
        let plan = |body: TypedModel| -> TractResult<Arc<TypedSimplePlan>> {
            let body = body
                .into_optimized()
                .with_context(|| format!("Loop node '{name}': optimizing its body"))?;
            SimplePlan::new(body)
        };
        let op = Loop {
            node: name.clone(),
            first_plan: typed.first.map(plan).transpose()?,
            plan: plan(typed.rest)?,
            has_trip_count: self.has_trip_count,
            has_cond: self.has_cond,
            carried: self.carried,
            scan: self.scan,
            output_facts,
            minted,
            no_iteration,
        };
        let all = target.wire_node(&node.name, op, &inputs)?;
        Ok(self.outputs.iter().map(|&p| all[p]).collect())
    }

    as_op!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use tract_core::ops::array::TypedConcat;

    /// A body `(iter, cond, x: f32[n]) -> (cond, x ++ [1] or x, iter or x)`.
    fn op(grow: bool, scan_x: bool, output_facts: TVec<TypedFact>) -> Loop {
        let mut body = TypedModel::default();
        let n = body.symbols.sym("n");
        let iter = body.add_source("iter", i64::scalar_fact()).unwrap();
        let cond = body.add_source("cond", bool::scalar_fact()).unwrap();
        let x = body.add_source("x", f32::fact([n.to_dim()])).unwrap();
        let x_out = if grow {
            let one = body.add_const("one", tensor1(&[1f32])).unwrap();
            body.wire_node("grow", TypedConcat { axis: 0 }, &[x, one])
                .unwrap()[0]
        } else {
            x
        };
        let scan = if scan_x { x_out } else { iter };
        body.select_output_outlets(&[cond, x_out, scan]).unwrap();
        Loop {
            node: "l".into(),
            plan: SimplePlan::new(body).unwrap(),
            has_trip_count: true,
            has_cond: false,
            carried: 1,
            scan: 1,
            first_plan: None,
            output_facts,
            minted: vec![],
            no_iteration: tvec![NoIteration::Initial],
        }
    }

    fn eval(op: &Loop, m: i64, x: Tensor) -> TractResult<TVec<TValue>> {
        op.eval(
            &EvalContext::out_of_plan(),
            tvec![tensor0(m).into_tvalue(), x.into_tvalue()],
        )
    }

    #[test]
    fn a_carried_value_the_body_passes_on_is_moved_not_copied() {
        let facts = tvec![f32::fact([3]), i64::fact([5])];
        let x = tensor1(&[1f32, 2., 3.]);
        let before = x.as_ptr::<f32>().unwrap() as usize;
        let out = eval(&op(false, false, facts), 5, x).unwrap();
        assert_eq!(out[0].as_ptr::<f32>().unwrap() as usize, before);
        assert_eq!(
            out[1]
                .try_as_plain_ram()
                .unwrap()
                .as_slice::<i64>()
                .unwrap(),
            [0, 1, 2, 3, 4]
        );
    }

    #[test]
    fn zero_iterations_give_scan_outputs_of_zero_rows_of_the_body_s_shape() {
        let facts = tvec![f32::fact([3]), f32::fact([0.to_dim(), 3.to_dim()])];
        let out = eval(&op(false, true, facts), 0, tensor1(&[1f32, 2., 3.])).unwrap();
        assert_eq!(out[0].shape(), [3]);
        assert_eq!(out[1].shape(), [0, 3]);
    }

    #[test]
    fn a_scan_output_changing_shape_is_an_error_naming_both_shapes() {
        let facts = tvec![f32::fact([3]), f32::fact([2.to_dim(), 3.to_dim()])];
        let err = eval(&op(true, true, facts), 2, tensor1(&[1f32, 2., 3.])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Loop node 'l': scan output 0 is F32 [4] at iteration 0 but F32 [5] at iteration 1; scan outputs must keep their type and shape"
        );
    }

    #[test]
    fn a_loop_past_its_memory_budget_names_the_node_the_iteration_and_the_budget() {
        let facts = tvec![f32::fact([3]), f32::fact([2.to_dim(), 3.to_dim()])];
        // Each iteration scans 3 floats (12 bytes) and carries 3 (12 bytes).
        let run = |m: i64| {
            let inputs = tvec![
                tensor0(m).into_tvalue(),
                tensor1(&[1f32, 2., 3.]).into_tvalue()
            ];
            op(false, true, facts.clone()).run(&EvalContext::out_of_plan(), inputs, 100, 40)
        };
        assert!(run(2).is_ok());
        let err = run(3).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Loop node 'l': after iteration 2 its loop-carried values and scan outputs hold 48 bytes, past the budget of 40 bytes (tract_onnx_scatter::tract_overrides::onnx_loop::LOOP_MEMORY_BUDGET)"
        );
    }

    #[test]
    fn the_default_iteration_limit_is_two_to_the_twentieth() {
        assert_eq!(DEFAULT_LOOP_ITERATION_LIMIT, 1 << 20);
        assert_eq!(
            LOOP_ITERATION_LIMIT.load(Ordering::Relaxed),
            DEFAULT_LOOP_ITERATION_LIMIT
        );
    }
}
