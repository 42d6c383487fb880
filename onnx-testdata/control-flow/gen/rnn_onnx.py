"""Hand-written ONNX GRU/LSTM/RNN with run-time sequence_lens, and TopK of a symbolic k
(generation only; the Rust tests never run Python).

    python onnx-testdata/control-flow/gen/rnn_onnx.py      # venv: requirements-rnn_onnx.txt

Writes `onnx-testdata/control-flow/rnn-onnx/<case>/` in the ONNX node-test layout. Expected
outputs come from the numpy reference below (ONNX's operator spec, float64, rounded to float32);
onnxruntime 1.31.1 is run on every case and its verdict against them recorded in `case.toml`.
A row of length 0 has Y_h (Y_c) 0, as onnxruntime gives (checked: its initial state is not kept).
"""
from __future__ import annotations

import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "rnn-onnx")
RTOL, ATOL = 1e-3, 1e-5
OPSET = 14  # `layout` exists from 14
IR = 8

GATES = {"GRU": 3, "LSTM": 4, "RNN": 1}
DEFAULT_ACTS = {"GRU": ["Sigmoid", "Tanh"], "LSTM": ["Sigmoid", "Tanh", "Tanh"], "RNN": ["Tanh"]}
USES = {  # (takes alpha, takes beta, default alpha, default beta), onnxruntime's reading
    "relu": (0, 0, 0, 0), "tanh": (0, 0, 0, 0), "sigmoid": (0, 0, 0, 0),
    "affine": (1, 1, None, None), "leakyrelu": (1, 0, 0.01, 0), "thresholdedrelu": (1, 0, 1.0, 0),
    "scaledtanh": (1, 1, None, None), "hardsigmoid": (1, 1, 0.2, 0.5), "elu": (1, 0, 1.0, 0),
    "softsign": (0, 0, 0, 0), "softplus": (0, 0, 0, 0),
}


def activation(name, a, b):
    n = name.lower()
    return {
        "relu": lambda x: np.maximum(x, 0),
        "tanh": np.tanh,
        "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
        "affine": lambda x: a * x + b,
        "leakyrelu": lambda x: np.where(x >= 0, x, a * x),
        "thresholdedrelu": lambda x: np.where(x > a, x, 0),
        "scaledtanh": lambda x: a * np.tanh(b * x),
        "hardsigmoid": lambda x: np.clip(a * x + b, 0, 1),
        "elu": lambda x: np.where(x >= 0, x, a * (np.exp(x) - 1)),
        "softsign": lambda x: x / (1 + np.abs(x)),
        "softplus": lambda x: np.log1p(np.exp(x)),
    }[n]


def parse_acts(op, names, alphas, betas, dirs):
    names = names or DEFAULT_ACTS[op]
    if len(names) == len(DEFAULT_ACTS[op]) and dirs == 2:
        names = names * 2
    ai, bi = iter(alphas), iter(betas)
    fns = []
    for n in names:
        ua, ub, da, db = USES[n.lower()]
        a = next(ai) if ua else da
        b = next(bi) if ub else db
        fns.append(activation(n, a, b))
    per = len(DEFAULT_ACTS[op])
    return [fns[i * per:(i + 1) * per] for i in range(dirs)]


def reference(op, attrs, X, W, R, B=None, lens=None, h0=None, c0=None, P=None):
    """ONNX GRU/LSTM/RNN in float64. Returns Y, Y_h (, Y_c) in the node's layout."""
    layout = attrs.get("layout", 0)
    direction = attrs.get("direction", "forward")
    dirs = 2 if direction == "bidirectional" else 1
    clip = attrs.get("clip")
    x = X.astype(np.float64)
    if layout == 1:
        x = x.transpose(1, 0, 2)
    T, Bn, _ = x.shape
    H = R.shape[2]
    G = GATES[op]
    acts = parse_acts(op, attrs.get("activations"), attrs.get("activation_alpha", []),
                      attrs.get("activation_beta", []), dirs)
    lens = np.full(Bn, T) if lens is None else lens
    if B is None:
        B = np.zeros((dirs, 2 * G * H))
    if P is None:
        P = np.zeros((dirs, 3 * H))

    def st(s):
        if s is None:
            return np.zeros((dirs, Bn, H))
        return (s.transpose(1, 0, 2) if layout == 1 else s).astype(np.float64)

    h0, c0 = st(h0), st(c0)
    cl = (lambda v: np.clip(v, -clip, clip)) if clip is not None else (lambda v: v)
    Y = np.zeros((T, dirs, Bn, H))
    Yh = np.zeros((dirs, Bn, H))
    Yc = np.zeros((dirs, Bn, H))
    for d in range(dirs):
        rev = direction == "reverse" or d == 1
        w, r = W[d].astype(np.float64), R[d].astype(np.float64)
        wb, rb = B[d, :G * H].astype(np.float64), B[d, G * H:].astype(np.float64)
        p = P[d].astype(np.float64)
        f = acts[d]
        for b in range(Bn):
            h, c = h0[d, b].copy(), c0[d, b].copy()
            L = int(lens[b])
            steps = range(L - 1, -1, -1) if rev else range(L)
            for t in steps:
                xw = w @ x[t, b] + wb
                if op == "RNN":
                    h = f[0](cl(xw + r @ h + rb))
                elif op == "GRU":
                    hr = r @ h + rb
                    z = f[0](cl(xw[:H] + hr[:H]))
                    rg = f[0](cl(xw[H:2 * H] + hr[H:2 * H]))
                    if attrs.get("linear_before_reset", 0):
                        hh = f[1](cl(xw[2 * H:] + rg * hr[2 * H:]))
                    else:
                        hh = f[1](cl(xw[2 * H:] + r[2 * H:] @ (rg * h) + rb[2 * H:]))
                    h = (1 - z) * hh + z * h
                else:
                    g = xw + r @ h + rb
                    i = f[0](cl(g[:H] + p[:H] * c))
                    if attrs.get("input_forget", 0):
                        fg = 1 - i
                    else:
                        fg = f[0](cl(g[2 * H:3 * H] + p[2 * H:] * c))
                    cc = f[1](cl(g[3 * H:]))
                    c = fg * c + i * cc
                    o = f[0](cl(g[H:2 * H] + p[H:2 * H] * c))
                    h = o * f[2](c)
                Y[t, d, b] = h
            if L > 0:
                Yh[d, b], Yc[d, b] = h, c
    if layout == 1:
        Y, Yh, Yc = Y.transpose(2, 0, 1, 3), Yh.transpose(1, 0, 2), Yc.transpose(1, 0, 2)
    outs = [Y, Yh] + ([Yc] if op == "LSTM" else [])
    return [o.astype(np.float32) for o in outs]


def close(got, want):
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"shape {list(got.shape)} vs expected {list(want.shape)}"
    ok = np.isclose(got, want, rtol=RTOL, atol=ATOL)
    if not ok.all():
        first = np.argwhere(~ok)[0].tolist()
        return f"{int((~ok).sum())} value(s) differ, first at {first}: {got[tuple(first)]!r} vs expected {want[tuple(first)]!r}"
    return None


def run_ort(model, feeds):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.log_severity_level = 3
    try:
        sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        return sess.run(None, feeds), None
    except Exception as e:  # noqa: BLE001 - the verdict is the message
        msg = str(e).splitlines()[0]
        return None, msg[:300]


def toml(v):
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(v)


def write_case(name, model, data_sets, pattern, notes=""):
    """data_sets: list of (inputs {name: array} in graph order, expected outputs list)."""
    onnx.checker.check_model(model)
    path = os.path.join(OUT, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    onnx.save(model, os.path.join(path, "model.onnx"))
    verdicts = []
    for k, (inputs, outputs) in enumerate(data_sets):
        ds = os.path.join(path, f"test_data_set_{k}")
        os.makedirs(ds)
        for i, (n, a) in enumerate(inputs.items()):
            onnx.save_tensor(numpy_helper.from_array(a, n), os.path.join(ds, f"input_{i}.pb"))
        for i, (o, a) in enumerate(zip(model.graph.output, outputs)):
            onnx.save_tensor(numpy_helper.from_array(a, o.name), os.path.join(ds, f"output_{i}.pb"))
        got, err = run_ort(model, inputs)
        if err is not None:
            verdicts.append(f"test_data_set_{k}: error: {err}")
            continue
        for i, (g, w) in enumerate(zip(got, outputs)):
            why = close(g, w)
            if why:
                verdicts.append(f"test_data_set_{k} output {i}: {why}")
                break
    ort_verdict = "pass" if not verdicts else verdicts[0]
    with open(os.path.join(path, "case.toml"), "w") as f:
        f.write(f'source = {toml("hand-written ONNX (onnx " + onnx.__version__ + ")")}\n')
        f.write(f"pattern = {toml(pattern)}\n")
        f.write(f"onnxruntime = {toml(ort_verdict)}\n")
        if notes:
            f.write(f"notes = {toml(notes)}\n")
    print(f"{name:48} onnxruntime: {ort_verdict[:110]}")
    return ort_verdict


def sym(name):
    return name


def rec_case(name, op, attrs, *, init_states, with_lens, seed, data_sets, peepholes=False,
             pattern="rnn-seq-lens", notes=""):
    """A model with one recurrent node: X, sequence_lens and initial states are graph inputs of
    symbolic batch and time; W, R, B (and P) are initializers. data_sets: [(batch, time, lens)]."""
    rng = np.random.default_rng(seed)
    G = GATES[op]
    I, H = 3, 4
    layout = attrs.get("layout", 0)
    dirs = 2 if attrs.get("direction") == "bidirectional" else 1
    W = (rng.standard_normal((dirs, G * H, I)) * 0.6).astype(np.float32)
    R = (rng.standard_normal((dirs, G * H, H)) * 0.6).astype(np.float32)
    Bi = (rng.standard_normal((dirs, 2 * G * H)) * 0.3).astype(np.float32)
    P = (rng.standard_normal((dirs, 3 * H)) * 0.3).astype(np.float32) if peepholes else None
    xdims = ["time", "batch", I] if layout == 0 else ["batch", "time", I]
    sdims = [dirs, "batch", H] if layout == 0 else ["batch", dirs, H]
    ydims = ["time", dirs, "batch", H] if layout == 0 else ["batch", "time", dirs, H]
    F = TensorProto.FLOAT
    inputs = [helper.make_tensor_value_info("X", F, xdims)]
    node_in = ["X", "W", "R", "B"]
    if with_lens:
        inputs.append(helper.make_tensor_value_info("sequence_lens", TensorProto.INT32, ["batch"]))
        node_in.append("sequence_lens")
    else:
        node_in.append("")
    if init_states:
        inputs.append(helper.make_tensor_value_info("initial_h", F, sdims))
        node_in.append("initial_h")
        if op == "LSTM":
            inputs.append(helper.make_tensor_value_info("initial_c", F, sdims))
            node_in.append("initial_c")
    elif op == "LSTM" and peepholes:
        node_in += ["", ""]
    if peepholes:
        if init_states and op == "LSTM":
            pass
        node_in.append("P")
    while node_in and node_in[-1] == "":
        node_in.pop()
    outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    node = helper.make_node(op, node_in, outs, name=f"{op.lower()}_node", hidden_size=H, **attrs)
    inits = [numpy_helper.from_array(W, "W"), numpy_helper.from_array(R, "R"),
             numpy_helper.from_array(Bi, "B")]
    if P is not None:
        inits.append(numpy_helper.from_array(P, "P"))
    outputs = [helper.make_tensor_value_info("Y", F, ydims),
               helper.make_tensor_value_info("Y_h", F, sdims)]
    if op == "LSTM":
        outputs.append(helper.make_tensor_value_info("Y_c", F, sdims))
    graph = helper.make_graph([node], name, inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=IR)
    sets = []
    for batch, time, lens in data_sets:
        xs = (time, batch, I) if layout == 0 else (batch, time, I)
        ss = (dirs, batch, H) if layout == 0 else (batch, dirs, H)
        X = rng.standard_normal(xs).astype(np.float32)
        feeds = {"X": X}
        ref = dict(X=X, W=W, R=R, B=Bi, P=P)
        if with_lens:
            feeds["sequence_lens"] = np.array(lens, np.int32)
            ref["lens"] = np.array(lens)
        if init_states:
            feeds["initial_h"] = rng.standard_normal(ss).astype(np.float32)
            ref["h0"] = feeds["initial_h"]
            if op == "LSTM":
                feeds["initial_c"] = rng.standard_normal(ss).astype(np.float32)
                ref["c0"] = feeds["initial_c"]
        sets.append((feeds, reference(op, attrs, **ref)))
    write_case(name, model, sets, pattern, notes)


def topk_case(name, seed):
    """values, indices = TopK(lengths, k = Gather(Shape(lengths), 0)): sorts every length, as
    PyTorch's pack_padded_sequence(enforce_sorted=False) exports do; batch symbolic."""
    nodes = [
        helper.make_node("Shape", ["lengths"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["k0"], axis=0),
        helper.make_node("Unsqueeze", ["k0", "axes"], ["k"]),
        helper.make_node("TopK", ["lengths", "k"], ["values", "indices"], name="sort_lengths", axis=0),
    ]
    inits = [numpy_helper.from_array(np.array(0, np.int64), "zero"),
             numpy_helper.from_array(np.array([0], np.int64), "axes")]
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("lengths", TensorProto.INT64, ["batch"])],
        [helper.make_tensor_value_info("values", TensorProto.INT64, ["batch"]),
         helper.make_tensor_value_info("indices", TensorProto.INT64, ["batch"])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=IR)
    rng = np.random.default_rng(seed)
    sets = []
    for batch in (5, 1):
        lengths = rng.permutation(np.arange(1, batch + 1) * 3).astype(np.int64)
        idx = np.argsort(-lengths, kind="stable")
        sets.append(({"lengths": lengths}, [lengths[idx], idx.astype(np.int64)]))
    write_case(name, model, sets, "topk-symbolic-k")


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    seed = 0
    # (batch, time, lengths): unsorted with 0 and the full length; batch 1.
    sets = [(4, 5, [3, 5, 0, 2]), (1, 4, [4])]
    short = {"forward": "fwd", "reverse": "rev", "bidirectional": "bidi"}
    for op in ("GRU", "LSTM", "RNN"):
        for direction in ("forward", "reverse", "bidirectional"):
            for layout in (0, 1):
                for init in (False, True):
                    seed += 1
                    attrs = {"direction": direction, "layout": layout}
                    if op == "GRU":
                        attrs["linear_before_reset"] = seed % 2
                    name = f"{op.lower()}_{short[direction]}_layout{layout}_{'h0' if init else 'zero'}"
                    rec_case(name, op, attrs, init_states=init, with_lens=True, seed=seed, data_sets=sets)
    # Every activation, alpha and beta, and clip.
    rec_case("rnn_fwd_relu_clip", "RNN", {"activations": ["Relu"], "clip": 0.8}, init_states=True,
             with_lens=True, seed=101, data_sets=sets, pattern="rnn-activations")
    rec_case("rnn_bidi_affine_leakyrelu", "RNN",
             {"direction": "bidirectional", "activations": ["Affine", "LeakyRelu"],
              "activation_alpha": [0.7, 0.2], "activation_beta": [0.1]},
             init_states=False, with_lens=True, seed=102, data_sets=sets, pattern="rnn-activations")
    rec_case("gru_fwd_hardsigmoid_softsign", "GRU",
             {"activations": ["HardSigmoid", "Softsign"], "activation_alpha": [0.3], "activation_beta": [0.4]},
             init_states=True, with_lens=True, seed=103, data_sets=sets, pattern="rnn-activations")
    rec_case("gru_rev_scaledtanh_elu_clip", "GRU",
             {"direction": "reverse", "activations": ["ScaledTanh", "Elu"],
              "activation_alpha": [1.2, 0.9], "activation_beta": [0.8], "clip": 1.5},
             init_states=False, with_lens=True, seed=104, data_sets=sets, pattern="rnn-activations")
    rec_case("lstm_bidi_softplus_thresholdedrelu", "LSTM",
             {"direction": "bidirectional",
              "activations": ["Sigmoid", "Softplus", "ThresholdedRelu", "HardSigmoid", "Tanh", "Relu"],
              "activation_alpha": [0.1, 0.25], "activation_beta": [0.45]},
             init_states=True, with_lens=True, seed=105, data_sets=sets, pattern="rnn-activations")
    rec_case("lstm_fwd_peepholes_clip", "LSTM", {"clip": 0.9}, init_states=True, with_lens=True,
             seed=106, data_sets=sets, peepholes=True, pattern="rnn-activations")
    rec_case("lstm_fwd_input_forget", "LSTM", {"input_forget": 1}, init_states=True, with_lens=True,
             seed=107, data_sets=sets, pattern="rnn-activations")
    # No sequence_lens: stock tract's op where it computes the node.
    full = [(4, 5, None), (1, 3, None)]
    for op in ("GRU", "LSTM", "RNN"):
        rec_case(f"{op.lower()}_rev_no_lens", op, {"direction": "reverse"}, init_states=True,
                 with_lens=False, seed=110 + GATES[op], data_sets=full, pattern="rnn-no-lens")
        rec_case(f"{op.lower()}_bidi_layout1_no_lens", op, {"direction": "bidirectional", "layout": 1},
                 init_states=True, with_lens=False, seed=120 + GATES[op], data_sets=full,
                 pattern="rnn-no-lens")
        rec_case(f"{op.lower()}_bidi_no_lens", op, {"direction": "bidirectional"},
                 init_states=False, with_lens=False, seed=130 + GATES[op], data_sets=full,
                 pattern="rnn-no-lens")
    topk_case("topk_symbolic_k", 200)


if __name__ == "__main__":
    sys.exit(main())
