"""Datasets on disk: create_images_from_data (the predecessor's entry point, on kiln's pipeline) and open()."""
import builtins
import json
import os
import sys

from . import _kiln
from ._kiln import KilnValueError
from ._series import BAR_STYLES, series_array

PLUGIN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hdf5-plugins")

# The predecessor's code defaults (its config.yaml says hdf5; its code says jpeg).
DEFAULT_RESOLUTION = {"width": 800, "height": 500, "dpi": 100}
DEFAULT_STORAGE = {"format": "jpeg", "mode": "single", "images_per_file": 50000}
DEFAULT_RENDERING = {"mode": "auto", "gpu_batch_size": 1000, "fallback_on_error": True}

_FORMATS = {"hdf5": "hdf5", "h5": "hdf5", "jpeg": "jpeg", "jpg": "jpeg", "png": "png", "npy": "npy"}
_HDF5_DATASETS = ("images", "sequences", "index", "labels")


def _merged(defaults, given, what):
    if given is None:
        return dict(defaults)
    if not isinstance(given, dict):
        raise KilnValueError(f"{what} must be a dict, got {type(given).__name__}")
    return {**defaults, **given}


def _write_metadata(output_path, fmt, metadata):
    text = json.dumps(metadata, default=str, sort_keys=True)
    if fmt == "hdf5":
        h5py = _h5py()
        with h5py.File(output_path, "r+") as f:
            f.attrs["metadata"] = text
    elif fmt == "npy":
        stem = output_path[:-4] if output_path.endswith(".npy") else output_path
        with builtins.open(stem + ".metadata.json", "w", encoding="utf-8") as f:
            f.write(text + "\n")
    else:
        with builtins.open(os.path.join(output_path, "metadata.json"), "w", encoding="utf-8") as f:
            f.write(text + "\n")


def create_images_from_data(data, output_path, seq_len=100, line_width=3, batch_size=10000, resolution=None,
                            storage_config=None, metadata=None, rendering_config=None):
    """Render every stride-1 window of `data` (a DataFrame with a Close column, case-insensitive, or a numpy
    array (N,) / (N, 4)) to `output_path` and return that path.

    resolution: {width, height, dpi} (default 800x500 @ 100). storage_config: {format: hdf5|h5|jpeg|png|npy,
    mode: single|batch, images_per_file} (default jpeg, single; 'batch' shards HDF5 into images_per_file images
    per file); kiln extras: compression (zstd|gzip|none), jpeg_quality, overwrite. rendering_config: {mode:
    auto|gpu|cpu, gpu_batch_size (kiln's batch size), fallback_on_error}; kiln extras: style, stride, threads,
    label_horizon, label_threshold. batch_size (the predecessor's CPU chunk) is accepted; kiln batches
    internally. metadata (dict) is stored as JSON: the `metadata` attribute of an HDF5 file, metadata.json in an
    image folder, {stem}.metadata.json next to an .npy. An existing output raises KilnValueError.
    """
    del batch_size  # kiln's batching is internal (rendering_config['gpu_batch_size'] sets its batch size)
    res = _merged(DEFAULT_RESOLUTION, resolution, "resolution")
    storage = _merged(DEFAULT_STORAGE, storage_config, "storage_config")
    rendering = _merged(DEFAULT_RENDERING, rendering_config, "rendering_config")
    if metadata is not None and not isinstance(metadata, dict):
        raise KilnValueError(f"metadata must be a dict, got {type(metadata).__name__}")

    fmt_name = str(storage.get("format", "jpeg")).lower()
    if fmt_name in ("npz", "zarr"):
        raise KilnValueError(f"storage format '{fmt_name}' is not supported by kiln; use hdf5, jpeg, png or npy")
    if fmt_name not in _FORMATS:
        raise KilnValueError(f"unknown storage format '{fmt_name}' (hdf5, h5, jpeg, png, npy)")
    fmt = _FORMATS[fmt_name]
    storage_mode = str(storage.get("mode", "single")).lower()
    if storage_mode not in ("single", "batch"):
        raise KilnValueError(f"storage mode must be 'single' or 'batch', got '{storage_mode}'")
    images_per_file = int(storage.get("images_per_file", 0)) if storage_mode == "batch" and fmt == "hdf5" else 0

    style = str(rendering.get("style", "line"))
    series, column = series_array(data, ohlc=(style in BAR_STYLES))
    output_path = os.fspath(output_path)
    _kiln.render_job(
        series,
        output=output_path,
        format=fmt,
        compression=str(storage.get("compression", "zstd")),
        images_per_file=images_per_file,
        seq_len=int(seq_len),
        stride=int(rendering.get("stride", 1)),
        line_width=float(line_width),
        width=int(res["width"]),
        height=int(res["height"]),
        dpi=int(res.get("dpi", 100)),
        style=style,
        mode=str(rendering.get("mode", "auto")),
        batch_size=int(rendering.get("gpu_batch_size", 1000)),
        threads=int(rendering.get("threads", 0)),
        fallback_on_error=bool(rendering.get("fallback_on_error", True)),
        label_horizon=int(rendering.get("label_horizon", 0)),
        label_threshold=rendering.get("label_threshold"),
        overwrite=bool(storage.get("overwrite", False)),
        jpeg_quality=int(storage.get("jpeg_quality", 95)),
        column=column,
        source="<python>" if not hasattr(data, "columns") else "<DataFrame>",
    )
    if metadata is not None:
        _write_metadata(output_path, fmt, metadata)
    return output_path


def register_hdf5_plugin():
    """Puts kiln's zstd filter plugin on h5py's search path, so that h5py reads kiln's files without the user setting
    HDF5_PLUGIN_PATH: through h5py when it is already imported, otherwise through HDF5_PLUGIN_PATH, which HDF5 reads
    when h5py first loads it (and which programs started from here, such as h5dump, inherit)."""
    if not os.path.isdir(PLUGIN_DIR):
        return
    h5py = sys.modules.get("h5py")
    if h5py is not None:
        plugin_dir = os.fsencode(PLUGIN_DIR)
        if plugin_dir not in [h5py.h5pl.get(i) for i in range(h5py.h5pl.size())]:
            h5py.h5pl.prepend(plugin_dir)
        return
    paths = [p for p in os.environ.get("HDF5_PLUGIN_PATH", "").split(os.pathsep) if p]
    if PLUGIN_DIR not in paths:
        os.environ["HDF5_PLUGIN_PATH"] = os.pathsep.join([PLUGIN_DIR, *paths])


def _h5py():
    """h5py with kiln's zstd filter plugin on its search path."""
    import h5py

    register_hdf5_plugin()
    return h5py


class KilnFile:
    """A kiln HDF5 dataset opened for reading: .images (N, H, W), .sequences, .index, .labels (h5py datasets, or
    None when absent), .attrs (dict of root attributes). Use as a context manager or call close()."""

    def __init__(self, path):
        h5py = _h5py()
        self.path = os.fspath(path)
        self.file = h5py.File(self.path, "r")
        for name in _HDF5_DATASETS:
            setattr(self, name, self.file[name] if name in self.file else None)
        self.attrs = {key: _attr_value(value) for key, value in self.file.attrs.items()}

    def __len__(self):
        return 0 if self.images is None else int(self.images.shape[0])

    def close(self):
        if self.file is not None:
            self.file.close()
            self.file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"<kiln.KilnFile {self.path!r}: {len(self)} images>"


def _attr_value(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def open(path):  # noqa: A001 (kiln.open, like h5py.File)
    """Open a kiln HDF5 dataset (zstd, gzip or uncompressed; single file or sharded VDS) for reading."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise _kiln.KilnIOError(f"{path}: no such file")
    return KilnFile(path)
