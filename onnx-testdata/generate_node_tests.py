"""Writes the onnx backend node tests whose name contains SELECT into OUT.

Used by `cargo xtask fetch-testdata` for onnx releases whose wheels ship the
node-case generators (onnx/backend/test/case/node/*.py, numpy-seeded) but no
test data (onnx >= 1.23). Run with the python of a venv holding the pinned
onnx wheel and numpy:

    python generate_node_tests.py SELECT OUT

Writes OUT/node/<test>/model.onnx and test_data_set_<i>/{input,output}_<j>.pb
exactly as onnx's own `backend-test-tools generate-data` does for node tests,
and prints one line per test written. OUT must not exist yet.
"""

import os
import sys

import onnx
import onnx.backend.test.case.node as node_cases
from onnx import TensorProto, numpy_helper


def serialize(value, value_info):
    kind = value_info.type
    if kind.HasField("map_type"):
        return numpy_helper.from_dict(value, value_info.name).SerializeToString()
    if kind.HasField("sequence_type"):
        return numpy_helper.from_list(value, value_info.name).SerializeToString()
    if kind.HasField("optional_type"):
        return numpy_helper.from_optional(value, value_info.name).SerializeToString()
    if isinstance(value, TensorProto):
        return value.SerializeToString()
    return numpy_helper.from_array(value, value_info.name).SerializeToString()


def main(argv):
    if len(argv) != 3:
        sys.exit(f"usage: {argv[0]} SELECT OUT")
    select, out = argv[1], argv[2]
    if os.path.exists(out):
        sys.exit(f"{out} already exists")
    cases = [c for c in node_cases.collect_testcases() if select in c.name]
    if not cases:
        sys.exit(f"onnx {onnx.__version__} generates no node test containing {select!r}")
    for case in sorted(cases, key=lambda c: c.name):
        test_dir = os.path.join(out, case.kind, case.name)
        os.makedirs(test_dir)
        with open(os.path.join(test_dir, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        graph = case.model.graph
        for i, (inputs, outputs) in enumerate(case.data_sets):
            set_dir = os.path.join(test_dir, f"test_data_set_{i}")
            os.makedirs(set_dir)
            for prefix, values, infos in (
                ("input", inputs, graph.input),
                ("output", outputs, graph.output),
            ):
                for j, value in enumerate(values):
                    path = os.path.join(set_dir, f"{prefix}_{j}.pb")
                    with open(path, "wb") as f:
                        f.write(serialize(value, infos[j]))
        print(f"{case.kind}/{case.name}")


if __name__ == "__main__":
    main(sys.argv)
