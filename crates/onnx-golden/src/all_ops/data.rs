//! The node-test data of the all-ops run: the cache directory
//! `<cache>/<version>-all/`, extraction of the whole `node/` directory from
//! the hash-verified wheel, and the `SHA256SUMS` check (and repair by
//! extracting afresh) on every use. It must not depend on the operator
//! mapping, the report or anything that runs a framework: it only
//! guarantees the files are the pinned wheel's.

use crate::fetch::{Source, pip_download, sha256_file, sha256_hex};
use crate::manifest::{DATA_DIR_IN_WHEEL, Release};
use anyhow::{Context, Result, bail};
use std::fmt::Write as _;
use std::fs;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// Name of the hash list written next to `node/`: the wheel's hash, then one line
/// per extracted file.
const SUMS_FILE: &str = "SHA256SUMS";

/// Cache directory of the full node-test set of `version`.
pub fn all_ops_dir(cache_root: &Path, version: &str) -> PathBuf {
    cache_root.join(format!("{version}-all"))
}

/// The newest release of the manifest that ships node-test data (pins files),
/// by numeric version order.
pub fn newest_release(releases: &[Release]) -> Option<&Release> {
    releases
        .iter()
        .filter(|r| !r.files.is_empty())
        .max_by_key(|r| version_key(&r.version))
}

fn version_key(version: &str) -> Vec<u64> {
    version
        .split('.')
        .map(|part| {
            let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().unwrap_or(0)
        })
        .collect()
}

/// Makes sure `<cache_root>/<version>-all/node/` holds every node test of
/// `release`'s wheel, each file matching the hash recorded when it was
/// extracted from the hash-verified wheel. Returns the `node/` directory.
///
/// `source`: pip, or a local directory that holds the pinned wheel itself
/// (an unpacked checkout has no pin covering its files) or is another
/// clone's cache (its `<version>-all/`, verified as the cache is).
pub fn ensure_all_node_tests(
    release: &Release,
    cache_root: &Path,
    source: &Source,
) -> Result<PathBuf> {
    let dir = all_ops_dir(cache_root, &release.version);
    if verify_all(release, &dir).is_ok() {
        return Ok(dir.join("node"));
    }
    fs::create_dir_all(cache_root).with_context(|| format!("creating {cache_root:?}"))?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let staging = cache_root.join(format!(
        ".staging-{}-all-{}-{nanos}",
        release.version,
        std::process::id()
    ));
    let _ = fs::remove_dir_all(&staging);
    let started = std::time::Instant::now();
    eprintln!(
        "onnx {}: fetching every node test ({}) into {}",
        release.version,
        source.describe(&release.wheel),
        dir.display()
    );
    let result = populate(release, source, &staging).and_then(|()| {
        verify_all(release, &staging)?;
        if dir.exists() {
            fs::remove_dir_all(&dir).with_context(|| format!("removing stale cache {dir:?}"))?;
        }
        fs::rename(&staging, &dir).with_context(|| format!("moving {staging:?} to {dir:?}"))
    });
    let _ = fs::remove_dir_all(&staging);
    result.with_context(|| format!("fetching every node test of onnx {}", release.version))?;
    eprintln!(
        "onnx {}: every node test verified in {:.1} s",
        release.version,
        started.elapsed().as_secs_f64()
    );
    Ok(dir.join("node"))
}

fn populate(release: &Release, source: &Source, staging: &Path) -> Result<()> {
    match source {
        Source::Pip => {
            let download = staging.join(".download");
            let wheel = pip_download(release, &download)?;
            extract_node_dir(release, &wheel, staging)?;
            fs::remove_dir_all(&download).ok();
            Ok(())
        }
        Source::Local(root) => {
            let other_cache = all_ops_dir(root, &release.version);
            if verify_all(release, &other_cache).is_ok() {
                return copy_tree(&other_cache, staging);
            }
            let wheel = root.join(&release.wheel);
            if !wheel.is_file() {
                bail!(
                    "{root:?} holds neither the pinned wheel {} nor a cache's {:?} matching it: \
                     the all-ops run extracts every node test from the hash-verified wheel (an \
                     unpacked checkout has no pin covering all its files). Put the wheel there, \
                     point --from / ONNX_TESTDATA_FROM at another clone's cache, or unset them \
                     to download it with pip.",
                    release.wheel,
                    other_cache.file_name().unwrap_or_default()
                );
            }
            let got = sha256_file(&wheel)?;
            if got != release.wheel_sha256 {
                bail!(
                    "{wheel:?} has sha256 {got}, the manifest pins {}",
                    release.wheel_sha256
                );
            }
            extract_node_dir(release, &wheel, staging)
        }
    }
}

/// Copies the files below `from` (another cache's `<version>-all/`) into
/// `to`; the caller verifies the copy.
fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to).with_context(|| format!("creating {to:?}"))?;
    for entry in fs::read_dir(from).with_context(|| format!("listing {from:?}"))? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), &target)
                .with_context(|| format!("copying {:?} to {target:?}", entry.path()))?;
        }
    }
    Ok(())
}

/// Extracts every file below `onnx/backend/test/data/node/` of the (already
/// verified) wheel into `dest/node/` and writes `dest/SHA256SUMS`.
fn extract_node_dir(release: &Release, wheel: &Path, dest: &Path) -> Result<()> {
    let file = fs::File::open(wheel).with_context(|| format!("opening {wheel:?}"))?;
    let mut archive =
        zip::ZipArchive::new(file).with_context(|| format!("{wheel:?} is not a zip archive"))?;
    let prefix = format!("{DATA_DIR_IN_WHEEL}/");
    let mut sums = format!("# wheel {} {}\n", release.wheel, release.wheel_sha256);
    let mut count = 0usize;
    for ix in 0..archive.len() {
        let mut entry = archive.by_index(ix)?;
        if entry.is_dir() {
            continue;
        }
        let Some(relative) = entry.name().strip_prefix(&prefix).map(str::to_string) else {
            continue;
        };
        if !relative.starts_with("node/") {
            continue;
        }
        if !Path::new(&relative)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
        {
            bail!("{wheel:?}: entry {relative:?} is not a plain relative path");
        }
        let mut bytes = Vec::new();
        entry
            .read_to_end(&mut bytes)
            .with_context(|| format!("extracting {relative}"))?;
        let path = dest.join(&relative);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).with_context(|| format!("creating {parent:?}"))?;
        }
        fs::write(&path, &bytes).with_context(|| format!("writing {path:?}"))?;
        let _ = writeln!(sums, "{}  {relative}", sha256_hex(&bytes));
        count += 1;
    }
    if count == 0 {
        bail!("{wheel:?} holds no {prefix}node/ files");
    }
    fs::write(dest.join(SUMS_FILE), sums).with_context(|| format!("writing {SUMS_FILE}"))
}

/// Checks `dir/SHA256SUMS` names `release`'s pinned wheel and every file it
/// lists is present with its hash.
fn verify_all(release: &Release, dir: &Path) -> Result<()> {
    let sums = fs::read_to_string(dir.join(SUMS_FILE))
        .with_context(|| format!("reading {:?}", dir.join(SUMS_FILE)))?;
    let mut lines = sums.lines();
    let header = format!("# wheel {} {}", release.wheel, release.wheel_sha256);
    if lines.next() != Some(header.as_str()) {
        bail!(
            "{dir:?} was not extracted from the pinned wheel {}",
            release.wheel
        );
    }
    let mut count = 0usize;
    for line in lines {
        let Some((hash, relative)) = line.split_once("  ") else {
            bail!("{dir:?}/{SUMS_FILE}: malformed line {line:?}");
        };
        let path = dir.join(relative);
        let bytes = fs::read(&path).with_context(|| format!("reading {path:?}"))?;
        if sha256_hex(&bytes) != hash {
            bail!("{path:?} does not match its recorded sha256");
        }
        count += 1;
    }
    if count == 0 {
        bail!("{dir:?}/{SUMS_FILE} lists no file");
    }
    let present = count_files(&dir.join("node"))?;
    if present != count {
        bail!("{dir:?}/node holds {present} files, {SUMS_FILE} lists {count}");
    }
    Ok(())
}

fn count_files(dir: &Path) -> Result<usize> {
    let mut n = 0;
    for entry in fs::read_dir(dir).with_context(|| format!("listing {dir:?}"))? {
        let entry = entry?;
        n += if entry.file_type()?.is_dir() {
            count_files(&entry.path())?
        } else {
            1
        };
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::all_ops::test_support::temp_dir;

    /// A wheel holding two node-test files and one file outside `node/`.
    fn fake_wheel(dir: &Path) -> (PathBuf, Release) {
        use std::io::Write as _;
        let path = dir.join("onnx-9.9.9-py3-none-any.whl");
        let mut zip = zip::ZipWriter::new(fs::File::create(&path).unwrap());
        let options = zip::write::SimpleFileOptions::default();
        for (name, bytes) in [
            (
                "onnx/backend/test/data/node/test_abs/model.onnx",
                &b"model"[..],
            ),
            (
                "onnx/backend/test/data/node/test_abs/test_data_set_0/input_0.pb",
                b"input",
            ),
            ("onnx/backend/test/data/simple/test_x/model.onnx", b"other"),
        ] {
            zip.start_file(name, options).unwrap();
            zip.write_all(bytes).unwrap();
        }
        zip.finish().unwrap();
        let release = Release {
            version: "9.9.9".into(),
            python_version: "3.11".into(),
            platform: "any".into(),
            wheel: "onnx-9.9.9-py3-none-any.whl".into(),
            wheel_sha256: sha256_file(&path).unwrap(),
            files: vec![],
        };
        (path, release)
    }

    #[test]
    fn the_whole_node_dir_comes_from_the_verified_wheel_and_tampering_is_repaired() {
        let wheels = temp_dir("wheels");
        let cache = temp_dir("cache");
        let (_, release) = fake_wheel(&wheels);
        let source = Source::Local(wheels.clone());
        let node = ensure_all_node_tests(&release, &cache, &source).unwrap();
        assert_eq!(node, all_ops_dir(&cache, "9.9.9").join("node"));
        assert_eq!(
            fs::read(node.join("test_abs/model.onnx")).unwrap(),
            b"model"
        );
        assert!(!all_ops_dir(&cache, "9.9.9").join("simple").exists());

        // A changed file, or one the wheel did not hold: extracted afresh.
        fs::write(node.join("test_abs/model.onnx"), b"tampered").unwrap();
        ensure_all_node_tests(&release, &cache, &source).unwrap();
        assert_eq!(
            fs::read(node.join("test_abs/model.onnx")).unwrap(),
            b"model"
        );
        fs::create_dir_all(node.join("test_extra")).unwrap();
        fs::write(node.join("test_extra/model.onnx"), b"x").unwrap();
        ensure_all_node_tests(&release, &cache, &source).unwrap();
        assert!(!node.join("test_extra").exists());

        // A wheel that is not the pinned one is refused, naming both hashes.
        let mut other = release.clone();
        other.wheel_sha256 = "00".repeat(32);
        fs::remove_dir_all(all_ops_dir(&cache, "9.9.9")).unwrap();
        let err = format!(
            "{:#}",
            ensure_all_node_tests(&other, &cache, &source).unwrap_err()
        );
        assert!(err.contains("the manifest pins"), "{err}");
        // So is a directory without the wheel (nothing pins its files).
        let err = format!(
            "{:#}",
            ensure_all_node_tests(&release, &cache, &Source::Local(cache.clone())).unwrap_err()
        );
        assert!(err.contains("holds neither the pinned wheel"), "{err}");
        fs::remove_dir_all(&wheels).ok();
        fs::remove_dir_all(&cache).ok();
    }

    #[test]
    fn another_clones_cache_is_a_source_once_it_verifies() {
        let wheels = temp_dir("wheels");
        let theirs = temp_dir("theirs");
        let ours = temp_dir("ours");
        let (_, release) = fake_wheel(&wheels);
        ensure_all_node_tests(&release, &theirs, &Source::Local(wheels.clone())).unwrap();
        // No wheel in their cache: the extracted tree is copied and verified.
        let node = ensure_all_node_tests(&release, &ours, &Source::Local(theirs.clone())).unwrap();
        assert_eq!(
            fs::read(node.join("test_abs/model.onnx")).unwrap(),
            b"model"
        );
        // A tampered cache is no source.
        fs::remove_dir_all(all_ops_dir(&ours, "9.9.9")).unwrap();
        let theirs_node = all_ops_dir(&theirs, "9.9.9").join("node");
        fs::write(theirs_node.join("test_abs/model.onnx"), b"tampered").unwrap();
        let err = format!(
            "{:#}",
            ensure_all_node_tests(&release, &ours, &Source::Local(theirs.clone())).unwrap_err()
        );
        assert!(err.contains("holds neither the pinned wheel"), "{err}");
        for dir in [wheels, theirs, ours] {
            fs::remove_dir_all(dir).ok();
        }
    }

    #[test]
    fn newest_release_with_data_is_chosen_numerically() {
        let release = |version: &str, files: usize| Release {
            version: version.into(),
            python_version: "3.11".into(),
            platform: "any".into(),
            wheel: "w".into(),
            wheel_sha256: "0".into(),
            files: (0..files)
                .map(|i| crate::manifest::PinnedFile {
                    path: format!("node/t/{i}"),
                    sha256: "0".into(),
                })
                .collect(),
        };
        let releases = [
            release("1.9.0", 1),
            release("1.22.0", 1),
            release("1.23.2", 0),
        ];
        assert_eq!(newest_release(&releases).unwrap().version, "1.22.0");
    }
}
