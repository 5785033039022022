"""One setting, one name: the command line's flags, the Python keywords and their defaults all come from the
settings the C++ core declares (kiln._kiln.params), and the same settings give the same output either way."""
import inspect
import os
import re
import subprocess

import numpy as np
import pytest

import kiln
from kiln import _kiln

KILN = os.environ.get("KILN_CLI")
# The command behind each function, and what each side has beyond the declared settings (inputs, CLI-only output
# control).
JOBS = {
    "render_job": ("render", {"series", "config", "source"}, {"--json"}),
    "quality": ("quality", {"images"}, set()),
    "preprocess": ("preprocess", {"images"}, set()),
}
if kiln.model_convert is not None:
    JOBS["model_convert"] = ("model convert", {"model", "calibrate"}, {"--calibrate", "--fp16", "--json"})
    JOBS["model_quantize"] = ("model quantize", {"model", "calibrate", "exclude"},
                              {"--calibrate", "--exclude", "--int8", "--json"})
CLI_ONLY = {"--help", "--list", "--quiet", "--config"}


def cli_flags(command):
    text = subprocess.run([KILN, *command.split(), "--help"], capture_output=True, text=True, check=True).stdout
    return {flag for flag in re.findall(r"(--[a-z][a-z0-9-]*)", text) if not flag.startswith("--no-")}


@pytest.mark.skipif(KILN is None, reason="KILN_CLI is not set (run through ctest)")
@pytest.mark.parametrize("function", sorted(JOBS))
def test_flags_keywords_and_declarations_are_the_same_names(function):
    command, inputs, cli_inputs = JOBS[function]
    declared = {spec["name"] for spec in _kiln.params(function)}
    keywords = set(inspect.signature(getattr(kiln, function)).parameters) - inputs
    assert keywords == declared
    flags = cli_flags(command) - CLI_ONLY - cli_inputs
    assert flags == {"--" + name.replace("_", "-") for name in declared}


@pytest.mark.parametrize("function", ["render", "render_windows", "window_plan", "render_job", "quality", "preprocess"]
                         + [f for f in ("model_convert", "model_quantize") if getattr(kiln, f) is not None])
def test_signature_defaults_are_the_declared_defaults(function):
    parameters = inspect.signature(getattr(kiln, function)).parameters
    for spec in _kiln.params(function):
        default = parameters[spec["name"]].default
        if spec["required"]:
            assert default is inspect.Parameter.empty
        else:
            assert default == spec["default"], spec["name"]
    # Every shared setting means the same thing wherever it appears: one type, one default.
    render_job = {s["name"]: s for s in _kiln.params("render_job")}
    for spec in _kiln.params(function):
        if spec["name"] in render_job and spec["name"] not in ("batch_size", "width"):
            assert render_job[spec["name"]]["type"] == spec["type"], spec["name"]


def test_the_python_classes_use_the_declared_names():
    declared = {spec["name"] for spec in _kiln.params("render_job")}
    keywords = set(inspect.signature(kiln.ChartDataset.__init__).parameters) - {"self", "series"}
    assert keywords <= declared


def test_unknown_and_bad_keywords_are_python_errors():
    with pytest.raises(TypeError, match="size"):
        kiln.preprocess(np.zeros((4, 4, 3), np.uint8), width=2, height=2, size=(2, 2))
    with pytest.raises(ValueError, match="seq_len"):
        kiln.render_job(np.arange(50, dtype=np.float32), output="never.h5", seq_len=1)
    with pytest.raises(ValueError, match="mode"):
        kiln.render(np.zeros((1, 5), np.float32), mode="fast")


@pytest.mark.skipif(KILN is None, reason="KILN_CLI is not set (run through ctest)")
def test_cli_and_python_render_the_same_dataset(tmp_path):
    settings = {"demo_points": 200, "seq_len": 20, "stride": 3, "width": 64, "height": 32, "line_width": 2.5,
                "style": "ohlc", "ink_bullish": 90, "label_horizon": 2, "mode": "cpu"}
    args = [KILN, "render", "--demo", "-o", str(tmp_path / "cli.h5"), "-q"]
    for name, value in settings.items():
        args += ["--" + name.replace("_", "-"), str(value)]
    subprocess.run(args, check=True, capture_output=True)
    kiln.render_job(None, output=str(tmp_path / "py.h5"), demo=True, **settings)
    with kiln.open(str(tmp_path / "cli.h5")) as a, kiln.open(str(tmp_path / "py.h5")) as b:
        for name in ("images", "sequences", "labels", "index"):
            np.testing.assert_array_equal(getattr(a, name)[()], getattr(b, name)[()])
        assert a.images.shape == (60, 32, 64)  # 61 windows, the last without a label horizon value
