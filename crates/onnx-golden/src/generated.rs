//! Node tests generated from onnx releases whose wheels ship no test data.
//!
//! From onnx 1.23 on, wheels carry the node-case generators (`onnx/backend/test/case/node/*.py`,
//! numpy-seeded, deterministic) but not `onnx/backend/test/data`. For such a release
//! (`[[generated]]` in the manifest) the selected tests are generated once with
//! `onnx-testdata/generate_node_tests.py` in a venv holding the hash-pinned onnx wheel and the
//! pinned numpy, and committed under `onnx-testdata/generated/onnx-<version>/node/`: running
//! them needs no Python. Every load checks the committed files against the manifest's hashes;
//! `cargo xtask fetch-testdata` regenerates them into the cache and checks them against the
//! same hashes, so the committed copy is proven to be what the release generates.
//!
//! Shares the manifest types and hash checks with [`crate::fetch`], never its download
//! branches.

use crate::fetch::{sha256_file, verify_files};
use crate::manifest::{GeneratedRelease, PinnedFile};
use crate::suite::Suite;
use anyhow::{Context, Result, bail};
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The generator script, in `onnx-testdata/`.
pub const SCRIPT: &str = "generate_node_tests.py";

/// Where the committed tests of `version` live below `onnx-testdata/`.
pub fn committed_dir(testdata: &Path, version: &str) -> PathBuf {
    testdata.join("generated").join(format!("onnx-{version}"))
}

/// The suite of a generated release, from its committed copy, checked
/// against the manifest (named by its version, like fetched releases).
pub fn committed_suite(release: &GeneratedRelease, testdata: &Path) -> Result<Suite> {
    let dir = committed_dir(testdata, &release.version);
    verify_dir(release, &dir).with_context(|| {
        format!(
            "the committed node tests of onnx {} ({}) do not match onnx-testdata/manifest.toml. \
             Fix: restore them with `git checkout -- {}`, or regenerate files and pins with \
             `cargo xtask update-manifest` and review the diff",
            release.version,
            dir.display(),
            dir.display()
        )
    })?;
    Ok(Suite {
        name: release.version.clone(),
        root: dir.join("node"),
    })
}

/// Checks that `dir` holds exactly the files pinned for `release`: each
/// with its pinned hash (an error names the file and both hashes), and no
/// file the manifest does not pin.
pub fn verify_dir(release: &GeneratedRelease, dir: &Path) -> Result<()> {
    if release.files.is_empty() {
        bail!(
            "the manifest pins no generated files for onnx {}: regenerate it with \
             `cargo xtask update-manifest`",
            release.version
        );
    }
    if !dir.is_dir() {
        bail!(
            "{dir:?} is missing (it should hold node/<test>/... for onnx {})",
            release.version
        );
    }
    verify_files(&release.files, dir)?;
    let pinned: BTreeSet<&str> = release.files.iter().map(|f| f.path.as_str()).collect();
    let unpinned: Vec<String> = list_files(dir)?
        .into_iter()
        .filter(|p| !pinned.contains(p.as_str()))
        .collect();
    if !unpinned.is_empty() {
        bail!(
            "{dir:?} holds files the manifest does not pin: {}",
            unpinned.join(", ")
        );
    }
    Ok(())
}

/// Every file below `dir`, as sorted `/`-separated relative paths.
pub fn list_files(dir: &Path) -> Result<Vec<String>> {
    fn walk(dir: &Path, prefix: &str, out: &mut Vec<String>) -> Result<()> {
        for entry in fs::read_dir(dir).with_context(|| format!("listing {dir:?}"))? {
            let entry = entry.with_context(|| format!("listing {dir:?}"))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                bail!("{:?} has a name that is not UTF-8", entry.path());
            };
            let relative = if prefix.is_empty() {
                name.to_string()
            } else {
                format!("{prefix}/{name}")
            };
            if entry.file_type()?.is_dir() {
                walk(&entry.path(), &relative, out)?;
            } else {
                out.push(relative);
            }
        }
        Ok(())
    }
    let mut out = vec![];
    walk(dir, "", &mut out)?;
    out.sort();
    Ok(out)
}

/// Pins every file below `dir` (for a manifest regeneration).
pub fn pin_dir(dir: &Path) -> Result<Vec<PinnedFile>> {
    list_files(dir)?
        .into_iter()
        .map(|path| {
            let sha256 = sha256_file(&dir.join(&path))?;
            Ok(PinnedFile { path, sha256 })
        })
        .collect()
}

const HOW_TO_FIX_PYTHON: &str = "Generating node tests needs python3 with the venv module and \
pip, and access to PyPI (Debian: `apt-get install python3 python3-venv python3-pip`). Running \
them does not: the committed copy in onnx-testdata/generated/ is all `cargo test` and \
`cargo xtask conformance` read.";

/// Runs a command; a failure is an error with `what`, the command line and
/// the tail of its stderr.
fn run(command: &mut Command, what: &str) -> Result<Output> {
    let line = format!("{command:?}");
    let out = command
        .output()
        .with_context(|| format!("{what}: could not start {line}. {HOW_TO_FIX_PYTHON}"))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(8).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        bail!(
            "{what}: {line} failed ({}):\n{}\n{HOW_TO_FIX_PYTHON}",
            out.status,
            tail.join("\n")
        );
    }
    Ok(out)
}

/// Downloads the onnx `version` wheel pip picks for this machine's python
/// into `dest` (no dependencies) and returns its path.
pub fn download_wheel(version: &str, dest: &Path) -> Result<PathBuf> {
    fs::create_dir_all(dest).with_context(|| format!("creating {dest:?}"))?;
    run(
        Command::new("python3").args(["-m", "pip", "--version"]),
        "probing pip",
    )?;
    run(
        Command::new("python3")
            .args([
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--only-binary=:all:",
                "--disable-pip-version-check",
            ])
            .arg(format!("onnx=={version}"))
            .arg("-d")
            .arg(dest),
        &format!("downloading onnx {version} (is PyPI reachable from this machine?)"),
    )?;
    let prefix = format!("onnx-{version}-");
    let mut wheels: Vec<PathBuf> = fs::read_dir(dest)
        .with_context(|| format!("listing {dest:?}"))?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".whl"))
        })
        .collect();
    wheels.sort();
    wheels
        .pop()
        .with_context(|| format!("pip left no onnx-{version}-*.whl in {dest:?}"))
}

/// The pinned wheel of `release` in `dir`, downloaded if absent, with its
/// name and hash checked against the manifest.
fn pinned_wheel(release: &GeneratedRelease, dir: &Path) -> Result<PathBuf> {
    let wheel = dir.join(&release.wheel);
    let wheel = if wheel.is_file() {
        wheel
    } else {
        let got = download_wheel(&release.version, dir)?;
        let name = got.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if name != release.wheel {
            bail!(
                "pip downloaded {name} for this machine's python; the manifest pins {} for \
                 onnx {} (made with another python). Fix: run with the python the pinned wheel \
                 is for, or re-pin with `cargo xtask update-manifest` and check that the \
                 generated files keep their hashes",
                release.wheel,
                release.version
            );
        }
        got
    };
    let got = sha256_file(&wheel)?;
    if got != release.wheel_sha256 {
        bail!(
            "{wheel:?} has sha256 {got}, the manifest pins {}. Delete it and fetch again; if \
             PyPI really serves a different file, review it and re-pin with \
             `cargo xtask update-manifest`",
            release.wheel_sha256
        );
    }
    Ok(wheel)
}

/// The python of a venv at `venv` holding `wheel` and `numpy==<numpy>`
/// (`numpy` alone when `numpy` is empty), created if absent.
pub fn venv_with(venv: &Path, wheel: &Path, numpy: &str) -> Result<PathBuf> {
    let python = if cfg!(windows) {
        venv.join("Scripts").join("python.exe")
    } else {
        venv.join("bin").join("python")
    };
    if !python.is_file() {
        run(
            Command::new("python3").arg("-m").arg("venv").arg(venv),
            &format!("creating the venv {venv:?}"),
        )?;
    }
    let numpy = if numpy.is_empty() {
        "numpy".to_string()
    } else {
        format!("numpy=={numpy}")
    };
    run(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--only-binary=:all:",
            ])
            .arg(wheel)
            .arg(&numpy),
        &format!("installing {} and {numpy} into {venv:?}", wheel.display()),
    )?;
    Ok(python)
}

/// Runs the generator script with `python`, writing the node tests whose
/// name contains `select` into `out` (which must not exist); returns the
/// test names written.
pub fn run_generator(
    python: &Path,
    script: &Path,
    select: &str,
    out: &Path,
) -> Result<Vec<String>> {
    if !script.is_file() {
        bail!("the generator script {script:?} is missing (it is committed in the repository)");
    }
    let output = run(
        Command::new(python).arg(script).arg(select).arg(out),
        &format!("generating the node tests containing {select:?}"),
    )?;
    Ok(String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("node/").map(str::to_string))
        .collect())
}

/// Makes sure `<cache_root>/generated/<version>` holds the node tests of
/// `release` generated on this machine and matching every pinned hash;
/// generates them when it does not (venv, wheel and numpy under
/// `<cache_root>/generated/`). Returns that directory.
pub fn ensure_generated(
    release: &GeneratedRelease,
    select: &str,
    testdata: &Path,
    cache_root: &Path,
) -> Result<PathBuf> {
    let root = cache_root.join("generated");
    let dir = root.join(&release.version);
    if verify_dir(release, &dir).is_ok() {
        return Ok(dir);
    }
    let result = (|| {
        let wheel = pinned_wheel(release, &root.join("wheels"))?;
        let venv = root.join(format!(
            "venv-onnx-{}-numpy-{}",
            release.version, release.numpy
        ));
        let python = venv_with(&venv, &wheel, &release.numpy)?;
        let staging = root.join(format!(
            ".staging-{}-{}",
            release.version,
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&staging);
        let generated = run_generator(&python, &testdata.join(SCRIPT), select, &staging)
            .and_then(|_| {
                verify_dir(release, &staging).context(
                    "the generated files differ from the manifest's pins (another numpy or \
                     onnx build?)",
                )
            })
            .and_then(|()| {
                if dir.exists() {
                    fs::remove_dir_all(&dir).with_context(|| format!("removing {dir:?}"))?;
                }
                fs::rename(&staging, &dir).with_context(|| format!("moving {staging:?} to {dir:?}"))
            });
        let _ = fs::remove_dir_all(&staging);
        generated
    })();
    result.with_context(|| format!("generating the node tests of onnx {}", release.version))?;
    Ok(dir)
}

/// Generates the node tests of onnx `version` containing `select` into
/// `<work>/out`, in a fresh venv under `work`, without any pin (for
/// `update-manifest` and `check-onnx-release`). Returns the wheel used and
/// the output directory.
pub fn generate_unpinned(
    version: &str,
    numpy: &str,
    select: &str,
    script: &Path,
    work: &Path,
) -> Result<(PathBuf, PathBuf)> {
    let wheel = download_wheel(version, &work.join("wheel"))?;
    let python = venv_with(&work.join("venv"), &wheel, numpy)?;
    let out = work.join("out");
    let _ = fs::remove_dir_all(&out);
    let tests = run_generator(&python, script, select, &out)?;
    if tests.is_empty() {
        bail!("onnx {version} generated no node test containing {select:?}");
    }
    Ok((wheel, out))
}

/// Orders dotted versions numerically (`1.9.0 < 1.10.0`); a pre-release
/// component (`0rc1`) comes before its final (`0`).
pub fn compare_versions(a: &str, b: &str) -> std::cmp::Ordering {
    // (number, is final, suffix): `0rc1` sorts before `0`.
    let key = |v: &str| -> Vec<(u64, bool, String)> {
        v.split('.')
            .map(|c| {
                let digits: String = c.chars().take_while(char::is_ascii_digit).collect();
                let suffix = c[digits.len()..].to_string();
                (digits.parse().unwrap_or(0), suffix.is_empty(), suffix)
            })
            .collect()
    };
    key(a).cmp(&key(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fetch::sha256_hex;
    use crate::manifest::Manifest;

    fn temp_dir(name: &str) -> PathBuf {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        let dir = std::env::temp_dir().join(format!(
            "onnx-golden-generated-{name}-{}-{nanos}",
            std::process::id()
        ));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    const MANIFEST: &str = r#"
select = "scatter"

[[release]]
version = "1.22.0"
python_version = "3.11"
platform = "any"
wheel = "onnx-1.22.0.whl"
wheel_sha256 = "aa"

[[release.file]]
path = "node/test_scatternd/model.onnx"
sha256 = "bb"

[[generated]]
version = "1.23.2"
wheel = "onnx-1.23.2-cp311-cp311-manylinux_2_28_x86_64.whl"
wheel_sha256 = "cc"
numpy = "2.4.6"

[[generated.file]]
path = "node/test_scatternd_max_with_element_indices/model.onnx"
sha256 = "dd"
"#;

    #[test]
    fn manifest_parses_generated_releases_and_roundtrips() {
        let m: Manifest = toml::from_str(MANIFEST).unwrap();
        let g = m.generated_release("1.23.2").unwrap();
        assert_eq!(g.numpy, "2.4.6");
        assert_eq!(
            g.tests().into_iter().collect::<Vec<_>>(),
            ["test_scatternd_max_with_element_indices"]
        );
        assert!(m.generated_release("1.22.0").is_none());
        let text = m.to_toml().unwrap();
        assert_eq!(toml::from_str::<Manifest>(&text).unwrap(), m);
        // A manifest without generated releases still parses (and writes none).
        let old: Manifest =
            toml::from_str(MANIFEST.split("[[generated]]").next().unwrap()).unwrap();
        assert!(old.generated.is_empty());
        assert!(!old.to_toml().unwrap().contains("\n[[generated]]"));
    }

    #[test]
    fn unknown_generated_field_is_refused() {
        let text = MANIFEST.replace("numpy = \"2.4.6\"", "numpy = \"2.4.6\"\npython = \"3.11\"");
        let err = format!("{:#}", toml::from_str::<Manifest>(&text).unwrap_err());
        assert!(err.contains("unknown field `python`"), "{err}");
    }

    fn release_of(dir: &Path, files: &[(&str, &[u8])]) -> GeneratedRelease {
        for (path, bytes) in files {
            let path = dir.join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, bytes).unwrap();
        }
        GeneratedRelease {
            version: "9.9.9".into(),
            wheel: "onnx-9.9.9-py3-none-any.whl".into(),
            wheel_sha256: "unused".into(),
            numpy: "2.4.6".into(),
            files: files
                .iter()
                .map(|(p, b)| PinnedFile {
                    path: p.to_string(),
                    sha256: sha256_hex(b),
                })
                .collect(),
        }
    }

    /// The error with the temporary directory replaced by `<dir>`.
    fn error_of(release: &GeneratedRelease, testdata: &Path) -> String {
        let err = format!("{:#}", committed_suite(release, testdata).unwrap_err());
        err.replace(&format!("{:?}", committed_dir(testdata, "9.9.9")), "<dir>")
            .replace(
                &committed_dir(testdata, "9.9.9").display().to_string(),
                "<dir>",
            )
    }

    #[test]
    fn committed_suite_is_named_by_its_release() {
        let testdata = temp_dir("ok");
        let dir = committed_dir(&testdata, "9.9.9");
        let release = release_of(&dir, &[("node/test_x/model.onnx", b"model")]);
        let suite = committed_suite(&release, &testdata).unwrap();
        assert_eq!(suite.name, "9.9.9");
        assert_eq!(suite.root, dir.join("node"));
        assert_eq!(pin_dir(&dir).unwrap(), release.files);
        fs::remove_dir_all(&testdata).ok();
    }

    #[test]
    fn tampered_file_names_the_file_and_both_hashes() {
        let testdata = temp_dir("tampered");
        let dir = committed_dir(&testdata, "9.9.9");
        let release = release_of(
            &dir,
            &[
                ("node/test_x/model.onnx", b"model"),
                ("node/test_x/test_data_set_0/input_0.pb", b"in"),
            ],
        );
        fs::write(dir.join("node/test_x/model.onnx"), b"tampered").unwrap();
        insta::assert_snapshot!(error_of(&release, &testdata));
        fs::remove_dir_all(&testdata).ok();
    }

    #[test]
    fn missing_and_unpinned_files_are_named() {
        let testdata = temp_dir("missing");
        let dir = committed_dir(&testdata, "9.9.9");
        let mut release = release_of(&dir, &[("node/test_x/model.onnx", b"model")]);
        release.files.push(PinnedFile {
            path: "node/test_x/test_data_set_0/output_0.pb".into(),
            sha256: sha256_hex(b"out"),
        });
        insta::assert_snapshot!("missing_file", error_of(&release, &testdata));

        release.files.pop();
        fs::write(dir.join("node/test_x/extra.pb"), b"x").unwrap();
        insta::assert_snapshot!("unpinned_file", error_of(&release, &testdata));

        fs::remove_dir_all(&dir).unwrap();
        insta::assert_snapshot!("missing_directory", error_of(&release, &testdata));
        fs::remove_dir_all(&testdata).ok();
    }

    #[test]
    fn versions_compare_numerically() {
        use std::cmp::Ordering::*;
        assert_eq!(compare_versions("1.9.0", "1.10.0"), Less);
        assert_eq!(compare_versions("1.23.2", "1.23.2"), Equal);
        assert_eq!(compare_versions("1.24.0", "1.23.2"), Greater);
        assert_eq!(compare_versions("1.24.0rc1", "1.24.0"), Less);
    }
}
