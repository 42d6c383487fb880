//! The home of OpenVINO `ScatterElementsUpdate-12` as an ONNX custom op (any
//! domain): the builder and the inference-level op, the typed op whose axis
//! is an input known only at run time, and its NNEF form. With a constant
//! axis the builder wires [`ScatterElements`] directly, and `declutter`
//! turns the typed op into one as soon as the axis becomes constant; it
//! never pools its output.

use scatter_kernels::{ElementsPlan, Reduction, UpdateReduction};
use tract_hir::internal::*;
use tract_nnef::internal::*;
use tract_onnx::model::OnnxOpRegister;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;

use crate::ops::element_dispatch;
use crate::ops::nnef_args::{data_indices_updates, elements_site, input, inputs3, reduction};
use crate::ops::op_home::OpHome;
use crate::ops::scatter_elements::ScatterElements;
use crate::ops::shapes::sym_dims;
use crate::parse::attributes::CheckedNode;
use crate::parse::data_like;
use crate::parse::deviation::Deviations;
use crate::parse::onnx_types::OnnxElement;
use crate::parse::opset::ScatterOp;
use crate::parse::site::NodeSite;

/// This family as [`crate::ops::HOMES`] lists it.
pub(crate) const HOME: OpHome = OpHome {
    register_onnx,
    register_nnef: Some(register_nnef),
    as_pooled: crate::ops::op_home::never_pooled,
};

fn register_onnx(reg: &mut OnnxOpRegister, deviations: Deviations) {
    // A custom op: no opset versions, no deviations.
    let _ = deviations;
    reg.insert("ScatterElementsUpdate", scatter_elements_update);
}

/// [`ScatterElements`] with OpenVINO's `reduction`/`use_init_val`, taking
/// the axis as a fourth input: an int32/int64 scalar or 1-element tensor in
/// `[-r, r - 1]`, read at run time before anything else is done.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ScatterElementsUpdate {
    /// The node it was built from, named by every error.
    pub(crate) site: NodeSite,
    /// OpenVINO's `reduction`, as the kernels name it (`sum` is `Add`,
    /// `prod` is `Mul`).
    pub(crate) reduction: UpdateReduction,
    /// OpenVINO's `use_init_val`: whether the data value at a written
    /// position is the reduction's first operand.
    pub(crate) use_init_val: bool,
}

/// The value of an axis input: int32/int64, exactly one element.
pub(crate) fn axis_value(
    site: &NodeSite,
    axis: &Tensor,
    symbols: &SymbolValues,
) -> TractResult<i64> {
    let dt = axis.datum_type();
    if !matches!(dt, DatumType::I32 | DatumType::I64 | DatumType::TDim) {
        bail!(site.error(format!(
            "axis: input 'axis' has element type {}, expected int32 or int64",
            crate::ops::element_dispatch::onnx_type(dt)
        )));
    }
    if axis.len() != 1 {
        bail!(site.error(format!(
            "axis: input 'axis' has shape {:?}, expected a scalar or a 1-element tensor",
            axis.shape()
        )));
    }
    let axis = crate::ops::run::input_checks::plain_indices(site, "axis", axis, symbols)?;
    Ok(match axis.datum_type() {
        DatumType::I32 => element_dispatch::slice::<i32>(&axis)?[0] as i64,
        _ => element_dispatch::slice::<i64>(&axis)?[0],
    })
}

impl ScatterElementsUpdate {
    /// The [`ScatterElements`] this op is for `axis` on data of rank `rank`.
    pub(crate) fn with_axis(
        &self,
        axis: &Tensor,
        rank: usize,
        symbols: &SymbolValues,
    ) -> TractResult<ScatterElements> {
        let axis = axis_value(&self.site, axis, symbols)?;
        let axis = crate::ops::run::input_checks::elements_axis(&self.site, axis, rank)?;
        Ok(ScatterElements {
            site: self.site.clone(),
            axis,
            reduction: self.reduction,
            use_init_val: self.use_init_val,
            onnx_element: OnnxElement::Native,
            output_pool: None,
            check_cache: Default::default(),
        })
    }

    fn check_facts(
        &self,
        data: &TypedFact,
        indices: &TypedFact,
        updates: &TypedFact,
        axis: &TypedFact,
    ) -> TractResult<()> {
        let site = &self.site;
        crate::ops::run::input_checks::check_indices_type(site, "indices", indices.datum_type)?;
        crate::ops::run::input_checks::check_same_type(site, data.datum_type, updates.datum_type)?;
        check_openvino_reduction(site, data.datum_type, self.reduction)?;
        if let Some(konst) = &axis.konst
            && crate::ops::run::input_checks::known_indices(site, "axis", konst)?.is_some()
        {
            // A constant axis: the full ScatterElements checks apply now.
            let op = self.with_axis(konst, data.rank(), &SymbolValues::default())?;
            op.output_facts(&[data, indices, updates])?;
            return Ok(());
        }
        if !matches!(
            axis.datum_type,
            DatumType::I32 | DatumType::I64 | DatumType::TDim
        ) {
            bail!(site.error(format!(
                "axis: input 'axis' has element type {}, expected int32 or int64",
                crate::ops::element_dispatch::onnx_type(axis.datum_type)
            )));
        }
        if let Ok(n) = axis.shape.volume().to_i64()
            && n != 1
        {
            bail!(site.error(format!(
                "axis: input 'axis' has shape {:?}, expected a scalar or a 1-element tensor",
                axis.shape
            )));
        }
        // The axis waits for the run; ScatterElements' rules that do not
        // need it apply now, in its words.
        let (d, i, u) = (sym_dims(data), sym_dims(indices), sym_dims(updates));
        ElementsPlan::check_shapes(&d, &i, &u, None).map_err(|e| site.scatter_error(e))?;
        Ok(())
    }
}

impl Op for ScatterElementsUpdate {
    fn name(&self) -> StaticName {
        "ScatterElementsUpdate".into()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        Ok(vec![format!(
            "axis: (input) reduction: {} use_init_val: {}",
            self.reduction, self.use_init_val
        )])
    }

    op_as_typed_op!();
}

fn check_arity(site: &NodeSite, n: usize) -> TractResult<()> {
    if n != 4 {
        bail!(site.error(format!(
            "expects 4 inputs (data, indices, updates, axis), got {n}"
        )));
    }
    Ok(())
}

impl EvalOp for ScatterElementsUpdate {
    op_out_of_plan!();

    fn eval(&self, ctx: &EvalContext, mut inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        check_arity(&self.site, inputs.len())?;
        let axis = inputs.pop().expect("4 inputs");
        let op = self.with_axis(&axis, inputs[0].rank(), ctx.symbols)?;
        op.eval(ctx, inputs)
    }
}

impl TypedOp for ScatterElementsUpdate {
    as_op!();

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        check_arity(&self.site, inputs.len())?;
        self.check_facts(inputs[0], inputs[1], inputs[2], inputs[3])?;
        Ok(tvec!(inputs[0].datum_type.fact(inputs[0].shape.clone())))
    }

    /// A constant axis makes this a plain [`ScatterElements`].
    fn declutter(
        &self,
        model: &TypedModel,
        node: &TypedNode,
    ) -> TractResult<Option<TypedModelPatch>> {
        let facts = model.node_input_facts(node.id)?;
        rule_if!(facts.len() == 4);
        rule_if_some!(axis = &facts[3].konst);
        rule_if_some!(
            _known = crate::ops::run::input_checks::known_indices(&self.site, "axis", axis)?
        );
        let op = self.with_axis(axis, facts[0].rank(), &SymbolValues::default())?;
        Ok(Some(TypedModelPatch::replace_single_op(
            model,
            node,
            &node.inputs[..3],
            op,
        )?))
    }

    fn cost(&self, inputs: &[&TypedFact]) -> TractResult<TVec<(Cost, TDim)>> {
        Ok(tvec!((
            Cost::Buffer(inputs[0].datum_type),
            inputs[2].shape.volume()
        )))
    }
}

// The ONNX builder and the inference-level op.

/// OpenVINO's reduction names, in the order messages list them.
const REDUCTIONS: [(&str, UpdateReduction); 6] = [
    ("none", UpdateReduction::Onnx(Reduction::None)),
    ("sum", UpdateReduction::Onnx(Reduction::Add)),
    ("prod", UpdateReduction::Onnx(Reduction::Mul)),
    ("min", UpdateReduction::Onnx(Reduction::Min)),
    ("max", UpdateReduction::Onnx(Reduction::Max)),
    ("mean", UpdateReduction::Mean),
];

/// Refuses a reduction the data's element type cannot do, in OpenVINO's
/// words: the kernels name reductions as ONNX does (`add`, `mul`), this
/// op's model names them `sum`, `prod`, and lists `mean` among them.
fn check_openvino_reduction(
    site: &NodeSite,
    dt: DatumType,
    reduction: UpdateReduction,
) -> TractResult<()> {
    let can = |r: UpdateReduction| {
        crate::ops::run::input_checks::check_reduction_for(site, dt, OnnxElement::Native, r).is_ok()
    };
    if can(reduction) {
        return Ok(());
    }
    let name = |r: UpdateReduction| {
        REDUCTIONS
            .iter()
            .find(|(_, known)| *known == r)
            .map_or("?", |(name, _)| *name)
    };
    let supported: Vec<&str> = REDUCTIONS
        .iter()
        .filter(|(_, r)| can(*r))
        .map(|(name, _)| *name)
        .collect();
    bail!(site.error(format!(
        "reduction '{}' is not supported for {} data (supported: {})",
        name(reduction),
        element_dispatch::onnx_type(dt),
        if supported.is_empty() {
            "none of them".to_string()
        } else {
            supported.join(", ")
        }
    )))
}

/// The builder of `ScatterElementsUpdate` (any domain): inputs `data`,
/// `indices`, `updates`, `axis`; attributes `reduction` (OpenVINO's
/// spelling: none, sum, prod, min, max, mean) and `use_init_val` (0 or 1,
/// default 1). An error names the node, the attribute and its value.
pub(crate) fn scatter_elements_update(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let node = CheckedNode::new(
        ScatterOp::ScatterElementsUpdate,
        ctx,
        node,
        Deviations::Refuse,
    )?;
    node.expect_inputs(&["data", "indices", "updates", "axis"], &[])?;
    let reduction = match node.string("reduction")? {
        None => UpdateReduction::NONE,
        Some(value) => REDUCTIONS
            .iter()
            .find(|(name, _)| *name == value)
            .map(|(_, r)| *r)
            .ok_or_else(|| {
                let allowed: Vec<&str> = REDUCTIONS.iter().map(|(name, _)| *name).collect();
                node.site.error(format!(
                    "reduction '{value}' is not allowed by {}; allowed: {}",
                    node.version.label(),
                    allowed.join(", ")
                ))
            })?,
    };
    let use_init_val = match node.int("use_init_val")? {
        None | Some(1) => true,
        Some(0) => false,
        Some(v) => bail!(
            node.site
                .error(format!("attribute 'use_init_val' must be 0 or 1, got {v}"))
        ),
    };
    Ok((
        expand(data_like::DataLike(InferScatterElementsUpdate {
            site: node.site,
            reduction,
            use_init_val,
        })),
        vec![],
    ))
}

/// ScatterElementsUpdate before typing: the axis is the fourth input.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub(crate) struct InferScatterElementsUpdate {
    /// The node it was built from, named by every error.
    pub(crate) site: NodeSite,
    /// OpenVINO's `reduction`, as the kernels name it.
    pub(crate) reduction: UpdateReduction,
    /// OpenVINO's `use_init_val`.
    pub(crate) use_init_val: bool,
}

impl data_like::DataLikeScatter for InferScatterElementsUpdate {
    const INPUTS: usize = 4;

    fn site(&self) -> &NodeSite {
        &self.site
    }

    fn info(&self) -> String {
        format!(
            "reduction: {} use_init_val: {}",
            self.reduction, self.use_init_val
        )
    }

    fn wire_typed(
        &self,
        prefix: &str,
        model: &mut TypedModel,
        inputs: &[OutletId],
    ) -> TractResult<TVec<OutletId>> {
        let (data, updates) = (inputs[0], inputs[2]);
        let op = ScatterElementsUpdate {
            site: self.site.clone(),
            reduction: self.reduction,
            use_init_val: self.use_init_val,
        };
        let axis = model.outlet_fact(inputs[3])?.konst.clone();
        // A constant axis holding a symbol only the run binds stays an input.
        let known = |axis: &Arc<Tensor>| {
            crate::ops::run::input_checks::known_indices(&self.site, "axis", axis)
                .map(|k| k.is_some())
        };
        if let Some(axis) = axis.filter(|a| known(a).unwrap_or(true)) {
            let rank = model.outlet_fact(data)?.rank();
            model.wire_node(
                prefix,
                op.with_axis(&axis, rank, &SymbolValues::default())?,
                &[data, inputs[1], updates],
            )
        } else {
            model.wire_node(prefix, op, &[data, inputs[1], updates, inputs[3]])
        }
    }
}

// The NNEF form.

/// The NNEF primitive of [`ScatterElementsUpdate`] (the axis as a tensor
/// input, known at run time).
pub(crate) const SCATTER_ELEMENTS_UPDATE: &str = "tract_onnx_scatter_elements_update";

/// Registers the NNEF primitive [`SCATTER_ELEMENTS_UPDATE`] and its dumper.
fn register_nnef(registry: &mut Registry) {
    registry.register_dumper(dump_scatter_elements_update);
    registry
        .register_primitive(
            SCATTER_ELEMENTS_UPDATE,
            &[
                TypeName::Scalar.tensor().named("input"),
                TypeName::Integer.tensor().named("indices"),
                TypeName::Scalar.tensor().named("updates"),
                TypeName::Integer.tensor().named("axis"),
                TypeName::String.named("reduction").default("none"),
                TypeName::Logical.named("use_init_val").default(true),
                TypeName::String
                    .named("onnx_op")
                    .default("ScatterElementsUpdate"),
            ],
            &[("output", TypeName::Scalar.tensor())],
            load_scatter_elements_update,
        )
        .with_doc("OpenVINO ScatterElementsUpdate whose axis is a tensor known only at run time.");
}

fn dump_scatter_elements_update(
    ast: &mut IntoAst,
    node: &TypedNode,
    op: &ScatterElementsUpdate,
) -> TractResult<Option<Arc<RValue>>> {
    let [data, indices, updates] = inputs3(ast, node)?;
    let axis = input(ast, node, 3)?;
    let mut attributes = vec![("reduction", string(op.reduction.as_str()))];
    if !op.use_init_val {
        attributes.push(("use_init_val", logical(false)));
    }
    if op.site.op != ScatterOp::ScatterElementsUpdate {
        attributes.push(("onnx_op", string(op.site.op.onnx_name())));
    }
    Ok(Some(invocation(
        SCATTER_ELEMENTS_UPDATE,
        &[data, indices, updates, axis],
        &attributes,
    )))
}

fn load_scatter_elements_update(
    builder: &mut ModelBuilder,
    invocation: &ResolvedInvocation,
) -> TractResult<Value> {
    let [data, indices, updates] = data_indices_updates(builder, invocation)?;
    let axis: OutletId = invocation.named_arg_as(builder, "axis")?;
    let reduction_name: String = invocation.named_arg_as(builder, "reduction")?;
    let use_init_val: bool = invocation.named_arg_as(builder, "use_init_val")?;
    let site = elements_site(builder, invocation, SCATTER_ELEMENTS_UPDATE)?;
    let reduction = reduction(&site, &reduction_name)?;
    builder.wire(
        ScatterElementsUpdate {
            site,
            reduction,
            use_init_val,
        },
        &[data, indices, updates, axis],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::opset::ScatterOp;

    fn op(reduction: impl Into<UpdateReduction>, use_init_val: bool) -> ScatterElementsUpdate {
        ScatterElementsUpdate {
            site: NodeSite::new(ScatterOp::ScatterElementsUpdate, "seu", None),
            reduction: reduction.into(),
            use_init_val,
        }
    }

    fn run(op: &ScatterElementsUpdate, axis: Tensor) -> TractResult<Tensor> {
        let inputs = tvec!(
            tensor1(&[2i32, 3, 4, 6]).into_tvalue(),
            tensor1(&[1i64, 0, 0, 2, 3, 2]).into_tvalue(),
            tensor1(&[10i32, 20, 30, 40, 70, 60]).into_tvalue(),
            axis.into_tvalue()
        );
        Ok(op
            .eval(&EvalContext::out_of_plan(), inputs)?
            .remove(0)
            .into_tensor())
    }

    #[test]
    fn the_openvino_spec_example_runs_with_an_axis_read_at_run_time() {
        assert_eq!(
            run(&op(Reduction::Add, false), tensor0(0i64)).unwrap(),
            tensor1(&[50i32, 10, 100, 70])
        );
        assert_eq!(
            run(&op(Reduction::Add, false), tensor1(&[-1i32])).unwrap(),
            tensor1(&[50i32, 10, 100, 70])
        );
    }

    #[test]
    fn a_bad_axis_input_is_an_axis_error() {
        for axis in [
            tensor0(1i64),
            tensor0(-2i32),
            tensor1(&[0i64, 0]),
            tensor0(0f32),
        ] {
            let err = run(&op(Reduction::None, true), axis)
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with("ScatterElementsUpdate node 'seu': axis"),
                "{err}"
            );
        }
    }

    #[test]
    fn declutter_turns_a_constant_axis_into_scatter_elements() {
        let mut model = TypedModel::default();
        let data = model.add_source("data", f32::fact([2, 3])).unwrap();
        let indices = model.add_const("indices", tensor2(&[[0i64, 2]])).unwrap();
        let updates = model.add_source("updates", f32::fact([1, 2])).unwrap();
        let axis = model.add_const("axis", tensor0(-1i64)).unwrap();
        let out = model
            .wire_node(
                "seu",
                op(UpdateReduction::Mean, false),
                &[data, indices, updates, axis],
            )
            .unwrap();
        model.select_output_outlets(&out).unwrap();
        let model = model.into_decluttered().unwrap();
        let se = model
            .nodes()
            .iter()
            .find_map(|n| n.op_as::<ScatterElements>())
            .expect("a ScatterElements");
        assert_eq!(
            (se.axis, se.reduction, se.use_init_val),
            (1, UpdateReduction::Mean, false)
        );
        assert!(
            model
                .nodes()
                .iter()
                .all(|n| n.op_as::<ScatterElementsUpdate>().is_none())
        );
    }

    #[test]
    fn bool_mean_is_refused_by_the_facts() {
        let data = bool::fact([2]);
        let indices = i64::fact([1]);
        let axis = i64::fact([1]);
        let err = op(UpdateReduction::Mean, true)
            .output_facts(&[&data, &indices, &data, &axis])
            .unwrap_err();
        // OpenVINO's names of the reductions bool data can do, not ONNX's.
        assert!(
            format!("{err:#}").ends_with(
                "reduction 'mean' is not supported for bool data (supported: none, sum, prod, min, max)"
            ),
            "{err:#}"
        );
    }
}

#[cfg(test)]
/// The builder's attribute checks.
mod builder_tests {
    use super::*;
    use tract_onnx::pb::{AttributeProto, attribute_proto::AttributeType};

    fn build(attrs: Vec<AttributeProto>) -> TractResult<InferScatterElementsUpdate> {
        // A builder sees tract's framework (the loader has run before it).
        let onnx = crate::onnx().into_tract_without_loader();
        let ctx = ParsingContext {
            onnx_operator_set_version: 18,
            framework: &onnx,
            model: &Default::default(),
            parent_graphs: vec![],
            model_dir: None,
            template: InferenceModel::default(),
        };
        let node = NodeProto {
            op_type: "ScatterElementsUpdate".into(),
            name: "seu".into(),
            input: ["data", "indices", "updates", "axis"]
                .map(String::from)
                .to_vec(),
            output: vec!["out".into()],
            attribute: attrs,
            ..Default::default()
        };
        let (op, _) = scatter_elements_update(&ctx, &node)?;
        let op = op
            .as_op()
            .downcast_ref::<Box<dyn Expansion>>()
            .expect("an expansion");
        let op = tract_core::downcast_rs::Downcast::as_any(&**op);
        Ok(op
            .downcast_ref::<data_like::DataLike<InferScatterElementsUpdate>>()
            .expect("this expansion")
            .0
            .clone())
    }

    fn string(name: &str, value: &str) -> AttributeProto {
        AttributeProto {
            name: name.into(),
            r#type: AttributeType::String as i32,
            s: value.as_bytes().to_vec(),
            ..Default::default()
        }
    }

    fn int(name: &str, value: i64) -> AttributeProto {
        AttributeProto {
            name: name.into(),
            r#type: AttributeType::Int as i32,
            i: value,
            ..Default::default()
        }
    }

    #[test]
    fn openvino_reduction_names_map_to_the_kernel_reductions() {
        assert_eq!(build(vec![]).unwrap().reduction, Reduction::None);
        assert!(build(vec![]).unwrap().use_init_val);
        assert_eq!(
            build(vec![string("reduction", "sum")]).unwrap().reduction,
            Reduction::Add
        );
        assert_eq!(
            build(vec![string("reduction", "prod")]).unwrap().reduction,
            Reduction::Mul
        );
        let op = build(vec![string("reduction", "mean"), int("use_init_val", 0)]).unwrap();
        assert_eq!(
            (op.reduction, op.use_init_val),
            (UpdateReduction::Mean, false)
        );
    }

    #[test]
    fn onnx_reduction_names_are_refused_with_the_allowed_list() {
        let err = build(vec![string("reduction", "add")])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("reduction 'add'") && err.contains("none, sum, prod, min, max, mean"),
            "{err}"
        );
    }

    #[test]
    fn use_init_val_must_be_zero_or_one() {
        let err = build(vec![int("use_init_val", 2)]).unwrap_err().to_string();
        assert!(err.contains("use_init_val") && err.contains('2'), "{err}");
    }
}
