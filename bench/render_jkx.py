#!/usr/bin/env python3
"""jkx20 images (Jiang, Kelly and Xiu's 64 x 60 OHLC charts with the 20-day moving average and volume) from a
synthetic 1,000-symbol x 2,000-day random-walk OHLCV panel: kiln on 1 and 2 threads against the paper-style loop in
numpy and matplotlib drawing the same chart, in one process, with the ratios of the same run.

- kiln: kiln.render_windows over the panel's layered series (prices, volume, the 20-day mean: kiln.chart_series per
  symbol, stacked), every window of every symbol (a window never crosses two symbols; a window's 20-day average
  needs the 19 days before it, as `kiln render --preset jkx20`), in chunks of --chunk windows, uint8 images.
- numpy: one image at a time as the published code draws it: the window's rows scaled in numpy, then per day numpy
  index assignments for the open tick, the high-low bar, the close tick and the volume bar, and the moving average
  drawn by PIL's ImageDraw.line between the days' centre columns; a sample of --peer-images windows.
- matplotlib (mplfinance is not packaged in Debian): one reused figure of 60 x 64 px at 100 dpi, black background,
  the same bars, ticks, volume bars and moving-average line, non-anti-aliased, drawn and read back per image;
  a sample of --matplotlib-images windows.
Each tool's best of --repeats passes is reported (matplotlib: one pass), with every pass's rate. Target (issue 55):
kiln >= 50x the numpy loop per thread.

  PYTHONPATH=build/python /usr/bin/python3 bench/render_jkx.py [--symbols 1000] [--days 2000] [--json FILE]
"""
import argparse
import json
import os
import platform
import subprocess
import time

import numpy as np

import kiln

TARGET = 50.0
DAYS, HEIGHT, WIDTH = 20, 64, 60
VOLUME_ROWS = HEIGHT // 5
PRICE_ROWS = HEIGHT - VOLUME_ROWS - 2
JKX20 = dict(style="ohlc", width=WIDTH, height=HEIGHT, bar_gap=False, background=0, ink=255, volume=True,
             volume_height=0, volume_gap=2, moving_averages=1)


def make_panel(symbols, days, seed):
    """Per symbol (days, 4) Open/High/Low/Close float32 random walks (log-normal steps) and (days,) volumes."""
    rng = np.random.default_rng(seed)
    close = 50 * np.exp(np.cumsum(rng.normal(0, 0.02, (symbols, days)), axis=1))
    open_ = np.concatenate([close[:, :1], close[:, :-1]], axis=1) * np.exp(rng.normal(0, 0.005, (symbols, days)))
    high = np.maximum(open_, close) * np.exp(np.abs(rng.normal(0, 0.01, (symbols, days))))
    low = np.minimum(open_, close) * np.exp(-np.abs(rng.normal(0, 0.01, (symbols, days))))
    volume = np.round(rng.lognormal(12, 0.8, (symbols, days)))
    return np.stack([open_, high, low, close], axis=2).astype(np.float32), volume.astype(np.float32)


def layered_panel(ohlc, volume):
    """The panel as one (symbols * days, 6) series (prices, volume, 20-day mean) and every window's start row."""
    symbols, days = volume.shape
    series = np.concatenate([kiln.chart_series(ohlc[s], volume[s], [DAYS]) for s in range(symbols)])
    per_symbol = np.arange(DAYS - 1, days - DAYS + 1, dtype=np.int64)  # the mean needs the 19 days before
    starts = (np.arange(symbols, dtype=np.int64)[:, None] * days + per_symbol[None, :]).ravel()
    return np.ascontiguousarray(series, dtype=np.float32), starts


def numpy_image(window):
    """One jkx20 image from a (20, 6) window, the published code's way."""
    from PIL import Image, ImageDraw

    ohlc, volume, ma = window[:, :4], window[:, 4], window[:, 5]
    lo = min(ohlc[:, 2].min(), ma.min())
    hi = max(ohlc[:, 1].max(), ma.max())
    scale = (PRICE_ROWS - 1) / (hi - lo)
    rows = np.around((hi - ohlc) * scale).astype(int)
    ma_rows = np.around((hi - ma) * scale).astype(int)
    heights = np.around(volume / volume.max() * VOLUME_ROWS).astype(int)
    image = np.zeros((HEIGHT, WIDTH), np.uint8)
    for i in range(DAYS):
        image[rows[i, 0], 3 * i] = 255
        image[rows[i, 1]:rows[i, 2] + 1, 3 * i + 1] = 255
        image[rows[i, 3], 3 * i + 2] = 255
        if heights[i] > 0:
            image[HEIGHT - heights[i]:, 3 * i + 1] = 255
    picture = Image.fromarray(image)
    ImageDraw.Draw(picture).line([(3 * i + 1, int(ma_rows[i])) for i in range(DAYS)], fill=255, width=1)
    return np.asarray(picture)


class MatplotlibChart:
    """The same chart in matplotlib: one figure reused, cleared per image."""

    def __init__(self):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        self.figure = plt.figure(figsize=(WIDTH / 100, HEIGHT / 100), dpi=100, facecolor="black")
        self.axes = self.figure.add_axes([0, 0, 1, 1])

    def draw(self, window):
        ax = self.axes
        ax.cla()
        ax.set_facecolor("black")
        ax.set_axis_off()
        ax.set_xlim(0, WIDTH)
        ax.set_ylim(HEIGHT, 0)
        ohlc, volume, ma = window[:, :4], window[:, 4], window[:, 5]
        lo = min(ohlc[:, 2].min(), ma.min())
        hi = max(ohlc[:, 1].max(), ma.max())
        scale = (PRICE_ROWS - 1) / (hi - lo)
        rows = (hi - ohlc) * scale + 0.5
        centre = np.arange(DAYS) * 3 + 1.5
        px = 72 / 100  # one pixel in points
        ax.vlines(centre, rows[:, 1] - 0.5, rows[:, 2] + 0.5, colors="white", linewidth=px, antialiased=False)
        ax.hlines(rows[:, 0], centre - 1.5, centre - 0.5, colors="white", linewidth=px, antialiased=False)
        ax.hlines(rows[:, 3], centre + 0.5, centre + 1.5, colors="white", linewidth=px, antialiased=False)
        ax.plot(centre, (hi - ma) * scale + 0.5, color="white", linewidth=px, antialiased=False)
        heights = volume / volume.max() * VOLUME_ROWS
        ax.bar(centre, heights, bottom=HEIGHT - heights, width=1.0, color="white", antialiased=False)
        self.figure.canvas.draw()
        return np.asarray(self.figure.canvas.buffer_rgba())[:, :, 0].copy()


def timed(fn, count, repeats):
    """The best of `repeats` passes (the machine may be shared), with every pass's rate."""
    passes = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        passes.append(time.perf_counter() - start)
    best = min(passes)
    return {"images": count, "seconds": round(best, 3), "images_per_s": round(count / best, 1),
            "passes_images_per_s": [round(count / p, 1) for p in passes]}


def kiln_pass(series, starts, threads, chunk):
    for first in range(0, len(starts), chunk):
        kiln.render_windows(series, starts[first:first + chunk], DAYS, mode="cpu", threads=threads, **JKX20)


def plot(report, path):
    """Images per second of each tool (log scale) with the ratios to the numpy loop."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    results = report["results"]
    names = ["kiln_2_threads", "kiln_1_thread", "numpy_loop", "matplotlib"]
    labels = ["kiln, 2 threads", "kiln, 1 thread", "numpy loop (paper-style)", "matplotlib"]
    rates = [results[n]["images_per_s"] for n in names]
    figure, axes = plt.subplots(figsize=(7.5, 2.8), dpi=100)
    bars = axes.barh(labels[::-1], rates[::-1], color=["#bbbbbb", "#999999", "#1f77b4", "#1f77b4"])
    axes.set_xscale("log")
    axes.set_xlabel("jkx20 images per second (log scale)")
    numpy_rate = results["numpy_loop"]["images_per_s"]
    for bar, rate in zip(bars, rates[::-1]):
        axes.text(rate * 1.1, bar.get_y() + bar.get_height() / 2, f"{rate:,.0f}  ({rate / numpy_rate:.3g}x numpy)",
                  va="center", fontsize=8)
    axes.set_xlim(min(rates) / 2, max(rates) * 40)
    axes.set_title(f"jkx20 (64x60) from a {report['panel']['symbols']:,}-symbol x {report['panel']['days']:,}-day "
                   f"panel, {report['date']}", fontsize=9)
    figure.tight_layout()
    figure.savefig(path)


def machine():
    info = {"platform": platform.platform(), "cpus": os.cpu_count(), "load_average": os.getloadavg()}
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        info["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                        cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    except OSError:
        pass
    return info


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--symbols", type=int, default=1000)
    parser.add_argument("--days", type=int, default=2000)
    parser.add_argument("--kiln-symbols", type=int, default=0, help="symbols kiln renders (0: all)")
    parser.add_argument("--peer-images", type=int, default=2000, help="windows the numpy loop draws")
    parser.add_argument("--matplotlib-images", type=int, default=500)
    parser.add_argument("--chunk", type=int, default=8192, help="windows per kiln.render_windows call")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes per tool; the best is reported")
    parser.add_argument("--seed", type=int, default=55)
    parser.add_argument("--json", help="write the results here too")
    parser.add_argument("--plot", help="draw the rates into this PNG")
    args = parser.parse_args()

    started = time.perf_counter()
    ohlc, volume = make_panel(args.symbols, args.days, args.seed)
    series, starts = layered_panel(ohlc, volume)
    panel_seconds = time.perf_counter() - started
    windows_per_symbol = len(starts) // args.symbols
    kiln_starts = starts[:args.kiln_symbols * windows_per_symbol] if args.kiln_symbols > 0 else starts
    rng = np.random.default_rng(args.seed + 1)
    sample = np.sort(rng.choice(len(starts), size=min(args.peer_images, len(starts)), replace=False))

    # The tools draw the same chart: kiln's images against the numpy loop's on the sample (pixels that differ).
    kiln_sample = kiln.render_windows(series, starts[sample], DAYS, mode="cpu", threads=1, **JKX20)
    numpy_sample = np.stack([numpy_image(series[s:s + DAYS]) for s in starts[sample]])
    differing = (kiln_sample != numpy_sample).reshape(len(sample), -1).sum(axis=1)

    kiln_pass(series, kiln_starts[:args.chunk], 1, args.chunk)  # warm-up
    results = {
        "kiln_1_thread": timed(lambda: kiln_pass(series, kiln_starts, 1, args.chunk), len(kiln_starts), args.repeats),
        "kiln_2_threads": timed(lambda: kiln_pass(series, kiln_starts, 2, args.chunk), len(kiln_starts),
                                args.repeats),
        "numpy_loop": timed(lambda: [numpy_image(series[s:s + DAYS]) for s in starts[sample]], len(sample),
                            args.repeats),
    }
    chart = MatplotlibChart()
    peers = starts[sample[:args.matplotlib_images]]
    chart.draw(series[peers[0]:peers[0] + DAYS])  # warm-up
    results["matplotlib"] = timed(lambda: [chart.draw(series[s:s + DAYS]) for s in peers], len(peers), 1)

    per_thread = results["kiln_1_thread"]["images_per_s"] / results["numpy_loop"]["images_per_s"]
    report = {
        "benchmark": "render_jkx",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": "bench/render_jkx.py " + " ".join(f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items()
                                                      if v is not None),
        "machine": machine(),
        "panel": {"symbols": args.symbols, "days": args.days, "windows": int(len(starts)),
                  "windows_per_symbol": windows_per_symbol, "build_seconds": round(panel_seconds, 2),
                  "input": "kiln.chart_series per symbol, stacked; starts never cross a symbol"},
        "results": results,
        "ratios": {
            "kiln_1_thread_vs_numpy": round(per_thread, 1),
            "kiln_2_threads_vs_numpy": round(results["kiln_2_threads"]["images_per_s"] /
                                              results["numpy_loop"]["images_per_s"], 1),
            "kiln_1_thread_vs_matplotlib": round(results["kiln_1_thread"]["images_per_s"] /
                                                 results["matplotlib"]["images_per_s"], 1),
            "kiln_2_threads_vs_1": round(results["kiln_2_threads"]["images_per_s"] /
                                         results["kiln_1_thread"]["images_per_s"], 2),
        },
        "agreement_with_numpy": {"images": int(len(sample)), "identical": int((differing == 0).sum()),
                                 "most_pixels_differing": int(differing.max())},
        "target": {"kiln_vs_numpy_per_thread": TARGET, "met": bool(per_thread >= TARGET)},
    }
    text = json.dumps(report, indent=2)
    print(text)
    print(f"target >= {TARGET:g}x the numpy loop per thread: {per_thread:.1f}x, "
          f"{'met' if per_thread >= TARGET else 'not met'}")
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    if args.plot:
        plot(report, args.plot)


if __name__ == "__main__":
    main()
