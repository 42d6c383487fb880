//! ONNX `GlobalLpPool`: `Y = (Σ |X|^p)^(1/p)` over the spatial axes.
//!
//! tract 0.23.9 divides the sum by the number of spatial elements (its
//! average pool's normalization) and drops the absolute value for odd `p`:
//! a wrong value without an error. It also stops on a symbolic spatial
//! dim. The override computes ONNX's norm; a float16 input is summed in
//! float32 and rounded once, as onnxruntime does.

use tract_core::ops::cast::cast;
use tract_core::ops::change_axes::wire_with_rank_broadcast;
use tract_core::ops::math::{abs, pow, sqrt, square};
use tract_hir::infer::*;
use tract_hir::internal::*;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;

/// The builder registered for `GlobalLpPool`: `p` (default 2) must be a
/// positive integer.
pub(crate) fn global_lp_pool(
    _ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let p: i64 = node.get_attr_opt("p")?.unwrap_or(2);
    ensure!(
        p >= 1,
        "GlobalLpPool node {:?}: attribute p is {p}, valid values are integers >= 1",
        node.name
    );
    Ok((expand(GlobalLpPool { p }), vec![]))
}

/// ONNX's `GlobalLpPool` of order `p` (at least 1).
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub(crate) struct GlobalLpPool {
    /// The norm's order.
    pub(crate) p: i64,
}

impl Expansion for GlobalLpPool {
    fn name(&self) -> StaticName {
        "GlobalLpPool".into()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        Ok(vec![format!("p: {}", self.p)])
    }

    fn rules<'r, 'p: 'r, 's: 'r>(
        &'s self,
        s: &mut Solver<'r>,
        inputs: &'p [TensorProxy],
        outputs: &'p [TensorProxy],
    ) -> InferenceResult {
        check_input_arity(inputs, 1)?;
        check_output_arity(outputs, 1)?;
        s.equals(&outputs[0].datum_type, &inputs[0].datum_type)?;
        s.equals(&outputs[0].rank, &inputs[0].rank)?;
        s.equals(&outputs[0].shape[0], &inputs[0].shape[0])?;
        s.equals(&outputs[0].shape[1], &inputs[0].shape[1])?;
        s.given(&inputs[0].rank, move |s, rank| {
            for i in 2..rank {
                s.equals(&outputs[0].shape[i as usize], TDim::from(1))?;
            }
            Ok(())
        })
    }

    fn wire(
        &self,
        name: &str,
        model: &mut TypedModel,
        inputs: &[OutletId],
    ) -> TractResult<TVec<OutletId>> {
        let [input] = inputs else {
            bail!(
                "GlobalLpPool {name:?}: expected 1 input, got {}",
                inputs.len()
            );
        };
        let fact = model.outlet_fact(*input)?.clone();
        ensure!(
            fact.datum_type.is_float(),
            "GlobalLpPool {name:?}: input is {:?}, valid types are float16, float32 and float64",
            fact.datum_type
        );
        ensure!(
            fact.rank() >= 2,
            "GlobalLpPool {name:?}: input has rank {}, valid ranks are 2 and more",
            fact.rank()
        );
        // float16 partial sums drift; onnxruntime sums in float32.
        let compute = if fact.datum_type == DatumType::F16 {
            DatumType::F32
        } else {
            fact.datum_type
        };
        let mut wire = *input;
        if compute != fact.datum_type {
            wire = model.wire_node(format!("{name}.in_f32"), cast(compute), &[wire])?[0];
        }
        let scalar = |model: &mut TypedModel, suffix: &str, v: f64| -> TractResult<OutletId> {
            let t = tensor0(v).cast_to_dt(compute)?.into_owned();
            model.add_const(format!("{name}.{suffix}"), t)
        };
        wire = if self.p == 2 {
            model.wire_node(format!("{name}.sqr"), square(), &[wire])?[0]
        } else {
            let abs = model.wire_node(format!("{name}.abs"), abs(), &[wire])?[0];
            let p = scalar(model, "p", self.p as f64)?;
            wire_with_rank_broadcast(format!("{name}.pow"), model, pow(), &[abs, p])?[0]
        };
        let axes = (2..fact.rank()).collect();
        wire = model.wire_node(
            format!("{name}.sum"),
            tract_core::ops::nn::Reduce::new(axes, tract_core::ops::nn::Reducer::Sum),
            &[wire],
        )?[0];
        wire = if self.p == 2 {
            model.wire_node(format!("{name}.sqrt"), sqrt(), &[wire])?[0]
        } else {
            let inv = scalar(model, "inv_p", (self.p as f64).recip())?;
            wire_with_rank_broadcast(format!("{name}.root"), model, pow(), &[wire, inv])?[0]
        };
        if compute != fact.datum_type {
            wire = model.wire_node(format!("{name}.out_f16"), cast(fact.datum_type), &[wire])?[0];
        }
        Ok(tvec!(wire))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(p: i64, dt: DatumType, x: Tensor) -> TractResult<Tensor> {
        let mut model = TypedModel::default();
        let source = model.add_source("x", dt.fact(x.shape()))?;
        let out = GlobalLpPool { p }.wire("pool", &mut model, &[source])?;
        model.select_output_outlets(&out)?;
        let plan = model.into_runnable()?;
        let x = x.cast_to_dt(dt)?.into_owned();
        Ok(plan.run(tvec!(x.into_tvalue()))?.remove(0).into_tensor())
    }

    #[test]
    fn the_norm_is_not_divided_by_the_spatial_size() {
        let x = Tensor::from_shape(&[1, 2, 2, 2], &[3f32, 4., 0., 0., 1., 1., 1., 1.]).unwrap();
        let y = pool(2, DatumType::F32, x).unwrap();
        assert_eq!(y, Tensor::from_shape(&[1, 2, 1, 1], &[5f32, 2.]).unwrap());
    }

    #[test]
    fn an_odd_order_sums_absolute_values() {
        let x = Tensor::from_shape(&[1, 1, 3], &[-1f32, -1., 2.]).unwrap();
        let y = pool(1, DatumType::F32, x.clone()).unwrap();
        assert_eq!(y, Tensor::from_shape(&[1, 1, 1], &[4f32]).unwrap());
        let y = pool(3, DatumType::F32, x).unwrap();
        let expected = Tensor::from_shape(&[1, 1, 1], &[10f32.powf(1. / 3.)]).unwrap();
        y.close_enough(&expected, Approximation::Close).unwrap();
    }

    #[test]
    fn a_float16_input_gives_a_float16_output() {
        let x = Tensor::from_shape(&[1, 1, 2], &[3f32, 4.]).unwrap();
        let y = pool(2, DatumType::F16, x).unwrap();
        assert_eq!(y.datum_type(), DatumType::F16);
        let y = y.cast_to::<f32>().unwrap().into_owned();
        assert_eq!(y, Tensor::from_shape(&[1, 1, 1], &[5f32]).unwrap());
    }

    #[test]
    fn an_order_below_one_is_an_error_naming_the_node() {
        let node = NodeProto {
            name: "pool".into(),
            op_type: "GlobalLpPool".into(),
            attribute: vec![tract_onnx::pb::AttributeProto {
                name: "p".into(),
                r#type: tract_onnx::pb::attribute_proto::AttributeType::Int as i32,
                i: 0,
                ..Default::default()
            }],
            ..Default::default()
        };
        let onnx = tract_onnx::onnx();
        let ctx = ParsingContext {
            onnx_operator_set_version: 13,
            framework: &onnx,
            model: &Default::default(),
            parent_graphs: vec![],
            model_dir: None,
            template: InferenceModel::default(),
        };
        let err = global_lp_pool(&ctx, &node).err().unwrap().to_string();
        assert_eq!(
            err,
            "GlobalLpPool node \"pool\": attribute p is 0, valid values are integers >= 1"
        );
    }
}
