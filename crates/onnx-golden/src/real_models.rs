//! The real-model suite: published models with expected outputs, as
//! node-test directories.
//!
//! `onnx-testdata/real-models/models.toml` pins each model (committed, or
//! in a PyPI wheel, by SHA-256); `real-models/<name>/test_data_set_*/` hold
//! inputs and expected outputs, `real-models/<name>/tolerance.toml` the
//! float tolerances. A model with data sets is assembled under the clone's
//! `onnx-testdata/cache/real-models/<name>/` (model file, data sets,
//! tolerance; per clone, since the data sets are the clone's), so the
//! harness runs it like any node test.

use crate::fetch::{Source, sha256_file};
use crate::node_test::TOLERANCE_FILE;
use crate::suite::Suite;
use crate::wheel_file::wheel_files_from_toml;
use anyhow::{Context, Result, bail};
use std::fs;
use std::path::Path;

/// Suite name of the real models.
pub const REAL_MODELS: &str = "real-models";

/// Assembles the suite from `testdata` (the `onnx-testdata/` directory)
/// under `assembled`, fetching pinned models from `source` into `cache`.
pub fn real_model_suite(
    testdata: &Path,
    cache: &Path,
    assembled: &Path,
    source: &Source,
) -> Result<Suite> {
    let dir = testdata.join(REAL_MODELS);
    let list = dir.join("models.toml");
    let text = fs::read_to_string(&list).with_context(|| format!("reading {list:?}"))?;
    let root = assembled.join(REAL_MODELS);
    for model in wheel_files_from_toml(&text, "model")? {
        let data = dir.join(&model.name);
        if !data.join("test_data_set_0").is_dir() {
            continue;
        }
        let committed = data.join("model.onnx");
        let path = if committed.is_file() {
            let got = sha256_file(&committed)?;
            if got != model.sha256 {
                bail!(
                    "{committed:?} has SHA-256 {got}, models.toml pins {}",
                    model.sha256
                );
            }
            committed
        } else {
            model.ensure(cache, source)?
        };
        let case = root.join(&model.name);
        fs::create_dir_all(&case).with_context(|| format!("creating {case:?}"))?;
        let target = case.join("model.onnx");
        if sha256_file(&target).ok().as_deref() != Some(model.sha256.as_str()) {
            fs::copy(&path, &target).with_context(|| format!("copying {path:?} to {target:?}"))?;
        }
        for entry in fs::read_dir(&data)? {
            let entry = entry?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with("test_data_set_") {
                copy_dir(&entry.path(), &case.join(&*name))?;
            } else if name == TOLERANCE_FILE {
                fs::copy(entry.path(), case.join(TOLERANCE_FILE))?;
            }
        }
    }
    Ok(Suite {
        name: REAL_MODELS.to_string(),
        root,
    })
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to).with_context(|| format!("creating {to:?}"))?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        fs::copy(entry.path(), to.join(entry.file_name()))
            .with_context(|| format!("copying {:?}", entry.path()))?;
    }
    Ok(())
}
