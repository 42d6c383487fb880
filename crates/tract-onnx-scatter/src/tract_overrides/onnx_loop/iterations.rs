//! Whether a `Loop` with a trip count `M` provably runs `M` iterations although its condition
//! is computed ([`super`], the `Loop` op): [`runs_trip_count`], a small symbolic evaluation of
//! the typed body ([`Affine`], [`Eval`]).
//!
//! tf2onnx writes every Keras recurrent layer as a counted loop: `M` is the time dim, and the
//! condition is `counter < time` on counters the body increments by one (`i + 1 < time AND
//! step + 1 < time`), which turns false only when the trip count ends the loop anyway. A loop
//! that provably runs `M` times gives its scan outputs a first dim of `M`; without the proof it
//! is a fresh symbol per loop, and the two halves of a bidirectional layer cannot be
//! concatenated ("Inconsistent concat": `loop` against `loop_0`). Contract: docs/contract.md,
//! "Loop (tract override)", row "typing".

use tract_hir::internal::*;

/// A value at iteration `k`: `base`, plus `k` when `counts`.
#[derive(Debug, Clone, PartialEq)]
struct Affine {
    base: TDim,
    counts: bool,
}

/// What the evaluation knows of a model's values.
struct Eval<'a> {
    model: &'a TypedModel,
    /// The affine value of each source (body input), by input position.
    sources: Vec<Option<Affine>>,
}

impl Eval<'_> {
    fn value(&self, outlet: OutletId, depth: usize) -> Option<Affine> {
        if depth > 32 {
            return None;
        }
        let fact = self.model.outlet_fact(outlet).ok()?;
        if let Some(k) = &fact.konst
            && k.len() == 1
        {
            return Some(Affine {
                base: scalar_dim(k)?,
                counts: false,
            });
        }
        if let Some(ix) = self.model.inputs.iter().position(|i| *i == outlet) {
            return self.sources.get(ix).cloned().flatten();
        }
        let node = self.model.node(outlet.node);
        let input = |i: usize| self.value(*node.inputs.get(i)?, depth + 1);
        match &*node.op.name() {
            "Cast" => input(0),
            "Add" => {
                let (a, b) = (input(0)?, input(1)?);
                (!(a.counts && b.counts)).then(|| Affine {
                    base: a.base + b.base,
                    counts: a.counts || b.counts,
                })
            }
            "Sub" => {
                let (a, b) = (input(0)?, input(1)?);
                (!b.counts).then(|| Affine {
                    base: a.base - b.base,
                    counts: a.counts,
                })
            }
            _ => None,
        }
    }

    /// Whether the bool at `outlet` is true for every iteration `k` in
    /// `0..=last` (`last` may be symbolic), each comparison by a margin of
    /// `-slack` more than it needs.
    fn holds(&self, outlet: OutletId, last: &TDim, slack: &TDim, depth: usize) -> bool {
        if depth > 32 {
            return false;
        }
        let Ok(fact) = self.model.outlet_fact(outlet) else {
            return false;
        };
        if let Some(k) = &fact.konst {
            return k.cast_to_scalar::<bool>().unwrap_or(false);
        }
        let node = self.model.node(outlet.node);
        let name = node.op.name();
        if name == "And" {
            return node
                .inputs
                .iter()
                .all(|i| self.holds(*i, last, slack, depth + 1));
        }
        if name == "Cast" || name == "Identity" {
            return self.holds(node.inputs[0], last, slack, depth + 1);
        }
        let (lesser, greater, strict) = match &*name {
            "LT" => (0, 1, true),
            "LTE" => (0, 1, false),
            "GT" => (1, 0, true),
            "GTE" => (1, 0, false),
            _ => return false,
        };
        let (Some(a), Some(b)) = (
            node.inputs
                .get(lesser)
                .and_then(|i| self.value(*i, depth + 1)),
            node.inputs
                .get(greater)
                .and_then(|i| self.value(*i, depth + 1)),
        ) else {
            return false;
        };
        // b - a = d + s·k, s in {-1, 0, 1}: its least value over 0..=last.
        let d = b.base - a.base;
        let least = match (a.counts, b.counts) {
            (true, false) => d - last,
            _ => d,
        };
        let least = if strict { least - 1 } else { least };
        (least + slack).prove_positive_or_zero()
    }
}

/// Whether the loop runs `m` iterations: its body's condition (output 0 of
/// `body`) holds for every iteration before the last, and `initial_cond`
/// (an outlet of `outer`, or `None` when the node has none) holds whenever
/// `m ≥ 1`. `carried` are the loop-carried initial values' facts, in body
/// input order (their constants, when known, seed the counters).
///
/// The proof is a small symbolic evaluation over the typed body: a value is a constant (a
/// TDim, possibly symbolic) or `c + k` at iteration `k` (iteration_num, or a loop-carried
/// counter the body increments by one, from a constant initial value). Casts keep values
/// (counters are small integers, exact in any numeric type); `Add`/`Sub` of a constant shift
/// them. A condition is proved when it is an `And` of comparisons that hold for every
/// iteration `k` in `0..=M-2` (the last iteration's condition is not read). Anything else is
/// not proved: the loop keeps a fresh symbol.
pub(crate) fn runs_trip_count(
    body: &TypedModel,
    carried: &[TypedFact],
    outer: &TypedModel,
    initial_cond: Option<OutletId>,
    m: &TDim,
) -> bool {
    let Some(&cond_out) = body.outputs.first() else {
        return false;
    };
    let mut sources: Vec<Option<Affine>> = vec![None; body.inputs.len()];
    if let Some(s) = sources.first_mut() {
        *s = Some(Affine {
            base: TDim::Val(0),
            counts: true,
        });
    }
    for (j, fact) in carried.iter().enumerate() {
        let Some(init) = fact
            .konst
            .as_ref()
            .filter(|k| k.len() == 1)
            .and_then(|k| scalar_dim(k))
        else {
            continue;
        };
        let (Some(&input), Some(&output)) = (body.inputs.get(2 + j), body.outputs.get(1 + j))
        else {
            continue;
        };
        sources[2 + j] = if output == input {
            Some(Affine {
                base: init,
                counts: false,
            })
        } else if increments_by_one(body, input, output) {
            Some(Affine {
                base: init,
                counts: true,
            })
        } else {
            None
        };
    }
    let body_eval = Eval {
        model: body,
        sources,
    };
    if !body_eval.holds(cond_out, &(m.clone() - 2), &TDim::Val(0), 0) {
        return false;
    }
    let Some(initial) = initial_cond else {
        return true;
    };
    let outer_eval = Eval {
        model: outer,
        sources: vec![],
    };
    // Holds whenever m ≥ 1: true outright, or by a margin of m - 1 (what
    // tract can prove of `time < time + 1` it cannot of `0 < time`).
    let zero = TDim::Val(0);
    outer_eval.holds(initial, &zero, &zero, 0)
        || outer_eval.holds(initial, &zero, &(TDim::Val(1) - m), 0)
}

/// A one-value tensor as a dim: integers and TDim as they are, floats
/// when they hold an integer (tf2onnx compares its counters as floats).
fn scalar_dim(t: &Tensor) -> Option<TDim> {
    if t.datum_type().is_float() {
        let v = t.cast_to_scalar::<f64>().ok()?;
        let i = v as i64;
        return (i as f64 == v).then_some(TDim::Val(i));
    }
    let v = t.cast_to::<TDim>().ok()?;
    v.try_as_plain_ram()
        .ok()?
        .as_slice::<TDim>()
        .ok()?
        .first()
        .cloned()
}

/// Whether `output` is `input + 1` (through casts).
fn increments_by_one(body: &TypedModel, input: OutletId, output: OutletId) -> bool {
    let mut outlet = output;
    while body.node(outlet.node).op.name() == "Cast" {
        outlet = body.node(outlet.node).inputs[0];
    }
    let node = body.node(outlet.node);
    if node.op.name() != "Add" || node.inputs.len() != 2 {
        return false;
    }
    let uncast = |mut o: OutletId| {
        while body.node(o.node).op.name() == "Cast" {
            o = body.node(o.node).inputs[0];
        }
        o
    };
    let one = |o: OutletId| {
        body.outlet_fact(o)
            .ok()
            .and_then(|f| f.konst.clone())
            .and_then(|k| k.cast_to_scalar::<i64>().ok())
            == Some(1)
    };
    let (a, b) = (node.inputs[0], node.inputs[1]);
    (uncast(a) == input && one(b)) || (uncast(b) == input && one(a))
}
