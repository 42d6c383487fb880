"""Shared writer for the exporter corpus (generation only; the Rust tests never run Python).

Every case is one ONNX node-test directory:

    <exporter>/<case>/model.onnx
    <exporter>/<case>/test_data_set_0/input_<i>.pb    graph inputs that are not initializers, in graph order
    <exporter>/<case>/test_data_set_0/output_<i>.pb   the framework's own eager outputs (never the ONNX reference)
    <exporter>/<case>/case.toml                       exporter, versions, opset, idiom, onnxruntime vs eager

`onnxruntime` (1 thread) is run on every case and compared with eager, with the harness's tolerance,
so an exporter bug (the model's ONNX semantics differ from eager) is visible in `case.toml` and in
`<exporter>/SUMMARY.md`.
"""
from __future__ import annotations

import os
import shutil

import numpy as np
import onnx
from onnx import numpy_helper

# Same tolerance as the Rust harness (crates/onnx-golden/src/compare.rs), plus a small absolute
# slack for float kernels that sum in another order than the framework.
RTOL = 1e-3
ATOL = 1e-5

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def idiom_registry():
    """A list of idioms and the decorator that fills it: `@idiom(name, fn, specs, notes)` on the
    inputs maker (rng -> {input name: array}) registers `(name, fn, specs, make_inputs, notes)`."""
    idioms = []

    def idiom(name, fn, specs, notes=""):
        def deco(make_inputs):
            idioms.append((name, fn, specs, make_inputs, notes))
            return make_inputs

        return deco

    return idioms, idiom


def f32(rng, *shape):
    """Standard-normal float32 values of `shape` from `rng` (numpy Generator)."""
    return rng.standard_normal(shape).astype(np.float32)


def unique_rows(rng, n, bound):
    """`n` distinct row indices in [0, bound)."""
    return rng.choice(bound, size=n, replace=False)


def default_opset(model: onnx.ModelProto) -> int | None:
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return imp.version
    return None


def all_nodes(graph: onnx.GraphProto):
    """Every node of `graph` and of its subgraphs (If/Loop bodies), depth first."""
    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from all_nodes(attr.g)
            for g in attr.graphs:
                yield from all_nodes(g)


def graph_inputs(model: onnx.ModelProto, values: dict) -> dict:
    """`values` by non-initializer graph-input name; a name with a `:0` suffix (tf2onnx names inputs
    after their tensor) takes the value of its base name."""
    inits = {i.name for i in model.graph.initializer}
    feeds = {}
    for gi in model.graph.input:
        if gi.name in inits:
            continue
        base = gi.name.split(":")[0]
        if base not in values:
            raise RuntimeError(f"graph input {gi.name!r} has no value (have {list(values)})")
        feeds[gi.name] = values[base]
    return feeds


def deviation_notes(model: onnx.ModelProto, opset: int, suffix: str = "") -> list[str]:
    """Scatter reductions used at an opset that does not define them (exporter deviations), each
    note followed by `suffix`."""
    notes = []
    for node in all_nodes(model.graph):
        if node.op_type not in ("ScatterND", "ScatterElements"):
            continue
        for attr in node.attribute:
            if attr.name != "reduction":
                continue
            red = attr.s.decode()
            if opset < 16 and red != "none":
                notes.append(f"{node.op_type} reduction={red} at opset {opset}: ONNX defines the attribute from opset 16{suffix}")
            elif opset < 18 and red in ("max", "min"):
                notes.append(f"{node.op_type} reduction={red} at opset {opset}: ONNX allows max/min only from opset 18{suffix}")
    return sorted(set(notes))


def scatter_ops(model: onnx.ModelProto) -> list[str]:
    """Scatter-family op types in the graph (and in subgraphs), sorted, with repeats counted."""
    found: dict[str, int] = {}
    for node in all_nodes(model.graph):
        if "Scatter" in node.op_type:
            found[node.op_type] = found.get(node.op_type, 0) + 1
    for f in model.functions:
        for node in f.node:
            if "Scatter" in node.op_type:
                found[node.op_type] = found.get(node.op_type, 0) + 1
    return [f"{k}x{v}" for k, v in sorted(found.items())]


def close(got: np.ndarray, want: np.ndarray) -> str | None:
    """None when equal within tolerance, else why not."""
    got = np.asarray(got)
    want = np.asarray(want)
    if got.shape != want.shape:
        return f"shape {list(got.shape)} vs eager {list(want.shape)}"
    if got.dtype != want.dtype:
        return f"dtype {got.dtype} vs eager {want.dtype}"
    if want.dtype.kind in "fc":
        ok = np.isclose(got, want, rtol=RTOL, atol=ATOL, equal_nan=True)
    else:
        ok = got == want
    if not np.all(ok):
        bad = int(np.size(ok) - np.count_nonzero(ok))
        first = np.argwhere(~ok)[0].tolist()
        return f"{bad} value(s) differ, first at {first}: {got[tuple(first)]!r} vs eager {want[tuple(first)]!r}"
    return None


def run_ort(path: str, feeds: dict) -> list[np.ndarray]:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    s = str(v).replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")
    return f'"{s}"'


def idiom_of(case: str) -> str:
    """The idiom part of a case name `<idiom>__<path><opset>`."""
    return case.split("__")[0]


class Writer:
    """Writes the cases of one exporter below `<ROOT>/<exporter>/`, after wiping that directory.

    With `select` (an idiom-name substring), only the cases of the idioms whose name contains it are
    rewritten: their old directories and SUMMARY.md rows are replaced, every other case is kept (new
    idioms' rows go at the end, where a full run also writes the idioms registered last)."""

    def __init__(self, exporter: str, versions: dict[str, str], select: str | None = None, root: str | None = None):
        self.exporter = exporter
        self.versions = versions
        self.select = select
        self.dir = os.path.join(root or ROOT, exporter)
        if select:
            os.makedirs(self.dir, exist_ok=True)
            for d in os.listdir(self.dir):
                if os.path.isdir(os.path.join(self.dir, d)) and select in idiom_of(d):
                    shutil.rmtree(os.path.join(self.dir, d))
        else:
            shutil.rmtree(self.dir, ignore_errors=True)
            os.makedirs(self.dir)
        self.rows: list[tuple[str, int | None, str, str]] = []

    def case(
        self,
        name: str,
        model: onnx.ModelProto,
        inputs: dict[str, np.ndarray],
        outputs: list[np.ndarray],
        *,
        idiom: str,
        path: str,
        notes: str = "",
        more_sets: list[tuple[dict[str, np.ndarray], list[np.ndarray]]] = (),
        meta_extra: dict | None = None,
    ) -> None:
        """`inputs` by graph-input name (extra names are ignored: exporters drop unused inputs);
        `outputs` are eager's, in graph-output order. `more_sets`: further (inputs, outputs) pairs,
        written as `test_data_set_1`, ...; onnxruntime "match"es only when it matches on every set."""
        case_dir = os.path.join(self.dir, name)
        os.makedirs(case_dir)
        model_path = os.path.join(case_dir, "model.onnx")
        onnx.save_model(model, model_path)
        initializers = {i.name for i in model.graph.initializer}
        graph_inputs = [i.name for i in model.graph.input if i.name not in initializers]
        verdicts = []
        for k, (set_inputs, set_outputs) in enumerate([(inputs, outputs), *more_sets]):
            set_dir = os.path.join(case_dir, f"test_data_set_{k}")
            os.makedirs(set_dir)
            missing = [n for n in graph_inputs if n not in set_inputs]
            if missing:
                raise RuntimeError(f"{name}: no value for graph input(s) {missing}; given {list(set_inputs)}")
            if len(set_outputs) != len(model.graph.output):
                raise RuntimeError(f"{name}: {len(set_outputs)} eager outputs for {len(model.graph.output)} graph outputs")
            feeds = {}
            for i, n in enumerate(graph_inputs):
                arr = np.array(set_inputs[n], order="C")  # keeps rank 0 (ascontiguousarray makes it 1-D)
                feeds[n] = arr
                t = numpy_helper.from_array(arr, n)
                with open(os.path.join(set_dir, f"input_{i}.pb"), "wb") as f:
                    f.write(t.SerializeToString())
            for i, (out, info) in enumerate(zip(set_outputs, model.graph.output)):
                t = numpy_helper.from_array(np.array(out, order="C"), info.name)
                with open(os.path.join(set_dir, f"output_{i}.pb"), "wb") as f:
                    f.write(t.SerializeToString())
            prefix = f"set {k}: " if more_sets else ""
            try:
                got = run_ort(model_path, feeds)
                diffs = [close(g, w) for g, w in zip(got, set_outputs)]
                diffs = [f"output {i}: {d}" for i, d in enumerate(diffs) if d]
                if diffs:
                    verdicts.append(prefix + "mismatch: " + "; ".join(diffs))
            except Exception as e:  # noqa: BLE001 - recorded, not fatal
                verdicts.append(prefix + "error: " + str(e).strip().splitlines()[0][:300])
        ort = "match" if not verdicts else "; ".join(verdicts)
        opset = default_opset(model)
        meta = {
            "exporter": self.exporter,
            "path": path,
            **{f"{k}_version": v for k, v in self.versions.items()},
            "opset": opset,
            "idiom": idiom,
            "scatter_ops": scatter_ops(model),
            "onnxruntime_vs_eager": ort,
            **(meta_extra or {}),
        }
        if notes:
            meta["notes"] = notes
        with open(os.path.join(case_dir, "case.toml"), "w") as f:
            for k, v in meta.items():
                if v is None:
                    continue
                f.write(f"{k} = {toml_value(v)}\n")
        self.rows.append((name, opset, path, ort))
        print(f"{self.exporter}/{name}: opset {opset}, ort {ort[:80]}", flush=True)

    def skipped(self, name: str, path: str, why: str) -> None:
        """An idiom the exporter refuses: listed in SUMMARY.md, no directory."""
        why = why.strip().splitlines()[0][:300] if why.strip() else "refused"
        # The exporters quote the generator's source path: not the reader's business.
        why = why.replace(os.path.dirname(os.path.dirname(ROOT)), "<repo>")
        self.rows.append((name, None, path, "not exported: " + why))
        print(f"{self.exporter}/{name}: NOT EXPORTED: {why}", flush=True)

    def merged_rows(self, order: list[str] | None) -> list[tuple[str, int | None, str, str]]:
        """With `select`: the rows of the existing SUMMARY.md, those of the selected idioms replaced
        (in place, or appended for new idioms) by this run's, then (stably) sorted by the idioms'
        position in `order` (every idiom of a full run, in its order), as a full run writes them."""
        if not self.select:
            return self.rows
        merged = self.merged_unsorted_rows()
        if order:
            rank = {name: i for i, name in enumerate(order)}
            merged.sort(key=lambda row: rank.get(idiom_of(row[0]), len(rank)))
        return merged

    def merged_unsorted_rows(self) -> list[tuple[str, int | None, str, str]]:
        try:
            with open(os.path.join(self.dir, "SUMMARY.md")) as f:
                lines = f.read().splitlines()
        except OSError:
            return self.rows
        old = []
        for line in lines[lines.index("|---|---|---|---|") + 1 :] if "|---|---|---|---|" in lines else []:
            name, opset, path, ort = line[2:-2].split(" | ", 3)
            old.append((name, None if opset == "–" else int(opset), path, ort))
        new_by_idiom: dict[str, list] = {}
        for row in self.rows:
            new_by_idiom.setdefault(idiom_of(row[0]), []).append(row)
        merged = []
        for row in old:
            idiom = idiom_of(row[0])
            if self.select not in idiom:
                merged.append(row)
            elif idiom in new_by_idiom:
                merged += new_by_idiom.pop(idiom)
        for rows in new_by_idiom.values():
            merged += rows
        return merged

    def finish(self, order: list[str] | None = None) -> None:
        self.rows = self.merged_rows(order)
        versions = ", ".join(f"{k} {v}" for k, v in self.versions.items())
        written = [r for r in self.rows if r[1] is not None]
        matching = [r for r in written if r[3] == "match"]
        lines = [
            f"# {self.exporter} cases",
            "",
            f"Generated by `gen/` with {versions}. Expected outputs are eager's.",
            f"{len(written)} models written, onnxruntime matches eager on {len(matching)}; "
            f"{len(self.rows) - len(written)} idiom/path pairs not exported.",
            "",
            "| case | opset | path | onnxruntime vs eager |",
            "|---|---|---|---|",
        ]
        for name, opset, path, ort in self.rows:
            lines.append(f"| {name} | {opset if opset is not None else '–'} | {path} | {ort.replace('|', '/')} |")
        with open(os.path.join(self.dir, "SUMMARY.md"), "w") as f:
            f.write("\n".join(lines) + "\n")
        print(f"{self.exporter}: {len(written)} written, ort matches eager on {len(matching)}")
