//! Symbols that only the run binds (a `NonZero` count, a `Range` length), met in constants.
//!
//! tract types a value derived from such a dim (`Shape` of a `Range` or `NonZero` output, say)
//! as a TDim constant holding the symbol; the plan binds the symbol when the node that mints it
//! runs. Ops that turn such a value into numbers themselves (`Cast` to float) evaluate it
//! without the session's symbol values and fail: "Undetermined symbol in expression: range"
//! (Piper's `/Cast_3`). An op evaluating such a constant needs that node to have run: the
//! overrides of `Cast` and `Expand` put every such constant input through [`BindRunSymbols`]
//! (or the data after [`AfterBinders`]) first, which substitutes the run's values, ordered after
//! the nodes binding them (the binding node's output is an extra input, read for its order,
//! never for its value). Ops whose inputs hold no such symbol are built exactly as tract builds
//! them.

use tract_hir::internal::*;

/// The symbols held by `fact`'s constant value that only the run binds:
/// every symbol of its TDim constant, but those of the model's inputs'
/// shapes, which the caller gives before any node runs (tract's own ops
/// evaluate those with the session's values).
pub(crate) fn run_bound_symbols(model: &TypedModel, fact: &TypedFact) -> TractResult<Vec<Symbol>> {
    let mut symbols = konst_symbols(fact)?;
    if !symbols.is_empty() {
        let given = input_symbols(model);
        symbols.retain(|s| !given.contains(s));
    }
    Ok(symbols)
}

/// The symbols of the model inputs' shapes. Inputs are found by their op:
/// while a model is being typed, its sources exist before `model.inputs`
/// is filled.
fn input_symbols(model: &TypedModel) -> Vec<Symbol> {
    model
        .nodes()
        .iter()
        .filter(|n| is_input(model, n))
        .flat_map(|n| n.outputs.iter())
        .flat_map(|o| o.fact.shape.iter())
        .flat_map(|d| d.symbols())
        .collect()
}

fn is_input(model: &TypedModel, node: &TypedNode) -> bool {
    TypedModel::is_source(&node.op) || model.inputs.iter().any(|i| i.node == node.id)
}

/// The symbols held by `fact`'s constant value, when it is a TDim constant.
pub(crate) fn konst_symbols(fact: &TypedFact) -> TractResult<Vec<Symbol>> {
    match &fact.konst {
        Some(konst) if fact.datum_type == TDim::datum_type() => Ok(konst
            .try_as_plain_ram()?
            .as_slice::<TDim>()?
            .iter()
            .flat_map(|d| d.symbols())
            .collect()),
        _ => Ok(vec![]),
    }
}

/// The values of an integer tensor, TDim ones evaluated with the run's
/// `symbols`. `Err` names the first that stays symbolic, with tract's
/// `TooEarly` as its root cause: evaluated ahead of the run (analysis,
/// constant folding), such a value is "not yet", which tract skips, not
/// a failure of the model.
pub(crate) fn run_values(t: &Tensor, symbols: &SymbolValues) -> TractResult<Vec<i64>> {
    if t.datum_type() == TDim::datum_type() {
        t.try_as_plain_ram()?
            .as_slice::<TDim>()?
            .iter()
            .map(|d| {
                d.eval(symbols).to_i64().map_err(|e| {
                    anyhow::Error::from(e).context(format!("{d} is not known in this run"))
                })
            })
            .collect()
    } else {
        Ok(t.cast_to::<i64>()?
            .try_as_plain_ram()?
            .as_slice::<i64>()?
            .to_vec())
    }
}

/// The per-row lengths `lens` holds (`sequence_lens` of a recurrent op or
/// `ReverseSequence`), with the run's symbols, each checked in `[0, time]`:
/// an error names `site` (`"GRU node 'g'"`), the row, the length and the
/// bound, which `bound` describes (`"seq_length"`).
pub(crate) fn row_lengths(
    site: &str,
    lens: &Tensor,
    symbols: &SymbolValues,
    time: usize,
    bound: &str,
) -> TractResult<Vec<usize>> {
    let values =
        run_values(lens, symbols).with_context(|| format!("{site}: reading sequence_lens"))?;
    values
        .iter()
        .enumerate()
        .map(|(b, &len)| {
            usize::try_from(len)
                .ok()
                .filter(|&l| l <= time)
                .with_context(|| {
                    format!(
                        "{site}: sequence_lens[{b}] is {len}, out of range [0, {time}] ({bound})"
                    )
                })
        })
        .collect()
}
/// The outlets whose nodes bind the run-bound symbols ([`run_bound_symbols`])
/// held by the constant values of `inputs`, once each: for each symbol, the first node (nodes are added in
/// dataflow order while a model is typed, before it has outputs to order
/// by) whose output shape holds it while no input shape of its does. Model
/// inputs are not binders: the caller gives their dims.
pub(crate) fn binders(model: &TypedModel, inputs: &[OutletId]) -> TractResult<TVec<OutletId>> {
    let mut symbols: Vec<Symbol> = vec![];
    for input in inputs {
        symbols.extend(run_bound_symbols(model, model.outlet_fact(*input)?)?);
    }
    let mut found: TVec<OutletId> = tvec![];
    for symbol in symbols {
        if let Some(binder) = binder_of(model, &symbol)?
            && !found.contains(&binder)
        {
            found.push(binder);
        }
    }
    Ok(found)
}

/// The node binding `symbol`, see [`binders`].
fn binder_of(model: &TypedModel, symbol: &Symbol) -> TractResult<Option<OutletId>> {
    let mentions = |fact: &TypedFact| fact.shape.iter().any(|d| d.symbols().contains(symbol));
    for node in model.nodes() {
        let id = node.id;
        let from_inputs = node
            .inputs
            .iter()
            .map(|i| model.outlet_fact(*i))
            .collect::<TractResult<Vec<_>>>()?
            .into_iter()
            .any(mentions);
        if from_inputs || is_input(model, node) {
            continue;
        }
        if let Some(slot) = node.outputs.iter().position(|o| mentions(&o.fact)) {
            return Ok(Some(OutletId::new(id, slot)));
        }
    }
    Ok(None)
}

/// `value` through `op` (its first input; the others, `binders`, only
/// order it after the nodes binding symbols), or `value` itself when
/// nothing binds.
pub(crate) fn wire_after(
    target: &mut TypedModel,
    name: String,
    op: impl TypedOp,
    value: OutletId,
    binders: TVec<OutletId>,
) -> TractResult<OutletId> {
    if binders.is_empty() {
        return Ok(value);
    }
    let mut wires = tvec![value];
    wires.extend(binders);
    Ok(target.wire_node(name, op, &wires)?[0])
}

/// A TDim value with the run's symbol values substituted. Input 0 is the
/// value; further inputs only order the op after the nodes binding them.
/// Never folded at load: the values do not exist before the run.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub struct BindRunSymbols;

impl Op for BindRunSymbols {
    fn name(&self) -> StaticName {
        "BindRunSymbols".into()
    }

    op_as_typed_op!();
}

impl EvalOp for BindRunSymbols {
    fn eval_out_of_plan(&self, _inputs: TVec<TValue>) -> TractResult<Option<TVec<TValue>>> {
        Ok(None)
    }

    fn eval(&self, ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let value = &inputs[0];
        let bound: Vec<TDim> = value
            .try_as_plain_ram()?
            .as_slice::<TDim>()?
            .iter()
            .map(|d| d.eval(ctx.symbols))
            .collect();
        let array = tract_ndarray::ArrayD::from_shape_vec(value.shape(), bound)?;
        Ok(tvec!(Tensor::from(array).into_tvalue()))
    }
}

impl TypedOp for BindRunSymbols {
    as_op!();

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        ensure!(
            inputs[0].datum_type == TDim::datum_type(),
            "BindRunSymbols takes TDim, got {:?}",
            inputs[0].datum_type
        );
        Ok(tvec!(TDim::datum_type().fact(inputs[0].shape.clone())))
    }
}

/// Input 0, unchanged; further inputs only order the op after the nodes
/// binding symbols. Never folded at load.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub(crate) struct AfterBinders;

impl Op for AfterBinders {
    fn name(&self) -> StaticName {
        "AfterBinders".into()
    }

    op_as_typed_op!();
}

impl EvalOp for AfterBinders {
    fn eval_out_of_plan(&self, _inputs: TVec<TValue>) -> TractResult<Option<TVec<TValue>>> {
        Ok(None)
    }

    fn eval(&self, _ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let value = inputs
            .into_iter()
            .next()
            .context("AfterBinders: no input")?;
        Ok(tvec!(value))
    }
}

impl TypedOp for AfterBinders {
    as_op!();

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        Ok(tvec!(inputs[0].datum_type.fact(inputs[0].shape.clone())))
    }
}
