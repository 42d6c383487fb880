"""Generate the element-type corpus for tract-onnx-scatter: bfloat16, complex64 and
complex128 models (onnx-testdata/types/).

Writes onnx-testdata/types/<case>/ in the ONNX node-test layout:
  model.onnx
  test_data_set_0/input_<i>.pb   (graph inputs that are not initializers, in order)
  test_data_set_0/output_<i>.pb  (valid cases)
  expected_error.txt             (error cases: the word the error must contain, as in extended/)
plus types/README.md (counts, the rounding finding, cross-checks, exporter results).

Expected values come from onnx.reference.ReferenceEvaluator (ml_dtypes for bfloat16),
except Scatter 9/10 (the reference has no Scatter: the same node as ScatterElements-11
runs in it) and the PyTorch exports (PyTorch eager bf16).  Every reference value is
checked against the plain per-step-rounding oracle (oracle.py); onnxruntime is a
cross-check only.

Deterministic: every case draws from its own RNG seeded by crc32(case name).
Usage: ~/venvs/types/bin/python onnx-testdata/generate_types.py [--out DIR] [--torch-python PY]

Modules, one per concern:
  values.py           element types (bf16, c64, c128), random values, shapes, indices
  oracle.py           per-step-rounding plain-loop oracles (ScatterElements, ScatterND, TensorScatter)
  cases.py            Case, the registry, building models and writing one case
  common.py           op versions, admitted reductions, bf16-in-schema rule, the one-node scatter case
  scatter_elements.py Scatter 9/10 and ScatterElements 11/13/16/18 cases (incl. complex max/min errors)
  scatter_nd.py       ScatterND 11/13/16/18 cases (incl. complex max/min errors)
  tensor_scatter.py   TensorScatter 24 cases
  composite.py        Cast f32->bf16->scatter->f32 models, complex slabs around a scatter
  torch_export.py     PyTorch bf16 exports (runs in the torch venv, called as a subprocess)
  crosscheck.py       onnxruntime runs
  readme.py           types/README.md
  __main__.py         main(): generator order, expected values, writing, cross-checks, README
"""

# Versions this generator was run with (also in requirements.txt).
REQUIREMENTS = {
    "onnx": "1.23.2",
    "numpy": "2.4.6",
    "onnxruntime": "1.31.1",
    "ml_dtypes": "0.6.0",
    "protobuf": "7.36.2",
}
# The torch venv (torch_export.py): the above plus these.
TORCH_REQUIREMENTS = {
    "torch": "2.15.0",
    "onnxscript": "0.7.2",
    "onnx-ir": "1.1.0",
}
