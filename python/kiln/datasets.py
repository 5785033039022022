"""ChartDataset: a map-style dataset that renders chart images on the fly (no storage)."""
import numpy as np

from . import _kiln
from ._kiln import KilnValueError
from ._series import BAR_STYLES, STYLES, series_array


class ChartDataset:
    """Windows of one series, rendered on access; usable as a torch map-style dataset.

    series: numpy array (N,) or (N, 4), or a DataFrame with Close (Open/High/Low/Close for styles "ohlc" and
    "candlestick").
    Windows containing NaN/inf are skipped. With label_horizon > 0 an item is (image, label): label_threshold
    None gives 1 = up / 0 = not up after label_horizon rows; a threshold >= 0 gives 0 down / 1 flat / 2 up.
    dtype "uint8" (0..255, white background) or "float32" (0..1). Windows are views into the stored series (it is
    copied once, to C-contiguous float32). mode: "cpu" by default, the safe choice in forked DataLoader workers.
    Picklable: holds only numpy arrays and plain parameters.
    """

    def __init__(self, series, seq_len=100, stride=1, width=224, height=224, line_width=2.0, style="line",
                 label_horizon=0, label_threshold=None, dtype="uint8", mode="cpu"):
        if style not in STYLES:
            raise KilnValueError(f"style must be one of {', '.join(STYLES)}; got '{style}'")
        if dtype not in ("uint8", "float32"):
            raise KilnValueError(f"dtype must be 'uint8' or 'float32', got '{dtype}'")
        self.series, self.column = series_array(series, ohlc=(style in BAR_STYLES))
        self.seq_len = int(seq_len)
        self.stride = int(stride)
        self.width = int(width)
        self.height = int(height)
        self.line_width = float(line_width)
        self.style = style
        self.label_horizon = int(label_horizon)
        self.label_threshold = label_threshold
        self.dtype = dtype
        self.mode = mode
        self.starts, self.labels, self.skipped = _kiln.window_plan(
            self.series, seq_len=self.seq_len, stride=self.stride, label_horizon=self.label_horizon,
            label_threshold=label_threshold, ohlc=(style in BAR_STYLES))

    def __len__(self):
        return int(self.starts.shape[0])

    def _render(self, starts):
        return _kiln.render_windows(self.series, starts, self.seq_len, width=self.width, height=self.height,
                                    line_width=self.line_width, style=self.style, mode=self.mode, threads=1,
                                    dtype=self.dtype)

    def _index(self, i):
        n = len(self)
        i = int(i)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"ChartDataset index {i} out of range for {n} windows")
        return i

    def __getitem__(self, i):
        i = self._index(i)
        image = self._render(self.starts[i:i + 1])[0]
        if self.labels is not None:
            return image, int(self.labels[i])
        return image

    def get_batch(self, indices):
        """Images (B, H, W) for `indices` (with labels as a second array when labelled), rendered in one call."""
        idx = np.asarray([self._index(i) for i in np.asarray(indices).reshape(-1)], dtype=np.int64)
        images = _kiln.render_windows(self.series, self.starts[idx], self.seq_len, width=self.width,
                                      height=self.height, line_width=self.line_width, style=self.style,
                                      mode=self.mode, threads=0, dtype=self.dtype)
        if self.labels is not None:
            return images, self.labels[idx]
        return images

    def window(self, i):
        """The raw values of window i (a view into the series)."""
        start = int(self.starts[self._index(i)])
        return self.series[start:start + self.seq_len]

    def __repr__(self):
        return (f"ChartDataset({len(self)} windows, seq_len={self.seq_len}, stride={self.stride}, "
                f"{self.width}x{self.height}, style={self.style!r}, skipped={self.skipped})")
