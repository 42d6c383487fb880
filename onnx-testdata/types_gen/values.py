"""Element types and input values: the three types of this corpus, random values per
type (small dyadic values so bf16 holds them exactly; sums may still round), random
shapes and index arrays, all drawn from a case's own RNG (cases.rng_for).
"""
from __future__ import annotations

from collections import OrderedDict

import ml_dtypes
import numpy as np
from onnx import TensorProto

BF16 = ml_dtypes.bfloat16

# tag -> (numpy dtype, ONNX element type)
DTYPES = OrderedDict(
    [
        ("bf16", (BF16, TensorProto.BFLOAT16)),
        ("c64", (np.complex64, TensorProto.COMPLEX64)),
        ("c128", (np.complex128, TensorProto.COMPLEX128)),
    ]
)
TYPES = list(DTYPES)


def is_complex(dt):
    return dt in ("c64", "c128")


def rand_scalar(rng, dt):
    if dt == "bf16":
        # k/64 with |k| < 256: exact in bf16 (8 significant bits); sums can round
        return rng.randint(-255, 255) / 64.0
    re = rng.randint(-16, 16) / 4.0
    im = rng.randint(-16, 16) / 4.0
    if dt == "c128" and rng.random() < 0.3:
        # a few values only c128 holds exactly
        re += rng.randint(1, 7) * 2.0 ** -30
    return complex(re, im)


def arr(values, dt, shape):
    npt = DTYPES[dt][0]
    if dt == "bf16":
        return np.array(values, dtype=np.float32).astype(BF16).reshape(shape)
    return np.array(values, dtype=npt).reshape(shape)


def rand_arr(rng, dt, shape):
    n = int(np.prod(shape)) if len(shape) else 1
    return arr([rand_scalar(rng, dt) for _ in range(n)], dt, shape)


def rand_shape(rng, rank, maxel=24, lo=1, hi=4):
    while True:
        sh = [rng.randint(lo, hi) for _ in range(rank)]
        if int(np.prod(sh)) <= maxel:
            return sh


def idx(vals, shape):
    return np.array(vals, dtype=np.int64).reshape(shape)
