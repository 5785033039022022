"""Series inputs (pandas DataFrame / Series or numpy arrays) as the float arrays the C++ core reads."""
import numpy as np

from ._kiln import KilnValueError

OHLC_COLUMNS = ("Open", "High", "Low", "Close")
# Chart styles, and those drawn from Open/High/Low/Close rows (kiln's names and aliases).
STYLES = ("line", "ohlc", "bars", "candlestick", "candles", "gasf", "gadf", "mtf", "rp")
ENCODING_STYLES = ("gasf", "gadf", "mtf", "rp")
BAR_STYLES = ("ohlc", "bars", "candlestick", "candles")


def _find_column(frame, name):
    for col in frame.columns:
        if str(col).lower() == name.lower():
            return col
    raise KilnValueError(f"DataFrame has no '{name}' column (columns: {', '.join(map(str, frame.columns))})")


def series_array(data, ohlc=False, column="Close"):
    """Returns (array, column label). DataFrames give `column` (case-insensitive), or Open/High/Low/Close as (N, 4)
    when `ohlc`. Arrays are passed through as (N,) or (N, 4); C-contiguous float32 stays uncopied."""
    if hasattr(data, "columns"):  # pandas DataFrame
        if ohlc:
            cols = [_find_column(data, name) for name in OHLC_COLUMNS]
            return np.ascontiguousarray(data[cols].to_numpy(dtype=np.float32)), ",".join(OHLC_COLUMNS)
        col = _find_column(data, column)
        return np.ascontiguousarray(data[col].to_numpy(dtype=np.float32)), str(col)
    if hasattr(data, "to_numpy"):  # pandas Series
        data = data.to_numpy()
    arr = np.asarray(data)
    if arr.dtype.kind not in "fiu":
        raise KilnValueError(f"series must be numeric, got dtype {arr.dtype}")
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if not (arr.ndim == 1 or (arr.ndim == 2 and arr.shape[1] == 4)):
        raise KilnValueError(f"series must have shape (N,) or (N, 4), got {arr.shape}")
    if ohlc and arr.ndim != 2:
        raise KilnValueError("style 'ohlc' needs a (N, 4) Open/High/Low/Close series")
    if arr.dtype != np.float32 or not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr, dtype=np.float32)
    return arr, ("Open,High,Low,Close" if arr.ndim == 2 else "array")


def volume_array(data, volume):
    """The volume a chart draws, (N,) float32, or None. volume: None/False (none), True (a DataFrame's Volume column,
    or the last column of an (N, 2) / (N, 5) array), or an array-like of N values."""
    if volume is None or volume is False:
        return None
    if volume is True:
        if hasattr(data, "columns"):
            return np.ascontiguousarray(data[_find_column(data, "Volume")].to_numpy(dtype=np.float32))
        arr = np.asarray(data)
        if not (arr.ndim == 2 and arr.shape[1] in (2, 5)):
            raise KilnValueError(f"volume=True needs a DataFrame with Volume or an (N, 2) / (N, 5) array, got {arr.shape}")
        return np.ascontiguousarray(arr[:, -1], dtype=np.float32)
    if hasattr(volume, "to_numpy"):
        volume = volume.to_numpy()
    return np.ascontiguousarray(np.asarray(volume).reshape(-1), dtype=np.float32)
