//! ONNX `Slice` (opset 10+) whose bounds hold symbols only the run binds.
//!
//! When a slice bound derives from a data-dependent size (the count of a `NonZero`), tract
//! types it as a constant symbolic dim. tract's `StridedSlice` then evaluates in a model of its
//! own, without the session's symbol values, and fails: "Undetermined symbol in expression:
//! x_2" (Piper's duration predictor, `/dp/flows.7/Slice_24`). Here such a slice
//! ([`RunTimeBoundSlice`]) evaluates its symbolic bounds with the run's symbols first, then runs
//! tract's `StridedSlice` on plain values. Slices whose bounds hold no such symbol (none, or
//! only the model inputs' symbols, which the session knows from the start) are exactly tract's
//! op. A slice whose bounds are run-time values is a [`RunTimeValueSlice`], its output dims
//! symbols of the model bound when it runs.
//!
//! Contract: docs/contract.md, "Operators outside the scatter family", rows `Slice`.

use tract_core::ops::array::StridedSlice;
use tract_hir::internal::*;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;

use super::run_symbols::{binders, run_bound_symbols, run_values};

/// The axes on which tract's `StridedSlice` neither types nor wires a
/// slice: a step other than 1 with a begin or end known only at run time
/// (tf2onnx's `x[i]`: step 1e9 from `i`). tract's typing leaves such an
/// axis its input length and its declutter drops the slice there (the
/// model would then read the whole axis); its evaluation is right.
fn run_time_strided_axes(slice: &StridedSlice, inputs: &[&TypedFact]) -> TractResult<TVec<usize>> {
    if inputs.len() < 3 || (inputs[1].konst.is_some() && inputs[2].konst.is_some()) {
        return Ok(tvec!());
    }
    let konst = |ix: Option<usize>| -> TractResult<Option<Vec<i64>>> {
        let Some(k) = ix
            .and_then(|ix| inputs.get(ix))
            .and_then(|f| f.konst.as_ref())
        else {
            return Ok(None);
        };
        Ok(Some(
            k.cast_to::<i64>()?
                .try_as_plain_ram()?
                .as_slice::<i64>()?
                .to_vec(),
        ))
    };
    // Without constant steps (or axes) tract's typing refuses the slice itself.
    let Some(steps) = konst(slice.optional_steps_input)? else {
        return Ok(tvec!());
    };
    let rank = inputs[0].rank() as i64;
    let axes: Vec<i64> = match slice.optional_axes_input {
        Some(_) => match konst(slice.optional_axes_input)? {
            Some(axes) => axes,
            None => return Ok(tvec!()),
        },
        None => (0..rank).collect(),
    };
    Ok(axes
        .iter()
        .zip(&steps)
        .filter(|(_, step)| **step != 1)
        .map(|(&axis, _)| if axis < 0 { axis + rank } else { axis } as usize)
        .collect())
}

/// The constant integer values of input `ix` of a slice, if it has one.
fn konst_i64s(inputs: &[&TypedFact], ix: Option<usize>) -> TractResult<Option<Vec<i64>>> {
    let Some(k) = ix
        .and_then(|ix| inputs.get(ix))
        .and_then(|f| f.konst.as_ref())
    else {
        return Ok(None);
    };
    // A TDim constant holding symbols has no plain values: not constant here.
    let Ok(k) = k.cast_to::<i64>() else {
        return Ok(None);
    };
    Ok(Some(k.try_as_plain_ram()?.as_slice::<i64>()?.to_vec()))
}

/// The data axes a slice's bounds apply to, and the step on each, when
/// both are constants (or absent: every axis, step 1).
fn axes_and_steps(
    slice: &StridedSlice,
    inputs: &[&TypedFact],
    bounds: usize,
) -> TractResult<Option<Vec<(usize, i64)>>> {
    let rank = inputs[0].rank() as i64;
    let axes: Vec<i64> = match slice.optional_axes_input {
        None => (0..bounds as i64).collect(),
        Some(_) => match konst_i64s(inputs, slice.optional_axes_input)? {
            Some(axes) => axes,
            None => return Ok(None),
        },
    };
    let steps: Vec<i64> = match slice.optional_steps_input {
        None => vec![1; axes.len()],
        Some(_) => match konst_i64s(inputs, slice.optional_steps_input)? {
            Some(steps) => steps,
            None => return Ok(None),
        },
    };
    let mut pairs = vec![];
    for (&axis, &step) in axes.iter().zip(&steps) {
        let axis = if axis < 0 { axis + rank } else { axis };
        // Out-of-range axes are tract's typing's to refuse, with its words.
        if !(0..rank).contains(&axis) {
            return Ok(None);
        }
        pairs.push((axis as usize, step));
    }
    Ok(Some(pairs))
}

/// ONNX clamps an end past its axis to the axis length. tract clamps only
/// when the length is a number (and reads "to the end" only from int64
/// extremes), so a constant end such as tf2onnx's 1e9 on an axis of
/// symbolic length is typed as the end itself, and the slice fails when it
/// runs ("Invalid range 0..1000000000": tf2onnx re-slices its `x[i]`, a
/// run-time slice, with end 1e9). Where the symbols' assertions prove such
/// an end at or past the axis (a [`RunTimeValueSlice`]'s lengths are
/// bounded so), it becomes `i64::MAX`, tract's "to the end": the same slice
/// for every length the assertions allow, typed as the axis length. Stock
/// tract's op on the same end fails at run for every length below it.
/// `None` when no end changes.
fn ends_to_axis_end(slice: &StridedSlice, inputs: &[&TypedFact]) -> TractResult<Option<Tensor>> {
    if inputs.len() < 3 {
        return Ok(None);
    }
    let Some(mut ends) = konst_i64s(inputs, Some(2))? else {
        return Ok(None);
    };
    let Some(axes) = axes_and_steps(slice, inputs, ends.len())? else {
        return Ok(None);
    };
    let mut changed = false;
    for (end, &(axis, step)) in ends.iter_mut().zip(&axes) {
        let dim = &inputs[0].shape[axis];
        if step > 0
            && *end >= 0
            && *end != i64::MAX
            && dim.as_i64().is_none()
            && (end.to_dim() - dim).prove_positive_or_zero()
        {
            *end = i64::MAX;
            changed = true;
        }
    }
    if !changed {
        return Ok(None);
    }
    let shape = inputs[2]
        .shape
        .as_concrete()
        .context("constant ends without a concrete shape")?;
    Ok(Some(Tensor::from_shape(shape, &ends)?))
}

/// Asserts in `symbols` what bounds each minted length `dims[axis]`: at
/// least 0, at most the input axis (at most ceil(n / |step|) with a step
/// other than 1 on an axis of n). Later slices prove their ends past
/// such an axis from these ([`ends_to_axis_end`]).
fn bound_lengths(
    slice: &StridedSlice,
    inputs: &[&TypedFact],
    dims: &[Symbol],
    symbols: &SymbolScope,
) -> TractResult<()> {
    let bounds = inputs
        .get(1)
        .map_or(0, |f| f.shape.volume().as_i64().unwrap_or(0)) as usize;
    let steps = axes_and_steps(slice, inputs, bounds)?.unwrap_or_default();
    for (axis, sym) in dims.iter().enumerate() {
        symbols.add_assertion(format!("{sym}>=0"))?;
        let step = steps
            .iter()
            .find(|(a, _)| *a == axis)
            .map_or(1, |(_, s)| s.checked_abs().unwrap_or(i64::MAX).max(1));
        let bound = match &inputs[0].shape[axis] {
            TDim::Val(n) => ceil_div(*n, step).to_string(),
            TDim::Sym(n) if step == 1 => n.to_string(),
            _ => continue,
        };
        symbols.add_assertion(format!("{sym}<={bound}"))?;
    }
    Ok(())
}

/// ceil(n / step) for a length `n` and a step ≥ 1, without overflow.
fn ceil_div(n: i64, step: i64) -> i64 {
    if n <= 0 { 0 } else { (n - 1) / step + 1 }
}

/// Whether a dim of `fact` holds a symbol whose scope is gone.
fn holds_dead_symbols(fact: &TypedFact) -> bool {
    fact.shape
        .iter()
        .any(|d| d.symbols().iter().any(|s| s.scope().is_none()))
}

/// The largest step magnitude a slice is typed with (tract's TDim steps go
/// through i32): larger ones take the same elements on any axis shorter
/// than it.
const MAX_STEP: i64 = i32::MAX as i64;

/// The builder registered for `Slice`: tract's below opset 10 (bounds are
/// attributes there), the run-time-bound slice from 10 on.
pub(crate) fn slice(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    if ctx.onnx_operator_set_version < 10 {
        return stock_slice()?(ctx, node);
    }
    // Inputs: data, starts, ends, then optional axes and steps.
    let present = |ix: usize| node.input.get(ix).is_some_and(|i| !i.is_empty());
    let mut next = 3;
    let mut position = |ix: usize| {
        present(ix).then(|| {
            let p = next;
            next += 1;
            p
        })
    };
    let optional_axes_input = position(3);
    let optional_steps_input = position(4);
    let slice = RunTimeBoundSlice(StridedSlice {
        begin_mask: 0,
        end_mask: 0,
        shrink_axis_mask: 0,
        optional_axes_input,
        optional_steps_input,
    });
    if let Some(axes) = whole_axis_reverses(ctx, node)? {
        return Ok((
            Box::new(ReverseSlice {
                node: node.name.clone(),
                axes,
                slice,
            }),
            vec![],
        ));
    }
    Ok((Box::new(slice), vec![]))
}

/// The value of `name` when the graph being parsed holds it as an
/// initializer or a `Constant` node's output.
fn graph_constant(ctx: &ParsingContext, name: &str) -> TractResult<Option<Tensor>> {
    let Some(graph) = ctx.parent_graphs.last() else {
        return Ok(None);
    };
    if let Some(init) = graph.initializer.iter().find(|t| t.name == name) {
        return Ok(Some(ctx.load_tensor(init)?));
    }
    let Some(node) = graph
        .node
        .iter()
        .find(|n| n.op_type == "Constant" && n.output.first().is_some_and(|o| o == name))
    else {
        return Ok(None);
    };
    if let Some(t) = node.get_attr_opt("value")? {
        return Ok(Some(ctx.load_tensor(t)?));
    }
    if let Some(ints) = node.get_attr_opt_slice::<i64>("value_ints")? {
        return Ok(Some(tensor1(ints)));
    }
    Ok(node.get_attr_opt::<i64>("value_int")?.map(tensor0))
}

/// The axes (as the node gives them) of a slice that reverses each of them
/// whole and touches no other: constant bounds, step -1, start -1 or past
/// any axis, end before any axis (`torch.flip`, `jnp.flip`, `tf.reverse`
/// as the exporters write them: `Slice(x, [-1], [INT64_MIN], axes, [-1])`).
fn whole_axis_reverses(ctx: &ParsingContext, node: &NodeProto) -> TractResult<Option<Vec<i64>>> {
    let input = |ix: usize| node.input.get(ix).filter(|s| !s.is_empty());
    let constant = |ix: usize| -> TractResult<Option<Vec<i64>>> {
        let Some(name) = input(ix) else {
            return Ok(None);
        };
        let Some(t) = graph_constant(ctx, name)? else {
            return Ok(None);
        };
        if !t.datum_type().is_integer() {
            return Ok(None);
        }
        Ok(Some(
            t.cast_to::<i64>()?
                .try_as_plain_ram()?
                .as_slice::<i64>()?
                .to_vec(),
        ))
    };
    let (Some(starts), Some(ends), Some(steps)) = (constant(1)?, constant(2)?, constant(4)?) else {
        return Ok(None);
    };
    let axes = match input(3) {
        Some(_) => match constant(3)? {
            Some(axes) => axes,
            None => return Ok(None),
        },
        None => (0..starts.len() as i64).collect(),
    };
    let n = axes.len();
    if n == 0 || starts.len() != n || ends.len() != n || steps.len() != n {
        return Ok(None);
    }
    let reverses = (0..n).all(|k| {
        steps[k] == -1
            && (starts[k] == -1 || starts[k] >= i32::MAX as i64)
            && ends[k] <= i32::MIN as i64
    });
    Ok(reverses.then_some(axes))
}

/// A `Slice` that reverses whole axes (constant bounds, step -1, start -1
/// or past any axis, end before any axis). tract's
/// `StridedSlice` refuses a step other than 1 on an axis of symbolic
/// length ("Streaming dimensions with strides are not supported"): such a
/// slice is a [`Reverse`](super::reverse_sequence::Reverse) of each axis. Where every reversed axis has a
/// known length it is exactly the op stock tract builds.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub(crate) struct ReverseSlice {
    /// The ONNX node's name, for errors.
    pub(crate) node: String,
    /// As the node gives them (may be negative).
    pub(crate) axes: Vec<i64>,
    /// What the node is where tract's op can type it.
    pub(crate) slice: RunTimeBoundSlice,
}

impl Op for ReverseSlice {
    fn name(&self) -> StaticName {
        "StridedSlice".into()
    }

    not_a_typed_op!();
}

impl EvalOp for ReverseSlice {
    op_out_of_plan!();

    fn eval(&self, ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        self.slice.eval(ctx, inputs)
    }
}

impl InferenceRulesOp for ReverseSlice {
    fn rules<'r, 'p: 'r, 's: 'r>(
        &'s self,
        s: &mut Solver<'r>,
        inputs: &'p [TensorProxy],
        outputs: &'p [TensorProxy],
    ) -> InferenceResult {
        check_output_arity(outputs, 1)?;
        s.equals(&outputs[0].datum_type, &inputs[0].datum_type)?;
        s.equals(&outputs[0].shape, &inputs[0].shape)?;
        Ok(())
    }

    fn to_typed(
        &self,
        source: &InferenceModel,
        node: &InferenceNode,
        target: &mut TypedModel,
        mapping: &HashMap<OutletId, OutletId>,
    ) -> TractResult<TVec<OutletId>> {
        let data = mapping[&node.inputs[0]];
        let fact = target.outlet_fact(data)?.clone();
        let rank = fact.rank() as i64;
        let mut axes = vec![];
        for &axis in &self.axes {
            ensure!(
                (-rank..rank).contains(&axis),
                "Slice node '{}': axis {axis} out of range [-{rank}, {}]",
                self.node,
                rank - 1
            );
            axes.push(if axis < 0 { axis + rank } else { axis } as usize);
        }
        if axes.iter().all(|&a| fact.shape[a].as_i64().is_some()) {
            return InferenceRulesOp::to_typed(&self.slice, source, node, target, mapping);
        }
        let mut wire = data;
        for (k, axis) in axes.into_iter().enumerate() {
            let op = super::reverse_sequence::Reverse {
                node: self.node.clone(),
                axis,
                batch_axis: None,
            };
            wire = target.wire_node(format!("{}.reverse.{k}", node.name), op, &[wire])?[0];
        }
        Ok(tvec![wire])
    }

    as_op!();
}

/// tract's own `Slice` builder (its module is private: read from its register).
type Builder = fn(&ParsingContext, &NodeProto) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)>;

fn stock_slice() -> TractResult<Builder> {
    static STOCK: std::sync::OnceLock<Option<Builder>> = std::sync::OnceLock::new();
    STOCK
        .get_or_init(|| tract_onnx::onnx().op_register.0.get("Slice").copied())
        .context("tract's ONNX register has no Slice builder")
}

/// A slice's inputs with its TDim bounds evaluated with the run's symbols
/// (tract's `StridedSlice` evaluates them without).
fn plain_bounds(ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
    inputs
        .into_iter()
        .enumerate()
        .map(|(ix, input)| {
            if ix == 0 || input.datum_type() != TDim::datum_type() {
                return Ok(input);
            }
            let values = run_values(&input, ctx.symbols).with_context(|| {
                format!("Slice: bound input {ix} ({input:?}) is not known in this run")
            })?;
            Ok(Tensor::from_shape(input.shape(), &values)?.into_tvalue())
        })
        .collect()
}

/// A slice's steps as tract's `StridedSlice` can take them: `Err(position)`
/// of a step of 0, which ONNX forbids and tract divides by; `Some(steps)`
/// clamped to ±i32::MAX when one passes i32's range (tract carries steps
/// through i32, so it would wrap; the clamped step takes the same elements
/// on any axis shorter than 2^31); `None` when they are fine as given.
fn clamped_steps(steps: &[i64]) -> Result<Option<Vec<i64>>, usize> {
    if let Some(pos) = steps.iter().position(|&s| s == 0) {
        return Err(pos);
    }
    Ok(steps
        .iter()
        .any(|s| s.unsigned_abs() > MAX_STEP.unsigned_abs())
        .then(|| {
            steps
                .iter()
                .map(|s| s.clamp(&-MAX_STEP, &MAX_STEP))
                .copied()
                .collect()
        }))
}

/// A slice's run-time bounds (after [`plain_bounds`]), checked before
/// tract's `StridedSlice` runs on them: tract indexes the data's shape with
/// each axis unchecked and divides by each step, so a fed axis outside the
/// rank or a fed step of 0 panicked there.
fn checked_run_bounds(slice: &StridedSlice, mut inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
    let rank = inputs.first().context("Slice: no data input")?.rank();
    let values = |ix: Option<usize>, name: &str| -> TractResult<Option<Vec<i64>>> {
        let Some(input) = ix.and_then(|ix| inputs.get(ix)) else {
            return Ok(None);
        };
        let values = input
            .cast_to::<i64>()
            .with_context(|| format!("Slice: {name} of type {:?}", input.datum_type()))?;
        Ok(Some(values.try_as_plain_ram()?.as_slice::<i64>()?.to_vec()))
    };
    let starts = values(Some(1), "starts")?.context("Slice: no starts input")?;
    let ends = values(Some(2), "ends")?.context("Slice: no ends input")?;
    ensure!(
        starts.len() == ends.len(),
        "Slice: starts holds {} values and ends {}; they must hold as many",
        starts.len(),
        ends.len()
    );
    if let Some(axes) = values(slice.optional_axes_input, "axes")? {
        ensure!(
            axes.len() == starts.len(),
            "Slice: axes holds {} values and starts {}; they must hold as many",
            axes.len(),
            starts.len()
        );
        let rank = i64::try_from(rank)?;
        for (ix, &axis) in axes.iter().enumerate() {
            ensure!(
                (-rank..rank).contains(&axis),
                "Slice: axes[{ix}] is {axis}, outside [-{rank}, {rank}) for data of rank {rank}"
            );
        }
    } else {
        ensure!(
            starts.len() <= rank,
            "Slice: starts holds {} values, more than the data's rank {rank}",
            starts.len()
        );
    }
    if let Some(steps) = values(slice.optional_steps_input, "steps")? {
        ensure!(
            steps.len() == starts.len(),
            "Slice: steps holds {} values and starts {}; they must hold as many",
            steps.len(),
            starts.len()
        );
        let clamped = clamped_steps(&steps)
            .map_err(|pos| format_err!("Slice: steps[{pos}] is 0; a step must not be 0"))?;
        if let (Some(ix), Some(clamped)) = (slice.optional_steps_input, clamped) {
            inputs[ix] = tensor1(&clamped).into_tvalue();
        }
    }
    Ok(inputs)
}

/// tract's `StridedSlice`, its symbolic bounds evaluated with the run's
/// symbols.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub struct RunTimeBoundSlice(pub(crate) StridedSlice);

impl RunTimeBoundSlice {
    /// Data, starts, ends, then axes and steps when present; further
    /// inputs only order the op after the nodes binding its symbols.
    fn slice_inputs(&self) -> usize {
        self.0
            .optional_steps_input
            .or(self.0.optional_axes_input)
            .map_or(3, |last| last + 1)
    }
}

impl Op for RunTimeBoundSlice {
    fn name(&self) -> StaticName {
        "StridedSlice".into()
    }

    op_as_typed_op!();
}

impl EvalOp for RunTimeBoundSlice {
    op_out_of_plan!();

    fn eval(&self, ctx: &EvalContext, mut inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        inputs.truncate(self.slice_inputs());
        self.0.eval(
            ctx,
            checked_run_bounds(&self.0, plain_bounds(ctx, inputs)?)?,
        )
    }
}

impl TypedOp for RunTimeBoundSlice {
    as_op!();

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        self.0
            .output_facts(&inputs[..self.slice_inputs().min(inputs.len())])
    }

    /// Without run-bound symbols in its bounds, tract's op (and its
    /// declutter) take over.
    fn declutter(
        &self,
        model: &TypedModel,
        node: &TypedNode,
    ) -> TractResult<Option<TypedModelPatch>> {
        let facts = model.node_input_facts(node.id)?;
        let n = self.slice_inputs().min(facts.len());
        for fact in &facts[1..n] {
            rule_if!(run_bound_symbols(model, fact)?.is_empty());
        }
        rule_if!(run_time_strided_axes(&self.0, &facts[..n])?.is_empty());
        Ok(Some(TypedModelPatch::replace_single_op(
            model,
            node,
            &node.inputs[..n],
            self.0.clone(),
        )?))
    }
}

impl InferenceRulesOp for RunTimeBoundSlice {
    fn rules<'r, 'p: 'r, 's: 'r>(
        &'s self,
        s: &mut Solver<'r>,
        inputs: &'p [TensorProxy],
        outputs: &'p [TensorProxy],
    ) -> InferenceResult {
        self.0.rules(s, inputs, outputs)
    }

    fn to_typed(
        &self,
        source: &InferenceModel,
        node: &InferenceNode,
        target: &mut TypedModel,
        mapping: &HashMap<OutletId, OutletId>,
    ) -> TractResult<TVec<OutletId>> {
        // tract's StridedSlice facts panic on some hostile constants (an
        // axis past the rank): an error naming the op instead.
        super::retyped::fenced("StridedSlice", super::retyped::Fence::Plugin, || {
            self.to_typed_unfenced(source, node, target, mapping)
        })
    }

    as_op!();
}

impl RunTimeBoundSlice {
    fn to_typed_unfenced(
        &self,
        _source: &InferenceModel,
        node: &InferenceNode,
        target: &mut TypedModel,
        mapping: &HashMap<OutletId, OutletId>,
    ) -> TractResult<TVec<OutletId>> {
        let mut inputs: TVec<OutletId> = node.inputs.iter().map(|o| mapping[o]).collect();
        // ONNX forbids a step of 0, which tract's strided slice divides by
        // when it runs. tract carries steps as TDim, made through i32: a
        // larger one wraps (2^32 + 1 becomes 1, 2^62 becomes 0). A step
        // past i32's range takes the same elements as i32::MAX on any axis
        // shorter than that.
        if let Some(ix) = self.0.optional_steps_input
            && let Some(&outlet) = inputs.get(ix)
        {
            let fact = target.outlet_fact(outlet)?.clone();
            if let Some(steps) = konst_i64s(&[&fact], Some(0))? {
                let clamped = clamped_steps(&steps).map_err(|pos| {
                    format_err!(
                        "Slice node '{}': steps[{pos}] is 0; a step must not be 0",
                        node.name
                    )
                })?;
                if let Some(steps) = clamped {
                    inputs[ix] =
                        target.add_const(format!("{}.steps", node.name), tensor1(&steps))?;
                }
            }
        }
        let mut run_bound = false;
        for bound in &inputs[1..] {
            run_bound |= !run_bound_symbols(target, target.outlet_fact(*bound)?)?.is_empty();
        }
        if !run_bound {
            let facts_of = |target: &TypedModel, inputs: &[OutletId]| {
                inputs
                    .iter()
                    .map(|o| target.outlet_fact(*o).cloned())
                    .collect::<TractResult<TVec<TypedFact>>>()
            };
            let mut facts = facts_of(target, &inputs)?;
            let ends = ends_to_axis_end(&self.0, &facts.iter().collect::<TVec<_>>())?;
            if let Some(ends) = ends {
                inputs[2] = target.add_const(format!("{}.ends_to_axis_end", node.name), ends)?;
                facts = facts_of(target, &inputs)?;
            }
            let facts: TVec<&TypedFact> = facts.iter().collect();
            let output = self.0.output_facts(&facts)?;
            if !holds_dead_symbols(&output[0]) && run_time_strided_axes(&self.0, &facts)?.is_empty()
            {
                // Nothing only the run binds: exactly the op stock tract builds.
                return target.wire_node(&node.name, self.0.clone(), &inputs);
            }
            let dims: TVec<Symbol> = (0..output[0].rank())
                .map(|_| target.symbols.new_with_prefix("slice"))
                .collect();
            bound_lengths(&self.0, &facts, &dims, &target.symbols)?;
            // Analysis may know a length the bounds do not show (from the
            // consumers: a MatMul's inner dim): that length, checked at run.
            let inferred = &node.outputs[0].fact.shape;
            let mut known: TVec<Option<TDim>> = (0..output[0].rank())
                .map(|axis| inferred.dims().nth(axis).and_then(|d| d.concretize()))
                .collect();
            for (axis, length) in lengths_of_offset_ends(&self.0, target, &inputs, &facts)? {
                known[axis].get_or_insert(length);
            }
            let op = RunTimeValueSlice {
                slice: self.0.clone(),
                dims,
                known,
            };
            return target.wire_node(&node.name, op, &inputs);
        }
        inputs.extend(binders(target, &inputs[1..])?);
        target.wire_node(&node.name, self.clone(), &inputs)
    }
}

/// The lengths of a slice whose ends are its starts plus constant sizes
/// (`Slice(x, s, s + c)`: `lax.dynamic_slice` through jax2onnx, whose
/// starts hold the loop index), on the axes where the size is the whole
/// axis (`c` = its length, so the start is 0): `c`. Elsewhere ONNX may
/// clamp the end (`x[i:i+2]` at the last row has one), so the length stays
/// the run's. These are checked when the slice runs.
fn lengths_of_offset_ends(
    slice: &StridedSlice,
    target: &TypedModel,
    inputs: &[OutletId],
    facts: &[&TypedFact],
) -> TractResult<Vec<(usize, TDim)>> {
    let (Some(&starts), Some(&ends)) = (inputs.get(1), inputs.get(2)) else {
        return Ok(vec![]);
    };
    // Both operands may reach the Add through casts to a common type.
    let uncast = |mut outlet: OutletId| {
        while target
            .node(outlet.node)
            .op_is::<tract_core::ops::cast::Cast>()
        {
            outlet = target.node(outlet.node).inputs[0];
        }
        outlet
    };
    let starts = uncast(starts);
    let add = target.node(uncast(ends).node);
    if add.op.name() != "Add" || add.inputs.len() != 2 {
        return Ok(vec![]);
    }
    let sizes = match (uncast(add.inputs[0]), uncast(add.inputs[1])) {
        (a, b) if a == starts => b,
        (a, b) if b == starts => a,
        _ => return Ok(vec![]),
    };
    let Some(sizes) = &target.outlet_fact(sizes)?.konst else {
        return Ok(vec![]);
    };
    let Ok(sizes) = sizes.cast_to::<TDim>() else {
        return Ok(vec![]);
    };
    let sizes = sizes.try_as_plain_ram()?.as_slice::<TDim>()?.to_vec();
    let Some(axes) = axes_and_steps(slice, facts, sizes.len())? else {
        return Ok(vec![]);
    };
    Ok(axes
        .into_iter()
        .zip(sizes)
        .filter(|((axis, step), size)| *step == 1 && facts[0].shape.get(*axis) == Some(size))
        .map(|((axis, _), size)| (axis, size))
        .collect())
}

/// tract's `StridedSlice` with run-time bound values, its output dims that
/// tract leaves to a dead scope replaced by `dims` (one per axis, symbols
/// of the model), bound by the plan when the slice runs.
///
/// A slice whose bounds are run-time values (not constants) gets from tract an output dim
/// holding a symbol of a scratch scope (`StridedSlice::output_facts` types on a model of its
/// own), dead once typed: a `Shape` of that slice, folded to a constant, holds a symbol
/// nothing binds ("Undetermined symbol", SLANet's decoder in its `Loop`). Such a slice is
/// this op: the same evaluation, its output dims symbols of the model. So is a slice with
/// run-time bounds and a step other than 1 on some axis, which tract types as the whole axis
/// and declutters away there (tf2onnx's `x[i]` in a `while_loop`: `Slice(x, i, i + 1, step
/// 1e9)`, then `Squeeze`): its output is not the input. Each length such a slice mints is
/// asserted at most its input axis (ceil(n / |step|) with a step), so a later slice of that
/// axis to an end past it (tf2onnx re-slices `x[i]` to 1e9) is typed to the axis's end, as
/// ONNX clamps it, where tract would type it 0..1e9 and fail when it runs.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub(crate) struct RunTimeValueSlice {
    /// tract's op, as this module's `Slice` builder made it: it evaluates
    /// the slice (with this run's bound values) and gives the facts whose
    /// dead dims `dims` replace.
    pub(crate) slice: StridedSlice,
    /// For each output axis, the symbol standing for its length when
    /// tract's own would be dead.
    pub(crate) dims: TVec<Symbol>,
    /// For each output axis, the length analysis proved, if any: the
    /// output's fact, checked when the slice runs.
    pub(crate) known: TVec<Option<TDim>>,
}

impl Op for RunTimeValueSlice {
    fn name(&self) -> StaticName {
        "StridedSlice".into()
    }

    fn mints_runtime_symbols(&self) -> bool {
        true
    }

    op_as_typed_op!();
}

impl EvalOp for RunTimeValueSlice {
    op_out_of_plan!();

    fn eval(&self, ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let inputs = checked_run_bounds(&self.slice, plain_bounds(ctx, inputs)?)?;
        let outputs = self.slice.eval(ctx, inputs)?;
        for (axis, known) in self.known.iter().enumerate() {
            let (Some(known), Some(&got)) = (known, outputs[0].shape().get(axis)) else {
                continue;
            };
            if let Ok(want) = known.eval(ctx.symbols).to_i64() {
                ensure!(
                    want == got as i64,
                    "Slice: output axis {axis} has length {got}, but the model's other nodes need {known} = {want}"
                );
            }
        }
        Ok(outputs)
    }
}

impl TypedOp for RunTimeValueSlice {
    as_op!();

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        let mut facts = self.slice.output_facts(inputs)?;
        let strided = run_time_strided_axes(&self.slice, inputs)?;
        let fact = &mut facts[0];
        let shape: TVec<TDim> = fact
            .shape
            .iter()
            .enumerate()
            .map(|(axis, d)| {
                if let Some(Some(known)) = self.known.get(axis) {
                    Ok(known.clone())
                } else if strided.contains(&axis) || d.symbols().iter().any(|s| s.scope().is_none())
                {
                    self.dims
                        .get(axis)
                        .map(|s| s.to_dim())
                        .context("RunTimeValueSlice: an output axis without its symbol")
                } else {
                    Ok(d.clone())
                }
            })
            .collect::<TractResult<_>>()?;
        *fact = fact.datum_type.fact(shape);
        Ok(facts)
    }
}
