"""Entry point: python -m types_gen [--out DIR] [--torch-python PY], run from
onnx-testdata/ (or onnx-testdata/generate_types.py, which calls main()).  Registers
every case in the fixed generator order, computes the expected values with the ONNX
reference (checked against the per-step oracle), writes the cases sorted by name,
cross-checks them with onnxruntime, runs the PyTorch exports in the torch venv, and
writes types/README.md.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, OrderedDict

import ml_dtypes
import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator

from . import REQUIREMENTS, TORCH_REQUIREMENTS
from .cases import CASES, build_model, write_case
from .composite import gen_cast_bf16, gen_complex_slabs
from .crosscheck import first_line, run_ort
from .oracle import per_step, same, single_rounding
from .readme import write_readme
from .scatter_elements import gen_scatter_elements, gen_se_rounding
from .scatter_nd import gen_nd_rounding, gen_scatter_nd
from .tensor_scatter import gen_tensor_scatter
from .values import BF16

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # onnx-testdata/
DEFAULT_OUT = os.path.join(HERE, "types")
DEFAULT_TORCH_PY = os.environ.get("TYPES_TORCH_PYTHON", os.path.expanduser("~/venvs/torch/bin/python"))


def check_versions():
    import onnxruntime
    got = {"onnx": onnx.__version__, "numpy": np.__version__, "onnxruntime": onnxruntime.__version__,
           "ml_dtypes": ml_dtypes.__version__}
    import google.protobuf
    got["protobuf"] = google.protobuf.__version__
    bad = {k: (v, REQUIREMENTS[k]) for k, v in got.items() if v != REQUIREMENTS[k]}
    if bad:
        sys.exit(f"types_gen: package versions differ from REQUIREMENTS (got, pinned): {bad}")


def feeds_of(c):
    return OrderedDict((nm, a) for (nm, a, _) in c.inputs)


def rounding_probe():
    """The finding for the README: what the reference does with duplicates that round."""
    from onnx import helper
    rows = []
    for op, red, start, upd in (("ScatterElements", "add", 1.0, 2.0 ** -8), ("ScatterND", "add", 1.0, 2.0 ** -8),
                                ("ScatterElements", "mul", 1.0, 1.03125), ("ScatterND", "mul", 1.0, 1.03125)):
        attrs = {"reduction": red}
        ind = np.zeros([4], np.int64) if op == "ScatterElements" else np.zeros([4, 1], np.int64)
        node = helper.make_node(op, ["d", "i", "u"], ["o"], **attrs)
        g = helper.make_graph([node], "probe", [helper.make_tensor_value_info("d", 16, [1]),
                                                helper.make_tensor_value_info("i", 7, list(ind.shape)),
                                                helper.make_tensor_value_info("u", 16, [4])],
                              [helper.make_tensor_value_info("o", 16, [1])])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
        ups = np.full([4], upd, np.float32).astype(BF16)
        got = ReferenceEvaluator(m).run(None, {"d": np.array([start], BF16), "i": ind, "u": ups})[0]
        rows.append((op, red, start, upd, float(got[0]), float(per_step(start, ups, red)),
                     float(single_rounding(start, ups, red))))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(prog="types_gen", description="Generate the bf16 / complex corpus.")
    ap.add_argument("--out", default=DEFAULT_OUT, metavar="DIR",
                    help="output directory, deleted and rewritten (default: onnx-testdata/types)")
    ap.add_argument("--torch-python", default=DEFAULT_TORCH_PY, metavar="PY",
                    help="python of the torch venv for the PyTorch exports (default: ~/venvs/torch/bin/python, "
                         "or $TYPES_TORCH_PYTHON)")
    args = ap.parse_args(argv)
    check_versions()
    out = os.path.abspath(args.out)
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)

    gen_scatter_elements()
    gen_se_rounding()
    gen_scatter_nd()
    gen_nd_rounding()
    gen_tensor_scatter()
    gen_cast_bf16()
    gen_complex_slabs()

    counts = Counter()  # (family, dt, kind)
    oracle_stats = Counter()
    ort_stats = Counter()  # (family, dt, status)
    ort_refusals = Counter()  # (family, reason)
    ort_dis = []
    ref_on_errors = []
    for c in sorted(CASES, key=lambda c: c.name):
        feeds = feeds_of(c)
        if c.error is not None:
            model = build_model(c, out_shapes=[c.inputs[0][1].shape])
            if c.error != "type":  # bf16 before 13 is outside the schema: the checker refuses it too
                onnx.checker.check_model(model, full_check=True)  # well-formed: the refusal is the plugin's
            try:
                r = ReferenceEvaluator(model).run(None, dict(feeds))[0]
                ref_on_errors.append((c.name, "computes `" + str([complex(x) for x in r.ravel()][:4]) + " ...`"))
            except Exception as e:  # noqa: BLE001
                ref_on_errors.append((c.name, "refuses: " + first_line(e)))
            status, got = run_ort(model.SerializeToString(), dict(feeds))
            ort_stats[(c.family, c.dt, "agreed (refused)" if status != "ok" else "disagreed (ran)")] += 1
            write_case(out, c.name, model.SerializeToString(), [], [], error=c.error)
            counts[(c.family, c.dt, "error")] += 1
            continue
        ref = ReferenceEvaluator(c.ref_model or build_model(c)).run(None, dict(feeds))
        expected = [np.asarray(r) for r in ref]
        if c.oracle is not None:
            want = c.oracle()
            ok = all(same(a, b) for a, b in zip(expected, want))
            assert ok, f"{c.name}: reference {expected} vs per-step oracle {want}"
            oracle_stats["agreed"] += 1
        for (oi, pos, val) in c.checks:
            got = expected[oi].ravel()[pos]
            assert complex(got) == complex(val), f"{c.name}: output {oi}[{pos}] = {got}, want {val}"
        model = build_model(c, out_shapes=[e.shape for e in expected])
        onnx.checker.check_model(model, full_check=True)
        mb = model.SerializeToString()
        write_case(out, c.name, mb, list(feeds.items()),
                   [(nm, e) for (nm, _), e in zip(c.outputs, expected)])
        counts[(c.family, c.dt, "valid")] += 1
        status, got = run_ort(mb, dict(feeds))
        if status == "ok":
            if all(same(a, b) for a, b in zip(expected, got)):
                ort_stats[(c.family, c.dt, "agreed")] += 1
            else:
                ort_stats[(c.family, c.dt, "disagreed")] += 1
                ort_dis.append((c.name, [e.ravel().tolist() for e in expected], [g.ravel().tolist() for g in got]))
        else:
            ort_stats[(c.family, c.dt, "refused")] += 1
            ort_refusals[(c.family, got.split(" node with name")[0].split(" for node")[0])] += 1

    # PyTorch exports, in the torch venv
    with tempfile.TemporaryDirectory() as tmp:
        res_path = os.path.join(tmp, "torch_results.json")
        env = dict(os.environ, PYTHONHASHSEED="0")
        subprocess.run([args.torch_python, "-m", "types_gen.torch_export", out, res_path], cwd=HERE, env=env,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(res_path) as f:
            torch_res = json.load(f)
    for k, v in TORCH_REQUIREMENTS.items():
        have = torch_res["versions"].get(k)
        if have is not None and not have.startswith(v):
            sys.exit(f"types_gen: torch venv has {k} {have}, pinned {v}")
    for r in torch_res["results"]:
        if r["status"] == "exported":
            counts[("PyTorch export", "bf16", "valid")] += 1

    write_readme(out, counts, oracle_stats, ort_stats, ort_refusals, ort_dis, ref_on_errors,
                 rounding_probe(), torch_res)

    total = nfiles = 0
    for root, _, files in os.walk(out):
        for f in files:
            total += os.path.getsize(os.path.join(root, f))
            nfiles += 1
    ncases = sum(counts.values())
    print(f"cases: {ncases}; files {nfiles}; bytes {total}")
    for (fam, dt, k), n in sorted(counts.items()):
        print(f"  {fam:40s} {dt:5s} {k:6s} {n}")
    print("oracle vs reference:", dict(oracle_stats))


if __name__ == "__main__":
    main()
