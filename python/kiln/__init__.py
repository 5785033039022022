"""kiln: chart images from sliding windows of price series.

Rendering runs in kiln's C++ core (CPU, CUDA or OpenCL); errors are raised as :class:`KilnError` subclasses that
also derive from the matching builtin (``KilnValueError`` is a ``ValueError``, ``KilnIOError`` an ``OSError``, ...).
"""
import json as _json

from ._kiln import (
    KilnDeviceError,
    KilnError,
    KilnIOError,
    KilnMemoryError,
    KilnNotImplementedError,
    KilnValueError,
    devices_json,
    preprocess,
    quality,
    render,
    render_windows,
    window_plan,
)
from ._kiln import version as __version__
from .datasets import ChartDataset
from .storage import KilnFile, create_images_from_data, open  # noqa: A004 (kiln.open, like h5py.File)

__all__ = [
    "ChartDataset",
    "KilnDeviceError",
    "KilnError",
    "KilnFile",
    "KilnIOError",
    "KilnMemoryError",
    "KilnNotImplementedError",
    "KilnValueError",
    "__version__",
    "create_images_from_data",
    "devices",
    "open",
    "preprocess",
    "quality",
    "render",
    "render_windows",
    "window_plan",
]


def devices():
    """Backends in priority order (CPU last) with their devices and memory, as `kiln devices --json` prints them."""
    return _json.loads(devices_json())["backends"]
