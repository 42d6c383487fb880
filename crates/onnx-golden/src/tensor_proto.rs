//! Decoding of ONNX `TensorProto` messages (the `input_N.pb` / `output_N.pb`
//! files of node tests) into tract [`Tensor`]s.
//!
//! This is deliberately independent of tract's own `tensor::load_tensor`: the
//! golden suite must not share bugs with the engine under test (tract types
//! empty `uint32`/`uint64` typed-field tensors wrongly, and panics on some
//! element types).

use anyhow::{Context, Result, bail, ensure};
use half::f16;
use prost::Message;
use tract_onnx::pb::TensorProto;
use tract_onnx::pb::tensor_proto::{DataLocation, DataType};
use tract_onnx::prelude::{Datum, DatumType, Tensor};

/// Decodes a serialized `TensorProto` (the content of an `input_N.pb` file).
pub fn decode_tensor_bytes(bytes: &[u8]) -> Result<Tensor> {
    let proto = TensorProto::decode(bytes).context("not a valid protobuf TensorProto")?;
    tensor_from_proto(&proto)
}

/// Converts a `TensorProto` into a tract [`Tensor`].
///
/// Contract:
/// * element types bool, int8..int64, uint8..uint64, float16, float, double
///   and string are supported; bfloat16 is decoded as the float32 tensor of
///   the same values, complex64 / complex128 as the float32 / float64 tensor
///   of their interleaved parts with a trailing axis of 2 (as
///   `tract_onnx_scatter`'s loader reads them); any other type (float8,
///   4-bit...) is an "unsupported type" error, never a panic;
/// * data comes from `raw_data` (little-endian) when present, else from the
///   typed field ONNX assigns to the element type (`int32_data` also holds
///   bool, int8/16, uint8/16 and the bit patterns of float16);
/// * the element count must match the product of `dims` (empty and rank-0
///   tensors included); a mismatch is an error;
/// * external data is not supported (node tests never use it).
pub fn tensor_from_proto(proto: &TensorProto) -> Result<Tensor> {
    let name = if proto.name.is_empty() {
        "<unnamed>"
    } else {
        proto.name.as_str()
    };
    tensor_from_proto_inner(proto).with_context(|| format!("decoding TensorProto {name:?}"))
}

fn tensor_from_proto_inner(proto: &TensorProto) -> Result<Tensor> {
    if proto.data_location == Some(DataLocation::External as i32) {
        bail!("external data is not supported by the golden suite");
    }
    let dt = datum_type(proto.data_type)?;
    let shape = proto
        .dims
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| anyhow::anyhow!("negative dimension {d}")))
        .collect::<Result<Vec<usize>>>()?;
    let len = shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .with_context(|| format!("dims {shape:?}: the element count overflows usize"))?;
    // A tensor of zero volume still has strides: its nonzero dims times the
    // element size must fit `isize` too, or tract refuses to build it.
    let extent = shape
        .iter()
        .filter(|&&d| d != 0)
        .try_fold(dt.size_of(), |acc, &d| acc.checked_mul(d));
    ensure!(
        extent.is_some_and(|e| e <= isize::MAX as usize),
        "dims {shape:?}: the nonzero dims times the element size ({} bytes) exceed isize::MAX",
        dt.size_of()
    );

    if dt == DatumType::String {
        ensure!(
            proto.raw_data.is_empty(),
            "string tensors cannot use raw_data"
        );
        let strings = proto
            .string_data
            .iter()
            .map(|s| String::from_utf8(s.clone()).context("string_data is not valid UTF-8"))
            .collect::<Result<Vec<String>>>()?;
        return build(&shape, len, strings);
    }
    if proto.data_type == DataType::Bfloat16 as i32 {
        return bfloat16_as_f32(proto, &shape, len);
    }
    if proto.data_type == DataType::Complex64 as i32
        || proto.data_type == DataType::Complex128 as i32
    {
        return complex_as_pairs(proto, &shape, len);
    }
    if !proto.raw_data.is_empty() {
        return from_raw(dt, &shape, len, &proto.raw_data);
    }
    // Typed fields. The narrowing casts are ONNX's storage convention
    // (small types are widened into int32_data), not lossy conversions.
    match dt {
        DatumType::Bool => build(&shape, len, mapped(&proto.int32_data, |&x| x != 0)),
        DatumType::I8 => build(&shape, len, mapped(&proto.int32_data, |&x| x as i8)),
        DatumType::I16 => build(&shape, len, mapped(&proto.int32_data, |&x| x as i16)),
        DatumType::I32 => build(&shape, len, proto.int32_data.clone()),
        DatumType::I64 => build(&shape, len, proto.int64_data.clone()),
        DatumType::U8 => build(&shape, len, mapped(&proto.int32_data, |&x| x as u8)),
        DatumType::U16 => build(&shape, len, mapped(&proto.int32_data, |&x| x as u16)),
        // ONNX stores uint32 and uint64 in uint64_data.
        DatumType::U32 => build(&shape, len, mapped(&proto.uint64_data, |&x| x as u32)),
        DatumType::U64 => build(&shape, len, proto.uint64_data.clone()),
        DatumType::F16 => build(
            &shape,
            len,
            mapped(&proto.int32_data, |&x| f16::from_bits(x as u16)),
        ),
        DatumType::F32 => build(&shape, len, proto.float_data.clone()),
        DatumType::F64 => build(&shape, len, proto.double_data.clone()),
        other => bail!("unsupported element type {other:?}"),
    }
}

/// Maps an ONNX `TensorProto.DataType` code to the tract type, rejecting the
/// types tract cannot hold.
pub fn datum_type(code: i32) -> Result<DatumType> {
    let onnx = DataType::try_from(code)
        .map_err(|_| anyhow::anyhow!("unsupported type: unknown ONNX data type code {code}"))?;
    Ok(match onnx {
        DataType::Bool => DatumType::Bool,
        DataType::Int8 => DatumType::I8,
        DataType::Int16 => DatumType::I16,
        DataType::Int32 => DatumType::I32,
        DataType::Int64 => DatumType::I64,
        DataType::Uint8 => DatumType::U8,
        DataType::Uint16 => DatumType::U16,
        DataType::Uint32 => DatumType::U32,
        DataType::Uint64 => DatumType::U64,
        DataType::Float16 => DatumType::F16,
        DataType::Float => DatumType::F32,
        DataType::Double => DatumType::F64,
        DataType::String => DatumType::String,
        // Held as float32, see `tensor_from_proto`.
        DataType::Bfloat16 => DatumType::F32,
        // Held as float pairs, see `tensor_from_proto`.
        DataType::Complex64 => DatumType::F32,
        DataType::Complex128 => DatumType::F64,
        other => bail!("unsupported type: ONNX element type {other:?} has no tract equivalent"),
    })
}

/// bfloat16 data (`raw_data`, or bit patterns in `int32_data`) as float32.
fn bfloat16_as_f32(proto: &TensorProto, shape: &[usize], len: usize) -> Result<Tensor> {
    let widen = |bits: u16| f32::from_bits(u32::from(bits) << 16);
    if proto.raw_data.is_empty() {
        return build(shape, len, mapped(&proto.int32_data, |&x| widen(x as u16)));
    }
    ensure!(
        len.checked_mul(2) == Some(proto.raw_data.len()),
        "dims {shape:?} need {len} bfloat16 values, raw_data holds {} bytes",
        proto.raw_data.len()
    );
    let data = proto
        .raw_data
        .chunks_exact(2)
        .map(|c| widen(u16::from_le_bytes([c[0], c[1]])))
        .collect();
    build(shape, len, data)
}

/// complex64 / complex128 data as the float32 / float64 tensor of its
/// interleaved parts, dims `[.., 2]` (as `tract_onnx_scatter`'s loader
/// reads it).
fn complex_as_pairs(proto: &TensorProto, shape: &[usize], len: usize) -> Result<Tensor> {
    let mut pairs = shape.to_vec();
    pairs.push(2);
    let parts = len
        .checked_mul(2)
        .with_context(|| format!("dims {shape:?}: the part count overflows usize"))?;
    if proto.data_type == DataType::Complex64 as i32 {
        if proto.raw_data.is_empty() {
            return build(&pairs, parts, proto.float_data.clone());
        }
        from_raw(DatumType::F32, &pairs, parts, &proto.raw_data)
    } else {
        if proto.raw_data.is_empty() {
            return build(&pairs, parts, proto.double_data.clone());
        }
        from_raw(DatumType::F64, &pairs, parts, &proto.raw_data)
    }
}

fn mapped<S, T>(data: &[S], f: impl Fn(&S) -> T) -> Vec<T> {
    data.iter().map(f).collect()
}

fn build<T: Datum>(shape: &[usize], len: usize, data: Vec<T>) -> Result<Tensor> {
    ensure!(
        data.len() == len,
        "dims {shape:?} need {len} elements, the typed field holds {}",
        data.len()
    );
    Ok(tract_onnx::prelude::tract_ndarray::ArrayD::from_shape_vec(shape, data)?.into())
}

/// Decodes little-endian `raw_data`: one fixed-size chunk per element.
fn from_raw(dt: DatumType, shape: &[usize], len: usize, raw: &[u8]) -> Result<Tensor> {
    fn le<T: Datum, const N: usize>(
        shape: &[usize],
        len: usize,
        raw: &[u8],
        f: impl Fn([u8; N]) -> T,
    ) -> Result<Tensor> {
        ensure!(
            raw.len() == len * N,
            "dims {shape:?} need {} bytes of raw_data, got {}",
            len * N,
            raw.len()
        );
        let data = raw
            .chunks_exact(N)
            .map(|c| f(c.try_into().expect("chunks_exact yields N bytes")))
            .collect();
        build(shape, len, data)
    }
    match dt {
        DatumType::Bool => le(shape, len, raw, |[b]: [u8; 1]| b != 0),
        DatumType::I8 => le(shape, len, raw, i8::from_le_bytes),
        DatumType::I16 => le(shape, len, raw, i16::from_le_bytes),
        DatumType::I32 => le(shape, len, raw, i32::from_le_bytes),
        DatumType::I64 => le(shape, len, raw, i64::from_le_bytes),
        DatumType::U8 => le(shape, len, raw, u8::from_le_bytes),
        DatumType::U16 => le(shape, len, raw, u16::from_le_bytes),
        DatumType::U32 => le(shape, len, raw, u32::from_le_bytes),
        DatumType::U64 => le(shape, len, raw, u64::from_le_bytes),
        DatumType::F16 => le(shape, len, raw, |b| f16::from_bits(u16::from_le_bytes(b))),
        DatumType::F32 => le(shape, len, raw, f32::from_le_bytes),
        DatumType::F64 => le(shape, len, raw, f64::from_le_bytes),
        other => bail!("unsupported element type {other:?} in raw_data"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proto(dt: DataType, dims: &[i64]) -> TensorProto {
        TensorProto {
            data_type: dt as i32,
            dims: dims.to_vec(),
            ..Default::default()
        }
    }

    fn roundtrip(p: &TensorProto) -> Result<Tensor> {
        decode_tensor_bytes(&p.encode_to_vec())
    }

    #[test]
    fn float_raw_and_typed_agree() {
        let values = [1.5f32, -0.0, f32::INFINITY, 3.25];
        let mut typed = proto(DataType::Float, &[2, 2]);
        typed.float_data = values.to_vec();
        let mut raw = proto(DataType::Float, &[2, 2]);
        raw.raw_data = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let expected = Tensor::from_shape(&[2, 2], &values).unwrap();
        assert_eq!(roundtrip(&typed).unwrap(), expected);
        assert_eq!(roundtrip(&raw).unwrap(), expected);
    }

    #[test]
    fn f16_from_packed_int32_and_raw() {
        let values = [f16::from_f32(0.5), f16::from_f32(-2.0), f16::NAN];
        let mut typed = proto(DataType::Float16, &[3]);
        typed.int32_data = values.iter().map(|v| v.to_bits() as i32).collect();
        let mut raw = proto(DataType::Float16, &[3]);
        raw.raw_data = values
            .iter()
            .flat_map(|v| v.to_bits().to_le_bytes())
            .collect();
        for p in [typed, raw] {
            let t = roundtrip(&p).unwrap();
            assert_eq!(t.datum_type(), DatumType::F16);
            let bits: Vec<u16> = t
                .to_plain_array_view::<f16>()
                .unwrap()
                .iter()
                .map(|v| v.to_bits())
                .collect();
            assert_eq!(bits, values.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        }
    }

    #[test]
    fn bool_and_small_ints_from_int32_data() {
        let mut b = proto(DataType::Bool, &[3]);
        b.int32_data = vec![1, 0, 1];
        assert_eq!(
            roundtrip(&b).unwrap(),
            Tensor::from_shape(&[3], &[true, false, true]).unwrap()
        );
        let mut i8s = proto(DataType::Int8, &[2]);
        i8s.int32_data = vec![-128, 127];
        assert_eq!(
            roundtrip(&i8s).unwrap(),
            Tensor::from_shape(&[2], &[-128i8, 127]).unwrap()
        );
        let mut u16s = proto(DataType::Uint16, &[1]);
        u16s.int32_data = vec![65535];
        assert_eq!(
            roundtrip(&u16s).unwrap(),
            Tensor::from_shape(&[1], &[65535u16]).unwrap()
        );
    }

    #[test]
    fn int64_and_uint64_typed_fields() {
        let mut i = proto(DataType::Int64, &[2]);
        i.int64_data = vec![i64::MIN, 7];
        assert_eq!(
            roundtrip(&i).unwrap(),
            Tensor::from_shape(&[2], &[i64::MIN, 7]).unwrap()
        );
        let mut u = proto(DataType::Uint64, &[1]);
        u.uint64_data = vec![u64::MAX];
        assert_eq!(
            roundtrip(&u).unwrap(),
            Tensor::from_shape(&[1], &[u64::MAX]).unwrap()
        );
        let mut u32s = proto(DataType::Uint32, &[1]);
        u32s.uint64_data = vec![4_000_000_000];
        assert_eq!(
            roundtrip(&u32s).unwrap(),
            Tensor::from_shape(&[1], &[4_000_000_000u32]).unwrap()
        );
    }

    #[test]
    fn empty_unsigned_tensors_keep_their_type() {
        for (dt, expected) in [
            (DataType::Uint64, DatumType::U64),
            (DataType::Uint32, DatumType::U32),
        ] {
            let t = roundtrip(&proto(dt, &[0, 3])).unwrap();
            assert_eq!(t.datum_type(), expected);
            assert_eq!(t.shape(), &[0, 3]);
        }
    }

    #[test]
    fn rank0_double() {
        let mut p = proto(DataType::Double, &[]);
        p.double_data = vec![2.5];
        let t = roundtrip(&p).unwrap();
        assert_eq!(t.rank(), 0);
        assert_eq!(t, tract_onnx::prelude::tensor0(2.5f64));
    }

    #[test]
    fn strings() {
        let mut p = proto(DataType::String, &[2]);
        p.string_data = vec![b"a".to_vec(), "é".as_bytes().to_vec()];
        let t = roundtrip(&p).unwrap();
        assert_eq!(
            t,
            Tensor::from(tract_onnx::prelude::tract_ndarray::arr1(&[
                "a".to_string(),
                "é".to_string()
            ]))
        );
    }

    #[test]
    fn bfloat16_from_packed_int32_and_raw_is_float32_of_the_same_values() {
        let bits: [u16; 3] = [0x3fc0, 0xc040, 0x7fc0]; // 1.5, -3.0, NaN
        let mut typed = proto(DataType::Bfloat16, &[3]);
        typed.int32_data = bits.iter().map(|b| i32::from(*b)).collect();
        let mut raw = proto(DataType::Bfloat16, &[3]);
        raw.raw_data = bits.iter().flat_map(|b| b.to_le_bytes()).collect();
        for p in [typed, raw] {
            let t = roundtrip(&p).unwrap();
            let values = t.to_plain_array_view::<f32>().unwrap();
            assert_eq!(values[0], 1.5);
            assert_eq!(values[1], -3.0);
            assert!(values[2].is_nan());
        }
    }

    #[test]
    fn complex_is_the_float_tensor_of_its_interleaved_parts() {
        let mut typed = proto(DataType::Complex64, &[2]);
        typed.float_data = vec![1.0, -2.0, 3.5, 0.25];
        let t = roundtrip(&typed).unwrap();
        assert_eq!(
            t,
            Tensor::from_shape(&[2, 2], &[1.0f32, -2.0, 3.5, 0.25]).unwrap()
        );
        let mut raw = proto(DataType::Complex128, &[1]);
        raw.raw_data = [1.5f64, -0.5]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let t = roundtrip(&raw).unwrap();
        assert_eq!(t, Tensor::from_shape(&[1, 2], &[1.5f64, -0.5]).unwrap());
        let mut short = proto(DataType::Complex64, &[2]);
        short.float_data = vec![1.0, 2.0, 3.0];
        assert!(roundtrip(&short).is_err());
    }

    #[test]
    fn unsupported_and_malformed_are_errors() {
        let mut short_bf16 = proto(DataType::Bfloat16, &[2]);
        short_bf16.raw_data = vec![0; 3];
        assert!(roundtrip(&short_bf16).is_err());
        let err = roundtrip(&proto(DataType::Float8e4m3fn, &[1])).unwrap_err();
        assert!(format!("{err:?}").contains("unsupported type"), "{err:?}");
        let mut short = proto(DataType::Int32, &[3]);
        short.int32_data = vec![1, 2];
        assert!(roundtrip(&short).is_err());
        let mut bad_raw = proto(DataType::Int32, &[1]);
        bad_raw.raw_data = vec![0; 3];
        assert!(roundtrip(&bad_raw).is_err());
        assert!(roundtrip(&proto(DataType::Float, &[-1])).is_err());
        assert!(decode_tensor_bytes(&[0xff, 0xff, 0xff]).is_err());
    }
}
