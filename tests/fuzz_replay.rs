//! Every committed fuzz seed (`fuzz/seeds/<target>/`) and every saved crash
//! input (`fuzz/regressions/<target>/`) replayed through the fuzz target's
//! own logic: each target's body is a function in `fuzz/logic/<target>.rs`,
//! included here with `#[path]` as the target includes it, so `cargo test`
//! runs exactly what libFuzzer runs (in debug, without its allocation
//! limit). An input passes when it does not panic; every failing file is
//! reported at once.

// Each target's logic includes its shared helpers itself, as its fuzz binary
// needs; replaying several targets here loads those helpers once per target.
#![allow(clippy::duplicate_mod)]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

#[path = "../fuzz/logic/grad_ops.rs"]
mod grad_ops;
#[path = "../fuzz/logic/kernels.rs"]
mod kernels;
#[path = "../fuzz/logic/model_bytes.rs"]
mod model_bytes;
#[path = "../fuzz/logic/node_test_dir.rs"]
mod node_test_dir;
#[path = "../fuzz/logic/one_node_model.rs"]
mod one_node_model;
#[path = "../fuzz/logic/overrides.rs"]
mod overrides;
#[path = "../fuzz/logic/tensor_files.rs"]
mod tensor_files;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .join("fuzz")
}

/// The files of `fuzz/<kind>/<target>/`, sorted (none when it is absent).
fn files(kind: &str, target: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(fuzz_dir().join(kind).join(target)) else {
        return vec![];
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panic with a non-string payload".into())
}

/// Runs `file` through `run`: the panic message, if it panicked.
fn replay_one(run: fn(&[u8]), file: &Path) -> Option<String> {
    let bytes = std::fs::read(file).unwrap_or_else(|e| panic!("reading {file:?}: {e}"));
    catch_unwind(AssertUnwindSafe(|| run(&bytes)))
        .err()
        .map(|p| panic_message(&*p))
}

/// Replays every seed and regression of `target`
/// and fails listing every input that panicked.
fn replay(target: &str, run: fn(&[u8])) {
    let seeds = files("seeds", target);
    assert!(
        !seeds.is_empty(),
        "no seed in fuzz/seeds/{target}/: every target is seeded from real cases"
    );
    let regressions = files("regressions", target);
    let mut failures = vec![];
    let mut replayed = 0;
    for file in seeds.iter().chain(&regressions) {
        replayed += 1;
        if let Some(message) = replay_one(run, file) {
            failures.push(format!("{}: {message}", file.display()));
        }
    }
    assert!(
        failures.is_empty(),
        "{target}: {} of {replayed} inputs panicked:\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
}

#[test]
fn every_kernels_seed_and_regression_replays_without_a_panic() {
    replay("kernels", kernels::run);
}

#[test]
fn every_one_node_model_seed_and_regression_replays_without_a_panic() {
    replay("one_node_model", one_node_model::run);
}

#[test]
fn every_model_bytes_seed_and_regression_replays_without_a_panic() {
    replay("model_bytes", model_bytes::run);
}

#[test]
fn every_grad_ops_seed_and_regression_replays_without_a_panic() {
    replay("grad_ops", grad_ops::run);
}

#[test]
fn every_overrides_seed_and_regression_replays_without_a_panic() {
    replay("overrides", overrides::run);
}

#[test]
fn every_tensor_files_seed_and_regression_replays_without_a_panic() {
    replay("tensor_files", tensor_files::run);
}

#[test]
fn every_node_test_dir_seed_and_regression_replays_without_a_panic() {
    replay("node_test_dir", node_test_dir::run);
}

// ---------------------------------------------------------------------------
// The seeds: written from committed cases by the ignored test below, run
// by hand after a change of the cases or of an input format:
// `cargo test --test integration -- --ignored
// fuzz_replay::the_seeds_are_written_from_committed_cases`.

mod seeds {
    use super::*;
    use prost::Message;
    use std::collections::BTreeMap;
    use std::io::Read;
    use tract_onnx_scatter::tract_onnx::pb::ModelProto;
    use tract_onnx_scatter::tract_onnx::prelude::Tensor;

    /// The largest seed file.
    pub const MAX_SEED: usize = 200 << 10;

    pub fn testdata() -> PathBuf {
        fuzz_dir().parent().unwrap().join("onnx-testdata")
    }

    /// Deterministic bytes for the generated (`arbitrary`) kind of input.
    pub fn random_bytes(seed: u64, len: usize) -> Vec<u8> {
        let mut state = seed.wrapping_mul(2).wrapping_add(1);
        (0..len)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (state >> 56) as u8
            })
            .collect()
    }

    /// `<dir>/<prefix><i>.pb` for i = 0, 1, … while present.
    pub fn numbered(dir: &Path, prefix: &str) -> Vec<Vec<u8>> {
        (0..)
            .map(|i| dir.join(format!("{prefix}{i}.pb")))
            .take_while(|p| p.is_file())
            .map(|p| std::fs::read(p).unwrap())
            .collect()
    }

    /// A node test's model and its first data set's inputs.
    pub fn case(dir: &Path) -> (Vec<u8>, Vec<Vec<u8>>) {
        let model = std::fs::read(dir.join("model.onnx")).unwrap();
        let inputs = numbered(&dir.join("test_data_set_0"), "input_");
        (model, inputs)
    }

    /// Every file of a node-test directory, by relative path.
    pub fn test_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
        let mut out = vec![];
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    let rel = p
                        .strip_prefix(dir)
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/");
                    out.push((rel, std::fs::read(&p).unwrap()));
                }
            }
        }
        out.sort();
        out
    }

    /// The op types of a model file, subgraphs included.
    pub fn ops(model: &[u8]) -> Vec<String> {
        let proto = ModelProto::decode(model).unwrap();
        fn walk(g: &tract_onnx_scatter::tract_onnx::pb::GraphProto, out: &mut Vec<String>) {
            for n in &g.node {
                out.push(n.op_type.clone());
                for a in &n.attribute {
                    for sub in a.g.iter().chain(&a.graphs) {
                        walk(sub, out);
                    }
                }
            }
        }
        let mut out = vec![];
        walk(proto.graph.as_ref().unwrap(), &mut out);
        out
    }

    /// Small exporter and recurrent cases (`model.onnx` of at most
    /// `max_model` bytes), the smallest variant (opset, exporter mode) of
    /// each, named `<corpus>_<exporter>_<case>`, for which `keep` holds:
    /// at most `cap`, taken smallest first from each exporter in turn.
    pub fn small_cases(
        max_model: u64,
        cap: usize,
        keep: impl Fn(&str, &[u8]) -> bool,
    ) -> Vec<(String, PathBuf)> {
        // (corpus, exporter) -> case base name -> (size, dir)
        let mut by_exporter: BTreeMap<String, BTreeMap<String, (u64, PathBuf)>> = BTreeMap::new();
        for corpus in ["exporters", "recurrent"] {
            let root = testdata().join(corpus);
            for exporter in std::fs::read_dir(&root)
                .unwrap()
                .flatten()
                .map(|e| e.path())
            {
                if !exporter.is_dir() {
                    continue;
                }
                let group = format!(
                    "{}_{}",
                    &corpus[..3],
                    exporter.file_name().unwrap().to_string_lossy()
                );
                for dir in std::fs::read_dir(&exporter)
                    .unwrap()
                    .flatten()
                    .map(|e| e.path())
                {
                    let model = dir.join("model.onnx");
                    if !model.is_file() {
                        continue;
                    }
                    let size = std::fs::metadata(&model).unwrap().len();
                    let name = dir.file_name().unwrap().to_string_lossy().to_string();
                    if size > max_model || !keep(&name, &std::fs::read(&model).unwrap()) {
                        continue;
                    }
                    let base = name.split("__").next().unwrap().to_string();
                    let cases = by_exporter.entry(group.clone()).or_default();
                    let better = cases.get(&base).is_none_or(|(s, d)| (size, &dir) < (*s, d));
                    if better {
                        cases.insert(base, (size, dir));
                    }
                }
            }
        }
        let mut queues: Vec<(String, Vec<(u64, PathBuf)>)> = by_exporter
            .into_iter()
            .map(|(group, cases)| {
                let mut v: Vec<(u64, PathBuf)> = cases.into_values().collect();
                v.sort();
                v.reverse(); // popped smallest first
                (group, v)
            })
            .collect();
        let mut out = vec![];
        while out.len() < cap && queues.iter().any(|q| !q.1.is_empty()) {
            for (group, queue) in &mut queues {
                if out.len() == cap {
                    break;
                }
                if let Some((_, dir)) = queue.pop() {
                    let name = dir.file_name().unwrap().to_string_lossy().to_string();
                    out.push((format!("{group}_{name}"), dir));
                }
            }
        }
        out.sort();
        out
    }

    /// The `.npy` files inside an `.npz` (an uncompressed zip of them).
    pub fn npy_files(npz: &[u8]) -> Vec<(String, Vec<u8>)> {
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(npz)).unwrap();
        (0..zip.len())
            .map(|i| {
                let mut e = zip.by_index(i).unwrap();
                let mut bytes = vec![];
                e.read_to_end(&mut bytes).unwrap();
                (e.name().to_string(), bytes)
            })
            .collect()
    }

    pub fn decode(pb: &[u8]) -> Tensor {
        onnx_golden::tensor_proto::decode_tensor_bytes(pb).unwrap()
    }
}

#[test]
#[ignore = "writes fuzz/seeds/ from the committed cases: run by hand after changing them or an input format"]
fn the_seeds_are_written_from_committed_cases() {
    use seeds::*;
    let mut written: Vec<(String, usize)> = vec![];
    let mut write = |target: &str, name: &str, bytes: &[u8]| {
        assert!(
            bytes.len() < MAX_SEED,
            "{target}/{name}: {} bytes",
            bytes.len()
        );
        let dir = fuzz_dir().join("seeds").join(target);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), bytes).unwrap();
        written.push((format!("{target}/{name}"), bytes.len()));
    };
    let td = testdata();
    let overridden: Vec<&str> = tract_onnx_scatter::TractOverride::ALL
        .iter()
        .map(|o| o.op_type())
        .collect();

    // grad_ops: autograd cases, framed (kind 0), and generated inputs (kind 1).
    for name in [
        "se_grad_add_axis0_r2_exclude_self_f32",
        "se_grad_add_lda_coeff_include_self_f32",
        "se_grad_defaults_no_attributes_f32",
        "se_grad_max_ties_three_way_include_self_f64",
        "se_grad_mean_axisneg1_r3_negidx_include_self_f32",
        "se_grad_mul_zeros_exclude_self_f32",
        "se_grad_none_int32_indices_f32",
        "se_grad_min_r1_dups_negidx_exclude_self_f64",
        "snd_grad_add_empty_updates_include_self_f32",
        "snd_grad_add_k2_r3_batched_include_self_f32",
        "snd_grad_defaults_no_attributes_f32",
        "snd_grad_min_k3_r3_include_self_f32",
        "snd_grad_mul_empty_updates_exclude_self_f64",
        "snd_grad_max_ties_exclude_self_f64",
    ] {
        let (model, inputs) = case(&td.join("autograd").join(name));
        let mut bytes = vec![0];
        bytes.extend(grad_ops::model_case_frame(&model, &inputs));
        write("grad_ops", name, &bytes);
    }
    for i in 0..6 {
        let mut bytes = vec![1];
        bytes.extend(random_bytes(i, 384));
        write("grad_ops", &format!("generated_{i}"), &bytes);
    }

    // overrides: small models holding an overridden op (Loop, If, Reshape,
    // Slice, Expand, Cast, ReverseSequence, ...), framed with their inputs
    // (kind 0), and generated inputs (kind 1).
    // Mostly models with control flow or a sequence op (the exporters'
    // `loop_*` cases, recurrent models), some with the other overrides.
    let control_flow = |name: &str, model: &[u8]| {
        name.starts_with("loop_")
            || ops(model)
                .iter()
                .any(|op| ["Loop", "If", "ReverseSequence", "Unique"].contains(&op.as_str()))
    };
    let other_override = |name: &str, model: &[u8]| {
        !control_flow(name, model)
            && ops(model)
                .iter()
                .any(|op| overridden.contains(&op.as_str()))
    };
    let chosen = small_cases(16 << 10, 32, control_flow)
        .into_iter()
        .chain(small_cases(16 << 10, 6, other_override));
    for (name, dir) in chosen {
        let (model, inputs) = case(&dir);
        let mut bytes = vec![0];
        bytes.extend(overrides::model_case_frame(&model, &inputs));
        write("overrides", &name, &bytes);
    }
    for i in 0..8 {
        let mut bytes = vec![1];
        bytes.extend(random_bytes(100 + i, 512));
        write("overrides", &format!("generated_{i}"), &bytes);
    }
    // model_bytes: small exporter and recurrent models, beside the
    // one-node scatter models already there.
    for (name, dir) in small_cases(16 << 10, 24, |_, _| true) {
        let (model, _) = case(&dir);
        write("model_bytes", &format!("{name}.onnx"), &model);
    }

    // tensor_files: real inputs as .pb, as .npz (what `tract-scatter run`
    // writes) and as the .npy files inside it.
    let sources = [
        "autograd/se_grad_add_axis0_r2_exclude_self_f32",
        "autograd/snd_grad_add_empty_updates_include_self_f32",
        "extended/scatter_10_str_r5_axis-5_noreduction_i64_longaxis_v0",
        "extended/scatter_10_f16_r2_axis1_noreduction_i32_v0",
        "extended/scatter_10_bool_r3_axis-3_noreduction_i64_constidx_longaxis_v0",
        "extended/scatter_10_f64_r4_axis1_noreduction_i64_v0",
        "extended/scatter_10_u64_r1_axis-1_noreduction_i64_longaxis_v0",
        "extended/scatter_10_i8_r4_axis3_noreduction_i32_v0",
    ];
    for source in sources {
        let dir = td.join(source).join("test_data_set_0");
        let short = source.rsplit('/').next().unwrap();
        let pbs = numbered(&dir, "input_");
        for (i, pb) in pbs.iter().enumerate() {
            write(
                "tensor_files",
                &format!("{short}_input_{i}.pb"),
                &tensor_files::input("pb", pb),
            );
        }
        let named: Vec<(String, tract_onnx_scatter::tract_onnx::prelude::Tensor)> = pbs
            .iter()
            .enumerate()
            .map(|(i, pb)| (format!("input_{i}"), decode(pb)))
            .filter(|(_, t)| {
                t.datum_type() != tract_onnx_scatter::tract_onnx::prelude::DatumType::String
            })
            .collect();
        if named.is_empty() {
            continue;
        }
        let npz = tensor_files::npz_file(&named);
        write(
            "tensor_files",
            &format!("{short}.npz"),
            &tensor_files::input("npz", &npz),
        );
        for (entry, npy) in npy_files(&npz) {
            write(
                "tensor_files",
                &format!("{short}_{entry}"),
                &tensor_files::input("npy", &npy),
            );
        }
    }

    // node_test_dir: whole node-test directories, declared and pinned, a
    // tolerance file, a gap in the numbering, no model.
    let node_tests = [
        "extended/scatter_elements_18_f32_r2_axis1_none_i32_v0",
        "extended/scatter_nd_18_data_rank0_err_rank",
        "extended/scatter_9_const_index_out_of_range_err_out-of-bounds",
        "extended/ov_scatter_elements_update_f16_r1_axis0_mean_init0",
        "autograd/snd_grad_add_k2_r3_batched_include_self_f32",
        "autograd/se_grad_max_ties_include_self_f32",
        "exporters/torch/loop_for_index_put_rows__ts13",
        "recurrent/tf2onnx/keras_lstm_go_backwards__opset13",
    ];
    for (i, source) in node_tests.iter().enumerate() {
        let files = test_files(&td.join(source));
        let short = source.rsplit('/').next().unwrap();
        write(
            "node_test_dir",
            short,
            &node_test_dir::input(&files, i % 2 == 1),
        );
        if i == 0 {
            let mut with_tolerance = files.clone();
            with_tolerance.push((
                "tolerance.toml".into(),
                b"rtol = 1e-3\natol = 1e-5\n".to_vec(),
            ));
            write(
                "node_test_dir",
                &format!("{short}_tolerance"),
                &node_test_dir::input(&with_tolerance, false),
            );
            let gap: Vec<_> = files
                .iter()
                .filter(|(p, _)| p != "test_data_set_0/input_1.pb")
                .cloned()
                .collect();
            write(
                "node_test_dir",
                &format!("{short}_gap"),
                &node_test_dir::input(&gap, false),
            );
            let no_model: Vec<_> = files
                .iter()
                .filter(|(p, _)| p != "model.onnx")
                .cloned()
                .collect();
            write(
                "node_test_dir",
                &format!("{short}_no_model"),
                &node_test_dir::input(&no_model, true),
            );
        }
    }

    let total: usize = written.iter().map(|w| w.1).sum();
    for (name, len) in &written {
        println!("{len:>8}  {name}");
    }
    println!("{} seeds, {total} bytes", written.len());
    assert!(total < 5 << 20, "seeds take {total} bytes");
}

/// The real cases among the seeds (framed, first byte 0) reach the run
/// and pass it unmutated: a change of the input format that would leave
/// them undecoded, or out of the target's scope, fails here.
#[test]
fn every_real_case_seed_of_the_model_targets_loads_and_runs() {
    type Outcome = fn(&[u8]) -> Option<tract_onnx::prelude::TractResult<()>>;
    let targets: [(&str, Outcome); 2] = [
        ("grad_ops", grad_ops::outcome),
        ("overrides", overrides::outcome),
    ];
    let mut failures = vec![];
    let mut real = 0;
    for (target, outcome) in targets {
        for file in files("seeds", target) {
            let bytes = std::fs::read(&file).unwrap();
            if bytes.first() != Some(&0) {
                continue;
            }
            real += 1;
            match outcome(&bytes) {
                Some(Ok(())) => {}
                Some(Err(e)) => failures.push(format!("{}: {e:#}", file.display())),
                None => failures.push(format!("{}: makes no case", file.display())),
            }
        }
    }
    assert!(real > 0);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The other targets' seeds written from real cases reach what they test:
/// every tensor file reads, every node-test directory (but the ones made
/// broken on purpose) loads and passes in both modes.
#[test]
fn every_real_case_seed_of_the_file_targets_reads_and_passes() {
    let mut failures = vec![];
    for file in files("seeds", "tensor_files") {
        match tensor_files::outcome(&std::fs::read(&file).unwrap()) {
            Some(Ok(n)) if n > 0 => {}
            Some(Ok(_)) => failures.push(format!("{}: no tensor", file.display())),
            Some(Err(e)) => failures.push(format!("{}: {e:#}", file.display())),
            None => failures.push(format!("{}: empty", file.display())),
        }
    }
    for file in files("seeds", "node_test_dir") {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let outcome = node_test_dir::outcome(&std::fs::read(&file).unwrap());
        let broken = name.ends_with("_gap") || name.ends_with("_no_model");
        match (outcome, broken) {
            (None, true) => {}
            (Some(_), true) => failures.push(format!("{}: loads", file.display())),
            (Some((o, _)), false) if o.decluttered.is_pass() && o.optimized.is_pass() => {}
            (Some((o, _)), false) => failures.push(format!(
                "{}: {} / {}",
                file.display(),
                o.decluttered,
                o.optimized
            )),
            (None, false) => failures.push(format!("{}: does not load", file.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
