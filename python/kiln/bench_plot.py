"""Benchmark results as a picture (`kiln bench ... --plot out.png`, `bench/*_peers --plot out.png`), drawn with
matplotlib.

Any of kiln's benchmark JSON works: every object in it that holds a throughput (img_per_s, images_per_s, fps, ... or
any *_per_s) is one measurement, named by its backend / peer / provider and its op / size / case, or by the keys that
lead to it. Measurements over a sweep (batch_size, threads, streams) are drawn as lines against it, one per name;
the others as horizontal bars, coloured by backend or peer, each with its value.

    python3 -m kiln.bench_plot results.json out.png [--title TITLE] [--layout layout.json]

--layout writes where each bar or point was drawn, in the picture's pixels (origin top-left), for tests and tools.
Bars whose values span more than 50x are drawn on a log scale (the layout's x_scale says which).
kiln's CLI runs this same file with the interpreter named by KILN_PYTHON (default python3).
"""
import argparse
import json
import math
import numbers

RATE_KEYS = ("img_per_s", "images_per_s", "frames_per_s", "fps", "faces_per_s", "mean_throughput", "throughput")
SERIES_KEYS = ("tool", "peer", "method", "backend", "provider", "renderer", "library", "implementation", "resident")
GROUP_KEYS = ("op", "operation", "case", "size", "workload", "model", "input", "resolution", "style")
SWEEP_KEYS = ("batch_size", "batch", "threads", "streams")
PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f"]


def _number(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def _rate_keys(record):
    """The throughputs a record holds: its one named rate, else every *_per_s number (a row of several peers)."""
    for key in RATE_KEYS:
        if _number(record.get(key)):
            return [key]
    return [k for k, v in record.items() if k.endswith("_per_s") and _number(v)]


def measurements(results):
    """Every throughput in the results, as {series, group, sweep, sweep_key, rate, rate_key}, in document order."""
    found = []

    def visit(node, path):
        if isinstance(node, dict):
            rate_keys = _rate_keys(node)
            if rate_keys:
                named = [str(p) for p in path if isinstance(p, str) and p not in ("results", "benchmark_results")]
                series = next((str(node[k]) for k in SERIES_KEYS if isinstance(node.get(k), (str, bool))), None)
                groups = [str(node[k]) for k in GROUP_KEYS if isinstance(node.get(k), (str, numbers.Real))]
                if _number(node.get("width")) and _number(node.get("height")):
                    groups.append(f"{node['width']:g}x{node['height']:g}")
                if series is None and named and len(rate_keys) == 1:
                    series = named.pop()
                group = " ".join(groups) if groups else " ".join(named)
                sweep_key = next((k for k in SWEEP_KEYS if _number(node.get(k))), None)
                for rate_key in rate_keys:
                    # several rates in one record: each is its own series, named by its key
                    name = series if len(rate_keys) == 1 else rate_key.replace("_images_per_s", "").replace("_per_s", "")
                    found.append({"series": name or "", "group": group, "rate": float(node[rate_key]),
                                  "rate_key": rate_key if len(rate_keys) == 1 else "per second",
                                  "sweep_key": sweep_key, "sweep": float(node[sweep_key]) if sweep_key else None})
                return
            for key, value in node.items():
                visit(value, path + [key])
        elif isinstance(node, list):
            for index, value in enumerate(node):
                visit(value, path + [index])

    visit(results, [])
    return found


def _colors(names):
    colors = {}
    for name in names:
        colors.setdefault(name, PALETTE[len(colors) % len(PALETTE)])
    return colors


def _pixels(fig, x, y):
    """Display coordinates (origin bottom-left) as the saved picture's pixels (origin top-left)."""
    return [round(float(x), 1), round(fig.bbox.height - float(y), 1)]


def plot(results, path, title=None):
    """Draws `results` (a benchmark's JSON, as loaded) into `path` (PNG); returns the layout (see --layout)."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot

    found = measurements(results)
    if not found:
        raise ValueError("no measurement with a throughput (img_per_s, images_per_s, fps, ...*_per_s) in the results")
    rate_key = found[0]["rate_key"]
    swept = [m for m in found if m["sweep_key"]]
    sweep_values = {m["sweep"] for m in swept}
    if title is None and isinstance(results, dict):
        title = results.get("benchmark")
    layout = {"kind": "", "rate": rate_key, "marks": []}
    if len(sweep_values) >= 2:  # one small plot per group (op and size), a line per series (backend, peer)
        layout["kind"] = "lines"
        groups = {}
        for m in swept:
            groups.setdefault(m["group"], {}).setdefault(m["series"], []).append(m)
        colors = _colors(m["series"] for m in swept)
        columns = min(3, len(groups))
        rows = math.ceil(len(groups) / columns)
        size = (6.4, 4.0) if len(groups) == 1 else (4.2 * columns, 3.0 * rows + 0.6)
        fig, axes = pyplot.subplots(rows, columns, figsize=size, dpi=100, squeeze=False)
        for ax in axes.flat[len(groups):]:
            ax.set_visible(False)
        log_x = max(sweep_values) / max(min(sweep_values), 1e-9) >= 10
        for ax, (group, lines) in zip(axes.flat, groups.items()):
            for name, marks in lines.items():
                marks.sort(key=lambda m: m["sweep"])
                ax.plot([m["sweep"] for m in marks], [m["rate"] for m in marks], "o-", color=colors[name], label=name)
            if log_x:
                ax.set_xscale("log")
            ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
            ax.set_title(group, fontsize=9)
            ax.set_xlabel(swept[0]["sweep_key"], fontsize=8)
            ax.set_ylabel(rate_key, fontsize=8)
            ax.tick_params(labelsize=7)
        heading = title or f"{rate_key} by {swept[0]['sweep_key']}"
        if len(groups) == 1:
            axes.flat[0].legend(fontsize=8)
            axes.flat[0].set_title(" ".join(p for p in (heading, next(iter(groups))) if p), fontsize=10)
            fig.tight_layout()
        else:
            handles, names = axes.flat[0].get_legend_handles_labels()
            fig.legend(handles, names, loc="upper right", fontsize=8)
            fig.suptitle(heading, fontsize=11)
            fig.tight_layout(rect=(0, 0, 0.94, 1 - 0.45 / fig.get_figheight()))
        fig.canvas.draw()
        for ax, (group, lines) in zip(axes.flat, groups.items()):
            for name, marks in lines.items():
                points = ax.transData.transform([(m["sweep"], m["rate"]) for m in marks])
                layout["marks"].append({"label": " ".join(p for p in (group, name) if p), "color": colors[name],
                                        "points": [_pixels(fig, x, y) for x, y in points],
                                        "values": [[m["sweep"], m["rate"]] for m in marks]})
    else:
        layout["kind"] = "bars"
        colors = _colors(m["series"] for m in found)
        labels = [" · ".join(p for p in (m["group"], m["series"]) if p) or str(i) for i, m in enumerate(found)]
        fig, ax = pyplot.subplots(figsize=(8, 1.2 + 0.28 * len(found)), dpi=100)
        bars = ax.barh(range(len(found)), [m["rate"] for m in found], color=[colors[m["series"]] for m in found])
        ax.set_yticks(range(len(found)), labels, fontsize=8)
        ax.invert_yaxis()
        rates = [m["rate"] for m in found if m["rate"] > 0]
        log_x = bool(rates) and max(rates) / min(rates) > 50  # values far apart: ratios as equal distances
        if log_x:
            ax.set_xscale("log")
        layout["x_scale"] = "log" if log_x else "linear"
        ax.set_xlabel(rate_key + (" (log scale)" if log_x else ""))
        ax.grid(axis="x", alpha=0.3)
        ax.set_axisbelow(True)  # grid lines behind the bars
        for bar, m in zip(bars, found):
            ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, f" {m['rate']:,.0f}", va="center", fontsize=7)
        if len(colors) > 1:
            from matplotlib.patches import Patch
            ax.legend(handles=[Patch(color=c, label=n or "-") for n, c in colors.items()], fontsize=8,
                      loc="upper left", bbox_to_anchor=(1.01, 1))  # beside the bars, never over one
        ax.set_title(title or rate_key)
        fig.tight_layout()
        fig.canvas.draw()
        for bar, m, label in zip(bars, found, labels):
            box = bar.get_window_extent()
            layout["marks"].append({"label": label, "value": m["rate"], "color": colors[m["series"]],
                                    "box": _pixels(fig, box.x0, box.y1) + _pixels(fig, box.x1, box.y0)})
    fig.savefig(path, dpi=fig.dpi)
    pyplot.close(fig)
    return layout


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", help="a benchmark's JSON file")
    parser.add_argument("output", help="the PNG to write")
    parser.add_argument("--title", default=None)
    parser.add_argument("--layout", default=None, help="also write where each mark went (JSON)")
    args = parser.parse_args(argv)
    with open(args.results) as f:
        results = json.load(f)
    layout = plot(results, args.output, args.title)
    if args.layout:
        with open(args.layout, "w") as f:
            json.dump(layout, f)


if __name__ == "__main__":
    main()
