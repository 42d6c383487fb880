//! The Python side: the same models and inputs written to a temporary
//! directory (`model.onnx` + `.npy`), timed round by round by
//! `xtask/bench_ort.py --serve` (onnxruntime, [`OrtRounds`]); the gradient
//! rows' by `xtask/bench_torch_grad.py` (PyTorch autograd's backward of the
//! same forward, from `grad.txt`).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use tract_onnx_scatter::tract_onnx::prelude::*;

use crate::case::Case;
use crate::server::Server;
use crate::timing::Budget;
use crate::workspace_root;

/// `explicit`, else `$ORT_PYTHON`, else `<root>/.venv/bin/python`, else
/// `python3`.
fn ort_python_candidate(explicit: Option<&Path>) -> PathBuf {
    let venv = workspace_root().join(".venv/bin/python");
    explicit
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("ORT_PYTHON").map(PathBuf::from))
        .or_else(|| venv.exists().then_some(venv))
        .unwrap_or_else(|| PathBuf::from("python3"))
}

/// The Python to run onnxruntime with: `explicit`, else `$ORT_PYTHON`,
/// else `<root>/.venv/bin/python`, else `python3`; `Err` saying why when
/// it cannot import onnxruntime.
pub fn find_python(explicit: Option<&Path>) -> Result<PathBuf> {
    let python = ort_python_candidate(explicit);
    let out = Command::new(&python)
        .args([
            "-c",
            "import onnxruntime, numpy; print(onnxruntime.__version__)",
        ])
        .output()
        .with_context(|| format!("running {}", python.display()))?;
    if !out.status.success() {
        bail!(
            "{} cannot import onnxruntime and numpy (set up with `python3 -m venv .venv && \
             .venv/bin/pip install -r onnx-testdata/requirements.txt`)",
            python.display()
        );
    }
    Ok(python)
}

/// The onnxruntime version `python` imports.
pub fn version(python: &Path) -> Result<String> {
    let out = Command::new(python)
        .args(["-c", "import onnxruntime; print(onnxruntime.__version__)"])
        .output()?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A `.npy` (format 1.0) of little-endian `descr` elements.
fn write_npy(path: &Path, descr: &str, shape: &[usize], bytes: &[u8]) -> Result<()> {
    let shape = match shape {
        [d] => format!("({d},)"),
        dims => format!(
            "({})",
            dims.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // magic (6) + version (2) + header length (2) + header + '\n', to a
    // multiple of 64.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    f.write_all(b"\x93NUMPY\x01\x00")?;
    f.write_all(&(header.len() as u16).to_le_bytes())?;
    f.write_all(header.as_bytes())?;
    f.write_all(bytes)?;
    f.flush()?;
    Ok(())
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn i64_bytes(v: &[i64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Writes `dir/<name>/{model.onnx, <input name>.npy, feedback.txt,
/// position.txt, grad.txt}` for `case`: int64 inputs as `<i8`, the others
/// as `<f4`. `feedback.txt` pairs each fed-back output with the input it
/// feeds (`<output> <input>` per line); `position.txt` names the input set
/// to `call % limit` before each call (`<input> <limit>`); `grad.txt`, for
/// a gradient row, says what it differentiates (`<key> <value>` lines: op,
/// axis, reduction, include_self, lda_coeff).
pub fn write_case(dir: &Path, case: &Case) -> Result<()> {
    let dir = dir.join(&case.name);
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("model.onnx"), case.model_bytes()?)?;
    for (name, t) in case.input_names.iter().zip(&case.inputs) {
        let path = dir.join(format!("{name}.npy"));
        if t.datum_type() == i64::datum_type() {
            let values: Vec<i64> = t.to_plain_array_view::<i64>()?.iter().copied().collect();
            write_npy(&path, "<i8", t.shape(), &i64_bytes(&values))?;
        } else {
            let t = t.cast_to::<f32>()?;
            let values: Vec<f32> = t.to_plain_array_view::<f32>()?.iter().copied().collect();
            write_npy(&path, "<f4", t.shape(), &f32_bytes(&values))?;
        }
    }
    if !case.feedback.is_empty() {
        let lines: String = case
            .feedback
            .iter()
            .map(|&(o, i)| format!("{} {}\n", case.output_names[o], case.input_names[i]))
            .collect();
        std::fs::write(dir.join("feedback.txt"), lines)?;
    }
    if let Some((input, limit)) = case.position {
        std::fs::write(
            dir.join("position.txt"),
            format!("{} {limit}\n", case.input_names[input]),
        )?;
    }
    if case.extras.gnn {
        // Marks the row for xtask/bench_torch_gnn.py.
        std::fs::write(dir.join("gnn.txt"), "")?;
    }
    if let Some(g) = &case.gradient {
        std::fs::write(
            dir.join("grad.txt"),
            format!(
                "op {}\naxis {}\nreduction {}\ninclude_self {}\nlda_coeff {}\n",
                g.op.onnx_name(),
                g.axis,
                g.reduction,
                g.include_self as u8,
                g.lda_coeff
            ),
        )?;
    }
    Ok(())
}

/// The Python to run PyTorch autograd with: `explicit`, else
/// `$TORCH_PYTHON`, else the onnxruntime Python's candidate
/// ([`find_python`]'s order); `Err` saying why when it cannot import torch
/// and numpy. Returns the Python and torch's version.
pub fn find_torch_python(
    explicit: Option<&Path>,
    ort_python: Option<&Path>,
) -> Result<(PathBuf, String)> {
    let python = explicit
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("TORCH_PYTHON").map(PathBuf::from))
        .unwrap_or_else(|| ort_python_candidate(ort_python));
    let out = Command::new(&python)
        .args(["-c", "import torch, numpy; print(torch.__version__)"])
        .output()
        .with_context(|| format!("running {}", python.display()))?;
    if !out.status.success() {
        bail!(
            "{} cannot import torch and numpy (set $TORCH_PYTHON, e.g. \
             /root/venvs/torch/bin/python)",
            python.display()
        );
    }
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Ok((python, version))
}

/// PyTorch's times on one gradient row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TorchGrad {
    /// `torch.autograd.grad(..., retain_graph=True)` on a graph built once.
    pub backward: Duration,
    /// The forward and `torch.autograd.grad` per call.
    pub forward_backward: Duration,
    /// PyTorch's grad_data is grad_output itself (no copy).
    pub aliased: bool,
}

/// Runs `xtask/<name> <dir> <extra>` with `python` and `budget`'s limits,
/// its stderr passed through; returns the script's path and its stdout.
fn run_timing_script(
    python: &Path,
    name: &str,
    dir: &Path,
    budget: Budget,
    extra: &[&str],
) -> Result<(PathBuf, String)> {
    let script = workspace_root().join("xtask").join(name);
    let out = Command::new(python)
        .arg(&script)
        .arg(dir)
        .args(extra)
        .args(["--budget", &budget.time.as_secs_f64().to_string()])
        .args(["--min-runs", &budget.min_iters.to_string()])
        .args(["--max-runs", &budget.max_iters.to_string()])
        .stderr(std::process::Stdio::inherit())
        .output()
        .with_context(|| format!("running {} {}", python.display(), script.display()))?;
    if !out.status.success() {
        bail!("{} failed ({})", script.display(), out.status);
    }
    Ok((script, String::from_utf8_lossy(&out.stdout).into_owned()))
}

/// Times every gradient row under `dir` with `xtask/bench_torch_grad.py`
/// (one thread): PyTorch's times per row name.
pub fn run_torch(python: &Path, dir: &Path, budget: Budget) -> Result<BTreeMap<String, TorchGrad>> {
    let (script, stdout) = run_timing_script(python, "bench_torch_grad.py", dir, budget, &[])?;
    let mut times = BTreeMap::new();
    for line in stdout.lines() {
        // "<name> <backward s> <runs> <forward+backward s> <runs> <aliased>"
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [name, backward, _, both, _, aliased] = fields[..] else {
            bail!("{} printed {line:?}, expected six fields", script.display());
        };
        let secs = |s: &str| -> Result<Duration> {
            let x: f64 = s
                .parse()
                .with_context(|| format!("parsing {line:?} from {}", script.display()))?;
            Ok(Duration::from_secs_f64(x))
        };
        times.insert(
            name.to_string(),
            TorchGrad {
                backward: secs(backward)?,
                forward_backward: secs(both)?,
                aliased: aliased == "1",
            },
        );
    }
    Ok(times)
}

/// PyTorch's `index_add_` and `scatter_add_` on one GNN row, at 1 thread
/// (index 0) and [`crate::THREADS`] (index 1).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TorchGnn {
    pub index_add: [Option<Duration>; 2],
    pub scatter_add: [Option<Duration>; 2],
}

/// Times every GNN row under `dir` with `xtask/bench_torch_gnn.py` at 1
/// and [`crate::THREADS`] threads: PyTorch's times per row name.
pub fn run_torch_gnn(
    python: &Path,
    dir: &Path,
    budget: Budget,
) -> Result<BTreeMap<String, TorchGnn>> {
    let threads = format!("1,{}", crate::THREADS);
    let (script, stdout) = run_timing_script(
        python,
        "bench_torch_gnn.py",
        dir,
        budget,
        &["--threads", &threads],
    )?;
    parse_torch_gnn(&stdout).with_context(|| format!("reading {}'s output", script.display()))
}

/// Lines "<name> <op> <threads> <median seconds> <runs>".
fn parse_torch_gnn(stdout: &str) -> Result<BTreeMap<String, TorchGnn>> {
    let mut times: BTreeMap<String, TorchGnn> = BTreeMap::new();
    for line in stdout.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [name, op, threads, median, _] = fields[..] else {
            bail!("{line:?}: expected five fields");
        };
        let slot = match threads.parse::<usize>() {
            Ok(1) => 0,
            Ok(n) if n == crate::THREADS => 1,
            _ => bail!(
                "{line:?}: threads {threads:?}, expected 1 or {}",
                crate::THREADS
            ),
        };
        let secs: f64 = median
            .parse()
            .with_context(|| format!("{line:?}: median {median:?}"))?;
        let entry = times.entry(name.to_string()).or_default();
        let column = match op {
            "index_add_" => &mut entry.index_add,
            "scatter_add_" => &mut entry.scatter_add,
            _ => bail!("{line:?}: op {op:?}, expected index_add_ or scatter_add_"),
        };
        column[slot] = Some(Duration::from_secs_f64(secs));
    }
    Ok(times)
}

/// onnxruntime's side of the paired rounds: one `xtask/bench_ort.py
/// --serve` (io binding) per thread count for the whole bench, asked for a
/// round of a workload at a time; its session stays loaded between rounds
/// of the same workload.
pub struct OrtRounds(Server);

impl OrtRounds {
    /// A server whose sessions run `threads` intra-op threads.
    pub fn start(python: &Path, threads: usize) -> Result<OrtRounds> {
        let script = workspace_root().join("xtask/bench_ort.py");
        let mut command = Command::new(python);
        command
            .arg(&script)
            .arg("--serve")
            .args(["--threads", &threads.to_string()])
            .stderr(std::process::Stdio::inherit());
        Ok(OrtRounds(Server::start(
            command,
            &script.display().to_string(),
        )?))
    }

    /// One round of the workload [`write_case`] wrote at `case_dir`.
    pub fn round(&mut self, case_dir: &Path, budget: Budget) -> Result<Duration> {
        let dir = case_dir
            .to_str()
            .context("the workload directory is not UTF-8")?;
        let line = self.0.ask(&format!(
            "{} {} {} {dir}",
            budget.time.as_secs_f64(),
            budget.min_iters,
            budget.max_iters
        ))?;
        // "<median seconds> <runs>"
        let secs: f64 = line
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .parse()
            .with_context(|| format!("parsing bench_ort.py's line {line:?}"))?;
        Ok(Duration::from_secs_f64(secs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torch_gnn_lines_fill_one_thread_and_threads_columns() {
        let out = "gnn_painn index_add_ 1 2.0e-3 10\n\
                   gnn_painn scatter_add_ 1 3.0e-3 10\n\
                   gnn_painn index_add_ 2 1.0e-3 10\n";
        let times = parse_torch_gnn(out).unwrap();
        let ms = |x: u64| Some(Duration::from_millis(x));
        assert_eq!(
            times["gnn_painn"],
            TorchGnn {
                index_add: [ms(2), ms(1)],
                scatter_add: [ms(3), None],
            }
        );
    }

    #[test]
    fn torch_gnn_lines_with_an_unknown_op_or_thread_count_are_refused() {
        let err = parse_torch_gnn("g index_put_ 1 1e-3 5").unwrap_err();
        assert!(
            format!("{err}").contains("expected index_add_ or scatter_add_"),
            "{err}"
        );
        let err = parse_torch_gnn("g index_add_ 3 1e-3 5").unwrap_err();
        assert!(format!("{err}").contains("expected 1 or 2"), "{err}");
        let err = parse_torch_gnn("g index_add_ 1").unwrap_err();
        assert!(format!("{err}").contains("five fields"), "{err}");
    }
}
