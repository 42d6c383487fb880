//! The recurrent rows: a Keras layer as tf2onnx writes it (ONNX `Loop`s, which the plugin runs)
//! against the same layer as PyTorch's TorchScript exporter writes it (one ONNX GRU/LSTM op,
//! stock tract's native kernel): [`KERAS_GRU`] and [`TORCH_GRU`], [`KERAS_BILSTM`] and
//! [`TORCH_BILSTM`], and a packed-sequence GRU with no twin, [`TORCH_GRU_PACKED`]. The models
//! are committed in `crates/scatter-bench/models/`
//! (`onnx-testdata/exporters/gen/bench_recurrent.py`); each pair has the same weights, so the
//! two compute the same function.
//!
//! Input `x` f32 [8, 64, 64] (batch, time, features), seeded, the same for both rows of a pair;
//! the last [`PAD`] steps of the second half of the batch are zeroed in the BiLSTM pair's, so
//! that the Keras model's mask holds padding. No input is moved in: no owned mode. The pairs
//! are timed in shared rounds ([`twin`]), so the Loop row's plugin one-shot over the op row's
//! stock one-shot is paired round by round ([`crate::report::recurrent_targets`]).

use anyhow::{Result, bail};
use tract_onnx_scatter::tract_onnx::prelude::*;

use crate::case::Case;
use crate::workloads::Rng;

/// Keras GRU through tf2onnx (`Loop`): Keras 3 `GRU(128, return_sequences=True)` through
/// tf2onnx 1.17, opset 18: one `Loop` of 64 steps.
pub const KERAS_GRU: &str = "rnn_keras_gru_loop";
/// Masked Keras BiLSTM through tf2onnx (two `Loop`s): `Masking(0.0)` then
/// `Bidirectional(LSTM(128, return_sequences=True))`, a `Loop` per direction.
pub const KERAS_BILSTM: &str = "rnn_keras_bilstm_masked_loop";
/// The same GRU as one ONNX `GRU` (PyTorch's TorchScript exporter): `nn.GRU(64, 128,
/// batch_first=True)`, opset 17.
pub const TORCH_GRU: &str = "rnn_torch_gru_op";
/// The same BiLSTM as one ONNX `LSTM`: `nn.LSTM(64, 128, batch_first=True,
/// bidirectional=True)`, one bidirectional `LSTM`, no mask (the same work; equal outputs on
/// the rows without padding).
pub const TORCH_BILSTM: &str = "rnn_torch_bilstm_op";

/// A packed-sequence GRU: run-time `sequence_lens` (issue 50, no twin). `nn.GRU(64, 128,
/// batch_first=True)` behind `pack_padded_sequence(enforce_sorted=False)`, opset 17: a
/// `TopK` of the lengths, one `GRU` with run-time `sequence_lens` (which stock tract
/// refuses), a `ScatterElements` restoring the batch order
/// (`onnx-testdata/control-flow/gen/torch_packed.py bench`); lengths [`PACKED_LENGTHS`].
pub const TORCH_GRU_PACKED: &str = "rnn_torch_gru_packed";

/// The rows' names, in table order (each Loop row, then its op row; the
/// packed GRU last).
pub const NAMES: [&str; 5] = [
    KERAS_GRU,
    TORCH_GRU,
    KERAS_BILSTM,
    TORCH_BILSTM,
    TORCH_GRU_PACKED,
];

/// The lengths of the packed GRU's rows, unsorted.
pub const PACKED_LENGTHS: [i64; BATCH] = [64, 16, 40, 23, 57, 31, 48, 19];

/// `(layer, Loop row, op row, the op)`.
pub const PAIRS: [(&str, &str, &str, &str); 2] = [
    ("GRU", KERAS_GRU, TORCH_GRU, "GRU"),
    ("BiLSTM", KERAS_BILSTM, TORCH_BILSTM, "LSTM"),
];

/// The Loop row's plugin one-shot at most this many times onnxruntime's
/// one-shot on the same row.
pub const VS_ORT: f64 = 2.0;
/// The Loop row's plugin one-shot at most this many times stock tract's
/// one-shot on the op row (its native GRU/LSTM kernel).
pub const VS_NATIVE: f64 = 3.0;

/// Batch, steps and features of `x`; units of the layers.
pub const BATCH: usize = 8;
pub const STEPS: usize = 64;
pub const FEATURES: usize = 64;
pub const UNITS: usize = 128;
/// Steps zeroed at the end of the second half of the batch (BiLSTM pair).
pub const PAD: usize = 8;

/// The other row of `name`'s pair, timed in the same rounds when both run.
pub fn twin(name: &str) -> Option<&'static str> {
    PAIRS.iter().find_map(|&(_, l, op, _)| match name {
        _ if name == l => Some(op),
        _ if name == op => Some(l),
        _ => None,
    })
}

/// `x` [BATCH, STEPS, FEATURES], uniform in [-1, 1); `padded`: the last
/// [`PAD`] steps of the second half of the batch zeroed.
fn input(padded: bool) -> TractResult<Tensor> {
    let mut rng = Rng::new(23);
    let mut x: Vec<f32> = (0..BATCH * STEPS * FEATURES)
        .map(|_| rng.f32() * 2.0 - 1.0)
        .collect();
    if padded {
        for b in BATCH / 2..BATCH {
            for t in STEPS - PAD..STEPS {
                let at = (b * STEPS + t) * FEATURES;
                x[at..at + FEATURES].fill(0.0);
            }
        }
    }
    tensor1(&x).into_shape(&[BATCH, STEPS, FEATURES])
}

/// The case of row `name` (one of [`NAMES`]).
pub fn case(name: &str) -> Result<Case> {
    let (file, padded) = match name {
        KERAS_GRU => ("keras_gru_loop", false),
        TORCH_GRU => ("torch_gru_op", false),
        KERAS_BILSTM => ("keras_bilstm_masked_loop", true),
        TORCH_BILSTM => ("torch_bilstm_op", true),
        TORCH_GRU_PACKED => {
            let path = crate::exported::dir().join("torch_gru_packed.onnx");
            let inputs = vec![input(false)?, tensor1(&PACKED_LENGTHS)];
            let mut case = Case::from_file(name, &path, inputs)?;
            if case.input_names != ["x", "lengths"] {
                bail!(
                    "{name}: inputs {:?}, expected [\"x\", \"lengths\"]",
                    case.input_names
                );
            }
            case.typed_from_inputs = true;
            return Ok(case);
        }
        _ => bail!("unknown recurrent row {name:?} (known: {NAMES:?})"),
    };
    let path = crate::exported::dir().join(format!("{file}.onnx"));
    let mut case = Case::from_file(name, &path, vec![input(padded)?])?;
    if case.input_names != ["x"] {
        bail!("{name}: inputs {:?}, expected [\"x\"]", case.input_names);
    }
    // Planned for this input's shape, as a tract caller pins it; batch and
    // time are symbolic in both exports.
    case.typed_from_inputs = true;
    Ok(case)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Row, recurrent_targets as targets};
    use crate::runner::Runner;
    use prost::Message;
    use std::time::Duration;
    use tract_onnx_scatter::tract_onnx;
    use tract_onnx_scatter::tract_onnx::pb::{GraphProto, ModelProto};

    fn output<L: crate::case::Loader>(name: &str, onnx: &L) -> Tensor {
        let case = case(name).unwrap();
        let runner = Runner::new(&case, onnx).unwrap();
        runner
            .plan()
            .run(tvec![runner.input(0).clone()])
            .unwrap()
            .remove(0)
            .into_tensor()
    }

    fn op_types(graph: &GraphProto, out: &mut Vec<String>) {
        for node in &graph.node {
            out.push(node.op_type.clone());
            for a in &node.attribute {
                if let Some(g) = &a.g {
                    op_types(g, out);
                }
            }
        }
    }

    #[test]
    fn the_loop_rows_hold_loops_and_the_op_rows_the_native_op() {
        for (_, l, op, op_type) in PAIRS {
            let ops = |name: &str| {
                let case = case(name).unwrap();
                let model = ModelProto::decode(&case.model_bytes().unwrap()[..]).unwrap();
                let mut ops = vec![];
                op_types(model.graph.as_ref().unwrap(), &mut ops);
                ops
            };
            let (loop_ops, native_ops) = (ops(l), ops(op));
            assert!(loop_ops.iter().any(|o| o == "Loop"), "{l}: {loop_ops:?}");
            assert!(!loop_ops.iter().any(|o| o == op_type), "{l}: {loop_ops:?}");
            assert!(
                native_ops.iter().any(|o| o == op_type),
                "{op}: {native_ops:?}"
            );
            assert!(
                !native_ops.iter().any(|o| o == "Loop"),
                "{op}: {native_ops:?}"
            );
        }
    }

    /// The plugin's Loop rows compute what stock tract's native op computes
    /// on the twin (every row for the GRU, the rows without padding for the
    /// masked BiLSTM): the comparison is between equal layers.
    #[test]
    fn each_loop_row_computes_what_the_native_op_computes_on_its_twin() {
        for (layer, l, op, _) in PAIRS {
            let looped = output(l, &tract_onnx_scatter::onnx());
            let native = output(op, &tract_onnx::onnx());
            let units = if layer == "GRU" { UNITS } else { 2 * UNITS };
            assert_eq!(looped.shape(), [BATCH, STEPS, units], "{l}");
            assert_eq!(native.shape(), [BATCH, STEPS, units], "{op}");
            let rows = if layer == "GRU" { BATCH } else { BATCH / 2 };
            let (a, b) = (
                looped.to_plain_array_view::<f32>().unwrap(),
                native.to_plain_array_view::<f32>().unwrap(),
            );
            let worst = a
                .indexed_iter()
                .filter(|(i, _)| i[0] < rows)
                .map(|(i, x)| (x - b[i]).abs())
                .fold(0f32, f32::max);
            assert!(worst < 1e-4, "{l} vs {op}: {worst}");
        }
    }

    #[test]
    fn the_padding_of_the_masked_rows_changes_the_keras_output() {
        // On a padded row, the masked Keras layer skips the steps of zeros
        // that the op, without a mask, runs through.
        let looped = output(KERAS_BILSTM, &tract_onnx_scatter::onnx());
        let native = output(TORCH_BILSTM, &tract_onnx::onnx());
        let (a, b) = (
            looped.to_plain_array_view::<f32>().unwrap(),
            native.to_plain_array_view::<f32>().unwrap(),
        );
        let last = STEPS - 1;
        let differs =
            (0..UNITS).any(|u| (a[[BATCH - 1, last, u]] - b[[BATCH - 1, last, u]]).abs() > 1e-3);
        assert!(differs, "the mask changed nothing");
    }

    /// The packed row holds a GRU with run-time lengths, which stock tract
    /// refuses, and the plugin runs it: row 1 (length 16) is 0 past step 16.
    #[test]
    fn the_packed_row_runs_through_the_plugin_and_stops_stock() {
        let case = case(TORCH_GRU_PACKED).unwrap();
        let stock = Runner::new(&case, &tract_onnx::onnx());
        let err = format!("{:#}", stock.err().expect("stock refuses run-time lengths"));
        assert!(err.contains("Non constant seq_len"), "{err}");
        let runner = Runner::new(&case, &tract_onnx_scatter::onnx()).unwrap();
        let inputs = (0..2).map(|i| runner.input(i).clone()).collect();
        let y = runner.plan().run(inputs).unwrap().remove(0).into_tensor();
        assert_eq!(y.shape(), [BATCH, STEPS, UNITS]);
        let y = y.to_plain_array_view::<f32>().unwrap();
        assert!((0..UNITS).any(|u| y[[1, 15, u]] != 0.0));
        assert!((16..STEPS).all(|t| (0..UNITS).all(|u| y[[1, t, u]] == 0.0)));
    }

    #[test]
    fn each_row_is_the_twin_of_the_other_of_its_pair() {
        assert_eq!(twin(KERAS_GRU), Some(TORCH_GRU));
        assert_eq!(twin(TORCH_BILSTM), Some(KERAS_BILSTM));
        assert_eq!(twin("kv_step_dynamo"), None);
    }

    fn row(name: &str, plugin: &[u64], stock: &[u64], ort: &[u64]) -> Row {
        let ms = |v: &[u64]| {
            v.iter()
                .map(|&x| Duration::from_millis(x))
                .collect::<Vec<_>>()
        };
        let median = |v: &[u64]| {
            let mut v = v.to_vec();
            v.sort();
            crate::child::Measured {
                median: Duration::from_millis(v[v.len() / 2]),
                ..Default::default()
            }
        };
        let mut r = Row {
            name: name.into(),
            ..Row::default()
        };
        if !plugin.is_empty() {
            r.plugin[0] = Some(median(plugin));
            r.rounds.plugin[0] = ms(plugin);
        }
        if !stock.is_empty() {
            r.stock[0] = Some(median(stock));
            r.rounds.stock[0] = ms(stock);
        }
        if !ort.is_empty() {
            r.ort = Some(median(ort).median);
            r.rounds.ort = ms(ort);
        }
        r
    }

    #[test]
    fn the_targets_pair_the_loop_rows_one_shot_with_ort_and_the_native_op_round_by_round() {
        // The machine slows down threefold in round 2: paired, 1.5× and 2×.
        let rows = [
            row(KERAS_GRU, &[3, 9, 3], &[], &[2, 6, 2]),
            row(TORCH_GRU, &[1, 3, 1], &[1, 3, 1], &[1, 3, 1]),
        ];
        assert_eq!(
            targets(&rows),
            [
                "GRU Loop (rnn_keras_gru_loop): plugin one-shot ≤ 2× onnxruntime one-shot: \
                 1.50× (3.00 ms vs 2.00 ms): met",
                "GRU Loop (rnn_keras_gru_loop): plugin one-shot ≤ 3× stock tract one-shot of \
                 the native GRU op (rnn_torch_gru_op): 3.00× (3.00 ms vs 1.00 ms): met",
            ]
        );
        let rows = [
            row(KERAS_BILSTM, &[7], &[], &[3]),
            row(TORCH_BILSTM, &[], &[2], &[]),
        ];
        let lines = targets(&rows);
        assert!(
            lines[0].ends_with("2.33× (7.00 ms vs 3.00 ms): missed"),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].ends_with("3.50× (7.00 ms vs 2.00 ms): missed"),
            "{}",
            lines[1]
        );
        let lines = targets(&rows[1..]);
        assert!(lines.iter().all(|l| l.ends_with(": n/a")), "{lines:?}");
        assert!(targets(&[]).is_empty());
    }
}
