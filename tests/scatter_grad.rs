//! The training-domain gradient ops `ScatterElementsGrad` and
//! `ScatterNDGrad` through `onnx()`: the autograd golden cases
//! (`onnx-testdata/autograd/`, expected outputs from PyTorch autograd), and
//! every validation error as an insta snapshot of the error chain, each at
//! the stage it surfaces (load, compile or run).

use crate::model_builder;

use model_builder::*;
use prost::Message;
use tract_onnx_scatter::tract_onnx::pb::tensor_proto::DataType;
use tract_onnx_scatter::tract_onnx::pb::{
    OperatorSetIdProto, TypeProto, ValueInfoProto, type_proto,
};
use tract_onnx_scatter::tract_onnx::prelude::*;

const DOMAIN: &str = "tract_onnx_scatter.training";

#[test]
fn the_autograd_golden_cases_match_pytorch() {
    integration_tests::golden::check_autograd();
}

// ---------------------------------------------------------------------------
// Models.
// ---------------------------------------------------------------------------

/// A one-node gradient model: `op` on data [3, 3] of `elem`, indices int64
/// `indices`, updates `updates`, grad_output `grad`; outputs `grad_data`,
/// `grad_updates`; the node in the training domain at `domain_version`.
struct GradModel {
    node: OneNode,
    domain_version: i64,
}

impl GradModel {
    fn new(op: &str) -> GradModel {
        let (indices, updates): (&[i64], &[i64]) = if op == "ScatterNDGrad" {
            (&[2, 1], &[2, 3])
        } else {
            (&[2, 3], &[2, 3])
        };
        GradModel::shaped(op, DataType::Float, indices, updates, &[3, 3])
    }

    fn shaped(
        op: &str,
        elem: DataType,
        indices: &[i64],
        updates: &[i64],
        grad: &[i64],
    ) -> GradModel {
        GradModel {
            node: OneNode::new(op, 18)
                .output_elem(elem)
                .value(input("data", elem, &[3, 3]))
                .value(input("indices", DataType::Int64, indices))
                .value(input("updates", elem, updates))
                .value(input("grad_output", elem, grad)),
            domain_version: 1,
        }
    }

    fn attr(mut self, attr: tract_onnx_scatter::tract_onnx::pb::AttributeProto) -> GradModel {
        self.node = self.node.attr(attr);
        self
    }

    fn bytes(&self) -> Vec<u8> {
        let mut proto = self.node.proto();
        proto.opset_import.push(OperatorSetIdProto {
            domain: DOMAIN.into(),
            version: self.domain_version,
        });
        let graph = proto.graph.as_mut().expect("a graph");
        let node = &mut graph.node[0];
        node.domain = DOMAIN.into();
        node.output = vec!["grad_data".into(), "grad_updates".into()];
        let elem = self.node.output_elem as i32;
        graph.output = ["grad_data", "grad_updates"]
            .iter()
            .map(|name| ValueInfoProto {
                name: name.to_string(),
                r#type: Some(TypeProto {
                    value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                        elem_type: elem,
                        shape: None,
                    })),
                    ..Default::default()
                }),
                ..Default::default()
            })
            .collect();
        proto.encode_to_vec()
    }

    fn load(&self) -> TractResult<InferenceModel> {
        tract_onnx_scatter::onnx().model_for_read(&mut &self.bytes()[..])
    }

    fn compile(&self) -> TractResult<Arc<TypedSimplePlan>> {
        self.load()?.into_optimized()?.into_runnable()
    }
}

fn load_error(m: &GradModel) -> String {
    match no_panic("load", || m.load()) {
        Ok(_) => panic!("{} loaded, expected an error at load", m.node.op_type),
        Err(e) => chain(&e),
    }
}

fn compile_error(m: &GradModel) -> String {
    let model = m
        .load()
        .unwrap_or_else(|e| panic!("expected the model to load: {}", chain(&e)));
    match no_panic("compile", || {
        model.into_optimized().and_then(|t| t.into_runnable())
    }) {
        Ok(_) => panic!("{} compiled, expected an error", m.node.op_type),
        Err(e) => chain(&e),
    }
}

fn run(m: &GradModel, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
    let plan = m
        .compile()
        .unwrap_or_else(|e| panic!("expected the model to compile: {}", chain(&e)));
    no_panic("run", || plan.run(inputs))
}

fn run_error(m: &GradModel, inputs: TVec<TValue>) -> String {
    match run(m, inputs) {
        Ok(out) => panic!("ran and gave {out:?}, expected an error"),
        Err(e) => chain(&e),
    }
}

fn f32s(shape: &[usize], values: &[f32]) -> TValue {
    tensor1(values)
        .into_shape(shape)
        .expect("a shape")
        .into_tvalue()
}

fn i64s(shape: &[usize], values: &[i64]) -> TValue {
    tensor1(values)
        .into_shape(shape)
        .expect("a shape")
        .into_tvalue()
}

fn ones(shape: &[usize]) -> TValue {
    f32s(shape, &vec![1.0; shape.iter().product()])
}

// ---------------------------------------------------------------------------
// A run, by hand: the outputs' shapes, types and values.
// ---------------------------------------------------------------------------

#[test]
fn add_with_a_duplicate_gives_every_update_the_output_gradient() {
    let m = GradModel::new("ScatterElementsGrad")
        .attr(attr_string("reduction", "add"))
        .attr(attr_int("include_self", 0))
        .attr(attr_float("lda_coeff", 2.0));
    let grad: Vec<f32> = (1..=9).map(|v| v as f32).collect();
    let out = run(
        &m,
        tvec!(
            ones(&[3, 3]),
            i64s(&[2, 3], &[0, 1, 2, 0, -2, 2]),
            ones(&[2, 3]),
            f32s(&[3, 3], &grad),
        ),
    )
    .unwrap_or_else(|e| panic!("{}", chain(&e)));
    // Written: (0,0) (1,1) (2,2) and again (0,0) (1,1) (2,2): grad_data 0
    // there (include_self = 0), grad_output elsewhere, times 2.
    assert_eq!(
        *out[0],
        tensor2(&[[0f32, 4., 6.], [8., 0., 12.], [14., 16., 0.]])
    );
    assert_eq!(*out[1], tensor2(&[[2f32, 10., 18.], [2., 10., 18.]]));
}

// ---------------------------------------------------------------------------
// Attributes: at load.
// ---------------------------------------------------------------------------

#[test]
fn an_unknown_attribute_is_refused() {
    let m = GradModel::new("ScatterNDGrad").attr(attr_int("axis", 0));
    snap!("grad_undefined_attribute_axis_nd", load_error(&m));
}

#[test]
fn a_reduction_outside_the_list_is_refused() {
    let m = GradModel::new("ScatterElementsGrad").attr(attr_string("reduction", "sum"));
    snap!("grad_bad_reduction", load_error(&m));
}

#[test]
fn mean_is_refused_on_scatter_nd_grad() {
    let m = GradModel::new("ScatterNDGrad").attr(attr_string("reduction", "mean"));
    snap!("grad_mean_on_nd", load_error(&m));
}

#[test]
fn include_self_must_be_zero_or_one() {
    let m = GradModel::new("ScatterElementsGrad").attr(attr_int("include_self", 2));
    snap!("grad_include_self_2", load_error(&m));
}

#[test]
fn include_self_must_be_an_int() {
    let m = GradModel::new("ScatterElementsGrad").attr(attr_string("include_self", "yes"));
    snap!("grad_include_self_string", load_error(&m));
}

#[test]
fn lda_coeff_must_be_a_float() {
    let m = GradModel::new("ScatterNDGrad").attr(attr_int("lda_coeff", 1));
    snap!("grad_lda_coeff_int", load_error(&m));
}

#[test]
fn lda_coeff_must_be_finite() {
    let m = GradModel::new("ScatterElementsGrad").attr(attr_float("lda_coeff", f32::INFINITY));
    snap!("grad_lda_coeff_inf", load_error(&m));
    let m = GradModel::new("ScatterElementsGrad").attr(attr_float("lda_coeff", f32::NAN));
    assert!(load_error(&m).contains("'lda_coeff' must be a finite float, got NaN"));
}

#[test]
fn another_version_of_the_training_domain_is_refused() {
    let mut m = GradModel::new("ScatterElementsGrad");
    m.domain_version = 2;
    snap!("grad_domain_version_2", load_error(&m));
}

#[test]
fn a_missing_grad_output_is_refused() {
    let mut m = GradModel::new("ScatterNDGrad");
    m.node = m.node.node_inputs(&["data", "indices", "updates"]);
    snap!("grad_missing_grad_output", load_error(&m));
}

// ---------------------------------------------------------------------------
// Facts: at load or compile.
// ---------------------------------------------------------------------------

#[test]
fn a_bad_axis_is_refused_with_the_forward_message() {
    let m = GradModel::new("ScatterElementsGrad").attr(attr_int("axis", -3));
    snap!("grad_bad_axis", compile_error(&m));
}

#[test]
fn non_float_data_has_no_gradient() {
    let m = GradModel::shaped(
        "ScatterElementsGrad",
        DataType::Int32,
        &[2, 3],
        &[2, 3],
        &[3, 3],
    );
    snap!("grad_int_data", compile_error(&m));
}

#[test]
fn a_grad_output_shaped_unlike_data_is_refused() {
    let m = GradModel::shaped("ScatterNDGrad", DataType::Float, &[2, 1], &[2, 3], &[3, 2]);
    snap!("grad_output_shape", compile_error(&m));
}

#[test]
fn an_updates_shape_the_forward_refuses_is_refused() {
    let m = GradModel::shaped("ScatterNDGrad", DataType::Float, &[2, 1], &[2, 2], &[3, 3]);
    snap!("grad_nd_updates_shape", compile_error(&m));
}

// ---------------------------------------------------------------------------
// Index values: at run time.
// ---------------------------------------------------------------------------

#[test]
fn an_out_of_bounds_index_is_refused_at_run_time() {
    let m = GradModel::new("ScatterElementsGrad").attr(attr_int("axis", 1));
    snap!(
        "grad_index_out_of_bounds",
        run_error(
            &m,
            tvec!(
                ones(&[3, 3]),
                i64s(&[2, 3], &[0, 1, 2, 0, 3, 2]),
                ones(&[2, 3]),
                ones(&[3, 3]),
            ),
        )
    );
}

#[test]
fn an_out_of_bounds_nd_index_is_refused_at_run_time() {
    let m = GradModel::new("ScatterNDGrad");
    snap!(
        "grad_nd_index_out_of_bounds",
        run_error(
            &m,
            tvec!(
                ones(&[3, 3]),
                i64s(&[2, 1], &[0, -4]),
                ones(&[2, 3]),
                ones(&[3, 3])
            ),
        )
    );
}
