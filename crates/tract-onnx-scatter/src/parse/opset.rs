//! Which attributes and reductions each op allows at each opset: the
//! validation table of the contract ("Validation by opset" in
//! docs/contract.md), as data.

use scatter_kernels::{Reduction, UpdateReduction};

pub use crate::parse::site::ScatterOp;

/// What one op version accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpVersion {
    /// The op this is a version of.
    pub op: ScatterOp,
    /// The op's `since_version` that governs this opset (e.g. 11 for
    /// ScatterElements at opset 12).
    pub since: i64,
    /// The attributes the version defines, by ONNX name; any other is an
    /// error at load.
    pub attributes: &'static [&'static str],
    /// Reductions allowed (ONNX's, and `mean` for the ScatterElements
    /// gradient); empty when the op has no `reduction`, or one of its own
    /// spelling (ScatterElementsUpdate's, checked by its builder).
    pub reductions: &'static [UpdateReduction],
}

const NONE_ADD_MUL: &[UpdateReduction] = &[
    UpdateReduction::Onnx(Reduction::None),
    UpdateReduction::Onnx(Reduction::Add),
    UpdateReduction::Onnx(Reduction::Mul),
];
const ALL_ONNX: &[UpdateReduction] = &[
    UpdateReduction::Onnx(Reduction::None),
    UpdateReduction::Onnx(Reduction::Add),
    UpdateReduction::Onnx(Reduction::Mul),
    UpdateReduction::Onnx(Reduction::Max),
    UpdateReduction::Onnx(Reduction::Min),
];

/// The version of `op` in force at default-domain `opset`, or why there is
/// none.
pub fn op_version(op: ScatterOp, opset: i64) -> Result<OpVersion, String> {
    use ScatterOp::*;
    let v = |since, attributes, reductions| {
        Ok(OpVersion {
            op,
            since,
            attributes,
            reductions,
        })
    };
    let name = op.onnx_name();
    match (op, opset) {
        (Scatter, 9..=10) => v(9, &["axis"], &[]),
        (Scatter, 11..) => {
            Err("Scatter is deprecated since opset 11 and removed; use ScatterElements".to_string())
        }
        (ScatterElements, 11..=12) => v(11, &["axis"], &[]),
        (ScatterElements, 13..=15) => v(13, &["axis"], &[]),
        (ScatterElements, 16..=17) => v(16, &["axis", "reduction"], NONE_ADD_MUL),
        (ScatterElements, 18..) => v(18, &["axis", "reduction"], ALL_ONNX),
        (ScatterNd, 11..=12) => v(11, &[], &[]),
        (ScatterNd, 13..=15) => v(13, &[], &[]),
        (ScatterNd, 16..=17) => v(16, &["reduction"], NONE_ADD_MUL),
        (ScatterNd, 18..) => v(18, &["reduction"], ALL_ONNX),
        (TensorScatter, 24..) => v(24, &["axis", "mode"], &[]),
        // A custom-domain op: the default-domain opset does not govern it.
        (ScatterElementsUpdate, _) => v(12, &["reduction", "use_init_val"], &[]),
        // The training domain's version 1 (see `onnx::scatter_grad`).
        (ScatterElementsGrad, _) => v(
            1,
            &["axis", "reduction", "include_self", "lda_coeff"],
            &UpdateReduction::ALL,
        ),
        (ScatterNdGrad, _) => v(1, &["reduction", "include_self", "lda_coeff"], ALL_ONNX),
        (Scatter, _) => Err(format!("{name} does not exist before opset 9")),
        (ScatterElements | ScatterNd, _) => Err(format!("{name} does not exist before opset 11")),
        (TensorScatter, _) => Err(format!("{name} does not exist before opset 24")),
    }
}

/// The newest default-domain opset this table knows; versions above it
/// behave as it.
pub const NEWEST_OPSET: i64 = 24;

/// The versions of `version.op` after `version`, oldest first (each
/// `since` once).
pub(crate) fn later_versions(version: &OpVersion) -> impl Iterator<Item = OpVersion> + '_ {
    (version.since + 1..=NEWEST_OPSET)
        .filter_map(move |opset| op_version(version.op, opset).ok())
        .filter(move |v| v.since > version.since)
        .scan(version.since, |last, v| {
            let fresh = v.since != *last;
            *last = v.since;
            Some(fresh.then_some(v))
        })
        .flatten()
}

impl OpVersion {
    /// `Op-since`, e.g. `ScatterElements-16`.
    pub(crate) fn label(&self) -> String {
        format!("{}-{}", self.op.onnx_name(), self.since)
    }

    /// The defined attributes, comma-separated, or `no attributes`: what an
    /// error says the version allows.
    pub(crate) fn allowed_attributes(&self) -> String {
        if self.attributes.is_empty() {
            "no attributes".into()
        } else {
            self.attributes.join(", ")
        }
    }

    /// The allowed reductions in their ONNX spelling, comma-separated (empty
    /// when [`Self::reductions`] is): what an error says the version
    /// allows.
    pub(crate) fn allowed_reductions(&self) -> String {
        self.reductions
            .iter()
            .map(|r| r.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_follow_the_readme_table() {
        use ScatterOp::*;
        let since = |op, opset| op_version(op, opset).map(|v| v.since);
        assert_eq!(since(Scatter, 9), Ok(9));
        assert_eq!(since(Scatter, 10), Ok(9));
        assert!(since(Scatter, 11).unwrap_err().contains("deprecated"));
        assert!(
            since(Scatter, 8)
                .unwrap_err()
                .contains("does not exist before opset 9")
        );
        assert!(since(ScatterElements, 10).is_err());
        assert_eq!(since(ScatterElements, 12), Ok(11));
        assert_eq!(since(ScatterElements, 15), Ok(13));
        assert_eq!(since(ScatterElements, 17), Ok(16));
        assert_eq!(since(ScatterElements, 23), Ok(18));
        assert_eq!(since(ScatterNd, 14), Ok(13));
        assert!(since(TensorScatter, 23).is_err());
        assert_eq!(since(TensorScatter, 24), Ok(24));
    }

    #[test]
    fn the_gradient_ops_have_one_version_at_every_opset() {
        use ScatterOp::*;
        for op in [ScatterElementsGrad, ScatterNdGrad] {
            for opset in [1, 11, 18, 24] {
                let v = op_version(op, opset).unwrap();
                assert_eq!(v.since, 1);
                assert!(later_versions(&v).next().is_none());
            }
            assert!(op.is_custom());
        }
        assert_eq!(
            op_version(ScatterNdGrad, 18).unwrap().allowed_reductions(),
            "none, add, mul, max, min"
        );
        assert!(
            op_version(ScatterElementsGrad, 18)
                .unwrap()
                .reductions
                .contains(&UpdateReduction::Mean)
        );
    }

    #[test]
    fn later_versions_list_each_since_once() {
        use ScatterOp::*;
        let since = |op, opset| {
            later_versions(&op_version(op, opset).unwrap())
                .map(|v| v.since)
                .collect::<Vec<_>>()
        };
        assert_eq!(since(ScatterElements, 11), vec![13, 16, 18]);
        assert_eq!(since(ScatterElements, 16), vec![18]);
        assert_eq!(since(ScatterNd, 17), vec![18]);
        assert!(since(ScatterNd, 18).is_empty());
        // Scatter has no later version: ScatterElements replaces it.
        assert!(since(Scatter, 9).is_empty());
    }

    #[test]
    fn reductions_grow_with_the_opset() {
        use ScatterOp::*;
        assert!(
            op_version(ScatterElements, 13)
                .unwrap()
                .reductions
                .is_empty()
        );
        assert_eq!(
            op_version(ScatterNd, 16).unwrap().allowed_reductions(),
            "none, add, mul"
        );
        assert_eq!(
            op_version(ScatterNd, 18).unwrap().allowed_reductions(),
            "none, add, mul, max, min"
        );
    }
}
