"""--plot of the benchmarks: the results drawn by python/kiln/bench_plot.py (the file the CLI carries), read back:
each bar as long as its value says and in its series' colour, each point of a sweep where its value says, the
CLI's picture the plotter's own, and a clear error without matplotlib."""
import json
import os
import subprocess
import sys

import numpy as np
from matplotlib import image

from conftest import run_kiln

SOURCE_DIR = os.environ.get("KILN_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
PLOTTER = os.path.join(SOURCE_DIR, "python", "kiln", "bench_plot.py")


def plot(results, folder, title=None):
    data, png, layout = folder / "results.json", folder / "plot.png", folder / "layout.json"
    data.write_text(json.dumps(results))
    args = [sys.executable, PLOTTER, data, png, "--layout", layout] + (["--title", title] if title else [])
    subprocess.run([str(a) for a in args], check=True, capture_output=True, text=True)
    return np.rint(image.imread(png)[..., :3] * 255).astype(int), json.loads(layout.read_text())


def color(hex_color):
    return [int(hex_color[i:i + 2], 16) for i in (1, 3, 5)]


def test_bars_are_as_long_as_their_values_in_their_series_colour(tmp_path):
    results = {"results": [{"op": "resize", "tool": "kiln", "img_per_s": 4000.0},
                           {"op": "resize", "tool": "opencv", "img_per_s": 1000.0},
                           {"op": "quality", "tool": "kiln", "img_per_s": 3000.0},
                           {"op": "quality", "tool": "opencv", "img_per_s": 500.0}]}
    pixels, layout = plot(results, tmp_path)
    assert layout["kind"] == "bars" and layout["x_scale"] == "linear" and [m["label"] for m in layout["marks"]] == [
        "resize · kiln", "resize · opencv", "quality · kiln", "quality · opencv"]
    assert layout["marks"][0]["color"] != layout["marks"][1]["color"]
    assert layout["marks"][0]["color"] == layout["marks"][2]["color"]  # colour by series
    per_value = []
    for mark in layout["marks"]:
        x0, y0, x1, y1 = mark["box"]
        centre = pixels[round((y0 + y1) / 2), round((x0 + x1) / 2)]
        assert np.abs(centre - color(mark["color"])).max() <= 2, mark
        # the bar ends where its value says: its colour up to x1, not past it
        row = round((y0 + y1) / 2)
        assert np.abs(pixels[row, int(x1) - 2] - color(mark["color"])).max() <= 2
        assert np.abs(pixels[row, int(x1) + 3] - color(mark["color"])).max() > 30
        per_value.append((x1 - x0) / mark["value"])
    assert max(per_value) / min(per_value) < 1.01


def test_a_sweep_is_drawn_as_lines_through_its_points(tmp_path):
    results = {"results": [{"backend": b, "batch_size": n, "img_per_s": rate}
                           for b, rates in (("cpu", (1000, 1800, 2400)), ("cuda", (500, 3000, 9000)))
                           for n, rate in zip((1, 10, 100), rates)]}
    pixels, layout = plot(results, tmp_path, "render")
    assert layout["kind"] == "lines" and [m["label"] for m in layout["marks"]] == ["cpu", "cuda"]
    for mark in layout["marks"]:
        for (x, y), (_, rate) in zip(mark["points"], mark["values"]):
            assert np.abs(pixels[round(y), round(x)] - color(mark["color"])).max() <= 10, (mark["label"], rate)
        ys = [y for _, y in mark["points"]]
        assert ys == sorted(ys, reverse=True)  # both rise with the batch: up the picture
    # the same y scale for both: 9000 is three times as far from 0 as 3000
    cuda = layout["marks"][1]["points"]
    zero = cuda[0][1] + (cuda[1][1] - cuda[0][1]) * (0 - 500) / (3000 - 500)
    assert abs((zero - cuda[2][1]) / (zero - cuda[1][1]) - 3) < 0.02


def test_the_cli_plot_is_the_plotters_picture_and_says_what_is_missing(tmp_path):
    out = run_kiln("bench", "render", "--batch-sizes", 1, 10, "--seconds", 0.05, "--json", "--plot",
                   tmp_path / "cli.png")
    results = json.loads(out.stdout)
    assert "Plot: " in out.stderr
    title = "kiln bench render: images/s per backend and batch size"
    plot(results, tmp_path, title)
    assert (tmp_path / "cli.png").read_bytes() == (tmp_path / "plot.png").read_bytes()
    missing = run_kiln("bench", "render", "--batch-sizes", 1, "--seconds", 0.05, "--plot", tmp_path / "no.png",
                       check=False, env={"KILN_PYTHON": "/nonexistent/python3"})
    assert missing.returncode != 0 and "python3-matplotlib" in missing.stderr and "KILN_PYTHON" in missing.stderr
    assert not (tmp_path / "no.png").exists()


def test_results_without_a_throughput_are_refused(tmp_path):
    data = tmp_path / "r.json"
    data.write_text(json.dumps({"results": [{"op": "x", "ms": 3}]}))
    r = subprocess.run([sys.executable, PLOTTER, str(data), str(tmp_path / "p.png")], capture_output=True, text=True)
    assert r.returncode != 0 and "no measurement with a throughput" in r.stderr


def test_values_far_apart_are_drawn_on_a_log_scale(tmp_path):
    results = {"results": [{"tool": "kiln", "img_per_s": 10.0}, {"tool": "peer", "img_per_s": 100.0},
                           {"tool": "other", "img_per_s": 1000.0}]}
    _, layout = plot(results, tmp_path)
    assert layout["x_scale"] == "log"
    ends = [m["box"][2] for m in layout["marks"]]
    assert abs((ends[2] - ends[1]) - (ends[1] - ends[0])) < 1.5  # each 10x the same distance
