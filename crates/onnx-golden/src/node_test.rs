//! Reading ONNX node-test directories.
//!
//! Layout (as in `onnx/backend/test/data/node/<test>/`):
//! ```text
//! <test>/model.onnx
//! <test>/test_data_set_<k>/input_<i>.pb     (TensorProto)
//! <test>/test_data_set_<k>/output_<i>.pb    (TensorProto)
//! <test>/expected_error.txt                  (optional, golden-suite extension)
//! <test>/tolerance.toml                      (optional: rtol, atol for floats; default ONNX's)
//! ```

use crate::tensor_proto::decode_tensor_bytes;
use anyhow::{Context, Result, bail};
use prost::Message;
use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use tract_onnx::pb::ModelProto;
use tract_onnx::prelude::Tensor;

/// File name of the optional error expectation of a node test.
pub const EXPECTED_ERROR_FILE: &str = "expected_error.txt";

/// File name of the optional float tolerances of a node test (a whole
/// model's outputs, computed in another order than the reference's).
pub const TOLERANCE_FILE: &str = "tolerance.toml";

/// The float tolerances of the node test at `dir`, in a suite whose
/// directory is `root`: the nearest `tolerance.toml` (`rtol = ...`,
/// `atol = ...`, both required) in `dir` or in a directory above it up to
/// `root` (one for a whole suite, or a group of its tests), else
/// `default`. An unreadable or malformed file, or a negative or NaN
/// tolerance, is an error naming the file.
pub fn tolerance_of(
    dir: &Path,
    root: &Path,
    default: crate::compare::Tolerance,
) -> Result<crate::compare::Tolerance> {
    let mut searched = dir.ancestors();
    let mut at = searched.next();
    while let Some(directory) = at {
        let file = directory.join(TOLERANCE_FILE);
        if file.is_file() {
            let text = fs::read_to_string(&file).with_context(|| format!("reading {file:?}"))?;
            let tolerance: crate::compare::Tolerance =
                toml::from_str(&text).with_context(|| format!("parsing {file:?}"))?;
            if !(tolerance.rtol >= 0.0 && tolerance.atol >= 0.0) {
                bail!(
                    "{file:?}: rtol = {}, atol = {}: tolerances must be non-negative numbers",
                    tolerance.rtol,
                    tolerance.atol
                );
            }
            return Ok(tolerance);
        }
        if directory == root || !directory.starts_with(root) {
            break;
        }
        at = searched.next();
    }
    Ok(default)
}

/// One node-test directory, with its data sets decoded.
#[derive(Debug, Clone)]
pub struct NodeTest {
    /// Directory name, e.g. `test_scatternd`.
    pub name: String,
    /// The test directory.
    pub dir: PathBuf,
    /// When present, the test passes only if loading or running the model
    /// fails with an error whose debug chain contains this text (case-insensitive).
    pub expected_error: Option<String>,
    /// Float tolerances: `tolerance.toml` when present, else ONNX's.
    pub tolerance: crate::compare::Tolerance,
    /// Data sets in `test_data_set_<k>` order (numeric order of `k`).
    pub data_sets: Vec<DataSet>,
}

/// One `test_data_set_<k>` directory.
#[derive(Debug, Clone)]
pub struct DataSet {
    /// Directory name, e.g. `test_data_set_0`.
    pub name: String,
    /// `input_<i>.pb`, in order of `i`.
    pub inputs: Vec<Tensor>,
    /// `output_<i>.pb`, in order of `i` (may be empty for error tests).
    pub outputs: Vec<Tensor>,
}

impl NodeTest {
    /// Path of the model file.
    pub fn model_path(&self) -> PathBuf {
        self.dir.join("model.onnx")
    }

    /// Reads a node-test directory. Errors (never panics) on missing
    /// `model.onnx`, unreadable or undecodable tensors, and gaps in the
    /// `input_<i>`/`output_<i>` numbering.
    pub fn load(dir: &Path) -> Result<NodeTest> {
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .with_context(|| format!("node-test directory {dir:?} has no UTF-8 name"))?
            .to_string();
        if !dir.join("model.onnx").is_file() {
            bail!("{dir:?} is not a node test: no model.onnx");
        }
        let expected_error = match fs::read_to_string(dir.join(EXPECTED_ERROR_FILE)) {
            Ok(s) if s.trim().is_empty() => {
                bail!(
                    "{dir:?}: {EXPECTED_ERROR_FILE} is empty (write the expected error text in it)"
                )
            }
            Ok(s) => Some(s.trim().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(e).with_context(|| format!("reading {EXPECTED_ERROR_FILE} in {dir:?}"));
            }
        };
        let data_sets = numbered_entries(dir, "test_data_set_", "")?
            .into_iter()
            .map(|(_, path)| DataSet::load(&path))
            .collect::<Result<Vec<_>>>()?;
        let tolerance = match fs::read_to_string(dir.join(TOLERANCE_FILE)) {
            Ok(text) => toml::from_str(&text)
                .with_context(|| format!("parsing {:?}", dir.join(TOLERANCE_FILE)))?,
            Err(_) => crate::compare::Tolerance::default(),
        };
        Ok(NodeTest {
            tolerance,
            name,
            dir: dir.to_path_buf(),
            expected_error,
            data_sets,
        })
    }

    /// The default-domain (`""` or `ai.onnx`) opset the model imports, if any.
    pub fn opset(&self) -> Result<Option<i64>> {
        let bytes = fs::read(self.model_path())
            .with_context(|| format!("reading {:?}", self.model_path()))?;
        let model = ModelProto::decode(bytes.as_slice())
            .with_context(|| format!("decoding {:?} as ModelProto", self.model_path()))?;
        Ok(model
            .opset_import
            .iter()
            .find(|o| o.domain.is_empty() || o.domain == "ai.onnx")
            .map(|o| o.version))
    }
}

impl DataSet {
    fn load(dir: &Path) -> Result<DataSet> {
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        let read = |prefix: &str| -> Result<Vec<Tensor>> {
            numbered_entries(dir, prefix, ".pb")?
                .into_iter()
                .map(|(_, path)| {
                    let bytes = fs::read(&path).with_context(|| format!("reading {path:?}"))?;
                    decode_tensor_bytes(&bytes).with_context(|| format!("in {path:?}"))
                })
                .collect()
        };
        Ok(DataSet {
            inputs: read("input_")?,
            outputs: read("output_")?,
            name,
        })
    }
}

/// Entries of `dir` named `<prefix><number><suffix>`, sorted by number and
/// required to be numbered 0..n without gaps (a gap means a lost file).
fn numbered_entries(dir: &Path, prefix: &str, suffix: &str) -> Result<Vec<(usize, PathBuf)>> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).with_context(|| format!("listing {dir:?}"))? {
        let entry = entry?;
        let file_name = entry.file_name();
        let Some(n) = file_name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|n| n.strip_suffix(suffix))
            .and_then(|n| n.parse::<usize>().ok())
        else {
            continue;
        };
        found.push((n, entry.path()));
    }
    found.sort();
    for (expected, (n, path)) in found.iter().enumerate() {
        if *n != expected {
            bail!("{path:?}: expected {prefix}{expected}{suffix} before it (numbering has a gap)");
        }
    }
    Ok(found)
}

/// Finds node-test directories (those holding a `model.onnx`, a file or a
/// symbolic link to one) at or below `root`, sorted by path. A missing
/// `root` yields no tests.
///
/// Symbolic links to directories are followed (a suite may be assembled
/// from links, as build systems' runfiles are), and tests are named by the
/// path through the link. Each directory is walked once, by its canonical
/// path: a link cycle ends there, and a directory reached by two paths is
/// found under the first of them in name order.
pub fn discover(root: &Path) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    if root.is_dir() {
        walk(root, &mut found, &mut HashSet::new())?;
    }
    found.sort();
    Ok(found)
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>, visited: &mut HashSet<PathBuf>) -> Result<()> {
    let canonical = dir
        .canonicalize()
        .with_context(|| format!("resolving {dir:?}"))?;
    if !visited.insert(canonical) {
        return Ok(());
    }
    if dir.join("model.onnx").is_file() {
        found.push(dir.to_path_buf());
        return Ok(());
    }
    let mut children = Vec::new();
    for entry in fs::read_dir(dir).with_context(|| format!("listing {dir:?}"))? {
        let entry = entry?;
        let file_type = entry.file_type()?;
        // `Path::is_dir` follows links; a dangling link is no directory.
        if file_type.is_dir() || (file_type.is_symlink() && entry.path().is_dir()) {
            children.push(entry.path());
        }
    }
    children.sort();
    for child in children {
        walk(&child, found, visited)?;
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// `<tmp>/<name>` emptied, for one test.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("onnx-golden-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn discover_follows_links_to_tests_and_models_and_stops_at_cycles() {
        let base = scratch("discover-links");
        // Real tests elsewhere; the suite is links only.
        let real = base.join("real");
        for test in ["a", "b"] {
            fs::create_dir_all(real.join(test)).unwrap();
            fs::write(real.join(test).join("model.onnx"), b"").unwrap();
        }
        let suite = base.join("suite");
        fs::create_dir_all(suite.join("group")).unwrap();
        symlink(real.join("a"), suite.join("linked_a")).unwrap();
        // A test directory of its own whose model.onnx is a link.
        fs::create_dir_all(suite.join("group").join("c")).unwrap();
        symlink(
            real.join("b").join("model.onnx"),
            suite.join("group").join("c").join("model.onnx"),
        )
        .unwrap();
        // A link back up (a cycle) and a dangling link.
        symlink(&suite, suite.join("group").join("loop")).unwrap();
        symlink(base.join("nowhere"), suite.join("dangling")).unwrap();

        let found = discover(&suite).unwrap();
        assert_eq!(
            found,
            [suite.join("group").join("c"), suite.join("linked_a")]
        );
        // The suite root itself may be a link.
        symlink(&suite, base.join("suite_link")).unwrap();
        assert_eq!(discover(&base.join("suite_link")).unwrap().len(), 2);
        fs::remove_dir_all(&base).unwrap();
    }
}
