"""Keras 3 / TensorFlow recurrent models -> tf2onnx, for the recurrent suite (generation only).

Run with the venv pinned in requirements-tf.txt:

    python gen/recurrent_tf.py [case-substring]

Writes `onnx-testdata/recurrent/tf2onnx/<model>__opset<N>/...`. Every model is exported with a
symbolic batch and time (`TensorSpec([None, None, F])`, tf2onnx names them `unk__N`) and has two
data sets of different batch and time sizes; expected outputs are Keras' own eager outputs
(`model(x, training=False)`). tf2onnx writes most Keras recurrent layers as ONNX `Loop` nodes (its
LSTM/GRU rewriters match only some configurations): `case.toml` records `loops` (the Loop and Scan
nodes of the graph, subgraphs included) and `rnn_ops` (ONNX LSTM/GRU/RNN ops), so the harness gates
the cases that hold a loop and reports the others.
"""
from __future__ import annotations

import os
import sys
import zlib

# tf2onnx's optimizers iterate over sets of strings: pin hash randomization so reruns are identical.
if os.environ.get("PYTHONHASHSEED") != "0":
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable, *sys.argv])

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
import tf2onnx  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Writer  # noqa: E402
from recurrent_common import RECURRENT_ROOT, loop_meta  # noqa: E402
from tf_cases import canonicalize, unconverted_ops  # noqa: E402

tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)

OPSETS = (13, 18)
F = 4  # features per step
U = 6  # units
# (batch, time) of the two data sets
SIZES = ((2, 5), (3, 7))

MODELS = []


def model(name, notes, dtype=tf.float32, feature_shape=(F,), batch=None, time=None):
    """Registers `build() -> keras.Model` (weights seeded by the name) with its input spec."""

    def deco(build):
        MODELS.append((name, build, notes, dtype, feature_shape, batch, time))
        return build

    return deco


def seeded(name):
    keras.utils.set_random_seed(zlib.crc32(name.encode()) % (2**31))


def seq_input(feature_shape=(F,), dtype="float32", batch=None):
    return keras.Input(shape=(None, *feature_shape), dtype=dtype, batch_size=batch)


@model("keras_lstm", "keras.layers.LSTM, last output (tf2onnx may rewrite it to an ONNX LSTM op)")
def _():
    x = seq_input()
    return keras.Model(x, keras.layers.LSTM(U)(x))


@model("keras_lstm_sequences_state", "LSTM(return_sequences, return_state): every step's h, then h and c")
def _():
    x = seq_input()
    seq, h, c = keras.layers.LSTM(U, return_sequences=True, return_state=True)(x)
    return keras.Model(x, [seq, h, c])


@model("keras_gru", "keras.layers.GRU (reset_after=True, Keras' default)")
def _():
    x = seq_input()
    return keras.Model(x, keras.layers.GRU(U, return_sequences=True)(x))


@model("keras_gru_reset_before", "GRU(reset_after=False), the Keras 2 / TF1 gate order")
def _():
    x = seq_input()
    return keras.Model(x, keras.layers.GRU(U, reset_after=False)(x))


@model("keras_simple_rnn", "keras.layers.SimpleRNN, every step's output")
def _():
    x = seq_input()
    return keras.Model(x, keras.layers.SimpleRNN(U, return_sequences=True)(x))


@model("keras_lstm_masking", "Masking(0.0) then LSTM: padded steps (all-zero features) carry the state over")
def _():
    x = seq_input()
    m = keras.layers.Masking(mask_value=0.0)(x)
    return keras.Model(x, keras.layers.LSTM(U, return_sequences=True)(m))


@model("keras_lstm_hard_sigmoid", "LSTM(recurrent_activation='hard_sigmoid')")
def _():
    x = seq_input()
    return keras.Model(x, keras.layers.LSTM(U, recurrent_activation="hard_sigmoid")(x))


@model("keras_lstm_recurrent_dropout", "LSTM(dropout=0.2, recurrent_dropout=0.2), run in inference mode")
def _():
    x = seq_input()
    return keras.Model(x, keras.layers.LSTM(U, dropout=0.2, recurrent_dropout=0.2)(x))


@model("keras_lstm_fixed_batch", "LSTM on an input of fixed batch 2 (time symbolic)", batch=2)
def _():
    x = seq_input(batch=2)
    return keras.Model(x, keras.layers.LSTM(U, return_sequences=True)(x))


@model("keras_stacked_lstm", "two stacked LSTMs (the second's batch and time come out of the first loop)")
def _():
    x = seq_input()
    h = keras.layers.LSTM(U, return_sequences=True)(x)
    return keras.Model(x, keras.layers.LSTM(U)(h))


@model("keras_stacked_gru_dense", "GRU -> GRU -> TimeDistributed Dense")
def _():
    x = seq_input()
    h = keras.layers.GRU(U, return_sequences=True)(x)
    h = keras.layers.GRU(U, return_sequences=True)(h)
    return keras.Model(x, keras.layers.TimeDistributed(keras.layers.Dense(3))(h))


@model("keras_bidirectional_lstm", "Bidirectional(LSTM, return_sequences), concatenated")
def _():
    x = seq_input()
    return keras.Model(x, keras.layers.Bidirectional(keras.layers.LSTM(U, return_sequences=True))(x))


@model("keras_bidirectional_gru_masked", "Masking then Bidirectional(GRU), summed")
def _():
    x = seq_input()
    m = keras.layers.Masking(mask_value=0.0)(x)
    return keras.Model(x, keras.layers.Bidirectional(keras.layers.GRU(U), merge_mode="sum")(m))


@model("keras_bidirectional_lstm_masked", "Masking then Bidirectional(LSTM, return_sequences)")
def _():
    x = seq_input()
    m = keras.layers.Masking(mask_value=0.0)(x)
    return keras.Model(x, keras.layers.Bidirectional(keras.layers.LSTM(U, return_sequences=True))(m))


@model("keras_lstm_go_backwards", "LSTM(go_backwards=True)")
def _():
    x = seq_input()
    return keras.Model(x, keras.layers.LSTM(U, go_backwards=True, return_sequences=True)(x))


@model("keras_stacked_cells", "RNN(StackedRNNCells([LSTMCell, GRUCell]))")
def _():
    x = seq_input()
    cell = keras.layers.StackedRNNCells([keras.layers.LSTMCell(U), keras.layers.GRUCell(U)])
    return keras.Model(x, keras.layers.RNN(cell, return_sequences=True)(x))


@model("keras_conv_lstm2d", "ConvLSTM2D(4 filters, 3x3, same padding) over [time, 5, 5, 2] frames",
       feature_shape=(5, 5, 2))
def _():
    x = seq_input((5, 5, 2))
    return keras.Model(x, keras.layers.ConvLSTM2D(4, 3, padding="same")(x))


@model("keras_char_embedding_lstm", "Embedding(mask_zero) of int32 characters, two stacked LSTMs, Dense:"
       " a character-level encoder", dtype=tf.int32, feature_shape=())
def _():
    x = keras.Input(shape=(None,), dtype="int32")
    e = keras.layers.Embedding(20, 8, mask_zero=True)(x)
    h = keras.layers.LSTM(U, return_sequences=True)(e)
    h = keras.layers.LSTM(U)(h)
    return keras.Model(x, keras.layers.Dense(5)(h))


@model("keras_cnn_bilstm_reader", "Conv1D + MaxPool + Bidirectional(LSTM) + per-step softmax: a CRNN-style"
       " sequence reader")
def _():
    x = seq_input()
    h = keras.layers.Conv1D(8, 3, padding="same", activation="relu")(x)
    h = keras.layers.Bidirectional(keras.layers.LSTM(U, return_sequences=True))(h)
    return keras.Model(x, keras.layers.Dense(5, activation="softmax")(h))


# --- tf.while_loop with tf.fill / tf.zeros of a run-time shape --------------------------------


class FnModel:
    """A plain TF function in place of a Keras model."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, x, training=False):
        return self.fn(x)


def _while_fill_decoder(x):
    # A decoder loop: each step fills a [batch, U] tensor with the step number (tf.fill of a
    # run-time shape inside the body) and adds a projection of the running state.
    w = tf.constant(np.random.default_rng(7).standard_normal((F, U)).astype(np.float32))
    batch = tf.shape(x)[0]
    steps = tf.shape(x)[1]
    h0 = tf.zeros([batch, U])

    def body(i, h, acc):
        step = tf.fill([batch, U], tf.cast(i, tf.float32))
        h = tf.tanh(tf.matmul(x[:, i, :], w) + 0.5 * h + 0.01 * step)
        return i + 1, h, acc.write(i, h)

    _, h, acc = tf.while_loop(lambda i, h, acc: i < steps, body,
                              (tf.constant(0), h0, tf.TensorArray(tf.float32, size=steps)))
    return tf.transpose(acc.stack(), [1, 0, 2]), h


@model("tf_while_fill_decoder", "tf.while_loop over the time axis, tf.zeros/tf.fill of [batch, U] in and"
       " out of the body, TensorArray of every step")
def _():
    return FnModel(_while_fill_decoder)


def inputs_for(name, dtype, feature_shape, batch, time, k):
    rng = np.random.default_rng(zlib.crc32(f"{name}/{k}".encode()))
    b, t = SIZES[k]
    b = batch or b
    t = time or t
    if dtype == tf.int32:
        x = rng.integers(1, 20, (b, t)).astype(np.int32)
        x[0, t - 2:] = 0  # padding at the end of the first row (masked)
        return x
    x = rng.standard_normal((b, t, *feature_shape)).astype(np.float32)
    if "mask" in name:
        x[0, t - 2:] = 0.0  # the first row's last two steps are padding
    return x


def main(selected=None):
    w = Writer("tf2onnx", {"tensorflow": tf.__version__, "keras": keras.__version__, "tf2onnx": tf2onnx.__version__},
               select=selected, root=RECURRENT_ROOT)
    for name, build, notes, dtype, feature_shape, batch, time in MODELS:
        if selected and selected not in name:
            continue
        seeded(name)
        net = build()
        sets = []
        for k in range(len(SIZES)):
            x = inputs_for(name, dtype, feature_shape, batch, time, k)
            out = net(tf.constant(x), training=False)
            out = list(out) if isinstance(out, (list, tuple)) else [out]
            sets.append(({"x": x}, [o.numpy() for o in out]))
        spec = [tf.TensorSpec([batch, None, *feature_shape], dtype, name="x")]
        fn = tf.function(lambda x: net(x, training=False))
        for opset in OPSETS:
            case = f"{name}__opset{opset}"
            path = f"tf2onnx opset {opset}"
            try:
                onnx_model, _ = tf2onnx.convert.from_function(fn, input_signature=spec, opset=opset)
            except Exception as e:  # noqa: BLE001 - the converter refused: recorded
                w.skipped(case, path, f"{type(e).__name__}: {e}")
                continue
            onnx_model = canonicalize(onnx_model)
            bad = unconverted_ops(onnx_model, opset)
            if bad:
                w.skipped(case, path, f"tf2onnx left unconverted TF op(s) {', '.join(bad)} at opset {opset}")
                continue
            (x0, out0), *more = sets
            w.case(case, onnx_model, x0, out0, idiom=name, path=path, notes=notes, more_sets=more,
                   meta_extra=loop_meta(onnx_model))
    w.finish(order=[m[0] for m in MODELS])


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
