//! Plan quality over the PyTorch exporter corpus (issue 24): for every
//! idiom both PyTorch exporters wrote (`<idiom>__ts<opset>` and
//! `<idiom>__dynamo<opset>` in `onnx-testdata/exporters/torch*/`), the
//! dynamo export's optimized plan keeps no more `MoveAxis` (tract's
//! transposes) than the TorchScript export's of the same module, at any
//! of its opsets. Models load through `onnx()` with the input facts they
//! declare, as users load them; a model that cannot be optimized must be
//! an expected failure (`onnx-testdata/expected-failures.toml`) and is
//! left out of the comparison.

use std::collections::BTreeMap;
use std::path::Path;

use integration_tests::golden::layout;
use onnx_golden::suite::list_tests;
use tract_onnx_scatter::tract_core::ops::change_axes::AxisOp;
use tract_onnx_scatter::tract_onnx::prelude::*;

const SUITES: [&str; 2] = ["torch", "torch-models"];

/// The `Move`s of the optimized plan of `model`.
fn moves(model: &Path) -> Result<usize, String> {
    let optimized = std::panic::catch_unwind(|| {
        tract_onnx_scatter::onnx()
            .model_for_path(model)
            .and_then(|m| m.into_optimized())
    })
    .map_err(|_| "panicked".to_string())?
    .map_err(|e| format!("{e:#}"))?;
    Ok(optimized
        .nodes()
        .iter()
        .filter(|n| {
            n.op_as::<AxisOp>()
                .is_some_and(|op| matches!(op, AxisOp::Move(..)))
        })
        .count())
}

/// Per exporter path (`ts`, `dynamo`), each case's name and move count.
#[derive(Default)]
struct Idiom {
    torchscript: Vec<(String, usize)>,
    dynamo: Vec<(String, usize)>,
}

#[test]
fn dynamo_exports_keep_no_more_transposes_than_their_torchscript_twins() {
    let layout = layout();
    let expected = layout.expected_failures().expect("expected-failures.toml");
    let mut offenders = vec![];
    let mut unplanned = vec![];
    let mut compared = 0;
    for name in SUITES {
        let suite = layout.exporter_suite(name).expect("exporter suite");
        let mut idioms: BTreeMap<String, Idiom> = BTreeMap::new();
        for (case, dir) in list_tests(&suite, None).expect("listing") {
            let Some((idiom, path)) = case.split_once("__") else {
                continue;
            };
            let is_dynamo = path.starts_with("dynamo");
            if !is_dynamo && !path.starts_with("ts") {
                continue;
            }
            let count = match moves(&dir.join("model.onnx")) {
                Ok(count) => count,
                Err(e) => {
                    if expected.find(name, &case).is_none() {
                        unplanned.push(format!("{name}/{case}: {e}"));
                    }
                    continue;
                }
            };
            let entry = idioms.entry(idiom.to_string()).or_default();
            let side = if is_dynamo {
                &mut entry.dynamo
            } else {
                &mut entry.torchscript
            };
            side.push((case, count));
        }
        for (
            idiom,
            Idiom {
                torchscript,
                dynamo,
            },
        ) in idioms
        {
            let Some((best, fewest)) = torchscript.iter().min_by_key(|(_, n)| *n) else {
                continue;
            };
            for (case, count) in &dynamo {
                compared += 1;
                if count > fewest {
                    offenders.push(format!(
                        "{name}/{idiom}: {case} keeps {count} MoveAxis, {best} {fewest}"
                    ));
                }
            }
        }
    }
    assert!(
        unplanned.is_empty(),
        "models that do not optimize and are not expected failures:\n{}",
        unplanned.join("\n")
    );
    assert!(
        offenders.is_empty(),
        "dynamo plans with more transposes than TorchScript's:\n{}",
        offenders.join("\n")
    );
    // The corpus holds pairs: an empty comparison would prove nothing.
    assert!(compared >= 50, "only {compared} dynamo exports compared");
}
