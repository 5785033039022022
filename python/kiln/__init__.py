"""kiln: chart images from sliding windows of price series, and batched image processing.

Every function runs in kiln's C++ core (CPU, CUDA or OpenCL) and takes the same settings, by the same names, as
the command line (`kiln render --help`, `kiln quality --help`, ...); errors are raised as :class:`KilnError` subclasses that
also derive from the matching builtin (``KilnValueError`` is a ``ValueError``, ``KilnIOError`` an ``OSError``, ...).
"""
import json as _json

from . import _kiln
from ._kiln import (
    DeviceArray,
    KilnDeviceError,
    KilnError,
    KilnIOError,
    KilnMemoryError,
    KilnNotImplementedError,
    KilnValueError,
    devices_json,
    to_device,
)
from ._kiln import version as __version__
from ._params import declared as _declared

render = _declared(_kiln.render, "render", positional=["windows"])
render_windows = _declared(_kiln.render_windows, "render_windows", positional=["series", "starts", "seq_len"])
window_plan = _declared(_kiln.window_plan, "window_plan", positional=["series"],
                        explicit=[("ohlc", False), ("layers", 0)])
chart_series = _kiln.chart_series
render_job = _declared(_kiln.render_job, "render_job", positional=[("series", None)],
                       explicit=[("config", None), ("source", "<array>")])
merge = _declared(_kiln.merge, "merge", positional=["pieces"])
quality = _declared(_kiln.quality, "quality", positional=["images"])
preprocess = _declared(_kiln.preprocess, "preprocess", positional=["images"])
Model = getattr(_kiln, "Model", None)  # None when kiln is built without ONNX Runtime
# fp16 / int8 copies of models (None without ONNX Runtime and libonnx)
model_convert = (_declared(_kiln.model_convert, "model_convert", positional=["model", ("calibrate", [])])
                 if hasattr(_kiln, "model_convert") else None)
model_quantize = (_declared(_kiln.model_quantize, "model_quantize", positional=["model", "calibrate"],
                            explicit=[("exclude", [])]) if hasattr(_kiln, "model_quantize") else None)
# kiln faces over image files (None without ONNX Runtime and faiss)
faces_job = _declared(_kiln.faces_job, "faces_job", positional=["inputs"]) if hasattr(_kiln, "faces_job") else None


def models():
    """The packaged models (name, task, input and outputs, file, size, licence, source package), as `kiln models`."""
    import builtins
    import os
    path = os.path.join(_kiln.models_dir(), "catalog.json")
    with builtins.open(path) as f:  # kiln.open is the dataset reader
        catalog = _json.load(f)["models"]
    for entry in catalog:
        entry["file"] = os.path.join(_kiln.models_dir(), entry["file"])
    return catalog


try:  # kiln.SegmentPipeline, kiln.segment: only when built with ONNX Runtime and FFmpeg
    from .segment import SegmentPipeline, SegmentResult, segment
except ImportError:
    SegmentPipeline = SegmentResult = segment = None

from .client import Client  # a `kiln serve` worker called like kiln.faces and kiln.Model
from .serve import serve  # starts one
from . import bench_plot  # kiln.bench_plot.plot(results, path): a benchmark's JSON as a picture (matplotlib on use)
from .datasets import ChartDataset
from .storage import KilnFile, create_images_from_data, open, register_hdf5_plugin  # noqa: A004 (kiln.open, like h5py.File)

register_hdf5_plugin()  # h5py reads kiln's zstd datasets after `import kiln`

__all__ = [
    "ChartDataset",
    "Client",
    "DeviceArray",
    "KilnDeviceError",
    "KilnError",
    "KilnFile",
    "KilnIOError",
    "KilnMemoryError",
    "KilnNotImplementedError",
    "KilnValueError",
    "Model",
    "SegmentPipeline",
    "SegmentResult",
    "__version__",
    "chart_series",
    "create_images_from_data",
    "devices",
    "faces_job",
    "merge",
    "model_convert",
    "model_quantize",
    "models",
    "open",
    "preprocess",
    "quality",
    "render",
    "render_job",
    "render_windows",
    "segment",
    "serve",
    "to_device",
    "window_plan",
]


def devices():
    """Backends in priority order (CPU last) with their devices and memory, as `kiln devices --json` prints them."""
    return _json.loads(devices_json())["backends"]


def __getattr__(name):
    # kiln.distributed (Dask) is loaded on first use: `import kiln` stays cheap where Dask is not installed.
    if name == "distributed":
        import importlib
        return importlib.import_module(".distributed", __name__)
    raise AttributeError(f"module 'kiln' has no attribute {name!r}")
