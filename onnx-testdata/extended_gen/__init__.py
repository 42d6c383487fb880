"""Generate the extended golden corpus for tract-onnx-scatter.

Writes onnx-testdata/extended/<case>/ in the ONNX node-test layout:
  model.onnx
  test_data_set_0/input_<i>.pb   (graph inputs that are not initializers, in order)
  test_data_set_0/output_0.pb    (valid cases)
  expected_error.txt             (error cases: a word the error must contain)

Expected values come from the plain-loop oracle (oracle.py, our contract), NOT from
onnxruntime.  onnxruntime (CPU, 1 thread) and onnx.reference.ReferenceEvaluator
are only used as cross-checks (crosscheck.py); disagreements are written to
extended/ORT_DISAGREEMENTS.md.

Deterministic: every case draws from its own RNG seeded by crc32(case name).
Usage: .venv/bin/python onnx-testdata/generate.py [--out DIR]
   or: cd onnx-testdata && ../.venv/bin/python -m extended_gen [--out DIR]

Modules, one per concern so each generator reads on its own:
  values.py            element types, wrap-around, arrays, random values and shapes
  oracle.py            the reduction step and the plain-loop oracles (OracleError)
  contract.py          load-time validation contract of Scatter / ScatterElements / ScatterND
  cases.py             Case, the case registry, make_case, building and writing one case
  scatter_elements.py  Scatter / ScatterElements cases
  scatter_nd.py        ScatterND cases
  tensor_scatter.py    TensorScatter (opset 24) cases
  openvino.py          OpenVINO ScatterElementsUpdate-12 cases (custom domain)
  crosscheck.py        onnxruntime / ReferenceEvaluator runs and ORT_DISAGREEMENTS.md
  __main__.py          main(): generator order, writing, cross-checks, summary
"""
