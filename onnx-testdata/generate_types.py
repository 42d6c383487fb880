#!/usr/bin/env python3
"""Generate the element-type corpus for tract-onnx-scatter (onnx-testdata/types/):
bfloat16, complex64 and complex128 models of the scatter family.

A thin entry point: the generator is the types_gen package next to this file (see
its __init__.py for the layout and one module per op family).

REQUIREMENTS (pinned; also types_gen/requirements.txt and types_gen.REQUIREMENTS):
  main venv:  onnx==1.23.2 numpy==2.4.6 onnxruntime==1.31.1 ml_dtypes==0.6.0 protobuf==7.36.2
  torch venv: the same plus torch==2.15.0 onnxscript==0.7.2 onnx-ir==1.1.0

Usage: ~/venvs/types/bin/python onnx-testdata/generate_types.py [--out DIR] [--torch-python PY]
  --out DIR          write the corpus to DIR instead of onnx-testdata/types/ (DIR is deleted and rewritten)
  --torch-python PY  python of the torch venv (default ~/venvs/torch/bin/python or $TYPES_TORCH_PYTHON)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from types_gen.__main__ import main  # noqa: E402

if __name__ == "__main__":
    main()
