//! Overrides of tract operators outside the scatter family, one file per
//! [`TractOverride`], named after the ONNX op it builds (`Loop` is the
//! folder [`onnx_loop`]): each works around a limit of tract 0.23.9 that
//! stops exporters' scatter models before the scatter runs, and builds
//! exactly the op and facts stock tract builds wherever stock can prove the
//! result (`tests/overrides_match_stock.rs`). What each does is
//! docs/contract.md's table of tract overrides.
//!
//! Shared by several: `retyped` (an inference op with its typing
//! replaced, and the fence), `fold_budget` (constants not folded at load)
//! and `run_symbols` (symbols only the run binds). [`float16`] computes
//! the float16 ops that accumulate in float32. All are on in
//! [`crate::onnx()`]; [`crate::Options::tract_overrides`] switches any off
//! by name, [`TractOverrides::NONE`] keeps every stock tract operator.

pub(crate) mod cast;
pub(crate) mod concat;
pub(crate) mod constant_of_shape;
pub(crate) mod expand;
pub mod float16;
pub(crate) mod fold_budget;
pub(crate) mod global_lp_pool;
pub(crate) mod onnx_if;
pub mod onnx_loop;
pub(crate) mod recurrent;
pub(crate) mod reshape;
pub(crate) mod retyped;
pub(crate) mod reverse_sequence;
pub(crate) mod run_symbols;
pub(crate) mod slice;
pub(crate) mod squeeze;
pub(crate) mod topk;
pub(crate) mod unique;

use std::fmt;
use std::str::FromStr;

use tract_hir::internal::*;
use tract_onnx::model::{OnnxOpRegister, ParsingContext};
use tract_onnx::pb::NodeProto;

use retyped::Builder;

// The ops a loaded model holds where an override changed tract's op, as
// types to find them by (`node.op_is::<RuntimeReshape>()`, as
// `tract-scatter dump` does); what they hold is the crate's own.
pub use concat::IntegerToTDim;
pub use constant_of_shape::RunTimeConstantOfShape;
pub use reshape::RuntimeReshape;
pub use retyped::MAX_RANK;
pub use run_symbols::BindRunSymbols;
pub use slice::RunTimeBoundSlice;
pub use unique::Unique;

/// One tract operator the plugin overrides, named by its ONNX op type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TractOverride {
    /// `If`: a condition known at load takes its branch; one decided at
    /// run time runs the chosen branch, its facts the union of both
    /// (`onnx_if`).
    If,
    /// `Reshape` whose volume only the run decides (`reshape`).
    Reshape,
    /// `Concat` of symbolic dims with int64 values tract's cast would wrap
    /// (`concat`).
    Concat,
    /// `Slice` whose bounds only the run knows, and the whole-axis reverse
    /// of a step -1 (`slice`).
    Slice,
    /// `Cast`, exact to int64, symbolic through integer casts (`cast`).
    Cast,
    /// `CastLike`, as `Cast` to its second input's type (`cast`).
    CastLike,
    /// `Unique`, which tract lacks (`unique`).
    Unique,
    /// `ConstantOfShape` with ONNX's float32 default and a shape computed
    /// from data (`constant_of_shape`).
    ConstantOfShape,
    /// `Expand` to a shape holding a symbol only the run binds
    /// (`expand`).
    Expand,
    /// `Loop`, which tract lacks ([`onnx_loop`]).
    Loop,
    /// `Squeeze` of an axis whose length only the run knows
    /// (`squeeze`).
    Squeeze,
    /// `ReverseSequence`, which tract lacks (`reverse_sequence`).
    ReverseSequence,
    /// `GRU` as ONNX specifies it: run-time `sequence_lens`, every
    /// activation (`recurrent`).
    Gru,
    /// `LSTM` as ONNX specifies it (`recurrent`).
    Lstm,
    /// `RNN` as ONNX specifies it (`recurrent`).
    Rnn,
    /// `TopK` whose `k` is a dim only the run binds (`topk`).
    TopK,
    /// `GlobalLpPool`, ONNX's norm (`global_lp_pool`).
    GlobalLpPool,
}

impl TractOverride {
    /// Every override, in declaration order (the order [`TractOverrides`]
    /// iterates in); the contract of each is in docs/contract.md,
    /// "Operators outside the scatter family".
    pub const ALL: [TractOverride; 17] = [
        TractOverride::If,
        TractOverride::Reshape,
        TractOverride::Concat,
        TractOverride::Slice,
        TractOverride::Cast,
        TractOverride::CastLike,
        TractOverride::Unique,
        TractOverride::ConstantOfShape,
        TractOverride::Expand,
        TractOverride::Loop,
        TractOverride::Squeeze,
        TractOverride::ReverseSequence,
        TractOverride::Gru,
        TractOverride::Lstm,
        TractOverride::Rnn,
        TractOverride::TopK,
        TractOverride::GlobalLpPool,
    ];

    /// The ONNX op type whose builder it replaces.
    pub fn op_type(self) -> &'static str {
        match self {
            TractOverride::If => "If",
            TractOverride::Reshape => "Reshape",
            TractOverride::Concat => "Concat",
            TractOverride::Slice => "Slice",
            TractOverride::Cast => "Cast",
            TractOverride::CastLike => "CastLike",
            TractOverride::Unique => "Unique",
            TractOverride::ConstantOfShape => "ConstantOfShape",
            TractOverride::Expand => "Expand",
            TractOverride::Loop => "Loop",
            TractOverride::Squeeze => "Squeeze",
            TractOverride::ReverseSequence => "ReverseSequence",
            TractOverride::Gru => "GRU",
            TractOverride::Lstm => "LSTM",
            TractOverride::Rnn => "RNN",
            TractOverride::TopK => "TopK",
            TractOverride::GlobalLpPool => "GlobalLpPool",
        }
    }

    fn builder(self) -> Builder {
        match self {
            TractOverride::If => onnx_if::if_then_else,
            TractOverride::Reshape => reshape::reshape,
            TractOverride::Concat => concat::concat,
            TractOverride::Slice => slice::slice,
            TractOverride::Cast => cast::cast,
            TractOverride::CastLike => cast::cast_like,
            TractOverride::Unique => unique::unique,
            TractOverride::ConstantOfShape => constant_of_shape::constant_of_shape,
            TractOverride::Expand => expand::expand,
            TractOverride::Loop => onnx_loop::onnx_loop,
            TractOverride::Squeeze => squeeze::squeeze,
            TractOverride::ReverseSequence => reverse_sequence::reverse_sequence,
            TractOverride::Gru => recurrent::gru,
            TractOverride::Lstm => recurrent::lstm,
            TractOverride::Rnn => recurrent::rnn,
            TractOverride::TopK => topk::topk,
            TractOverride::GlobalLpPool => global_lp_pool::global_lp_pool,
        }
    }

    fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

impl fmt::Display for TractOverride {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.op_type())
    }
}

impl FromStr for TractOverride {
    type Err = anyhow::Error;

    /// By ONNX op type, exactly as the model spells it (`ConstantOfShape`).
    fn from_str(name: &str) -> TractResult<TractOverride> {
        TractOverride::ALL
            .into_iter()
            .find(|o| o.op_type() == name)
            .with_context(|| {
                format!(
                    "no tract override is named {name:?}; the overrides are: {}",
                    TractOverride::ALL.map(|o| o.op_type()).join(", ")
                )
            })
    }
}

/// A set of [`TractOverride`]s.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TractOverrides(u32);

impl TractOverrides {
    /// Every override (the default).
    pub const ALL: TractOverrides = TractOverrides((1 << TractOverride::ALL.len()) - 1);
    /// None: stock tract's operators throughout.
    pub const NONE: TractOverrides = TractOverrides(0);

    /// Whether `o` is in the set.
    pub fn contains(self, o: TractOverride) -> bool {
        self.0 & o.bit() != 0
    }

    /// This set and `o`.
    pub fn with(self, o: TractOverride) -> TractOverrides {
        TractOverrides(self.0 | o.bit())
    }

    /// This set but `o`: stock tract's builder for `o`'s op type.
    pub fn without(self, o: TractOverride) -> TractOverrides {
        TractOverrides(self.0 & !o.bit())
    }

    /// The overrides in the set, in [`TractOverride::ALL`]'s order.
    pub fn iter(self) -> impl Iterator<Item = TractOverride> {
        TractOverride::ALL
            .into_iter()
            .filter(move |o| self.contains(*o))
    }

    /// Replaces the builders of the set's op types in `reg`.
    pub(crate) fn register(self, reg: &mut OnnxOpRegister) {
        for o in self.iter() {
            reg.insert(o.op_type(), fenced_override);
        }
    }
}

/// The override's builder for the node's op type, fenced as tract's own
/// builders are ([`retyped::fence_stock_builders`]): the overrides call
/// tract's analysis and typing code (`StridedSlice`'s rules in the run-time
/// slice, tract's `Squeeze` rules, ...), which panics on some hostile
/// constants.
fn fenced_override(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let o: TractOverride = node.op_type.parse()?;
    retyped::fenced_build(o.builder(), retyped::Fence::Plugin, ctx, node)
}

impl Default for TractOverrides {
    fn default() -> TractOverrides {
        TractOverrides::ALL
    }
}

impl fmt::Debug for TractOverrides {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl FromIterator<TractOverride> for TractOverrides {
    fn from_iter<I: IntoIterator<Item = TractOverride>>(iter: I) -> TractOverrides {
        iter.into_iter()
            .fold(TractOverrides::NONE, TractOverrides::with)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_override_is_named_by_its_op_type_and_parses_back() {
        for o in TractOverride::ALL {
            assert_eq!(o.op_type().parse::<TractOverride>().unwrap(), o);
        }
    }

    #[test]
    fn an_unknown_name_lists_the_overrides() {
        let err = "Gather".parse::<TractOverride>().unwrap_err().to_string();
        assert_eq!(
            err,
            "no tract override is named \"Gather\"; the overrides are: If, Reshape, Concat, Slice, Cast, CastLike, Unique, ConstantOfShape, Expand, Loop, Squeeze, ReverseSequence, GRU, LSTM, RNN, TopK, GlobalLpPool"
        );
    }

    #[test]
    fn a_set_without_one_override_registers_stock_s_builder_for_it() {
        let set = TractOverrides::ALL.without(TractOverride::Slice);
        assert!(!set.contains(TractOverride::Slice));
        assert_eq!(set.iter().count(), TractOverride::ALL.len() - 1);
        let mut ours = tract_onnx::onnx().op_register;
        set.register(&mut ours);
        let stock = tract_onnx::onnx().op_register;
        let address =
            |reg: &OnnxOpRegister, o: TractOverride| reg.0.get(o.op_type()).map(|b| *b as usize);
        for o in TractOverride::ALL {
            let same = address(&ours, o) == address(&stock, o);
            assert_eq!(same, o == TractOverride::Slice, "{o}");
        }
    }

    #[test]
    fn the_default_is_every_override_and_none_is_empty() {
        assert_eq!(TractOverrides::default(), TractOverrides::ALL);
        assert_eq!(TractOverrides::NONE.iter().count(), 0);
        assert_eq!(
            TractOverride::ALL.into_iter().collect::<TractOverrides>(),
            TractOverrides::ALL
        );
        assert_eq!(
            format!("{:?}", TractOverrides::NONE.with(TractOverride::If)),
            "{If}"
        );
    }
}
