//! Where the golden suite's files live in a repository, and turning them
//! into runnable [`Suite`]s.
//!
//! ```text
//! <root>/onnx-testdata/manifest.toml            pinned releases and hashes
//! <root>/onnx-testdata/expected-failures.toml   known failures of the gating framework
//! <root>/onnx-testdata/cache/<version>/node/    fetched official tests (git-ignored)
//! <root>/onnx-testdata/generated/onnx-<version>/node/  official tests generated from
//!                                               wheels without data (committed)
//! <root>/onnx-testdata/extended/                the project's own corpus
//! <root>/onnx-testdata/exporters/<exporter>/     models written by real exporters, one suite each
//! <root>/onnx-testdata/recurrent/<exporter>/     recurrent models by real exporters (Loop, Scan, LSTM)
//! <root>/onnx-testdata/autograd/                gradient ops' cases from PyTorch autograd
//! <root>/onnx-testdata/real-models/              pinned published models and their expected outputs
//! ```

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

/// The paths of the golden suite's files in one repository (listed in
/// [`crate::layout`]'s docs), and the suites they make.
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

    /// `onnx-testdata/cache/`: the git-ignored cache of downloaded test data
    /// (each fetched release in `<version>/node/`).
    pub fn cache_dir(&self) -> PathBuf {
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
        crate::real_models::real_model_suite(&self.testdata(), &self.cache_dir(), source)
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

/// The workspace root of a crate whose manifest dir is one level below it
/// (`xtask/`, `tests/`).
pub fn root_above(manifest_dir: &str) -> PathBuf {
    Path::new(manifest_dir)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}
