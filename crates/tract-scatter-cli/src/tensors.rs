//! Tensors in and out: `.npy`, `.npz` (ndarray-npy, on tract's own ndarray),
//! ONNX `.pb` TensorProtos (onnx-golden's decoder), seeded random tensors,
//! and one-line summaries.

use std::fs::File;
use std::io::{BufWriter, Cursor, Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use std::collections::HashMap;

use anyhow::{Context, Result, bail, ensure};
use ndarray_npy::{NpzReader, ReadNpyError, ReadNpyExt, ReadNpzError, WriteNpyExt};
use tract_onnx_scatter::onnx_types;
use tract_onnx_scatter::tract_onnx::prelude::tract_ndarray::{ArrayD, IxDyn, OwnedRepr};
use tract_onnx_scatter::tract_onnx::prelude::*;

/// The element types read and written, as messages list them.
const SUPPORTED: &str = "expected float16/32/64, int8..64, uint8..64, bool or complex64/128";

/// Element types read from and written to `.npy`/`.npz` through
/// ndarray-npy (which has no f16, nor complex as tract holds it: see
/// [`raw_tensor`]).
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

    /// The shape as dims, for the element types read here rather than by
    /// ndarray-npy: C order only (`bytes` is the file, or its start up to
    /// the data at least).
    fn dims(&self, bytes: &[u8], what: &str) -> Result<Vec<usize>> {
        let text = String::from_utf8_lossy(&bytes[..self.data_offset]);
        ensure!(
            !text.contains("'fortran_order': True"),
            "{what}: a {} array in Fortran order is not supported (save it in C order)",
            self.descr
        );
        self.shape
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<std::result::Result<_, _>>()
            .with_context(|| format!("{what}: shape {:?}", self.shape))
    }

    /// Refuses a header whose data does not fit `present` bytes or the
    /// size limit, naming `what`, the shape and the bytes.
    fn check(&self, what: &str, present: u64) -> Result<()> {
        let limit = MAX_TENSOR_BYTES.load(Ordering::Relaxed);
        let shape = format!("{:?}", self.shape);
        let Some(declared) = self.data_bytes().with_context(|| {
            format!(
                "{what}: unsupported .npy element type {:?} ({SUPPORTED})",
                self.descr
            )
        })?
        else {
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
    if path.is_dir() {
        let model = path.join("model.onnx");
        let hint = if what.contains(".onnx") && model.is_file() {
            format!("; the node test's model is {}", model.display())
        } else {
            String::new()
        };
        bail!(
            "{}: a directory, not a file (expected {what}{hint})",
            path.display()
        );
    }
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
    if let Some(t) = raw_tensor(&bytes, &header, &what)? {
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
        "{}: unsupported .npy element type {:?} ({SUPPORTED})",
        path.display(),
        header.descr
    )
}

/// The tensor of an `.npy` whose element type ndarray-npy cannot read:
/// complex ([`complex_as_pairs`]) or float16 (`<f2`); `None` for other
/// types. `header` has been checked against the bytes present.
fn raw_tensor(bytes: &[u8], header: &NpyHeader, what: &str) -> Result<Option<Tensor>> {
    if header.descr != "<f2" {
        return complex_as_pairs(bytes, header, what);
    }
    let shape = header.dims(bytes, what)?;
    let values: Vec<f16> = bytes[header.data_offset..]
        .chunks_exact(2)
        .map(|c| f16::from_bits(u16::from_le_bytes([c[0], c[1]])))
        .collect();
    Ok(Some(Tensor::from_shape(&shape, &values)?))
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
    let mut shape = header.dims(bytes, what)?;
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
        let tensor = match raw_npz_entry(path, &name)? {
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

/// The array `name` of the `.npz` at `path` when ndarray-npy cannot read
/// it ([`raw_tensor`]: complex, float16); `None` for other types. Its
/// header has been checked ([`check_npz_headers`]).
fn raw_npz_entry(path: &Path, name: &str) -> Result<Option<Tensor>> {
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
    if !matches!(header.descr.as_str(), "<c8" | "<c16" | "<f2") {
        return Ok(None);
    }
    entry
        .read_to_end(&mut head)
        .with_context(|| format!("reading {what}"))?;
    raw_tensor(&head, &header, &what)
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
        "{}: array {name:?} has an unsupported element type ({SUPPORTED})",
        path.display()
    )
}

/// Writes named tensors as an `.npz` (uncompressed, as `numpy.savez`).
/// TDim is written as int64 (`.npy` has no such type); f16 as numpy's
/// float16 (`<f2`); complex values as numpy's complex arrays; bfloat16
/// values stay float32 (numpy has no bfloat16).
pub fn write_npz(
    path: &Path,
    tensors: &[(String, Tensor)],
    held: &HashMap<String, HeldType>,
) -> Result<()> {
    let file = File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut zip = zip::ZipWriter::new(BufWriter::new(file));
    for (name, tensor) in tensors {
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored)
            // Zip64 records only where the entry needs them.
            .large_file(
                tensor.len().saturating_mul(tensor.datum_type().size_of()) > u32::MAX as usize,
            );
        zip.start_file(format!("{name}.npy"), options)
            .map_err(anyhow::Error::from)
            .and_then(|()| write_npy_entry(&mut zip, name, tensor, held))
            .with_context(|| format!("writing {name:?} to {}", path.display()))?;
    }
    zip.finish()
        .with_context(|| format!("writing {}", path.display()))?
        .flush()
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// One tensor as `.npy` bytes, see [`write_npz`].
fn write_npy_entry(
    w: &mut impl Write,
    name: &str,
    tensor: &Tensor,
    held: &HashMap<String, HeldType>,
) -> Result<()> {
    match held.get(name) {
        Some(HeldType::Complex64) => {
            return Ok(onnx_types::complex_values::<f32>(tensor)?.write_npy(&mut *w)?);
        }
        Some(HeldType::Complex128) => {
            return Ok(onnx_types::complex_values::<f64>(tensor)?.write_npy(&mut *w)?);
        }
        _ => {}
    }
    let tensor = match tensor.datum_type() {
        DatumType::F16 => return write_f16_npy(w, tensor),
        DatumType::TDim => tensor.cast_to::<i64>()?.into_owned(),
        _ => tensor.clone(),
    };
    macro_rules! write_as {
        ($($t:ty),*) => {
            $(
                if tensor.datum_type() == <$t>::datum_type() {
                    return Ok(tensor.to_plain_array_view::<$t>()?.write_npy(&mut *w)?);
                }
            )*
        };
    }
    for_npy_types!(write_as);
    bail!(
        "output {name:?} is {:?}, which .npz cannot hold",
        tensor.datum_type()
    )
}

/// An f16 tensor as numpy's float16 `.npy` (format 1.0, C order), which
/// ndarray-npy cannot write.
fn write_f16_npy(w: &mut impl Write, tensor: &Tensor) -> Result<()> {
    let dims: Vec<String> = tensor.shape().iter().map(|d| d.to_string()).collect();
    let shape = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut header = format!("{{'descr': '<f2', 'fortran_order': False, 'shape': {shape}, }}");
    // The magic, the version, the header's length, the header and its
    // newline: a multiple of 64 bytes, as numpy aligns them.
    let padded = (10 + header.len() + 1).div_ceil(64) * 64;
    header.push_str(&" ".repeat(padded - 10 - header.len() - 1));
    header.push('\n');
    let len = u16::try_from(header.len())
        .context("the .npy header is too long (a shape of too many dims)")?;
    w.write_all(b"\x93NUMPY\x01\x00")?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(header.as_bytes())?;
    let values = tensor.to_plain_array_view::<f16>()?;
    let mut bytes = Vec::with_capacity(values.len() * 2);
    for v in values.iter() {
        bytes.extend_from_slice(&v.to_bits().to_le_bytes());
    }
    w.write_all(&bytes)?;
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
/// in 0..4 (valid indices into most axes), or in 0..`below` when the model
/// says what they index, booleans fair coins.
pub fn random_tensor(
    dt: DatumType,
    shape: &[usize],
    below: Option<i64>,
    rng: &mut Lcg,
) -> Result<Tensor> {
    let len: usize = shape.iter().product();
    let t = if dt.is_float() {
        let v: Vec<f64> = (0..len).map(|_| rng.unit()).collect();
        Tensor::from_shape(shape, &v)?.cast_to_dt(dt)?.into_owned()
    } else if dt == bool::datum_type() {
        let v: Vec<bool> = (0..len).map(|_| rng.next() & 1 == 1).collect();
        Tensor::from_shape(shape, &v)?
    } else if dt.is_integer() {
        let below = below.filter(|&b| b > 0).map_or(4, |b| b as u64);
        let v: Vec<i64> = (0..len).map(|_| (rng.next() % below) as i64).collect();
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
