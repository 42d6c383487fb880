//! The exported-model rows ([`NAMES`]): small models that PyTorch's two ONNX exporters wrote
//! from the same module (`crates/scatter-bench/models/*.onnx`, committed, not regenerated
//! here), so the table compares what each exporter's graph costs: a KV-cache step and YOLOv5's
//! detection head with two or three slice assignments, each as TorchScript and dynamo wrote it
//! ([`PAIRS`]).

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use tract_onnx_scatter::tract_onnx::prelude::*;

use crate::case::{Case, Ownership};
use crate::workloads::Rng;

/// The rows' names, in table order:
///
/// - `kv_step_*`: `cache[:, :, pos] = k` on a f32 [1, 32, 2048, 128] KV cache (inputs
///   `cache`, `pos` int64 `[1]`, `k` f32 `[1, 32, 1, 128]`); `pos` is the call count modulo
///   2048, set before each call: a write at a position known only at run time. TorchScript
///   (opset 17): one `ScatterElements` on axis 2 with expanded indices. Dynamo (opset 20):
///   `Transpose -> ScatterND -> Transpose`, which the plugin folds into one scatter on the
///   untransposed cache. The output is the next step's cache in every mode (moved in when
///   owned).
/// - `yolo_head_*`: YOLOv5's detection-head decode on `x` f32 [1, 3, 80, 80, 85]:
///   `y = sigmoid(x)`, then the slice assignments `y[..., 0:2] = ...` and
///   `y[..., 2:4] = ...` (ScatterND in both exports), reshaped to [1, 19200, 85]; the owned
///   mode moves in a copy of `x` made before the timed call. TorchScript plans the
///   assignments as Slice/Concat; dynamo writes each as `Transpose → ScatterND → Transpose`
///   with its updates transposed too, which the plugin folds into the same Slice/Concat.
/// - `yolo_head3_*`: the same head with a third slice assigned,
///   `y[..., 4:6] = (y[..., 4:6] * 2 - 0.5) * stride`.
pub const NAMES: [&str; 6] = [
    "kv_step_torchscript",
    "kv_step_dynamo",
    "yolo_head_torchscript",
    "yolo_head_dynamo",
    "yolo_head3_torchscript",
    "yolo_head3_dynamo",
];

/// Each pair's name stem (`<stem>_torchscript`, `<stem>_dynamo`) and its
/// target (issue 24): dynamo at most this many times the TorchScript
/// export, one-shot and owned.
pub const PAIRS: [(&str, f64); 3] = [("kv_step", 1.2), ("yolo_head", 1.2), ("yolo_head3", 1.2)];

/// The other export of `name`'s pair (`yolo_head_dynamo` for
/// `yolo_head_torchscript`), timed in the same rounds when both run.
pub fn twin(name: &str) -> Option<&'static str> {
    let (stem, other) = if let Some(stem) = name.strip_suffix("_torchscript") {
        (stem, "dynamo")
    } else {
        (name.strip_suffix("_dynamo")?, "torchscript")
    };
    PAIRS.iter().find(|(s, _)| *s == stem)?;
    NAMES
        .into_iter()
        .find(|n| n.strip_suffix(other).and_then(|n| n.strip_suffix('_')) == Some(stem))
}

/// The KV cache's length: `pos` runs through `0..KV_LEN`.
pub const KV_LEN: i64 = 2048;

/// A graph input: f32 random from the model's seed, or fixed int64 values
/// (shape `[len]`).
enum Input {
    F32(&'static [usize]),
    I64(&'static [i64]),
}

const KV_INPUTS: [(&str, Input); 3] = [
    ("cache", Input::F32(&[1, 32, KV_LEN as usize, 128])),
    ("pos", Input::I64(&[0])),
    ("k", Input::F32(&[1, 32, 1, 128])),
];

const YOLO_INPUTS: [(&str, Input); 1] = [("x", Input::F32(&[1, 3, 80, 80, 85]))];

/// `crates/scatter-bench/models`.
pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("models")
}

/// The case of row `name` (one of [`NAMES`]), inputs the same for both
/// exports of a pair. Input 0 is the data (`cache`, `x`).
pub fn case(name: &str) -> Result<Case> {
    let (file, inputs, seed, kv): (_, &[(&str, Input)], _, _) = match name {
        "kv_step_torchscript" => ("kv_index_copy_torchscript", &KV_INPUTS, 10, true),
        "kv_step_dynamo" => ("kv_index_copy_dynamo", &KV_INPUTS, 10, true),
        "yolo_head_torchscript" => ("yolov5_head_torchscript", &YOLO_INPUTS, 11, false),
        "yolo_head_dynamo" => ("yolov5_head_dynamo", &YOLO_INPUTS, 11, false),
        "yolo_head3_torchscript" => ("yolov5_head3_torchscript", &YOLO_INPUTS, 11, false),
        "yolo_head3_dynamo" => ("yolov5_head3_dynamo", &YOLO_INPUTS, 11, false),
        _ => bail!("unknown exported model {name:?} (known: {NAMES:?})"),
    };
    let mut rng = Rng::new(seed);
    let tensors = inputs
        .iter()
        .map(|(_, input)| match input {
            Input::F32(shape) => tensor1(&rng.f32s(shape.iter().product())).into_shape(shape),
            Input::I64(values) => Ok(tensor1(values)),
        })
        .collect::<TractResult<Vec<Tensor>>>()?;
    let mut case = Case::from_file(name, &dir().join(format!("{file}.onnx")), tensors)?;
    let expected: Vec<&str> = inputs.iter().map(|(n, _)| *n).collect();
    if case.input_names != expected {
        bail!(
            "{name}: inputs {:?}, expected {expected:?}",
            case.input_names
        );
    }
    case.has_copy_floor = true;
    if kv {
        // The output is the next step's cache; `pos` moves every call.
        case.feedback = vec![(0, 0)];
        case.ownership = Ownership::FedBack;
        case.position = Some((1, KV_LEN));
        case.copy_bound = true;
    } else {
        case.ownership = Ownership::CopiedBeforeEachCall;
    }
    Ok(case)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::{Mode, Runner};

    fn plugin_output(name: &str) -> Tensor {
        let case = case(name).unwrap();
        let runner = Runner::new(&case, &tract_onnx_scatter::onnx()).unwrap();
        let inputs = (0..case.inputs.len())
            .map(|i| runner.input(i).clone())
            .collect();
        runner.plan().run(inputs).unwrap().remove(0).into_tensor()
    }

    #[test]
    fn each_export_is_the_twin_of_the_other() {
        assert_eq!(twin("yolo_head_torchscript"), Some("yolo_head_dynamo"));
        assert_eq!(twin("yolo_head3_dynamo"), Some("yolo_head3_torchscript"));
        assert_eq!(twin("kv_step_dynamo"), Some("kv_step_torchscript"));
        assert_eq!(twin("snd_rows"), None);
    }

    /// Both exports of a pair compute the same thing on the same inputs.
    #[test]
    fn exports_agree() {
        for (stem, _) in PAIRS {
            let torchscript = plugin_output(&format!("{stem}_torchscript"));
            let dynamo = plugin_output(&format!("{stem}_dynamo"));
            assert_eq!(torchscript, dynamo, "{stem}");
        }
    }

    /// Call `n` writes k at position `n`, in every mode, the cache fed
    /// back.
    #[test]
    fn kv_steps_write_k_at_the_running_position() {
        for name in ["kv_step_torchscript", "kv_step_dynamo"] {
            let case = case(name).unwrap();
            let mut runner = Runner::new(&case, &tract_onnx_scatter::onnx()).unwrap();
            for mode in Mode::ALL {
                runner.prepare(mode).unwrap();
                runner.run(mode).unwrap();
            }
            let out = runner.input(0).to_plain_array_view::<f32>().unwrap();
            let k = case.inputs[2].to_plain_array_view::<f32>().unwrap();
            let cache = case.inputs[0].to_plain_array_view::<f32>().unwrap();
            for ((h, p, d), &value) in out.indexed_iter().map(|(i, v)| ((i[1], i[2], i[3]), v)) {
                let expected = if p < 3 {
                    k[[0, h, 0, d]]
                } else {
                    cache[[0, h, p, d]]
                };
                assert_eq!(value, expected, "{name} head {h} position {p} dim {d}");
            }
        }
    }
}
