//! Tensors in and out: `.npy`, `.npz` (ndarray-npy, on tract's own ndarray),
//! ONNX `.pb` TensorProtos (onnx-golden's decoder), seeded random tensors,
//! and one-line summaries.

use std::fs::File;
use std::io::{BufWriter, Cursor, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use std::collections::HashMap;

use anyhow::{Context, Result, bail, ensure};
use ndarray_npy::{NpzReader, NpzWriter, ReadNpyError, ReadNpyExt, ReadNpzError};
use tract_onnx_scatter::onnx_types;
use tract_onnx_scatter::tract_onnx::prelude::tract_ndarray::{ArrayD, IxDyn, OwnedRepr};
use tract_onnx_scatter::tract_onnx::prelude::*;

/// Element types read from and written to `.npy`/`.npz` (ndarray-npy has no f16).
macro_rules! for_npy_types {
    ($mac:ident) => {
        $mac!(f32, f64, i64, i32, i16, i8, u64, u32, u16, u8, bool)
    };
}

/// The default of [`MAX_TENSOR_BYTES`]: 4 GiB.
pub const DEFAULT_MAX_TENSOR_BYTES: u64 = 1 << 32;

/// The most bytes a tensor read from a file may hold (`--max-tensor-bytes`):
/// a header declaring more is refused before anything is allocated.
pub static MAX_TENSOR_BYTES: AtomicU64 = AtomicU64::new(DEFAULT_MAX_TENSOR_BYTES);

/// What an `.npy` header declares: the element type, the shape, and where
/// the data starts.
#[derive(Debug, Clone, PartialEq, Eq)]
struct NpyHeader {
    descr: String,
    shape: Vec<u64>,
    data_offset: usize,
}

impl NpyHeader {
    /// Reads the header at the start of `bytes` (numpy's format, versions
    /// 1 to 3), or says why it cannot.
    fn parse(bytes: &[u8]) -> Result<NpyHeader> {
        let magic = b"\x93NUMPY";
        if bytes.len() < 10 || &bytes[..6] != magic {
            bail!("not an .npy file (no \\x93NUMPY magic)");
        }
        let (len, start): (usize, usize) = match bytes[6] {
            1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
            2 | 3 if bytes.len() >= 12 => (
                u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
                12,
            ),
            v => bail!(".npy format version {v} (expected 1, 2 or 3)"),
        };
        let end = start
            .checked_add(len)
            .filter(|&e| e <= bytes.len())
            .context(".npy header longer than the file")?;
        let text = std::str::from_utf8(&bytes[start..end]).context(".npy header is not text")?;
        let field = |key: &str| -> Result<&str> {
            let at = text
                .find(&format!("'{key}'"))
                .with_context(|| format!(".npy header has no '{key}'"))?;
            Ok(text[at + key.len() + 2..]
                .trim_start()
                .trim_start_matches(':')
                .trim_start())
        };
        let descr = field("descr")?;
        let descr = descr
            .strip_prefix('\'')
            .and_then(|d| d.split('\'').next())
            .context(".npy header's descr is not a string")?
            .to_string();
        let shape = field("shape")?;
        let shape = shape
            .strip_prefix('(')
            .and_then(|s| s.split(')').next())
            .context(".npy header's shape is not a tuple")?;
        let shape = shape
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| {
                d.parse::<u64>()
                    .with_context(|| format!(".npy header's shape holds {d:?}"))
            })
            .collect::<Result<Vec<u64>>>()?;
        Ok(NpyHeader {
            descr,
            shape,
            data_offset: end,
        })
    }

    /// The bytes the data must hold: the shape's volume times the element
    /// size the descr ends with (`<f4`: 4); `None` when it overflows, or
    /// when the nonzero dims alone do: an array of zero volume still has
    /// strides, and ndarray refuses (and ndarray-npy panics on) strides
    /// past `isize::MAX`.
    fn data_bytes(&self) -> Result<Option<u64>> {
        let size: u64 = self
            .descr
            .trim_start_matches(|c: char| !c.is_ascii_digit())
            .parse()
            .with_context(|| format!(".npy element type {:?} has no size", self.descr))?;
        let extent = self
            .shape
            .iter()
            .filter(|&&d| d != 0)
            .try_fold(size, |acc, &d| acc.checked_mul(d))
            .filter(|&e| e <= isize::MAX as u64);
        Ok(extent.map(|e| if self.shape.contains(&0) { 0 } else { e }))
    }

    /// Refuses a header whose data does not fit `present` bytes or the
    /// size limit, naming `what`, the shape and the bytes.
    fn check(&self, what: &str, present: u64) -> Result<()> {
        let limit = MAX_TENSOR_BYTES.load(Ordering::Relaxed);
        let shape = format!("{:?}", self.shape);
        let Some(declared) = self.data_bytes()? else {
            bail!(
                "{what}: its header declares shape {shape} of {}: the size overflows",
                self.descr
            );
        };
        if declared > limit {
            bail!(
                "{what}: its header declares shape {shape} of {}, {declared} bytes, past the limit of {limit} bytes (--max-tensor-bytes)",
                self.descr
            );
        }
        if declared != present {
            bail!(
                "{what}: its header declares shape {shape} of {}, {declared} bytes, but it holds {present} bytes of data",
                self.descr
            );
        }
        Ok(())
    }
}

/// Refuses a file larger than the tensor size limit before reading it.
fn check_file_size(path: &Path) -> Result<()> {
    let limit = MAX_TENSOR_BYTES.load(Ordering::Relaxed);
    let len = std::fs::metadata(path)
        .with_context(|| format!("reading {}", path.display()))?
        .len();
    // A header and an archive's directory come on top of the data.
    if len > limit.saturating_add(1 << 20) {
        bail!(
            "{}: {len} bytes, past the limit of {limit} bytes for a tensor file (--max-tensor-bytes)",
            path.display()
        );
    }
    Ok(())
}

/// The file's extension, lower-cased.
fn extension(path: &Path) -> String {
    path.extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default()
}

/// Fails with a one-line message when `path` is not a readable file.
pub fn require_file(path: &Path, what: &str) -> Result<()> {
    if !path.is_file() {
        bail!("{}: no such file (expected {what})", path.display());
    }
    Ok(())
}

/// A tensor file: `.npy` or an ONNX TensorProto `.pb`.
pub fn read_tensor(path: &Path) -> Result<Tensor> {
    require_file(path, "a .npy or .pb tensor file")?;
    check_file_size(path)?;
    match extension(path).as_str() {
        "npy" => read_npy(path),
        "pb" => {
            let bytes =
                std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
            onnx_golden::tensor_proto::decode_tensor_bytes(&bytes)
                .with_context(|| format!("decoding {} as an ONNX TensorProto", path.display()))
        }
        "npz" => bail!(
            "{}: an .npz holds several tensors: pass it with --inputs, not as one input",
            path.display()
        ),
        other => bail!(
            "{}: unknown tensor file type {other:?} (expected .npy or .pb)",
            path.display()
        ),
    }
}

fn read_npy(path: &Path) -> Result<Tensor> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let what = path.display().to_string();
    let header = NpyHeader::parse(&bytes).with_context(|| format!("reading {what} as .npy"))?;
    header.check(&what, (bytes.len() - header.data_offset) as u64)?;
    if let Some(t) = complex_as_pairs(&bytes, &header, &what)? {
        return Ok(t);
    }
    macro_rules! try_types {
        ($($t:ty),*) => {
            $(
                match ArrayD::<$t>::read_npy(Cursor::new(&bytes)) {
                    Ok(a) => return Ok(a.into()),
                    Err(ReadNpyError::WrongDescriptor(_)) => {}
                    Err(e) => return Err(e).with_context(|| format!("reading {} as .npy", path.display())),
                }
            )*
        };
    }
    for_npy_types!(try_types);
    bail!(
        "{}: unsupported .npy element type (expected float32/64, int8..64, uint8..64 or bool)",
        path.display()
    )
}

/// A complex `.npy` (numpy's `complex64`/`complex128`, `<c8`/`<c16`) as
/// the float32/float64 tensor of its interleaved parts, dims `[.., 2]`: how
/// `tract_onnx_scatter` reads complex values. `None` for other types.
/// `header` has been checked against the bytes present.
fn complex_as_pairs(bytes: &[u8], header: &NpyHeader, what: &str) -> Result<Option<Tensor>> {
    let part_bytes = match header.descr.as_str() {
        "<c8" => 4,
        "<c16" => 8,
        _ => return Ok(None),
    };
    let text = String::from_utf8_lossy(&bytes[..header.data_offset]);
    ensure!(
        !text.contains("'fortran_order': True"),
        "{what}: a complex array in Fortran order is not supported"
    );
    let mut shape: Vec<usize> = header
        .shape
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<std::result::Result<_, _>>()
        .with_context(|| format!("{what}: shape {:?}", header.shape))?;
    shape.push(2);
    let data = &bytes[header.data_offset..];
    let tensor = if part_bytes == 4 {
        let parts: Vec<f32> = data
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        Tensor::from_shape(&shape, &parts)?
    } else {
        let parts: Vec<f64> = data
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect();
        Tensor::from_shape(&shape, &parts)?
    };
    Ok(Some(tensor))
}

/// Every array of an `.npz`, in the archive's order, by name.
pub fn read_npz(path: &Path) -> Result<Vec<(String, Tensor)>> {
    require_file(path, "an .npz archive")?;
    check_npz_headers(path)?;
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut npz =
        NpzReader::new(file).with_context(|| format!("reading {} as .npz", path.display()))?;
    let names = npz
        .names()
        .with_context(|| format!("reading {} as .npz", path.display()))?;
    let mut out = vec![];
    for name in names {
        let tensor = match complex_npz_entry(path, &name)? {
            Some(t) => t,
            None => npz_entry(&mut npz, path, &name)?,
        };
        out.push((name.clone(), tensor));
    }
    Ok(out)
}

/// Checks every array's `.npy` header in the archive against the size the
/// archive gives it and the size limit, before any array is read.
fn check_npz_headers(path: &Path) -> Result<()> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut zip = zip::ZipArchive::new(file)
        .with_context(|| format!("reading {} as .npz", path.display()))?;
    for ix in 0..zip.len() {
        let mut entry = zip
            .by_index(ix)
            .with_context(|| format!("reading {} as .npz", path.display()))?;
        let name = entry.name().trim_end_matches(".npy").to_string();
        let size = entry.size();
        // The magic, the version, the header length and at most 64 KiB
        // (v1) of header: what numpy writes.
        let mut head = vec![];
        (&mut entry)
            .take(12 + u16::MAX as u64)
            .read_to_end(&mut head)
            .with_context(|| format!("reading {name:?} of {}", path.display()))?;
        let what = format!("{}, array {name:?}", path.display());
        let header = NpyHeader::parse(&head).with_context(|| format!("reading {what} as .npy"))?;
        header.check(&what, size.saturating_sub(header.data_offset as u64))?;
    }
    Ok(())
}

/// The array `name` of the `.npz` at `path` as float pairs when it is
/// complex ([`complex_as_pairs`]); `None` for other types. Its header has
/// been checked ([`check_npz_headers`]).
fn complex_npz_entry(path: &Path, name: &str) -> Result<Option<Tensor>> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut zip = zip::ZipArchive::new(file)
        .with_context(|| format!("reading {} as .npz", path.display()))?;
    let what = format!("{}, array {name:?}", path.display());
    let file_name = if zip.index_for_name(&format!("{name}.npy")).is_some() {
        format!("{name}.npy")
    } else {
        name.to_string()
    };
    let mut entry = zip
        .by_name(&file_name)
        .with_context(|| format!("reading {what}"))?;
    let mut head = vec![];
    (&mut entry)
        .take(12 + u16::MAX as u64)
        .read_to_end(&mut head)
        .with_context(|| format!("reading {what}"))?;
    let header = NpyHeader::parse(&head).with_context(|| format!("reading {what} as .npy"))?;
    if !matches!(header.descr.as_str(), "<c8" | "<c16") {
        return Ok(None);
    }
    entry
        .read_to_end(&mut head)
        .with_context(|| format!("reading {what}"))?;
    complex_as_pairs(&head, &header, &what)
}

fn npz_entry(npz: &mut NpzReader<File>, path: &Path, name: &str) -> Result<Tensor> {
    macro_rules! try_types {
        ($($t:ty),*) => {
            $(
                match npz.by_name::<OwnedRepr<$t>, IxDyn>(name) {
                    Ok(a) => return Ok(a.into()),
                    Err(ReadNpzError::Npy(ReadNpyError::WrongDescriptor(_))) => {}
                    Err(e) => return Err(e).with_context(|| format!("reading {name:?} of {}", path.display())),
                }
            )*
        };
    }
    for_npy_types!(try_types);
    bail!(
        "{}: array {name:?} has an unsupported element type (expected float32/64, int8..64, uint8..64 or bool)",
        path.display()
    )
}

/// Writes named tensors as an `.npz` (uncompressed, as `numpy.savez`).
/// f16 is written as float32 and TDim as int64 (`.npy` has no such types).
pub fn write_npz(
    path: &Path,
    tensors: &[(String, Tensor)],
    held: &HashMap<String, HeldType>,
) -> Result<()> {
    let file = File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut npz = NpzWriter::new(BufWriter::new(file));
    for (name, tensor) in tensors {
        // Complex values as numpy's complex arrays; bfloat16 values stay
        // float32 (numpy has no bfloat16).
        let complex = match held.get(name) {
            Some(HeldType::Complex64) => {
                Some(npz.add_array(name.as_str(), &onnx_types::complex_values::<f32>(tensor)?))
            }
            Some(HeldType::Complex128) => {
                Some(npz.add_array(name.as_str(), &onnx_types::complex_values::<f64>(tensor)?))
            }
            _ => None,
        };
        if let Some(written) = complex {
            written.with_context(|| format!("writing {name:?} to {}", path.display()))?;
            continue;
        }
        let tensor = match tensor.datum_type() {
            DatumType::F16 => tensor.cast_to::<f32>()?.into_owned(),
            DatumType::TDim => tensor.cast_to::<i64>()?.into_owned(),
            _ => tensor.clone(),
        };
        macro_rules! write_as {
            ($($t:ty),*) => {
                $(
                    if tensor.datum_type() == <$t>::datum_type() {
                        let view = tensor.to_plain_array_view::<$t>()?;
                        npz.add_array(name.as_str(), &view)
                            .with_context(|| format!("writing {name:?} to {}", path.display()))?;
                        continue;
                    }
                )*
            };
        }
        for_npy_types!(write_as);
        bail!(
            "output {name:?} is {:?}, which .npz cannot hold",
            tensor.datum_type()
        );
    }
    npz.finish()
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// Tiny deterministic generator: random inputs are reproducible from `--seed`.
pub struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Lcg {
        Lcg(seed.wrapping_mul(2).wrapping_add(1))
    }

    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn unit(&mut self) -> f64 {
        (self.next() as f64 / (1u64 << 31) as f64) * 2.0 - 1.0
    }
}

/// A random tensor of a concrete shape: floats uniform in [-1, 1), integers
/// in 0..4 (valid indices into most axes), booleans fair coins.
pub fn random_tensor(dt: DatumType, shape: &[usize], rng: &mut Lcg) -> Result<Tensor> {
    let len: usize = shape.iter().product();
    let t = if dt.is_float() {
        let v: Vec<f64> = (0..len).map(|_| rng.unit()).collect();
        Tensor::from_shape(shape, &v)?.cast_to_dt(dt)?.into_owned()
    } else if dt == bool::datum_type() {
        let v: Vec<bool> = (0..len).map(|_| rng.next() & 1 == 1).collect();
        Tensor::from_shape(shape, &v)?
    } else if dt.is_integer() {
        let v: Vec<i64> = (0..len).map(|_| (rng.next() % 4) as i64).collect();
        Tensor::from_shape(shape, &v)?.cast_to_dt(dt)?.into_owned()
    } else {
        bail!("cannot make a random {dt:?} input: pass it with --input");
    };
    Ok(t)
}

/// The values as f64 (None for strings and other non-numeric types).
pub fn as_f64(t: &Tensor) -> Option<Vec<f64>> {
    let t = if t.datum_type() == DatumType::Bool {
        t.cast_to::<u8>().ok()?.into_owned()
    } else {
        t.clone()
    };
    let cast = t.cast_to::<f64>().ok()?;
    Some(
        cast.to_plain_array_view::<f64>()
            .ok()?
            .iter()
            .copied()
            .collect(),
    )
}

/// The ONNX element type of a model's value where the plugin holds it in
/// another tract type (`tract_onnx_scatter::onnx_types`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeldType {
    /// float32 holding bfloat16 values.
    Bfloat16,
    /// float32 pairs on a last axis of 2.
    Complex64,
    /// float64 pairs on a last axis of 2.
    Complex128,
}

impl HeldType {
    /// The held type of ONNX `DataType` `code`, if it is one.
    pub fn of_onnx(code: i32) -> Option<HeldType> {
        use tract_onnx_scatter::tract_onnx::pb::tensor_proto::DataType;
        match DataType::try_from(code).ok()? {
            DataType::Bfloat16 => Some(HeldType::Bfloat16),
            DataType::Complex64 => Some(HeldType::Complex64),
            DataType::Complex128 => Some(HeldType::Complex128),
            _ => None,
        }
    }
}

/// [`summary`] of a value of a model's: in its ONNX type when the plugin
/// holds it in another (`held`), `complex64 [2] [1+2i, 0-1i]`,
/// `bfloat16 [3] [0.5, ...] min ...`.
pub fn summary_as(t: &Tensor, held: Option<HeldType>) -> String {
    let complex = match held {
        None => return summary(t),
        Some(HeldType::Bfloat16) => return summary_labelled("bfloat16 (in F32)", t),
        Some(HeldType::Complex64) => onnx_types::complex_values::<f32>(t)
            .map(|a| a.mapv(|c| (f64::from(c.re), f64::from(c.im)))),
        Some(HeldType::Complex128) => {
            onnx_types::complex_values::<f64>(t).map(|a| a.mapv(|c| (c.re, c.im)))
        }
    };
    let Ok(values) = complex else {
        return summary(t);
    };
    let name = if held == Some(HeldType::Complex64) {
        "complex64"
    } else {
        "complex128"
    };
    let shown: Vec<String> = values
        .iter()
        .take(6)
        .map(|&(re, im)| {
            let sign = if im.is_sign_negative() { "-" } else { "+" };
            // complex64 parts print as f32: their shortest exact form.
            if name == "complex64" {
                format!("{}{sign}{}i", re as f32, (im as f32).abs())
            } else {
                format!("{re}{sign}{}i", im.abs())
            }
        })
        .collect();
    let more = if values.len() > 6 { ", ..." } else { "" };
    format!("{name} {:?} [{}{more}]", values.shape(), shown.join(", "))
}

/// `f32 [2, 3] [0.1, 0.2, ...] min -1 max 1 mean 0.05`.
pub fn summary(t: &Tensor) -> String {
    summary_labelled(&format!("{:?}", t.datum_type()), t)
}

/// [`summary`] with `label` in place of the element type.
fn summary_labelled(label: &str, t: &Tensor) -> String {
    let mut out = format!("{label} {:?}", t.shape());
    let Some(values) = as_f64(t) else {
        return out;
    };
    // f32 and f16 values print as f32: their shortest exact form.
    let narrow = matches!(t.datum_type(), DatumType::F32 | DatumType::F16);
    let shown: Vec<String> = values
        .iter()
        .take(6)
        .map(|&v| {
            if narrow {
                format!("{}", v as f32)
            } else {
                format!("{v}")
            }
        })
        .collect();
    let more = if values.len() > 6 { ", ..." } else { "" };
    out.push_str(&format!(" [{}{more}]", shown.join(", ")));
    if t.datum_type().is_float() && !values.is_empty() {
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        out.push_str(&format!(" min {min:.6} max {max:.6} mean {mean:.6}"));
    }
    out
}
