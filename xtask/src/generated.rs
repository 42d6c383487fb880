//! Generated onnx releases (wheels without test data) in `fetch-testdata`,
//! and `cargo xtask check-onnx-release`.

use anyhow::{Context, Result, bail};
use onnx_golden::fetch::pin_wheel_files;
use onnx_golden::generated::{
    SCRIPT, committed_suite, compare_versions, download_wheel, ensure_generated, generate_unpinned,
    pin_dir,
};
use onnx_golden::layout::Layout;
use onnx_golden::manifest::{Manifest, test_names};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// Regenerates every generated release into the cache (a venv per release,
/// on first use) and checks both that copy and the committed one against
/// the manifest.
pub fn fetch(layout: &Layout, manifest: &Manifest) -> Result<()> {
    let testdata = layout.testdata_dir();
    for release in &manifest.generated {
        let suite = committed_suite(release, &testdata)?;
        let dir = ensure_generated(release, &manifest.select, &testdata, &layout.cache_dir())?;
        eprintln!(
            "onnx {} (generated, numpy {}): {} tests, {} files generated on this machine in {}, \
             verified; committed copy in {} verified",
            release.version,
            release.numpy,
            release.tests().len(),
            release.files.len(),
            dir.display(),
            suite.root.display()
        );
    }
    Ok(())
}

/// Re-pins every generated release: generates it afresh (the wheel pip
/// picks for this python, the pinned numpy), replaces the committed copy
/// and records the wheel and file hashes.
pub fn update_manifest(layout: &Layout, manifest: &mut Manifest, scratch: &Path) -> Result<()> {
    let testdata = layout.testdata_dir();
    for release in &mut manifest.generated {
        let work = scratch.join(format!("generated-{}", release.version));
        let (wheel, out) = generate_unpinned(
            &release.version,
            &release.numpy,
            &manifest.select,
            &testdata.join(SCRIPT),
            &work,
        )?;
        release.wheel = wheel
            .file_name()
            .and_then(|n| n.to_str())
            .context("wheel file name is not UTF-8")?
            .to_string();
        release.wheel_sha256 = onnx_golden::fetch::sha256_file(&wheel)?;
        release.files = pin_dir(&out)?;
        let committed = onnx_golden::generated::committed_dir(&testdata, &release.version);
        if committed.exists() {
            std::fs::remove_dir_all(&committed)
                .with_context(|| format!("removing {committed:?}"))?;
        }
        copy_tree(&out, &committed)?;
        eprintln!(
            "onnx {} (generated): {} ({} tests, {} files) written to {}",
            release.version,
            release.wheel,
            release.tests().len(),
            release.files.len(),
            committed.display()
        );
    }
    Ok(())
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    for path in onnx_golden::generated::list_files(from)? {
        let target = to.join(&path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("creating {parent:?}"))?;
        }
        std::fs::copy(from.join(&path), &target)
            .with_context(|| format!("copying {path} to {target:?}"))?;
    }
    Ok(())
}

/// The newest onnx release on PyPI, from `pip index versions onnx`.
fn newest_on_pypi() -> Result<String> {
    let out = Command::new("python3")
        .args([
            "-m",
            "pip",
            "index",
            "versions",
            "onnx",
            "--disable-pip-version-check",
        ])
        .output()
        .context("running `python3 -m pip index versions onnx` (is python3 with pip installed?)")?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        bail!(
            "`python3 -m pip index versions onnx` failed (is PyPI reachable?): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    // First line: `onnx (1.23.2)`.
    stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("onnx (")?.strip_suffix(')'))
        .map(str::to_string)
        .with_context(|| format!("no `onnx (VERSION)` line in pip's answer: {stdout:?}"))
}

/// `cargo xtask check-onnx-release`: is there an onnx release newer than the
/// newest pinned (or the pinned `against`), and which node tests of the
/// selection would it add?
pub fn check_onnx_release(layout: &Layout, against: Option<&str>) -> Result<()> {
    let manifest = layout.manifest()?;
    let pinned = manifest
        .releases
        .iter()
        .map(|r| (r.version.as_str(), test_names(&r.files), "fetched"))
        .chain(
            manifest
                .generated
                .iter()
                .map(|r| (r.version.as_str(), r.tests(), "generated")),
        )
        .filter(|r| against.is_none_or(|v| v == r.0))
        .max_by(|a, b| compare_versions(a.0, b.0))
        .with_context(|| match against {
            Some(v) => format!("--against {v}: the manifest pins no release {v}"),
            None => "the manifest pins no release".into(),
        })?;
    let (pinned_version, pinned_tests, how) = pinned;
    let newest = newest_on_pypi()?;
    println!("newest onnx on PyPI: {newest}");
    println!(
        "{}: {pinned_version} ({how}, {} tests containing {:?})",
        if against.is_some() {
            "compared with"
        } else {
            "newest pinned"
        },
        pinned_tests.len(),
        manifest.select
    );
    if compare_versions(&newest, pinned_version) != std::cmp::Ordering::Greater {
        println!("onnx {newest} is not newer than {pinned_version}: nothing to add.");
        return Ok(());
    }
    let scratch = std::env::temp_dir().join(format!("xtask-check-onnx-{}", std::process::id()));
    let result = new_tests(layout, &manifest, &newest, &scratch);
    std::fs::remove_dir_all(&scratch).ok();
    let (tests, ships_data) = result?;
    let added: Vec<&String> = tests.difference(&pinned_tests).collect();
    let removed: Vec<&String> = pinned_tests.difference(&tests).collect();
    println!(
        "onnx {newest} is newer; its wheel {} test data ({} tests containing {:?}, {})",
        if ships_data { "ships" } else { "ships no" },
        tests.len(),
        manifest.select,
        if ships_data {
            "read from the wheel"
        } else {
            "generated in a temporary venv"
        },
    );
    println!("added compared with {pinned_version}: {}", list(&added));
    println!("gone compared with {pinned_version}: {}", list(&removed));
    let already =
        manifest.release(&newest).is_some() || manifest.generated_release(&newest).is_some();
    if already {
        println!("onnx {newest} is already pinned in onnx-testdata/manifest.toml.");
        return Ok(());
    }
    println!(
        "To pin it, add a [[{}]] entry for {newest} to onnx-testdata/manifest.toml, run \
         `cargo xtask update-manifest`, and add it to tests/golden_suite.rs (see docs/conformance.md, Test data).",
        if ships_data { "release" } else { "generated" }
    );
    Ok(())
}

fn list(tests: &[&String]) -> String {
    if tests.is_empty() {
        "none".into()
    } else {
        tests
            .iter()
            .map(|t| t.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The selected node tests of onnx `version`, from its wheel's data or
/// generated; and whether the wheel ships data.
fn new_tests(
    layout: &Layout,
    manifest: &Manifest,
    version: &str,
    scratch: &Path,
) -> Result<(BTreeSet<String>, bool)> {
    let wheel = download_wheel(version, &scratch.join("download"))?;
    let files = pin_wheel_files(&wheel, &manifest.select)?;
    if !files.is_empty() {
        return Ok((test_names(&files), true));
    }
    let numpy = manifest
        .generated
        .iter()
        .max_by(|a, b| compare_versions(&a.version, &b.version))
        .map(|r| r.numpy.as_str())
        .unwrap_or_default();
    let (_, out) = generate_unpinned(
        version,
        numpy,
        &manifest.select,
        &layout.testdata_dir().join(SCRIPT),
        &scratch.join("generate"),
    )?;
    Ok((test_names(&pin_dir(&out)?), false))
}
