//! Where the golden suite's files live in a repository (the map is on [`Layout`]), and turning
//! them into runnable [`Suite`]s.

use crate::expected_failures::ExpectedFailures;
use crate::fetch::{Source, ensure_release};
use crate::manifest::Manifest;
use crate::suite::Suite;
use anyhow::Result;
use std::path::{Path, PathBuf};

/// Suite name of the extended corpus (also used in expected-failures.toml).
pub const EXTENDED: &str = "extended";

/// Suite name of the autograd golden cases (`onnx-testdata/autograd/`).
pub const AUTOGRAD: &str = "autograd";

/// The element-type corpus's directory below the test data (one suite per
/// type: `types/bfloat16`, `types/complex`).
pub const TYPES: &str = "types";

/// The paths of the golden suite's files in one repository, and the suites they make:
///
/// ```text
/// <root>/onnx-testdata/manifest.toml            pinned releases and hashes
/// <root>/onnx-testdata/expected-failures.toml   known failures of the gating framework
/// <cache>/<version>/node/                      fetched official tests, shared by
///                                               every clone ([`shared_cache_dir`])
/// <root>/onnx-testdata/cache/                   this clone's assembled suites (git-ignored)
/// <root>/onnx-testdata/generated/onnx-<version>/node/  official tests generated from
///                                               wheels without data (committed)
/// <root>/onnx-testdata/extended/                the project's own corpus
/// <root>/onnx-testdata/exporters/<exporter>/     models written by real exporters, one suite each
/// <root>/onnx-testdata/recurrent/<exporter>/     recurrent models by real exporters
///                                               (Loop, Scan, LSTM)
/// <root>/onnx-testdata/autograd/                gradient ops' cases from PyTorch autograd
/// <root>/onnx-testdata/real-models/              pinned published models and their
///                                               expected outputs
/// ```
#[derive(Debug, Clone)]
pub struct Layout {
    /// The repository (workspace) root.
    pub root: PathBuf,
}

impl Layout {
    /// `root` is the repository (workspace) root.
    pub fn new(root: impl Into<PathBuf>) -> Layout {
        Layout { root: root.into() }
    }

    fn testdata(&self) -> PathBuf {
        self.root.join("onnx-testdata")
    }

    /// `onnx-testdata/manifest.toml`: the pinned releases ([`Manifest`]).
    pub fn manifest_path(&self) -> PathBuf {
        self.testdata().join("manifest.toml")
    }

    /// `onnx-testdata/expected-failures.toml`: the gating framework's known failures.
    pub fn expected_failures_path(&self) -> PathBuf {
        self.testdata().join("expected-failures.toml")
    }

    /// The cache of downloaded test data (each fetched release in
    /// `<version>/node/`, every node test of one in `<version>-all/`,
    /// files of pinned wheels in `wheels/`): [`shared_cache_dir`], one
    /// directory for every clone, else (no home directory, or one that
    /// cannot be written) this clone's [`clone_cache_dir`](Layout::clone_cache_dir).
    /// Everything in it is checked against the manifest's hashes on use, so
    /// clones of different commits share it safely.
    pub fn cache_dir(&self) -> PathBuf {
        usable(shared_cache_dir()).unwrap_or_else(|| self.clone_cache_dir())
    }

    /// `onnx-testdata/cache/` (git-ignored): what this clone assembles from
    /// its own files (the real-model suite), and the cache when there is no
    /// shared one.
    pub fn clone_cache_dir(&self) -> PathBuf {
        self.testdata().join("cache")
    }

    /// The repository's `onnx-testdata/` directory.
    pub fn testdata_dir(&self) -> PathBuf {
        self.testdata()
    }

    /// `onnx-testdata/extended/`: the project's own corpus.
    pub fn extended_dir(&self) -> PathBuf {
        self.testdata().join(EXTENDED)
    }

    /// `onnx-testdata/exporters/`: models written by real exporters, one directory per exporter.
    pub fn exporters_dir(&self) -> PathBuf {
        self.testdata().join("exporters")
    }

    /// `onnx-testdata/recurrent/`: recurrent models, one directory per exporter.
    pub fn recurrent_dir(&self) -> PathBuf {
        self.testdata().join("recurrent")
    }

    /// Reads the manifest at [`Layout::manifest_path`].
    pub fn manifest(&self) -> Result<Manifest> {
        Manifest::load(&self.manifest_path())
    }

    /// Reads the expected failures at [`Layout::expected_failures_path`].
    pub fn expected_failures(&self) -> Result<ExpectedFailures> {
        ExpectedFailures::load(&self.expected_failures_path())
    }

    /// Fetches (if needed) and verifies one pinned release; returns its suite.
    pub fn release_suite(
        &self,
        manifest: &Manifest,
        version: &str,
        source: &Source,
    ) -> Result<Suite> {
        let release = manifest.release(version).ok_or_else(|| {
            anyhow::anyhow!(
                "onnx {version} is not pinned in {:?}; pinned: {}",
                self.manifest_path(),
                manifest
                    .releases
                    .iter()
                    .map(|r| r.version.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
        let dir = ensure_release(release, &self.cache_dir(), source)?;
        Ok(Suite {
            name: version.to_string(),
            root: dir.join("node"),
        })
    }

    /// The committed tests of a generated release, verified against the
    /// manifest; named by its version like fetched releases.
    pub fn generated_suite(&self, manifest: &Manifest, version: &str) -> Result<Suite> {
        let release = manifest.generated_release(version).ok_or_else(|| {
            anyhow::anyhow!(
                "onnx {version} is not a generated release in {:?}; generated: {}",
                self.manifest_path(),
                manifest
                    .generated
                    .iter()
                    .map(|r| r.version.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
        crate::generated::committed_suite(release, &self.testdata())
    }

    /// Every pinned release (fetched and verified), then every generated
    /// release (committed, verified), then the extended corpus.
    pub fn all_suites(&self, source: &Source) -> Result<Vec<Suite>> {
        let manifest = self.manifest()?;
        let mut suites = manifest
            .releases
            .iter()
            .map(|r| self.release_suite(&manifest, &r.version, source))
            .collect::<Result<Vec<_>>>()?;
        for release in &manifest.generated {
            suites.push(self.generated_suite(&manifest, &release.version)?);
        }
        suites.push(self.extended_suite());
        Ok(suites)
    }

    /// The autograd golden cases (gradient ops of a training domain, expected
    /// outputs from PyTorch autograd); an absent directory is an empty suite.
    pub fn autograd_suite(&self) -> Suite {
        Suite {
            name: AUTOGRAD.to_string(),
            root: self.testdata().join(AUTOGRAD),
        }
    }

    /// The bfloat16 cases of the element-type corpus
    /// (`onnx-testdata/types/bfloat16/`); an absent directory is an empty
    /// suite.
    pub fn bfloat16_suite(&self) -> Suite {
        Suite {
            name: format!("{TYPES}/bfloat16"),
            root: self.testdata().join(TYPES).join("bfloat16"),
        }
    }

    /// The complex64 / complex128 cases of the element-type corpus
    /// (`onnx-testdata/types/complex/`); an absent directory is an empty
    /// suite.
    pub fn complex_suite(&self) -> Suite {
        Suite {
            name: format!("{TYPES}/complex"),
            root: self.testdata().join(TYPES).join("complex"),
        }
    }

    /// The extended corpus; an absent directory is an empty suite.
    pub fn extended_suite(&self) -> Suite {
        Suite {
            name: EXTENDED.to_string(),
            root: self.extended_dir(),
        }
    }
}

impl Layout {
    /// One suite per directory of `onnx-testdata/exporters/` holding test
    /// directories (`torch`, `tf2onnx`, ...), sorted by name; the suite is
    /// named after the directory. An absent directory gives no suite.
    pub fn exporter_suites(&self) -> Result<Vec<Suite>> {
        suites_below(&self.exporters_dir(), "")
    }

    /// One suite per directory of `onnx-testdata/recurrent/` holding test
    /// directories, named `recurrent/<directory>`.
    pub fn recurrent_suites(&self) -> Result<Vec<Suite>> {
        suites_below(&self.recurrent_dir(), "recurrent/")
    }

    /// The control-flow suites (`onnx-testdata/control-flow/`: run-time
    /// `If`, recurrent ops with run-time lengths, float16 as exporters
    /// compute it), one per directory holding test directories, named
    /// `control-flow/<directory>`.
    pub fn control_flow_suites(&self) -> Result<Vec<Suite>> {
        suites_below(&self.testdata().join("control-flow"), "control-flow/")
    }
}

/// One suite per directory of `dir` holding test directories, sorted by
/// name, each named `prefix` + its directory name. An absent `dir` gives
/// no suite.
fn suites_below(dir: &Path, prefix: &str) -> Result<Vec<Suite>> {
    {
        if !dir.is_dir() {
            return Ok(vec![]);
        }
        let mut suites = vec![];
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            if path.is_dir() && !crate::node_test::discover(&path)?.is_empty() {
                suites.push(Suite {
                    name: format!("{prefix}{name}"),
                    root: path.clone(),
                });
            }
        }
        suites.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(suites)
    }
}

impl Layout {
    /// The real models with expected outputs (see [`crate::real_models`]).
    pub fn real_model_suite(&self, source: &Source) -> Result<Suite> {
        crate::real_models::real_model_suite(
            &self.testdata(),
            &self.cache_dir(),
            &self.clone_cache_dir(),
            source,
        )
    }

    /// One exporter suite by name (`torch`, `tf2onnx`, `jax2onnx`).
    pub fn exporter_suite(&self, name: &str) -> Result<Suite> {
        self.exporter_suites()?
            .into_iter()
            .find(|s| s.name == name)
            .ok_or_else(|| {
                anyhow::anyhow!("no exporter suite {name:?} in {:?}", self.exporters_dir())
            })
    }
}

/// Environment variable naming the shared test-data cache directory.
pub const CACHE_ENV: &str = "TRACT_ONNX_SCATTER_CACHE";

/// The test-data cache shared by every clone: `$TRACT_ONNX_SCATTER_CACHE`
/// if set, else `$XDG_CACHE_HOME/tract-onnx-scatter`, else
/// `$HOME/.cache/tract-onnx-scatter`; `None` when none of them is set
/// (relative paths in `XDG_CACHE_HOME` are ignored, as the XDG spec says).
pub fn shared_cache_dir() -> Option<PathBuf> {
    cache_dir_from(|name| std::env::var_os(name))
}

/// `dir` if it exists or can be made.
fn usable(dir: Option<PathBuf>) -> Option<PathBuf> {
    dir.filter(|dir| std::fs::create_dir_all(dir).is_ok())
}

fn cache_dir_from(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let set = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = set(CACHE_ENV) {
        return Some(dir);
    }
    if let Some(xdg) = set("XDG_CACHE_HOME").filter(|p| p.is_absolute()) {
        return Some(xdg.join("tract-onnx-scatter"));
    }
    set("HOME").map(|home| home.join(".cache").join("tract-onnx-scatter"))
}

/// The workspace root of a crate whose manifest dir is one level below it
/// (`xtask/`, `tests/`).
pub fn root_above(manifest_dir: &str) -> PathBuf {
    Path::new(manifest_dir)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn the_shared_cache_is_the_variable_then_xdg_then_home() {
        let all = [(CACHE_ENV, "/c"), ("XDG_CACHE_HOME", "/x"), ("HOME", "/h")];
        assert_eq!(cache_dir_from(env(&all)), Some(PathBuf::from("/c")));
        assert_eq!(
            cache_dir_from(env(&all[1..])),
            Some(PathBuf::from("/x/tract-onnx-scatter"))
        );
        assert_eq!(
            cache_dir_from(env(&all[2..])),
            Some(PathBuf::from("/h/.cache/tract-onnx-scatter"))
        );
        assert_eq!(cache_dir_from(env(&[])), None);
    }

    #[test]
    fn empty_and_relative_values_are_skipped() {
        let vars = [(CACHE_ENV, ""), ("XDG_CACHE_HOME", "rel"), ("HOME", "/h")];
        assert_eq!(
            cache_dir_from(env(&vars)),
            Some(PathBuf::from("/h/.cache/tract-onnx-scatter"))
        );
    }

    #[test]
    fn a_cache_that_cannot_be_made_is_not_used() {
        let base = std::env::temp_dir().join(format!("onnx-golden-usable-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        // A file where the directory would go: it cannot be made.
        let file = base.join("file");
        std::fs::write(&file, b"").unwrap();
        assert_eq!(usable(Some(file.join("cache"))), None);
        let fresh = base.join("a/b");
        assert_eq!(usable(Some(fresh.clone())), Some(fresh.clone()));
        assert!(fresh.is_dir());
        assert_eq!(usable(None), None);
        std::fs::remove_dir_all(&base).ok();
    }
}
