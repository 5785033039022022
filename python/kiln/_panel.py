"""A long-format DataFrame of many symbols laid out as `kiln render` lays out a panel: symbols sorted, each on the
panel's calendar (the union of the dates) from its first to its last date, absent dates as rows of NaN."""
import numpy as np

from ._kiln import KilnValueError
from ._series import OHLC_COLUMNS, _find_column

SYMBOL_ALIASES = ("Symbol", "Ticker", "PERMNO", "StockID")


def _yyyymmdd(values):
    """Dates (datetime64, pandas Timestamps, 'yyyy-mm-dd' text or yyyymmdd integers) as int32 yyyymmdd."""
    arr = np.asarray(values)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int32)
    days = np.asarray(arr, dtype="datetime64[D]")
    text = np.datetime_as_string(days, unit="D")
    return np.char.replace(text.astype("U10"), "-", "").astype(np.int32)


def panel_frame(frame, symbol_column, ohlc, column, volume, market_cap_column, date_column="Date"):
    """Returns dict(prices (N, P) float32, volume (N,) float32 or None, market_cap (N,) float64 or None, symbols,
    symbol_rows (S + 1,) int64, dates (N,) int32 yyyymmdd, absent_days)."""
    if not hasattr(frame, "columns"):
        raise KilnValueError("symbol_column needs a long-format DataFrame (a symbol, a Date and the price columns)")
    names = [symbol_column] if symbol_column is not True else list(SYMBOL_ALIASES)
    found = [c for name in names for c in frame.columns if str(c).lower() == name.lower()]
    if not found:
        raise KilnValueError(f"DataFrame has no symbol column '{'/'.join(names)}'")
    symbols_of_row = frame[found[0]].astype(str).to_numpy()
    dates = _yyyymmdd(frame[_find_column(frame, date_column)].to_numpy())
    price_columns = [_find_column(frame, c) for c in (OHLC_COLUMNS if ohlc else (column,))]
    prices = frame[price_columns].to_numpy(dtype=np.float32)
    vol = frame[_find_column(frame, "Volume")].to_numpy(dtype=np.float32) if volume is True else None
    cap = frame[_find_column(frame, market_cap_column)].to_numpy(dtype=np.float64) if market_cap_column else None

    symbols, code = np.unique(symbols_of_row, return_inverse=True)
    order = np.lexsort((dates, code))
    code, dates_sorted = code[order], dates[order]
    twice = np.flatnonzero((code[1:] == code[:-1]) & (dates_sorted[1:] == dates_sorted[:-1]))
    if len(twice):
        raise KilnValueError(f"symbol {symbols[code[twice[0]]]} has the date {dates_sorted[twice[0]]} twice")
    calendar = np.unique(dates)
    position = np.searchsorted(calendar, dates_sorted)
    first = np.full(len(symbols), np.iinfo(np.int64).max)
    last = np.zeros(len(symbols), dtype=np.int64)
    np.minimum.at(first, code, position)
    np.maximum.at(last, code, position)
    symbol_rows = np.concatenate([[0], np.cumsum(last - first + 1)]).astype(np.int64)
    target = symbol_rows[code] + position - first[code]  # each row's place in the panel
    n = int(symbol_rows[-1])

    def placed(values, dtype):
        out = np.full((n,) + values.shape[1:], np.nan, dtype=dtype)
        out[target] = values[order]
        return out

    panel_dates = np.concatenate([calendar[f:l + 1] for f, l in zip(first, last)]).astype(np.int32)
    return dict(prices=placed(prices, np.float32), volume=None if vol is None else placed(vol, np.float32),
                market_cap=None if cap is None else placed(cap, np.float64), symbols=[str(s) for s in symbols],
                symbol_rows=symbol_rows, dates=panel_dates, absent_days=n - len(frame))


def window_table(panel, closes, starts, seq_len):
    """Each window's symbol, start and end date, returns 5/20/60 rows after its last day within its symbol, and the
    market cap on its last day (NaN without one), as `kiln render` stores them."""
    rows = panel["symbol_rows"]
    symbol = np.searchsorted(rows, starts, side="right") - 1
    end = starts + seq_len - 1
    limit = rows[symbol + 1]
    table = dict(symbol=np.asarray(panel["symbols"], dtype=object)[symbol], start_date=panel["dates"][starts],
                 end_date=panel["dates"][end])
    c = closes.astype(np.float64)
    for days in (5, 20, 60):
        later = end + days
        ok = later < limit
        ret = np.full(len(starts), np.nan)
        ret[ok] = c[later[ok]] / c[end[ok]] - 1.0
        table[f"ret_{days}d"] = ret
    cap = panel["market_cap"]
    table["market_cap"] = np.full(len(starts), np.nan) if cap is None else cap[end]
    return table
