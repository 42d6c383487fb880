//! Generators shared by the model-building fuzz targets (`one_node_model`,
//! `grad_ops`, `overrides`): small integers and floats with extremes,
//! element types, actual and declared shapes, graph inputs, tract tensors
//! with arbitrary values, and initializers whose dims sometimes lie.
//! Included with `#[path]` by each target's logic module.

#![allow(dead_code)]

use arbitrary::{Result, Unstructured};
use tract_onnx_scatter::tract_onnx::pb::tensor_proto::DataType;
use tract_onnx_scatter::tract_onnx::pb::tensor_shape_proto::{Dimension, dimension};
use tract_onnx_scatter::tract_onnx::pb::{
    TensorProto, TensorShapeProto, TypeProto, ValueInfoProto, type_proto,
};
use tract_onnx_scatter::tract_onnx::prelude::*;

/// Element types a tensor may have (the ones tract loads, plus a few it
/// does not).
pub const ELEMS: &[DataType] = &[
    DataType::Float,
    DataType::Int64,
    DataType::Int32,
    DataType::Bool,
    DataType::Double,
    DataType::Float16,
    DataType::Int8,
    DataType::Int16,
    DataType::Uint8,
    DataType::Uint16,
    DataType::Uint32,
    DataType::Uint64,
    DataType::String,
    DataType::Bfloat16,
    DataType::Complex64,
    DataType::Undefined,
];

pub fn pick<T: Copy>(u: &mut Unstructured, items: &[T]) -> Result<T> {
    Ok(*u.choose(items)?)
}

/// A small integer, an index-like value or an extreme.
pub fn int(u: &mut Unstructured) -> Result<i64> {
    Ok(match u.int_in_range(0u8..=20)? {
        0 => i64::MIN,
        1 => i64::MAX,
        2 => i32::MIN as i64,
        3 => i32::MAX as i64,
        4 => u.arbitrary()?,
        n => n as i64 - 12,
    })
}

pub fn float(u: &mut Unstructured) -> Result<f64> {
    Ok(match u.int_in_range(0u8..=10)? {
        0 => f64::NAN,
        1 => f64::INFINITY,
        2 => f64::NEG_INFINITY,
        3 => -0.0,
        4 => f64::MAX,
        5 => u.arbitrary()?,
        n => n as f64 * 0.75 - 4.0,
    })
}

/// An actual (small) shape for a tensor that is fed or stored.
pub fn actual_shape(u: &mut Unstructured) -> Result<Vec<usize>> {
    let rank = match u.int_in_range(0u8..=16)? {
        0 => 0,
        1 => u.int_in_range(5..=9)?,
        n => (n % 4 + 1) as usize,
    };
    let mut shape: Vec<usize> = (0..rank)
        .map(|_| pick(u, &[0usize, 1, 1, 2, 2, 3, 3, 4]))
        .collect::<Result<_>>()?;
    // Keep tensors small.
    while shape.iter().product::<usize>() > 512 {
        let i = shape.iter().position(|&d| d > 1).unwrap();
        shape[i] -= 1;
    }
    Ok(shape)
}

/// A declared dimension: usually the actual one, sometimes hostile.
pub fn declared_dim(u: &mut Unstructured, actual: usize) -> Result<Dimension> {
    let value = match u.int_in_range(0u8..=20)? {
        0 => Some(dimension::Value::DimValue(i64::MAX)),
        1 => Some(dimension::Value::DimValue(1 << 32)),
        2 => Some(dimension::Value::DimValue(-1)),
        3 => Some(dimension::Value::DimValue(i64::MIN)),
        4 => Some(dimension::Value::DimValue(actual as i64 + 1)),
        5 => Some(dimension::Value::DimValue(1 << 20)),
        6 => Some(dimension::Value::DimParam(
            pick(u, &["N", "M", "", "1", "N+1"])?.into(),
        )),
        7 => None,
        _ => Some(dimension::Value::DimValue(actual as i64)),
    };
    Ok(Dimension {
        value,
        ..Default::default()
    })
}

pub fn value_info(name: &str, elem: DataType, shape: Option<TensorShapeProto>) -> ValueInfoProto {
    ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: elem as i32,
                shape,
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A tract tensor of `elem` and `shape` with arbitrary values, or `None`
/// for element types tract cannot hold.
pub fn tensor(u: &mut Unstructured, elem: DataType, shape: &[usize]) -> Result<Option<Tensor>> {
    let n: usize = shape.iter().product();
    macro_rules! ints {
        ($t:ty) => {{
            let v: Vec<$t> = (0..n).map(|_| Ok(int(u)? as $t)).collect::<Result<_>>()?;
            Tensor::from_shape(shape, &v).ok()
        }};
    }
    macro_rules! floats {
        ($t:ty) => {{
            let v: Vec<$t> = (0..n).map(|_| Ok(float(u)? as $t)).collect::<Result<_>>()?;
            Tensor::from_shape(shape, &v).ok()
        }};
    }
    Ok(match elem {
        DataType::Float => floats!(f32),
        DataType::Double => floats!(f64),
        DataType::Float16 => {
            let v: Vec<half::f16> = (0..n)
                .map(|_| Ok(half::f16::from_f64(float(u)?)))
                .collect::<Result<_>>()?;
            Tensor::from_shape(shape, &v).ok()
        }
        DataType::Int64 => ints!(i64),
        DataType::Int32 => ints!(i32),
        DataType::Int16 => ints!(i16),
        DataType::Int8 => ints!(i8),
        DataType::Uint8 => ints!(u8),
        DataType::Uint16 => ints!(u16),
        DataType::Uint32 => ints!(u32),
        DataType::Uint64 => ints!(u64),
        DataType::Bool => {
            let v: Vec<bool> = (0..n).map(|_| u.arbitrary()).collect::<Result<_>>()?;
            Tensor::from_shape(shape, &v).ok()
        }
        DataType::String => {
            let v: Vec<String> = (0..n)
                .map(|_| Ok(pick(u, &["", "a", "b", "zz", "é"])?.to_string()))
                .collect::<Result<_>>()?;
            tract_ndarray::ArrayD::from_shape_vec(shape, v)
                .ok()
                .map(|a| a.into_tensor())
        }
        _ => None,
    })
}

/// An initializer holding `t`, its dims sometimes lying.
pub fn initializer(
    u: &mut Unstructured,
    name: &str,
    elem: DataType,
    t: &Tensor,
) -> Result<TensorProto> {
    let mut dims: Vec<i64> = t.shape().iter().map(|&d| d as i64).collect();
    if u.ratio(1u8, 12)? {
        match u.int_in_range(0u8..=3)? {
            0 => dims.push(1 << 40),
            1 => dims = vec![1 << 32, 1 << 32, 1 << 32],
            2 => dims.push(-1),
            _ => dims.push(0),
        }
    }
    let mut p = TensorProto {
        name: name.into(),
        dims,
        data_type: elem as i32,
        ..Default::default()
    };
    if elem == DataType::String {
        // tract cannot load raw string data (it panics in its own loader,
        // outside the plugin): always string_data.
        p.string_data = t
            .try_as_plain_ram()
            .ok()
            .and_then(|v| {
                v.as_slice::<String>()
                    .ok()
                    .map(|s| s.iter().map(|s| s.as_bytes().to_vec()).collect())
            })
            .unwrap_or_default();
    } else if elem == DataType::Int64 && u.arbitrary()? {
        p.int64_data = t
            .cast_to::<i64>()
            .map(|c| {
                c.try_as_plain_ram()
                    .unwrap()
                    .as_slice::<i64>()
                    .unwrap()
                    .to_vec()
            })
            .unwrap_or_default();
    } else {
        let mut raw = t.as_bytes().to_vec();
        if u.ratio(1u8, 16)? {
            raw.pop();
        }
        p.raw_data = raw;
    }
    Ok(p)
}
