//! Switches that turn a speed mechanism off, to measure what it buys.
//!
//! Built with the `ablation` feature, the environment variable
//! [`OFF_VAR`] (`SCATTER_MECHANISMS_OFF=fused_copy,prefetch`) turns the
//! named mechanisms off for the whole process; `cargo xtask bench
//! --baseline-env` runs the plugin that way beside the plugin as built, in
//! the same rounds. Without the feature (the default) every mechanism is
//! on and [`Mechanism::is_on`] is the constant `true`.
//!
//! Architecture invariant: a mechanism switched off changes how fast a
//! call runs, never its result or its errors: each switch only picks the
//! plain path the mechanism was measured against.

/// A speed mechanism of the kernels or the plugin (docs/performance.md,
/// "What each mechanism buys").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mechanism {
    /// The plugin's output pool: a terminal scatter node keeps its last
    /// output to copy into.
    OutputPool,
    /// The plugin's check cache: the check of indices that come back is
    /// kept.
    CheckCache,
    /// The sort for a split: ScatterND indices that come back are sorted
    /// by destination once and split over threads from then on.
    SortForSplit,
    /// ScatterND's sort by destination block in the check.
    SortByBlock,
    /// The copy of shared data fused with the scatter.
    FusedCopy,
    /// A blocked ScatterElements band staged in a contiguous buffer.
    StagedBands,
    /// Software prefetch of strided bands and of row scatters.
    Prefetch,
    /// Software prefetch of a serial ScatterElements' single-element
    /// destinations in large data, updates ahead.
    ElementsPrefetch,
    /// ScatterND's update rows grouped by destination row for a split.
    RowSplit,
    /// The plugin's fold of a transpose pair around a ScatterND.
    TransposeFold,
    /// The plugin's rewrite of a broadcast-row ScatterElements into a
    /// ScatterND.
    BroadcastRowRewrite,
    /// The plugin's bfloat16 check where a bfloat16 input enters: a tensor
    /// known to hold bfloat16 values (the plugin's own bfloat16 output,
    /// or a shared tensor it checked before) is not read; a shared one is
    /// read, and copied only when a value needs rounding. Off: every such
    /// value is rounded whole, a shared one copied first.
    Bfloat16Check,
}

/// The variable naming the mechanisms to turn off, comma-separated
/// ([`Mechanism::name`]).
pub const OFF_VAR: &str = "SCATTER_MECHANISMS_OFF";

impl Mechanism {
    /// Every mechanism.
    pub const ALL: [Mechanism; 12] = [
        Mechanism::OutputPool,
        Mechanism::CheckCache,
        Mechanism::SortForSplit,
        Mechanism::SortByBlock,
        Mechanism::FusedCopy,
        Mechanism::StagedBands,
        Mechanism::Prefetch,
        Mechanism::ElementsPrefetch,
        Mechanism::RowSplit,
        Mechanism::TransposeFold,
        Mechanism::BroadcastRowRewrite,
        Mechanism::Bfloat16Check,
    ];

    /// Its name in [`OFF_VAR`].
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::OutputPool => "output_pool",
            Mechanism::CheckCache => "check_cache",
            Mechanism::SortForSplit => "sort_for_split",
            Mechanism::SortByBlock => "sort_by_block",
            Mechanism::FusedCopy => "fused_copy",
            Mechanism::StagedBands => "staged_bands",
            Mechanism::Prefetch => "prefetch",
            Mechanism::ElementsPrefetch => "elements_prefetch",
            Mechanism::RowSplit => "row_split",
            Mechanism::TransposeFold => "transpose_fold",
            Mechanism::BroadcastRowRewrite => "broadcast_row_rewrite",
            Mechanism::Bfloat16Check => "bfloat16_check",
        }
    }

    /// The mechanisms a comma-separated list names, or an error naming
    /// the first unknown name and the known ones.
    pub fn parse_list(list: &str) -> Result<Vec<Mechanism>, String> {
        list.split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(|name| {
                Mechanism::ALL
                    .into_iter()
                    .find(|m| m.name() == name)
                    .ok_or_else(|| {
                        let known: Vec<&str> = Mechanism::ALL.map(Mechanism::name).to_vec();
                        format!(
                            "{OFF_VAR}: unknown mechanism {name:?}; known: {}",
                            known.join(", ")
                        )
                    })
            })
            .collect()
    }

    /// Whether this mechanism runs: always, unless built with the
    /// `ablation` feature and named in [`OFF_VAR`] (read once; an
    /// unreadable list turns nothing off).
    #[inline]
    pub fn is_on(self) -> bool {
        #[cfg(feature = "ablation")]
        {
            static OFF: std::sync::OnceLock<Vec<Mechanism>> = std::sync::OnceLock::new();
            let off = OFF.get_or_init(|| {
                std::env::var(OFF_VAR)
                    .ok()
                    .and_then(|list| Mechanism::parse_list(&list).ok())
                    .unwrap_or_default()
            });
            !off.contains(&self)
        }
        #[cfg(not(feature = "ablation"))]
        {
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mechanism_is_named_once_and_parses_back() {
        let names: Vec<&str> = Mechanism::ALL.map(Mechanism::name).to_vec();
        let list = names.join(",");
        assert_eq!(
            Mechanism::parse_list(&list).unwrap(),
            Mechanism::ALL.to_vec()
        );
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
    }

    #[test]
    fn an_unknown_mechanism_is_named_with_the_known_ones() {
        let err = Mechanism::parse_list("fused_copy, prefetchh").unwrap_err();
        assert!(err.contains("\"prefetchh\""), "{err}");
        assert!(err.contains("known: output_pool,"), "{err}");
        assert_eq!(Mechanism::parse_list(" ").unwrap(), vec![]);
    }
}
