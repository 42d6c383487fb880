"""types/README.md: what the corpus holds, how to regenerate it, counts per op x type,
the per-step rounding finding, the onnxruntime cross-check and the PyTorch exporter
results.  Everything in it is deterministic (no times, no paths of this machine).
"""
from __future__ import annotations

import os

from . import REQUIREMENTS, TORCH_REQUIREMENTS

FAMILIES = ["Scatter", "ScatterElements", "ScatterND", "TensorScatter", "Cast(bf16) + ScatterElements",
            "Cast(bf16) + ScatterND", "Cast(bf16) + TensorScatter", "complex slabs + scatter", "PyTorch export"]
TYPES = ["bf16", "c64", "c128"]


def _cell(counts, fam, dt):
    v, e = counts.get((fam, dt, "valid"), 0), counts.get((fam, dt, "error"), 0)
    if not v and not e:
        return "–"
    return f"{v}" + (f" + {e} err" if e else "")


def write_readme(out, counts, oracle_stats, ort_stats, ort_refusals, ort_dis, ref_on_errors, probe, torch_res):
    L = []
    a = L.append
    total_valid = sum(n for (f, d, k), n in counts.items() if k == "valid")
    total_err = sum(n for (f, d, k), n in counts.items() if k == "error")
    a("# Element-type corpus (`onnx-testdata/types/`): bfloat16, complex64, complex128")
    a("")
    a("Generated, committed data for the scatter family on the element types BFLOAT16 (16), COMPLEX64 (14)")
    a("and COMPLEX128 (15). Python only generates it; the Rust tests only read the files. Do not edit by hand:")
    a("the generator deletes and rewrites this directory.")
    a("")
    a(f"{total_valid + total_err} cases: {total_valid} valid, {total_err} error cases.")
    a("")
    a("## Regenerate")
    a("")
    a("```sh")
    a("python3 -m venv ~/venvs/types")
    a("~/venvs/types/bin/pip install -r onnx-testdata/types_gen/requirements.txt")
    a("# the PyTorch exports run in a second venv (torch, onnxscript, onnx-ir; the rest at the versions above):")
    a("#   python3 -m venv ~/venvs/torch && ~/venvs/torch/bin/pip install -r onnx-testdata/exporters/gen/requirements-torch.txt")
    a("~/venvs/types/bin/python onnx-testdata/generate_types.py   # [--out DIR] [--torch-python PY]")
    a("find onnx-testdata/types -type f | sort | xargs sha256sum | sha256sum   # identical on every run")
    a("```")
    a("")
    a("`generate_types.py` is a thin entry point to `onnx-testdata/types_gen/` (one module per op family; see its")
    a("`__init__.py`). It checks the pinned versions, deletes and rewrites `types/`, and calls")
    a("`types_gen/torch_export.py` with the torch venv's python (`--torch-python`, or `$TYPES_TORCH_PYTHON`,")
    a("default `~/venvs/torch/bin/python`). Deterministic: every case draws from its own RNG seeded by the")
    a("CRC32 of its name; two runs give byte-identical files.")
    a("")
    a("Versions: " + ", ".join(f"{k} {v}" for k, v in REQUIREMENTS.items()) + "; torch venv: the same plus "
      + ", ".join(f"{k} {v}" for k, v in TORCH_REQUIREMENTS.items()) + ".")
    a("")
    a("## Layout")
    a("")
    a("```")
    a("types/<case>/model.onnx")
    a("types/<case>/test_data_set_0/input_<i>.pb    # graph inputs that are not initializers, in order")
    a("types/<case>/test_data_set_0/output_<i>.pb   # valid cases only")
    a("types/<case>/expected_error.txt              # error cases only: the word the error must contain")
    a("```")
    a("")
    a("Error cases follow `extended/`'s convention: `expected_error.txt` holds one word the error must contain")
    a("(case-insensitive), the name ends in `_err_<word>`, and an error decided at load ships no inputs. Here every")
    a("error case is refused at load, so none ships inputs. One kind:")
    a("")
    a("- complex64 / complex128 with `reduction=max` or `min` (ONNX has no order on complex numbers): the word is")
    a("  `reduction`. The message should also name the node, `scatter_elements_node` / `scatter_nd_node` (the")
    a("  file holds only one text to match, so that part is not checked by the harness).")
    a("bfloat16 at op versions whose schema lacks it (Scatter 9/10, ScatterElements-11, ScatterND-11) has no case:")
    a("the plugin, like tract, does not check element types against the op version's schema.")
    a("")
    a("Case names: `<op>_<opset>_<reduction>_<type>_...`; `noreduction` = no reduction attribute (opsets before")
    a("16, Scatter). Indices are int64, with negative values throughout; axes are negative in about half the")
    a("cases; ranks 1-3 (TensorScatter 2-4); random indices include duplicates (under `none` the last write")
    a("wins, as in `extended/`). `cast_f32_bf16_*`: float32 in and out, the scatter in bf16 between two Casts.")
    a("`complex_slabs_*`: complex tensors moved by Transpose / Reshape / Concat / Slice around a scatter.")
    a("`torch_*`: PyTorch exports (below).")
    a("")
    a("## Cases per op × type")
    a("")
    a("| op | bf16 | complex64 | complex128 |")
    a("| --- | --- | --- | --- |")
    for fam in FAMILIES:
        a(f"| {fam} | " + " | ".join(_cell(counts, fam, dt) for dt in TYPES) + " |")
    a("")
    a("Opsets: Scatter 9, 10; ScatterElements 11, 13, 16, 18; ScatterND 11, 13, 16, 18; TensorScatter 24; every")
    a("reduction the opset admits (16: none, add, mul; 18: also max, min) on every type.")
    a("")
    a("## Expected values and the per-step rounding finding")
    a("")
    a("Expected values come from `onnx.reference.ReferenceEvaluator` (onnx " + REQUIREMENTS["onnx"] + ", bf16 through")
    a("ml_dtypes " + REQUIREMENTS["ml_dtypes"] + "), except Scatter 9/10 (the reference has no Scatter: the same")
    a("node runs as ScatterElements-11) and the PyTorch exports (eager). Every scatter case's reference value was")
    a(f"also computed by the plain per-step-rounding oracle (`types_gen/oracle.py`): {oracle_stats.get('agreed', 0)}")
    a("of them, all bit-identical.")
    a("")
    a("**The reference rounds the running value to the element type after every update** for reduction add and")
    a("mul (it folds element by element in numpy with bf16 scalars, each `x + y` / `x * y` computed in float32 and")
    a("rounded to bf16, round-to-nearest-even). So the expected values here are per-step rounded, and an")
    a("implementation that accumulates in f32 and rounds once fails the `*_duplicates_round_per_step` cases:")
    a("")
    a("| op (opset 18) | reduction | data | 4 updates at one index | reference | per-step oracle | one rounding |")
    a("| --- | --- | --- | --- | --- | --- | --- |")
    for (op, red, start, upd, got, ps, once) in probe:
        a(f"| {op} | {red} | {start} | {upd} | {got} | {ps} | {once} |")
    a("")
    a("(1 + 2^-8 is a tie between 1 and 1 + 2^-7 and rounds to the even 1.0, every step.) The complex")
    a("`*_duplicates_round_per_step` cases do the same in complex64 ((1+1j) + 4 × (2^-25 + 2^-25j): 1+1j per")
    a("step, 1+2^-23 (1+1j) rounded once) and complex128 (2^-54).")
    a("")
    a("Complex max / min (the error cases): the reference does not refuse them, it computes numpy's")
    a("lexicographic order (real part, then imaginary), e.g.:")
    a("")
    for name, what in [r for r in ref_on_errors if "_err_reduction" in r[0]][:2]:
        a(f"- `{name}`: {what}")
    a("")
    a("## onnxruntime cross-check")
    a("")
    a("onnxruntime " + REQUIREMENTS["onnxruntime"] + " (CPU, 1 thread; bf16 through OrtValues), bit-exact comparison with")
    a("the expected outputs. It is a cross-check only: its CPU scatter kernels take bf16 only without reduction")
    a("and have no complex at all.")
    a("")
    a("| op | type | agreed | disagreed | refused |")
    a("| --- | --- | --- | --- | --- |")
    fams = sorted({(f, d) for (f, d, _) in ort_stats}, key=lambda x: (FAMILIES.index(x[0]), TYPES.index(x[1])))
    tot = {"agreed": 0, "disagreed": 0, "refused": 0}
    for f, d in fams:
        ag = ort_stats.get((f, d, "agreed"), 0) + ort_stats.get((f, d, "agreed (refused)"), 0)
        di = ort_stats.get((f, d, "disagreed"), 0) + ort_stats.get((f, d, "disagreed (ran)"), 0)
        re = ort_stats.get((f, d, "refused"), 0)
        tot["agreed"] += ag
        tot["disagreed"] += di
        tot["refused"] += re
        a(f"| {f} | {d} | {ag} | {di} | {re} |")
    a(f"| all | | {tot['agreed']} | {tot['disagreed']} | {tot['refused']} |")
    a("")
    a("An error case counts as agreed when onnxruntime refuses it too (it has no complex kernel, so for the")
    a("complex max / min cases that says nothing about the reduction). Refusals of valid cases, by reason:")
    a("")
    for (fam, why), n in sorted(ort_refusals.items()):
        a(f"- {fam}: {n} × `{why}`")
    if ort_dis:
        a("")
        a("Disagreements (expected, then onnxruntime):")
        a("")
        for name, exp, got in ort_dis:
            a(f"- `{name}`: {exp} vs {got}")
    a("")
    a("## PyTorch exports (`torch_*`)")
    a("")
    v = torch_res["versions"]
    a(f"torch {v['torch']}, onnxscript {v['onnxscript']}, onnx {v['onnx']}, ml_dtypes {v['ml_dtypes']}. Small")
    a("nn.Modules (`types_gen/torch_export.py`) with `scatter_add`, `index_put(accumulate=True / False)` and")
    a("`index_copy`, `model.to(torch.bfloat16)`, fixed input shapes, exported by the TorchScript exporter")
    a("(`dynamo=False`, opsets 16 and 17) and the dynamo exporter (`dynamo=True`, its default opset and 18).")
    a("Expected outputs are PyTorch eager's bf16 outputs, written as BFLOAT16 tensors. The ONNX reference and")
    a("onnxruntime ran every export (cross-checks only):")
    a("")
    a("| case | ONNX ops | reference vs eager | onnxruntime vs eager |")
    a("| --- | --- | --- | --- |")
    failed = []
    mism = []
    for r in torch_res["results"]:
        if r["status"] != "exported":
            failed.append(r)
            continue
        rv = r["ref_vs_eager"]
        if rv != "match":
            mism.append(r)
            rv = "**differs**"
        ov = r["ort_vs_eager"]
        if ov.startswith("refused: "):
            ov = "refused (" + ov.split(": ", 2)[-1].split(" node with name")[0][:90] + ")"
        a(f"| `{r['name']}` | {', '.join(r['ops'])} | {rv} | {ov} |")
    a("")
    if failed:
        a("Exports that failed (no case written):")
        a("")
        for r in failed:
            a(f"- `{r['idiom']}` via {r['path']}: {r['message']}")
    else:
        a("Every idiom exported on every path (no exporter failure).")
    a("")
    if mism:
        a("**Where the reference differs from eager, the exported model's ONNX semantics differ from PyTorch's;**")
        a("these cases keep eager's outputs (as the exporter corpus does) and an implementation that follows")
        a("ONNX fails them, as the reference does. The lead may list them in `onnx-testdata/expected-failures.toml`:")
        a("")
        for r in mism:
            a(f"- `{r['name']}`: {r['ref_vs_eager']}")
        a("")
        a("Two causes: (1) PyTorch's CPU `scatter_add` on bf16 behaves as if it accumulated in float32 and rounded once (eager")
        a("1.0 + 4 × 2^-8 = 1.015625), while ScatterElements add rounds per step (1.0); its `index_put(accumulate=True)`")
        a("rounds per step, like ONNX. (2) The TorchScript exporter lowers `index_put(accumulate=True)` at opsets")
        a("16/17 to ScatterND without reduction on zeros plus Add, so duplicate indices keep only the last update;")
        a("the dynamo exporter emits ScatterND reduction=add and matches.")
        a("")
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write("\n".join(L))
