#!/usr/bin/env python3
"""Generate the extended golden corpus for tract-onnx-scatter (onnx-testdata/extended/).

A thin entry point: the generator is the extended_gen package next to this file
(see its __init__.py for the layout and one module per op family).

Usage: .venv/bin/python onnx-testdata/generate.py [--out DIR]
  --out DIR  write the corpus to DIR instead of onnx-testdata/extended/ (DIR is
             deleted and rewritten)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from extended_gen.__main__ import main  # noqa: E402

if __name__ == "__main__":
    main()
