"""ChartDataset: a map-style dataset that renders chart images on the fly (no storage)."""
import numpy as np

from . import _kiln
from ._kiln import KilnValueError
from ._panel import panel_frame, window_table
from ._series import BAR_STYLES, ENCODING_STYLES, OHLC_COLUMNS, STYLES, series_array, volume_array

# Jiang, Kelly and Xiu's images (kiln render --preset): days, height; width 3 px a day.
PRESETS = {"jkx5": (5, 32), "jkx20": (20, 64), "jkx60": (60, 96)}


class ChartDataset:
    """Windows of one series, rendered on access; usable as a torch map-style dataset.

    series: numpy array (N,) or (N, 4), or a DataFrame with Close (Open/High/Low/Close for styles "ohlc" and
    "candlestick").
    Windows containing NaN/inf are skipped. With label_horizon > 0 an item is (image, label): label_threshold
    None gives 1 = up / 0 = not up after label_horizon rows; a threshold >= 0 gives 0 down / 1 flat / 2 up.
    dtype "uint8" (0..255, white background) or "float32" (0..1). Windows are views into the stored series (it is
    copied once, to C-contiguous float32). mode: "cpu" by default, the safe choice in forked DataLoader workers.
    volume: True (a DataFrame's Volume column, or the last column of an (N, 2) / (N, 5) array) or an (N,) array:
    a volume panel at the bottom. moving_average: window lengths of moving-average lines (as `kiln render
    --moving-average`: a window's first days average the rows before it; windows without that history are skipped).
    preset: "jkx5", "jkx20" or "jkx60", Jiang-Kelly-Xiu's images (as `kiln render --preset`; sets seq_len, style,
    size, inks, volume and the moving average). volume_height (0: a fifth of the height), volume_gap and bar_gap
    (False: OHLC bars 3 sub-columns a day) as in `kiln render`.
    color=True: RGB images (H, W, 3) as `kiln render --color`, in mplfinance-like colours unless color_background,
    color_line, color_up, color_down, color_volume_up, color_volume_down ("#rrggbb") or color_averages (a comma list)
    are given; not for the encodings.
    style "gasf", "gadf", "mtf" or "rp": the window's closes as a Gramian angular field, Markov transition field
    (mtf_bins quantile bins) or recurrence plot (rp_threshold >= 0: binary), width and height None = seq_len (else
    224); windows whose closes are all equal are skipped, as by `kiln render`.
    symbol_column: a long-format DataFrame of many symbols (a symbol column, a Date column, the prices; True looks
    for Symbol, Ticker, PERMNO or StockID): windows per symbol, never across two, laid out as `kiln render` lays out
    a panel (symbols sorted, each on the union of the dates); meta(i) gives window i's symbol, dates, returns and
    market cap (market_cap_column). missing_days: "skip" (a window with a NaN value or an absent date is skipped) or
    "fill" (a flat bar at the symbol's last close with zero volume), as `kiln render --missing-days`; the counts are
    in .missing.
    Picklable: holds only numpy arrays and plain parameters.
    """

    def __init__(self, series, seq_len=100, stride=1, width=None, height=None, line_width=2.0, style="line",
                 label_horizon=0, label_threshold=None, dtype="uint8", mode="cpu", volume=None, moving_average=(),
                 preset=None, volume_height=0, volume_gap=2, bar_gap=True, mtf_bins=8, rp_threshold=-1.0, color=False,
                 color_background=None, color_line=None, color_up=None, color_down=None, color_volume_up=None,
                 color_volume_down=None, color_averages=None, symbol_column=None, market_cap_column=None,
                 missing_days="skip"):
        self.render_settings = dict(volume_height=int(volume_height), volume_gap=int(volume_gap), bar_gap=bool(bar_gap),
                                    mtf_bins=int(mtf_bins), rp_threshold=float(rp_threshold), color=bool(color))
        colors = dict(color_background=color_background, color_line=color_line, color_up=color_up,
                      color_down=color_down, color_volume_up=color_volume_up, color_volume_down=color_volume_down,
                      color_averages=color_averages)
        self.render_settings.update({k: str(v) for k, v in colors.items() if v is not None})
        if preset is not None:
            if preset not in PRESETS:
                raise KilnValueError(f"preset must be one of {', '.join(PRESETS)}; got '{preset}'")
            seq_len, height = PRESETS[preset]
            width, style, dtype, moving_average = 3 * seq_len, "ohlc", "uint8", (seq_len,)
            volume = True if volume is None else volume
            self.render_settings.update(bar_gap=False, background=0, ink=255, volume_height=0, volume_gap=2)
        if style not in STYLES:
            raise KilnValueError(f"style must be one of {', '.join(STYLES)}; got '{style}'")
        if dtype not in ("uint8", "float32"):
            raise KilnValueError(f"dtype must be 'uint8' or 'float32', got '{dtype}'")
        self.panel = None
        if symbol_column is not None:  # a long-format DataFrame of many symbols, laid out as kiln render does
            if volume not in (None, True, False):
                raise KilnValueError("a panel's volume is its DataFrame's Volume column (volume=True)")
            self.panel = panel_frame(series, symbol_column, style in BAR_STYLES, "Close", volume is True,
                                     market_cap_column)
            prices = self.panel["prices"]
            ohlc_prices = prices.shape[1] == 4
            self.series = prices if ohlc_prices else prices[:, 0]
            self.column = ",".join(OHLC_COLUMNS) if ohlc_prices else "Close"
            volume = self.panel["volume"]
        else:
            volume = volume_array(series, volume)
            if volume is not None and not (hasattr(series, "columns") or np.asarray(series).ndim == 1):
                series = np.asarray(series)[:, :-1]  # the volume was the array's last column
            self.series, self.column = series_array(series, ohlc=(style in BAR_STYLES))
        self.moving_average = [int(n) for n in moving_average]
        symbol_rows = None if self.panel is None else self.panel["symbol_rows"]
        self.missing = {}
        if volume is not None or self.moving_average or symbol_rows is not None or missing_days != "skip":
            self.series = _kiln.chart_series(self.series, volume, self.moving_average, symbol_rows=symbol_rows,
                                             missing_days=missing_days, counts=self.missing)
            if self.series.shape[1] == 1:
                self.series = self.series[:, 0]
        self.render_settings.update(volume=volume is not None, moving_averages=len(self.moving_average))
        layers = int(volume is not None) + len(self.moving_average)
        self.seq_len = int(seq_len)
        self.stride = int(stride)
        default_side = self.seq_len if style in ENCODING_STYLES else 224
        self.width = int(default_side if width is None else width)
        self.height = int(default_side if height is None else height)
        self.line_width = float(line_width)
        self.style = style
        self.label_horizon = int(label_horizon)
        self.label_threshold = label_threshold
        self.dtype = dtype
        self.mode = mode
        self.starts, self.labels, self.skipped = _kiln.window_plan(
            self.series, seq_len=self.seq_len, stride=self.stride, label_horizon=self.label_horizon,
            label_threshold=label_threshold, ohlc=(style in BAR_STYLES), layers=layers,
            skip_constant=(style in ENCODING_STYLES), symbol_rows=symbol_rows)
        if self.panel is not None:
            closes = self.series[:, 3 if style in BAR_STYLES else 0]
            self.table = window_table(self.panel, closes, self.starts, self.seq_len)

    def __len__(self):
        return int(self.starts.shape[0])

    def _render(self, starts):
        return _kiln.render_windows(self.series, starts, self.seq_len, width=self.width, height=self.height,
                                    line_width=self.line_width, style=self.style, mode=self.mode, threads=1,
                                    dtype=self.dtype, **self.render_settings)

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
        """Images (B, H, W), or (B, H, W, 3) in colour, for `indices` (with labels as a second array when labelled), rendered in one call."""
        idx = np.asarray([self._index(i) for i in np.asarray(indices).reshape(-1)], dtype=np.int64)
        images = _kiln.render_windows(self.series, self.starts[idx], self.seq_len, width=self.width,
                                      height=self.height, line_width=self.line_width, style=self.style,
                                      mode=self.mode, threads=0, dtype=self.dtype, **self.render_settings)
        if self.labels is not None:
            return images, self.labels[idx]
        return images

    def meta(self, i):
        """A panel's window i: symbol, start_date and end_date (yyyymmdd), ret_5d/20d/60d and market_cap, as the
        datasets of `kiln render`'s HDF5 output."""
        if self.panel is None:
            raise KilnValueError("meta() is for a panel (ChartDataset(frame, symbol_column=...))")
        i = self._index(i)
        return {name: values[i] for name, values in self.table.items()}

    def window(self, i):
        """The raw values of window i (a view into the series)."""
        start = int(self.starts[self._index(i)])
        return self.series[start:start + self.seq_len]

    def __repr__(self):
        return (f"ChartDataset({len(self)} windows, seq_len={self.seq_len}, stride={self.stride}, "
                f"{self.width}x{self.height}, style={self.style!r}, skipped={self.skipped})")
