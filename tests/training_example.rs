//! Training a tiny model with a scatter step, through tract and the
//! plugin: the forward `y = ScatterElements(w, idx, u, reduction=add)`, the
//! loss `L = sum((y - target)^2)`, its gradient `dL/dy = 2 (y - target)`
//! computed in Rust, then `ScatterElementsGrad` (domain
//! `tract_onnx_scatter.training`) gives `dL/dw` and `dL/du`; SGD steps
//! reduce the loss. docs/contract.md's "Training with the gradient ops" quotes an
//! excerpt of this file.

use prost::Message;
use tract_onnx_scatter::tract_onnx::pb::attribute_proto::AttributeType;
use tract_onnx_scatter::tract_onnx::pb::tensor_proto::DataType;
use tract_onnx_scatter::tract_onnx::pb::*;
use tract_onnx_scatter::tract_onnx::prelude::*;

const TRAINING: &str = "tract_onnx_scatter.training";

/// A one-node model: float inputs `[w, u]` (and `dy` for the gradient),
/// the constant int64 `idx`, the node's outputs as graph outputs.
fn one_node(op: &str, domain: &str, inputs: &[(&str, &[i64])], outputs: &[&str]) -> Vec<u8> {
    let tensor_type = |shape: Option<&[i64]>| TypeProto {
        value: Some(type_proto::Value::TensorType(type_proto::Tensor {
            elem_type: DataType::Float as i32,
            shape: shape.map(|s| TensorShapeProto {
                dim: s
                    .iter()
                    .map(|&d| tensor_shape_proto::Dimension {
                        value: Some(tensor_shape_proto::dimension::Value::DimValue(d)),
                        ..Default::default()
                    })
                    .collect(),
            }),
        })),
        ..Default::default()
    };
    let value = |name: &str, shape: Option<&[i64]>| ValueInfoProto {
        name: name.into(),
        r#type: Some(tensor_type(shape)),
        ..Default::default()
    };
    let attr = |name: &str, ty: AttributeType, s: &str| AttributeProto {
        name: name.into(),
        r#type: ty as i32,
        s: s.as_bytes().to_vec(),
        ..Default::default()
    };
    let graph = GraphProto {
        name: "step".into(),
        node: vec![NodeProto {
            op_type: op.into(),
            domain: domain.into(),
            name: op.into(),
            input: ["w", "idx", "u", "dy"][..inputs.len() + 1]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            output: outputs.iter().map(|s| s.to_string()).collect(),
            attribute: vec![attr("reduction", AttributeType::String, "add")],
            ..Default::default()
        }],
        initializer: vec![TensorProto {
            name: "idx".into(),
            dims: vec![2, 3],
            data_type: DataType::Int64 as i32,
            int64_data: vec![0, 1, 3, 2, 1, 0],
            ..Default::default()
        }],
        input: inputs.iter().map(|(n, s)| value(n, Some(s))).collect(),
        output: outputs.iter().map(|n| value(n, None)).collect(),
        ..Default::default()
    };
    let opset = |domain: &str, version| OperatorSetIdProto {
        domain: domain.into(),
        version,
    };
    ModelProto {
        ir_version: 8,
        opset_import: vec![opset("", 18), opset(TRAINING, 1)],
        graph: Some(graph),
        ..Default::default()
    }
    .encode_to_vec()
}

fn plan(bytes: &[u8]) -> TractResult<Arc<TypedSimplePlan>> {
    tract_onnx_scatter::onnx()
        .model_for_read(&mut &bytes[..])?
        .into_optimized()?
        .into_runnable()
}

fn floats(t: &Tensor) -> TractResult<Vec<f32>> {
    Ok(t.try_as_plain_ram()?.as_slice::<f32>()?.to_vec())
}

fn loss(y: &[f32], target: &[f32]) -> f32 {
    y.iter().zip(target).map(|(y, t)| (y - t) * (y - t)).sum()
}

#[test]
fn sgd_steps_through_scatter_elements_grad_reduce_the_loss() -> TractResult<()> {
    // w: [4, 3] parameters, u: [2, 3] parameters scattered into w's rows
    // (idx, constant) with reduction add, along axis 0.
    let (w_shape, u_shape): (&[i64], &[i64]) = (&[4, 3], &[2, 3]);
    let forward = plan(&one_node(
        "ScatterElements",
        "",
        &[("w", w_shape), ("u", u_shape)],
        &["y"],
    ))?;
    let backward = plan(&one_node(
        "ScatterElementsGrad",
        TRAINING,
        &[("w", w_shape), ("u", u_shape), ("dy", w_shape)],
        &["dw", "du"],
    ))?;
    // The grad node takes (w, idx, u, dy): feed the graph inputs in order.
    let mut w: Vec<f32> = (0..12).map(|i| (i as f32 * 0.37).sin()).collect();
    let mut u: Vec<f32> = (0..6).map(|i| (i as f32 * 0.91).cos()).collect();
    let target: Vec<f32> = (0..12).map(|i| i as f32 / 6.0 - 1.0).collect();
    let tensor = |v: &[f32], shape: &[usize]| -> TractResult<TValue> {
        Ok(tensor1(v).into_shape(shape)?.into_tvalue())
    };
    let lr = 0.1;
    let mut losses = vec![];
    for _ in 0..5 {
        let y = forward.run(tvec![tensor(&w, &[4, 3])?, tensor(&u, &[2, 3])?])?;
        let y = floats(&y[0])?;
        losses.push(loss(&y, &target));
        // dL/dy, in Rust.
        let dy: Vec<f32> = y.iter().zip(&target).map(|(y, t)| 2.0 * (y - t)).collect();
        // dL/dw and dL/du, through tract.
        let grads = backward.run(tvec![
            tensor(&w, &[4, 3])?,
            tensor(&u, &[2, 3])?,
            tensor(&dy, &[4, 3])?,
        ])?;
        let (dw, du) = (floats(&grads[0])?, floats(&grads[1])?);
        w.iter_mut().zip(&dw).for_each(|(w, g)| *w -= lr * g);
        u.iter_mut().zip(&du).for_each(|(u, g)| *u -= lr * g);
    }
    assert!(
        losses.windows(2).all(|l| l[1] < l[0]),
        "the loss must fall at every step: {losses:?}"
    );
    Ok(())
}
