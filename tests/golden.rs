//! Running the golden conformance suite with the plugin, as `cargo test` does.

use onnx_golden::fetch::Source;
use onnx_golden::layout::{Layout, root_above};
use onnx_golden::recurrent;
use onnx_golden::{
    GateFrameworks, LoadOnnx, NamedFramework, NeverWorse, Pairing, Report, Suite, Tract, run_suites,
};

/// The repository layout, seen from this crate.
pub fn layout() -> Layout {
    Layout::new(root_above(env!("CARGO_MANIFEST_DIR")))
}

/// Fetches (first use) and runs one pinned onnx release; panics with the
/// list of unexpected and stale expected failures.
pub fn check_release(version: &str) {
    let layout = layout();
    let source = Source::resolve(None);
    let suite = layout
        .manifest()
        .and_then(|manifest| layout.release_suite(&manifest, version, &source))
        .unwrap_or_else(|e| panic!("golden data of onnx {version} unavailable: {e:#}"));
    check(&layout, suite);
}

/// Runs the committed node tests of a generated onnx release (no Python
/// needed; hash-checked against the manifest) with the plugin, gated, and
/// with stock tract, only counted and printed.
pub fn check_generated(version: &str) {
    let layout = layout();
    let suite = layout
        .manifest()
        .and_then(|manifest| layout.generated_suite(&manifest, version))
        .unwrap_or_else(|e| panic!("generated tests of onnx {version} unusable: {e:#}"));
    let stock = tract_onnx::onnx();
    let frameworks = [NamedFramework {
        name: "stock".into(),
        framework: &Tract::pinned(&stock),
    }];
    let cases = run_suites(
        std::slice::from_ref(&suite),
        &frameworks,
        None,
        &mut |_, _, _| {},
    )
    .unwrap_or_else(|e| panic!("listing golden tests of {version}: {e:#}"));
    let report = Report::new(vec!["stock".into()], 0, cases, &Default::default());
    println!(
        "golden {version} with stock tract (not gated): {} tests, {} passed",
        report.cases.len(),
        report.totals[0].pass
    );
    check(&layout, suite);
}

/// Runs the extended corpus (none if `onnx-testdata/extended/` is absent).
pub fn check_extended() {
    let layout = layout();
    check(&layout, layout.extended_suite());
}

/// Runs one exporter suite (`onnx-testdata/exporters/<name>/`) through
/// `onnx()`, which accepts known exporter deviations, with the input facts
/// the models declare: as users load them.
pub fn check_exporter(name: &str) {
    let layout = layout();
    let suite = layout
        .exporter_suite(name)
        .unwrap_or_else(|e| panic!("{e:#}"));
    let plugin = tract_onnx_scatter::onnx();
    check_run(&layout, suite, &Tract::declared(&plugin));
}

/// Runs one recurrent suite (`onnx-testdata/recurrent/<name>/`) through
/// `onnx()` with the input facts the models declare and with facts pinned
/// to the data: a case passes when it passes in both. Cases without a
/// `Loop` or `Scan` (tract's own LSTM/GRU ops) are printed, not gated.
pub fn check_recurrent(name: &str) {
    let layout = layout();
    let suite = layout
        .recurrent_suites()
        .unwrap_or_else(|e| panic!("{e:#}"))
        .into_iter()
        .find(|s| s.name == format!("recurrent/{name}"))
        .unwrap_or_else(|| panic!("no recurrent suite {name:?}"));
    check_both_modes(&layout, suite, recurrent::holds_loop);
}

/// Runs every control-flow suite (`onnx-testdata/control-flow/*/`) through
/// `onnx()` in both input modes, every case gated; gives the suites' names.
pub fn check_control_flow() -> Vec<String> {
    let layout = layout();
    let suites = layout
        .control_flow_suites()
        .unwrap_or_else(|e| panic!("{e:#}"));
    let names = suites.iter().map(|s| s.name.clone()).collect();
    for suite in suites {
        check_both_modes(&layout, suite, |_| true);
    }
    names
}

/// Runs `suite` through `onnx()` with declared and with pinned input facts,
/// a case passing when it passes in both; gates the cases `gated` accepts
/// and prints the others.
fn check_both_modes(layout: &Layout, suite: Suite, gated: fn(&std::path::Path) -> bool) {
    let expected = layout
        .expected_failures()
        .unwrap_or_else(|e| panic!("{e:#}"));
    let plugin = tract_onnx_scatter::onnx();
    let declared = Tract::declared(&plugin);
    let pinned = Tract::pinned(&plugin);
    let frameworks = [
        NamedFramework {
            name: "declared".into(),
            framework: &declared,
        },
        NamedFramework {
            name: "pinned".into(),
            framework: &pinned,
        },
    ];
    let suite_name = suite.name.clone();
    let results = run_suites(&[suite], &frameworks, None, &mut |_, _, _| {})
        .unwrap_or_else(|e| panic!("listing {suite_name}: {e:#}"));
    let mut kept = vec![];
    for mut case in results {
        let both = recurrent::both_modes(&case.outcomes[0], &case.outcomes[1]);
        if gated(&case.dir) {
            case.outcomes = vec![both];
            kept.push(case);
        } else {
            println!(
                "{suite_name} {} (no Loop or Scan, not gated): {}",
                case.test,
                both.describe()
            );
        }
    }
    let report = Report::new(vec!["plugin".into()], 0, kept, &expected);
    println!(
        "{suite_name}: {} gated tests, {} passed in both modes, {} expected failures",
        report.cases.len(),
        report.totals[0].pass,
        report.gate.expected
    );
    assert!(
        report.gate.is_ok(),
        "suite {suite_name} failed (details: `cargo xtask conformance --filter NAME`):\n{}",
        report.gate.explain()
    );
}

/// Runs the autograd golden cases (`onnx-testdata/autograd/`: the
/// training-domain gradient ops) through `onnx()`.
pub fn check_autograd() {
    let layout = layout();
    check_with(
        &layout,
        layout.autograd_suite(),
        &tract_onnx_scatter::onnx(),
    );
}

/// Runs the bfloat16 cases of the element-type corpus
/// (`onnx-testdata/types/bfloat16/`) through `onnx()`.
pub fn check_bfloat16() {
    let layout = layout();
    check_with(
        &layout,
        layout.bfloat16_suite(),
        &tract_onnx_scatter::onnx(),
    );
}

/// Runs the complex cases of the element-type corpus
/// (`onnx-testdata/types/complex/`) through `onnx()`.
pub fn check_complex() {
    let layout = layout();
    check_with(&layout, layout.complex_suite(), &tract_onnx_scatter::onnx());
}

/// Runs the real-model suite (models fetched hash-pinned on first use)
/// through `onnx()`, with the data's input shapes.
pub fn check_real_models() {
    let layout = layout();
    let suite = layout
        .real_model_suite(&Source::resolve(None))
        .unwrap_or_else(|e| panic!("real models unavailable: {e:#}"));
    check_with(
        &layout,
        suite,
        &tract_onnx_scatter::onnx().with_ignore_value_info(true),
    );
}

/// Official and extended suites run strict: every node valid at its opset.
fn check(layout: &Layout, suite: Suite) {
    check_with(layout, suite, &tract_onnx_scatter::onnx_strict());
}

fn check_with(layout: &Layout, suite: Suite, plugin: &dyn LoadOnnx) {
    check_run(layout, suite, &Tract::pinned(plugin))
}

fn check_run(layout: &Layout, suite: Suite, plugin: &Tract) {
    let expected = layout
        .expected_failures()
        .unwrap_or_else(|e| panic!("{e:#}"));
    let frameworks = [NamedFramework {
        name: "plugin".into(),
        framework: plugin,
    }];
    let name = suite.name.clone();
    let cases = run_suites(&[suite], &frameworks, None, &mut |_, _, _| {})
        .unwrap_or_else(|e| panic!("listing golden tests of {name}: {e:#}"));
    let report = Report::new(vec!["plugin".into()], 0, cases, &expected);
    let totals = &report.totals[0];
    println!(
        "golden {name}: {} tests, {} passed, {} failed ({} expected), {} panicked",
        report.cases.len(),
        totals.pass,
        totals.fail,
        report.gate.expected,
        totals.panic
    );
    assert!(
        report.gate.is_ok(),
        "golden suite {name} failed (details: `cargo xtask conformance --filter NAME`):\n{}",
        report.gate.explain()
    );
}

/// The never-worse gate over `suites`: `plugin` and `stock`, each with the
/// declared and with the pinned input facts; panics naming every model on
/// which the plugin does worse than stock, with both outcomes.
pub fn check_never_worse(suites: &[Suite], plugin: &dyn LoadOnnx, stock: &dyn LoadOnnx) {
    let runs = GateFrameworks::new(plugin, stock);
    let cases = run_suites(suites, &runs.named(), None, &mut |_, _, _| {})
        .unwrap_or_else(|e| panic!("listing golden tests: {e:#}"));
    let gate = NeverWorse::judge(&cases, &Pairing::STANDARD);
    print!("{}", gate.text());
    assert!(
        gate.is_ok(),
        "the plugin does worse than stock tract (details: `cargo xtask conformance`):\n{}",
        gate.explain()
    );
}

/// Every pinned release (fetched on first use), every generated release
/// and the extended corpus.
pub fn conformance_suites() -> Vec<Suite> {
    layout()
        .all_suites(&Source::resolve(None))
        .unwrap_or_else(|e| panic!("golden data unavailable: {e:#}"))
}

/// Every official node test of the newest pinned release with data (the
/// `cargo xtask conformance --all-ops` set).
pub fn all_ops_suite() -> Suite {
    let layout = layout();
    let manifest = layout.manifest().unwrap_or_else(|e| panic!("{e:#}"));
    let release = onnx_golden::all_ops::newest_release(&manifest.releases)
        .expect("the manifest pins a release with node-test data");
    let root = onnx_golden::all_ops::ensure_all_node_tests(
        release,
        &layout.cache_dir(),
        &Source::resolve(None),
    )
    .unwrap_or_else(|e| panic!("node tests of onnx {} unavailable: {e:#}", release.version));
    Suite {
        name: format!("all-ops {}", release.version),
        root,
    }
}
