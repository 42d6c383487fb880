"""JAX recurrent functions -> jax2onnx, for the recurrent suite (generation only).

Run with the venv pinned in requirements-jax.txt:

    python gen/recurrent_jax.py [case-substring]

Writes `onnx-testdata/recurrent/jax2onnx/<model>__opset<N>/...`: `lax.scan` and `lax.fori_loop` /
`while_loop` recurrences (Elman, GRU and LSTM cells, a reversed scan, a bidirectional pair),
exported with symbolic `B` (batch) and `T` (time) dims. Two data sets of different batch and time
each; expected outputs are JAX's eager outputs. `case.toml` records the Loop/Scan nodes (`loops`,
gated) and ONNX LSTM/GRU/RNN nodes (`rnn_ops`, reported).
"""
from __future__ import annotations

import importlib.metadata
import os
import sys
import zlib

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from jax import lax  # noqa: E402
from jax2onnx import to_onnx  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Writer  # noqa: E402
from recurrent_common import RECURRENT_ROOT, loop_meta  # noqa: E402

OPSETS = (18, 23)
F = 4
U = 6
SIZES = ((2, 5), (3, 7))  # (batch, time)

CASES = []


def case(name, notes):
    def deco(fn):
        CASES.append((name, fn, notes))
        return fn

    return deco


def weights(name, *shape):
    return jnp.asarray(np.random.default_rng(zlib.crc32(name.encode())).standard_normal(shape).astype(np.float32) * 0.5)


W = weights("w", F, U)
R = weights("r", U, U)
B = weights("b", U)
WG = weights("wg", F, 3 * U)
RG = weights("rg", U, 3 * U)
WL = weights("wl", F, 4 * U)
RL = weights("rl", U, 4 * U)


def elman(h, xt):
    h = jnp.tanh(xt @ W + h @ R + B)
    return h, h


def gru(h, xt):
    xz, xr, xn = jnp.split(xt @ WG, 3, axis=-1)
    hz, hr, hn = jnp.split(h @ RG, 3, axis=-1)
    z = jax.nn.sigmoid(xz + hz)
    r = jax.nn.sigmoid(xr + hr)
    n = jnp.tanh(xn + r * hn)
    h = (1.0 - z) * n + z * h
    return h, h


def lstm(carry, xt):
    h, c = carry
    i, f, g, o = jnp.split(xt @ WL + h @ RL, 4, axis=-1)
    c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
    h = jax.nn.sigmoid(o) * jnp.tanh(c)
    return (h, c), h


def zeros_like_batch(x):
    return jnp.zeros((x.shape[0], U), x.dtype)


@case("scan_elman", "lax.scan of an Elman cell over the time axis (time-major), every step's h")
def _(x):
    h, ys = lax.scan(elman, zeros_like_batch(x), jnp.swapaxes(x, 0, 1))
    return jnp.swapaxes(ys, 0, 1), h


@case("scan_gru", "lax.scan of a GRU cell, every step's h")
def _(x):
    h, ys = lax.scan(gru, zeros_like_batch(x), jnp.swapaxes(x, 0, 1))
    return jnp.swapaxes(ys, 0, 1)


@case("scan_lstm", "lax.scan of an LSTM cell, last h and c")
def _(x):
    z = zeros_like_batch(x)
    (h, c), _ = lax.scan(lstm, (z, z), jnp.swapaxes(x, 0, 1))
    return h, c


@case("scan_gru_reverse", "lax.scan(reverse=True) of a GRU cell: a backward layer")
def _(x):
    h, ys = lax.scan(gru, zeros_like_batch(x), jnp.swapaxes(x, 0, 1), reverse=True)
    return jnp.swapaxes(ys, 0, 1)


@case("scan_bidirectional_elman", "an Elman cell forward and the GRU cell backward (jnp.flip), concatenated")
def _(x):
    xt = jnp.swapaxes(x, 0, 1)
    _, fwd = lax.scan(elman, zeros_like_batch(x), xt)
    _, bwd = lax.scan(gru, zeros_like_batch(x), jnp.flip(xt, 0))
    return jnp.swapaxes(jnp.concatenate([fwd, jnp.flip(bwd, 0)], -1), 0, 1)


@case("fori_loop_elman_buffer", "lax.fori_loop over time writing each h with .at[:, i].set into a buffer")
def _(x):
    steps = x.shape[1]

    def body(i, carry):
        h, out = carry
        xt = lax.dynamic_index_in_dim(x, i, axis=1, keepdims=False)
        h, _ = elman(h, xt)
        return h, out.at[:, i].set(h)

    h, out = lax.fori_loop(0, steps, body, (zeros_like_batch(x), jnp.zeros((x.shape[0], steps, U), x.dtype)))
    return out


@case("while_loop_elman_buffer", "lax.while_loop(i < T) writing each h with .at[:, i].set into a [B, T, U] buffer")
def _(x):
    steps = x.shape[1]

    def cond(carry):
        return carry[0] < steps

    def body(carry):
        i, h, out = carry
        xt = lax.dynamic_index_in_dim(x, i, axis=1, keepdims=False)
        h, _ = elman(h, xt)
        return i + 1, h, out.at[:, i].set(h)

    _, _, out = lax.while_loop(cond, body, (0, zeros_like_batch(x), jnp.zeros((x.shape[0], steps, U), x.dtype)))
    return out


@case("while_loop_gru_state", "lax.while_loop(i < T) of a GRU cell, the last state")
def _(x):
    steps = x.shape[1]

    def cond(carry):
        return carry[0] < steps

    def body(carry):
        i, h = carry
        xt = lax.dynamic_index_in_dim(x, i, axis=1, keepdims=False)
        h, _ = gru(h, xt)
        return i + 1, h

    _, h = lax.while_loop(cond, body, (0, zeros_like_batch(x)))
    return h


def inputs(name, k):
    rng = np.random.default_rng(zlib.crc32(f"{name}/{k}".encode()))
    b, t = SIZES[k]
    return rng.standard_normal((b, t, F)).astype(np.float32)


def main(selected=None):
    versions = {"jax": jax.__version__, "jax2onnx": importlib.metadata.version("jax2onnx")}
    w = Writer("jax2onnx", versions, select=selected, root=RECURRENT_ROOT)
    for name, fn, notes in CASES:
        if selected and selected not in name:
            continue
        sets = []
        for k in range(len(SIZES)):
            x = inputs(name, k)
            out = fn(jnp.asarray(x))
            out = out if isinstance(out, (tuple, list)) else (out,)
            sets.append(({"x": x}, [np.asarray(o) for o in out]))
        (x0, out0), *more = sets
        for opset in OPSETS:
            case_name = f"{name}__opset{opset}"
            path = f"jax2onnx opset {opset}"
            try:
                model = to_onnx(fn, [("B", "T", F)], model_name=name, opset=opset, input_names=["x"])
            except Exception as e:  # noqa: BLE001 - converter refusals are recorded
                first = str(e).strip().splitlines()[0] if str(e).strip() else ""
                w.skipped(case_name, path, f"{type(e).__name__}: {first}")
                continue
            if not isinstance(model, onnx.ModelProto):
                raise TypeError(f"{case_name}: to_onnx returned {type(model)}")
            w.case(case_name, model, x0, out0, idiom=name, path=path, notes=notes, more_sets=more,
                   meta_extra=loop_meta(model))
    w.finish(order=[c[0] for c in CASES])


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
