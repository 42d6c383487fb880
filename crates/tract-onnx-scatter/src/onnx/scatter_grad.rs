//! The backward-pass ops `ScatterElementsGrad` and `ScatterNDGrad` (domain
//! `tract_onnx_scatter.training`, version 1): builders and the
//! inference-level op.
//!
//! Inputs `(data, indices, updates, grad_output)`, outputs `(grad_data,
//! grad_updates)`; attributes `axis` (ScatterElementsGrad only),
//! `reduction`, `include_self`, `lda_coeff`. The semantics are the
//! kernels' ([`scatter_kernels::grad`]); the contract is README's
//! "Gradient ops" table.

use scatter_kernels::GradSpec;
use tract_hir::internal::*;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;

use crate::onnx::attributes::CheckedNode;
use crate::onnx::deviation::Deviations;
use crate::ops::scatter_grad::{GradKind, LdaCoeff, ScatterGrad, info_line};
use crate::opset::ScatterOp;
use crate::site::NodeSite;

/// The ONNX domain of the gradient ops.
pub const TRAINING_DOMAIN: &str = "tract_onnx_scatter.training";
/// The version of [`TRAINING_DOMAIN`] this crate implements.
pub const TRAINING_DOMAIN_VERSION: i64 = 1;

/// The `ScatterElementsGrad` builder.
pub fn scatter_elements_grad(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    build(ScatterOp::ScatterElementsGrad, ctx, node)
}

/// The `ScatterNDGrad` builder.
pub fn scatter_nd_grad(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    build(ScatterOp::ScatterNdGrad, ctx, node)
}

fn build(
    op: ScatterOp,
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    // No exporter writes these ops: no deviation is ever accepted.
    let checked = CheckedNode::new(op, ctx, node, Deviations::Refuse)?;
    let site = checked.site.clone();
    check_domain_version(&site, ctx, node)?;
    checked.expect_inputs(&["data", "indices", "updates", "grad_output"], &[])?;
    let reduction = checked.onnx_reduction()?;
    let include_self = match checked.int("include_self")? {
        None | Some(1) => true,
        Some(0) => false,
        Some(v) => bail!(site.error(format!("attribute 'include_self' must be 0 or 1, got {v}"))),
    };
    let lda_coeff = match checked.float("lda_coeff")? {
        None => 1.0,
        Some(v) if v.is_finite() => v,
        Some(v) => bail!(site.error(format!(
            "attribute 'lda_coeff' must be a finite float, got {v}"
        ))),
    };
    let kind = match op {
        ScatterOp::ScatterElementsGrad => GradKind::Elements {
            axis: checked.int("axis")?.unwrap_or(0),
        },
        _ => GradKind::Nd,
    };
    Ok((
        expand(InferScatterGrad {
            site,
            kind,
            spec: GradSpec {
                reduction,
                include_self,
            },
            lda_coeff: LdaCoeff(lda_coeff),
        }),
        vec![],
    ))
}

/// A node of the training domain must be read as version 1: a model that
/// imports another version of the domain is refused (the node's domain
/// decides; nodes of another domain, e.g. the default, are not checked).
fn check_domain_version(
    site: &NodeSite,
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<()> {
    if node.domain != TRAINING_DOMAIN {
        return Ok(());
    }
    let imported = ctx
        .model
        .opset_import
        .iter()
        .find(|o| o.domain == TRAINING_DOMAIN)
        .map(|o| o.version);
    match imported {
        Some(v) if v != TRAINING_DOMAIN_VERSION => bail!(site.error(format!(
            "domain '{TRAINING_DOMAIN}' version {v} is not supported; this plugin implements version {TRAINING_DOMAIN_VERSION}"
        ))),
        _ => Ok(()),
    }
}

/// A gradient op before typing: the axis may still be negative.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct InferScatterGrad {
    pub site: NodeSite,
    /// ScatterElementsGrad's axis as written (not yet normalized).
    pub kind: GradKind<i64>,
    pub spec: GradSpec,
    pub lda_coeff: LdaCoeff,
}

impl Expansion for InferScatterGrad {
    fn name(&self) -> StaticName {
        self.site.op.onnx_name().into()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        Ok(vec![info_line(&self.kind, &self.spec, self.lda_coeff)])
    }

    fn nboutputs(&self) -> TractResult<usize> {
        Ok(2)
    }

    fn rules<'r, 'p: 'r, 's: 'r>(
        &'s self,
        s: &mut Solver<'r>,
        inputs: &'p [TensorProxy],
        outputs: &'p [TensorProxy],
    ) -> InferenceResult {
        check_input_arity(inputs, 4)?;
        check_output_arity(outputs, 2)?;
        s.equals(&outputs[0].shape, &inputs[0].shape)?;
        s.equals(&outputs[1].shape, &inputs[2].shape)?;
        s.equals(&outputs[0].datum_type, &inputs[0].datum_type)?;
        s.equals(&outputs[1].datum_type, &inputs[0].datum_type)?;
        Ok(())
    }

    fn wire(
        &self,
        prefix: &str,
        model: &mut TypedModel,
        inputs: &[OutletId],
    ) -> TractResult<TVec<OutletId>> {
        let kind = match self.kind {
            GradKind::Elements { axis } => {
                let rank = model.outlet_fact(inputs[0])?.rank();
                GradKind::Elements {
                    axis: crate::ops::scatter_elements::axis_position(&self.site, axis, rank)?,
                }
            }
            GradKind::Nd => GradKind::Nd,
        };
        let op = ScatterGrad {
            site: self.site.clone(),
            kind,
            spec: self.spec,
            lda_coeff: self.lda_coeff,
        };
        model.wire_node(prefix, op, inputs)
    }
}
