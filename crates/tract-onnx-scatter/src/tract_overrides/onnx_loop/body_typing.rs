//! How a `Loop`'s body is typed ([`super`], the `Loop` op): once for every
//! iteration, or, when a loop-carried value leaves the first iteration with
//! another rank than it entered, once for the first iteration and once for
//! every later one.
//!
//! onnxruntime runs a body whose loop-carried value changes rank
//! (paddle2onnx carries its loop counter in as a scalar and its body gives
//! it back as `[1]`); a tract plan holds one fact per value. So the body is
//! typed from the initial values' facts (the first plan), then, if a rank
//! changes, again from the facts the first iteration gives (the later
//! plan). Either way, where an iteration changes a dim of a loop-carried
//! value, the dim becomes a fresh symbol (prefix `loop`) and the body is
//! typed again, until its outputs fit its inputs (a fixed point, at most
//! [`SETTLE_ROUNDS`] typings).

use tract_hir::internal::*;

/// The most typings of the body the later plan's fixed point may take; a
/// loop-carried value still changing then is a load error naming it.
pub(crate) const SETTLE_ROUNDS: usize = 16;

/// A body typed for a `Loop`.
#[derive(Debug)]
pub(crate) struct TypedBody {
    /// The body for the first iteration, when it differs from `rest`'s
    /// (a loop-carried value changes rank in it).
    pub(crate) first: Option<TypedModel>,
    /// The body for every iteration (every later one with `first`).
    pub(crate) rest: TypedModel,
    /// The loop-carried facts `rest` takes: they hold every value it is
    /// given (and the initial values too, without `first`).
    pub(crate) carried: Vec<TypedFact>,
}

/// The body, typed once from `carried` facts (the outer-scope values'
/// `outer` facts after them), decluttered, with its loop-carried outputs
/// checked against their inputs' datum types; and those outputs' facts.
pub(crate) type Typing<'a> = &'a dyn Fn(&[TypedFact]) -> TractResult<(TypedModel, Vec<TypedFact>)>;

/// `F32 [1, n]`: a fact's datum type and shape, for errors.
pub(crate) fn show(fact: &TypedFact) -> String {
    let dims: Vec<String> = fact.shape.iter().map(|d| d.to_string()).collect();
    format!("{:?} [{}]", fact.datum_type, dims.join(", "))
}

/// Whether `general` holds every value `specific` does: the same datum
/// type and rank, each dim the same or a symbol of `minted` (its own, not
/// bound by `specific`).
pub(crate) fn covers(general: &TypedFact, specific: &TypedFact, minted: &[Symbol]) -> bool {
    general.datum_type == specific.datum_type
        && general.rank() == specific.rank()
        && general
            .shape
            .iter()
            .zip(specific.shape.iter())
            .all(|(g, s)| g == s || matches!(g, TDim::Sym(x) if minted.contains(x)))
}

/// `a` with the dims where `b` differs (and `a` holds no symbol of
/// `minted` already) replaced by fresh symbols, added to `minted`. Same
/// datum type and rank expected. `None` when nothing changes.
pub(crate) fn widen(
    a: &TypedFact,
    b: &TypedFact,
    symbols: &SymbolScope,
    minted: &mut Vec<Symbol>,
) -> Option<TypedFact> {
    let mut shape = a.shape.to_tvec();
    let mut changed = false;
    for (d, o) in shape.iter_mut().zip(b.shape.iter()) {
        let fresh = matches!(d, TDim::Sym(s) if minted.contains(s));
        if *d != *o && !fresh {
            let s = symbols.new_with_prefix("loop");
            minted.push(s.clone());
            *d = s.to_dim();
            changed = true;
        }
    }
    changed.then(|| a.datum_type.fact(shape))
}

/// Types the body for loop-carried values entering with the `initial`
/// facts; see the module documentation. `node` names the `Loop` in errors.
pub(crate) fn type_body(
    node: &str,
    initial: &[TypedFact],
    typing: Typing,
    symbols: &SymbolScope,
    minted: &mut Vec<Symbol>,
) -> TractResult<TypedBody> {
    let (first, after_first) = typing(initial)?;
    let same_ranks = initial
        .iter()
        .zip(&after_first)
        .all(|(i, o)| i.rank() == o.rank());
    // Without a rank change, the fixed point from the initial facts holds
    // the initial values too: one plan (its first typing is `first`).
    let (rest, carried) = if same_ranks {
        settle(
            node,
            initial.to_vec(),
            Some((first.clone(), after_first.clone())),
            typing,
            symbols,
            minted,
        )?
    } else {
        settle(node, after_first.clone(), None, typing, symbols, minted)?
    };
    if initial
        .iter()
        .zip(&carried)
        .all(|(init, fact)| covers(fact, init, minted))
    {
        return Ok(TypedBody {
            first: None,
            rest,
            carried,
        });
    }
    // The later plan must take what the first iteration gives.
    for (k, (out, fact)) in after_first.iter().zip(&carried).enumerate() {
        ensure!(
            covers(fact, out, minted),
            "Loop node '{node}': loop-carried value {k} enters the body as {}, leaves the first iteration as {} and later ones as {}; its rank changes after the first iteration, and tract_onnx_scatter types a body at most twice (the first iteration, then every later one)",
            show(&initial[k]),
            show(out),
            show(fact)
        );
    }
    Ok(TypedBody {
        first: Some(first),
        rest,
        carried,
    })
}

/// The fixed point from the loop-carried facts `facts`: the body typed so
/// that the facts of its loop-carried outputs fit those of its inputs.
/// `first_round` is the body already typed from `facts`, if any.
fn settle(
    node: &str,
    mut facts: Vec<TypedFact>,
    mut first_round: Option<(TypedModel, Vec<TypedFact>)>,
    typing: Typing,
    symbols: &SymbolScope,
    minted: &mut Vec<Symbol>,
) -> TractResult<(TypedModel, Vec<TypedFact>)> {
    let mut changing = vec![];
    for _ in 0..SETTLE_ROUNDS {
        let (body, outs) = match first_round.take() {
            Some(round) => round,
            None => typing(&facts)?,
        };
        changing.clear();
        for (k, (fact, out)) in facts.iter_mut().zip(&outs).enumerate() {
            let before = fact.clone();
            if fact.rank() != out.rank() {
                // Iterations after this one take this rank: type them so.
                *fact = out.clone();
            } else if let Some(wider) = widen(fact, out, symbols, minted) {
                *fact = wider;
            } else {
                continue;
            }
            changing.push((k, before, out.clone()));
        }
        if changing.is_empty() {
            return Ok((body, facts));
        }
    }
    let (k, before, out) = &changing[0];
    bail!(
        "Loop node '{node}': loop-carried value {k} does not settle: after {SETTLE_ROUNDS} typings of the body it still enters as {} and leaves as {}",
        show(before),
        show(out)
    )
}
