"""Entry point: python -m extended_gen [--out DIR], run from onnx-testdata/ (or
onnx-testdata/generate.py, which calls main()).  Registers every case (in the
fixed generator order below), then writes them sorted by name and cross-checks
each one, and prints a summary.
"""
from __future__ import annotations

import argparse
import os
import shutil
from collections import Counter

from .cases import CASES, build_model, write_case
from .crosscheck import fmt, reason_for, run_ort, run_ref, same, shadow, write_report
from .openvino import gen_ov
from .scatter_elements import gen_scatter_elements, gen_se_errors, gen_se_specials
from .scatter_nd import gen_nd_errors, gen_nd_specials, gen_scatter_nd
from .tensor_scatter import gen_tensor_scatter

# onnx-testdata/extended/, next to this package, whatever the working directory
DEFAULT_OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "extended")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="extended_gen", description="Generate the extended golden corpus.")
    ap.add_argument("--out", default=DEFAULT_OUT, metavar="DIR",
                    help="output directory, deleted and rewritten (default: onnx-testdata/extended)")
    out = ap.parse_args(argv).out
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    gen_scatter_elements()
    gen_se_specials()
    gen_se_errors()
    gen_scatter_nd()
    gen_nd_specials()
    gen_nd_errors()
    gen_tensor_scatter()
    gen_ov()

    import onnxruntime as ort
    ort.set_default_logger_severity(4)

    stats = Counter()
    by_op = Counter()
    ort_stats = Counter()
    ref_stats = Counter()
    ort_dis, ref_dis, ort_unsup, ref_err_dis = [], [], [], []
    for c in sorted(CASES, key=lambda c: c.name):
        model = build_model(c)
        write_case(c, model, out)
        kind_ = "error" if c.error is not None else "valid"
        stats[kind_] += 1
        by_op[(c.op, kind_)] += 1
        # --- onnxruntime
        if c.domain:
            ort_stats["unsupported"] += 1
            ref_stats["unsupported"] += 1
            continue
        smodel, feeds, shadowed = shadow(c)
        ort_stats["via int64 shadow"] += shadowed
        status, got = run_ort(ort, c, smodel, feeds)
        ours = c.expected if c.error is None else f"error: {c.error}"
        if c.error is None:
            if status == "ok" and same(c.expected, got):
                ort_stats["agreed"] += 1
            elif status == "ok":
                ort_stats["disagreed"] += 1
                ort_dis.append((c.name, fmt(ours), fmt(got), reason_for(c, "onnxruntime", status, got)))
            else:
                ort_stats["unsupported"] += 1
                ort_unsup.append((c.name, fmt(got, 160)))
        else:
            if status != "ok":
                ort_stats["agreed"] += 1
            else:
                ort_stats["disagreed"] += 1
                ort_dis.append((c.name, fmt(ours), fmt(got), reason_for(c, "onnxruntime", status, got)))
        # --- reference evaluator
        rstatus, rgot = run_ref(c, smodel, feeds)
        if c.error is None:
            if rstatus == "ok" and same(c.expected, rgot):
                ref_stats["agreed"] += 1
            elif rstatus == "ok":
                ref_stats["disagreed"] += 1
                ref_dis.append((c.name, fmt(ours), fmt(rgot), reason_for(c, "ReferenceEvaluator", rstatus, rgot)))
            else:
                ref_stats["unsupported"] += 1
        else:
            if rstatus != "ok":
                ref_stats["agreed"] += 1
            else:
                ref_stats["disagreed"] += 1
                ref_err_dis.append((c.name, c.error))

    write_report(out, ort, ort_stats, ref_stats, ort_dis, ref_dis, ort_unsup, ref_err_dis)

    total = 0
    nfiles = 0
    for root, _, files in os.walk(out):
        for f in files:
            total += os.path.getsize(os.path.join(root, f))
            nfiles += 1
    print(f"cases: {len(CASES)} (valid {stats['valid']}, error {stats['error']}); files {nfiles}; "
          f"bytes {total}")
    for (op, k), n in sorted(by_op.items()):
        print(f"  {op:24s} {k:6s} {n}")
    print(f"onnxruntime {ort.__version__}: " + ", ".join(f"{k} {ort_stats[k]}" for k in ("agreed", "disagreed", "unsupported")))
    print(f"ReferenceEvaluator: " + ", ".join(f"{k} {ref_stats[k]}" for k in ("agreed", "disagreed", "unsupported")))


if __name__ == "__main__":
    main()
