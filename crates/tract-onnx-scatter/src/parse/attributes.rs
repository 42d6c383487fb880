//! Attribute validation shared by the ONNX builders: every attribute must
//! be one the op version defines, with the right type and an allowed value.

use scatter_kernels::{Reduction, UpdateReduction};
use tract_hir::internal::*;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::attribute_proto::AttributeType;
use tract_onnx::pb::tensor_proto::DataType;
use tract_onnx::pb::{AttributeProto, NodeProto};

use crate::parse::deviation::{self, Deviations};
use crate::parse::onnx_types::OnnxElement;
use crate::parse::opset::{OpVersion, ScatterOp, later_versions, op_version};
use crate::parse::site::NodeSite;

/// The node name tract gives the node: its name, else its first output.
fn node_name(node: &NodeProto) -> String {
    if !node.name.is_empty() {
        node.name.clone()
    } else if let Some(out) = node.output.first().filter(|o| !o.is_empty()) {
        out.clone()
    } else {
        node.op_type.clone()
    }
}

/// A node whose op exists at the model's opset and carries only attributes
/// its version defines.
pub(crate) struct CheckedNode<'a> {
    /// The ONNX node as the model holds it.
    pub(crate) node: &'a NodeProto,
    /// The version the node is built with: the one its opset declares, or,
    /// for an exporter deviation accepted, the later one that allows it.
    pub(crate) version: OpVersion,
    /// Where the node sits, for every error of the op built from it.
    pub(crate) site: NodeSite,
}

impl<'a> CheckedNode<'a> {
    /// Checks `node` against the version of `op` in force at the model's
    /// opset. With `deviations` = [`Deviations::Accept`], a node that only a
    /// later version of the same op accepts as written (a reduction that
    /// version introduced) is built with that version's semantics and one
    /// warning (see [`crate::parse::deviation`]); with `Refuse`, it is the
    /// error the declared version gives.
    pub(crate) fn new(
        op: ScatterOp,
        ctx: &ParsingContext,
        node: &'a NodeProto,
        deviations: Deviations,
    ) -> TractResult<Self> {
        let opset = ctx.onnx_operator_set_version;
        let site_opset = (!op.is_custom()).then_some(opset);
        let site = NodeSite::new(op, node_name(node), site_opset);
        let declared = op_version(op, opset).map_err(|e| site.error(e))?;
        for (i, attr) in node.attribute.iter().enumerate() {
            // ONNX forbids repeated names; reading the first would hide the rest.
            if node.attribute[..i].iter().any(|a| a.name == attr.name) {
                bail!(site.error(format!(
                    "attribute '{}' is given more than once (again with value {})",
                    attr.name,
                    describe_value(attr)
                )));
            }
        }
        let refusal = match check_against(&declared, node) {
            Ok(()) => {
                return Ok(CheckedNode {
                    node,
                    version: declared,
                    site,
                });
            }
            Err(refusal) => refusal,
        };
        if deviations == Deviations::Accept
            && let Some(later) = later_versions(&declared).find(|v| check_against(v, node).is_ok())
        {
            deviation::warn(&site, &declared, &later, &refusal);
            return Ok(CheckedNode {
                node,
                version: later,
                site,
            });
        }
        bail!(site.error(refusal))
    }

    /// Requires exactly the given inputs (`optional` trailing ones may be
    /// absent or empty).
    pub(crate) fn expect_inputs(&self, required: &[&str], optional: &[&str]) -> TractResult<usize> {
        let given = self
            .node
            .input
            .iter()
            .rposition(|i| !i.is_empty())
            .map_or(0, |p| p + 1);
        let all: Vec<&str> = required.iter().chain(optional).copied().collect();
        if given < required.len() || given > all.len() {
            bail!(self.site.error(format!(
                "expects inputs ({}){}, got {given}",
                required.join(", "),
                if optional.is_empty() {
                    String::new()
                } else {
                    format!(" and optionally ({})", optional.join(", "))
                }
            )));
        }
        if let Some(p) = self.node.input[..required.len()]
            .iter()
            .position(|i| i.is_empty())
        {
            bail!(
                self.site
                    .error(format!("input '{}' is required but empty", required[p]))
            );
        }
        Ok(given)
    }

    /// The ONNX element type the loader marked the node with
    /// ([`ONNX_ELEM_TYPE`]); [`OnnxElement::Native`] when unmarked.
    pub(crate) fn onnx_element(&self) -> TractResult<OnnxElement> {
        let Some(attr) = self.attr(ONNX_ELEM_TYPE) else {
            return Ok(OnnxElement::Native);
        };
        match DataType::try_from(attr.i as i32) {
            Ok(DataType::Bfloat16) => Ok(OnnxElement::Bfloat16),
            Ok(DataType::Complex64 | DataType::Complex128) => Ok(OnnxElement::Complex),
            _ => bail!(self.site.error(format!(
                "attribute '{ONNX_ELEM_TYPE}' is {}; the loader sets it to bfloat16 (16), complex64 (14) or complex128 (15)",
                attr.i
            ))),
        }
    }

    fn attr(&self, name: &str) -> Option<&'a AttributeProto> {
        self.node.attribute.iter().find(|a| a.name == name)
    }

    /// An `INT` attribute.
    pub(crate) fn int(&self, name: &str) -> TractResult<Option<i64>> {
        let Some(attr) = self.attr(name) else {
            return Ok(None);
        };
        match attr_type(attr) {
            Some(AttributeType::Int) => Ok(Some(attr.i)),
            _ => bail!(self.site.error(format!(
                "attribute '{name}' must be an int, got {} (value {})",
                type_name(attr),
                describe_value(attr)
            ))),
        }
    }

    /// A `FLOAT` attribute.
    pub(crate) fn float(&self, name: &str) -> TractResult<Option<f32>> {
        let Some(attr) = self.attr(name) else {
            return Ok(None);
        };
        match attr_type(attr) {
            Some(AttributeType::Float) => Ok(Some(attr.f)),
            _ => bail!(self.site.error(format!(
                "attribute '{name}' must be a float, got {} (value {})",
                type_name(attr),
                describe_value(attr)
            ))),
        }
    }

    /// A `STRING` attribute, as UTF-8.
    pub(crate) fn string(&self, name: &str) -> TractResult<Option<String>> {
        let Some(attr) = self.attr(name) else {
            return Ok(None);
        };
        match attr_type(attr) {
            Some(AttributeType::String) => {
                String::from_utf8(attr.s.clone()).map(Some).map_err(|_| {
                    self.site
                        .error(format!("attribute '{name}' is not valid UTF-8"))
                })
            }
            _ => bail!(self.site.error(format!(
                "attribute '{name}' must be a string, got {} (value {})",
                type_name(attr),
                describe_value(attr)
            ))),
        }
    }

    /// The `reduction` attribute of an ONNX op (ScatterElements,
    /// ScatterND, the ScatterND gradient), checked against the version's
    /// list.
    pub(crate) fn onnx_reduction(&self) -> TractResult<Reduction> {
        self.reduction(Reduction::None, Reduction::from_onnx)
    }

    /// The `reduction` attribute of the ScatterElements gradient, which
    /// also has `mean`, checked against the version's list.
    pub(crate) fn update_reduction(&self) -> TractResult<UpdateReduction> {
        self.reduction(UpdateReduction::NONE, UpdateReduction::from_name)
    }

    /// The `reduction` attribute parsed by `parse` (`absent` when not
    /// given), `Err` unless the version's list allows it.
    fn reduction<R: Copy + Into<UpdateReduction>>(
        &self,
        absent: R,
        parse: fn(&str) -> Option<R>,
    ) -> TractResult<R> {
        let Some(value) = self.string("reduction")? else {
            return Ok(absent);
        };
        match parse(&value) {
            Some(r) if self.version.reductions.contains(&r.into()) => Ok(r),
            _ => bail!(self.site.error(format!(
                "reduction '{value}' is not allowed by {}; allowed: {}",
                self.version.label(),
                self.version.allowed_reductions()
            ))),
        }
    }
}

/// The attribute the loader gives a scatter whose float data hold values
/// of an ONNX type tract lacks: an int, the ONNX `DataType` of those
/// values (bfloat16 from [`crate::load::bfloat16`], complex64 or
/// complex128 from [`crate::load::complex`]). Not an ONNX attribute: no
/// op version lists it, and [`CheckedNode`] reads it apart from the op's
/// own.
pub(crate) const ONNX_ELEM_TYPE: &str = "tract_onnx_scatter.elem_type";

/// Why `version` refuses `node` as written (an attribute it does not define,
/// a reduction value it does not allow), in the words of the error.
fn check_against(version: &OpVersion, node: &NodeProto) -> Result<(), String> {
    // Undefined attributes first: they are the graver fault, and no later
    // version can excuse one that no version defines.
    if let Some(attr) = node
        .attribute
        .iter()
        .find(|a| a.name != ONNX_ELEM_TYPE && !version.attributes.contains(&a.name.as_str()))
    {
        return Err(format!(
            "attribute '{}' (value {}) is not defined by {}; it allows: {}",
            attr.name,
            describe_value(attr),
            version.label(),
            version.allowed_attributes()
        ));
    }
    // A reduction of the wrong type or not UTF-8 is reported by
    // `onnx_reduction`, in both modes.
    // Ops with a reduction vocabulary of their own (ScatterElementsUpdate's
    // sum/prod/mean) list no ONNX reductions: their builder checks it.
    let reduction = node.attribute.iter().find(|a| a.name == "reduction");
    if let Some(attr) = reduction.filter(|_| !version.reductions.is_empty())
        && attr_type(attr) == Some(AttributeType::String)
        && let Ok(value) = std::str::from_utf8(&attr.s)
    {
        match UpdateReduction::from_name(value) {
            Some(r) if version.reductions.contains(&r) => (),
            _ => {
                return Err(format!(
                    "reduction '{value}' is not allowed by {}; allowed: {}",
                    version.label(),
                    version.allowed_reductions()
                ));
            }
        }
    }
    Ok(())
}

fn attr_type(attr: &AttributeProto) -> Option<AttributeType> {
    match AttributeType::try_from(attr.r#type).ok()? {
        // IR < 3 models may leave the type unset: infer it from the payload.
        AttributeType::Undefined => {
            if !attr.s.is_empty() {
                Some(AttributeType::String)
            } else if attr.f != 0.0 {
                Some(AttributeType::Float)
            } else if attr.t.is_none()
                && attr.ints.is_empty()
                && attr.floats.is_empty()
                && attr.strings.is_empty()
            {
                Some(AttributeType::Int)
            } else {
                None
            }
        }
        t => Some(t),
    }
}

fn type_name(attr: &AttributeProto) -> String {
    attr_type(attr).map_or_else(
        || "an attribute of undefined type".to_string(),
        |t| format!("{t}"),
    )
}

/// A short rendering of an attribute's value for messages.
fn describe_value(attr: &AttributeProto) -> String {
    match attr_type(attr) {
        Some(AttributeType::Int) => attr.i.to_string(),
        Some(AttributeType::Float) => attr.f.to_string(),
        Some(AttributeType::String) => format!("{:?}", String::from_utf8_lossy(&attr.s)),
        Some(AttributeType::Ints) => format!("{:?}", attr.ints),
        Some(AttributeType::Floats) => format!("{:?}", attr.floats),
        Some(t) => format!("of type {t}"),
        None => "of undefined type".into(),
    }
}
