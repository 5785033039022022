// CSV input for series_load_csv(): one mmap of the file, a single pass over the bytes, std::from_chars for
// numbers. Only the wanted columns are converted; other fields are skipped (quotes still honoured).

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "apps/render/series_panel.h"
#include "io/mapped_file.h"
#include "kiln/apps/render.h"

namespace kiln {

namespace {


char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  }
  return true;
}

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

// Shortens a cell for an error message.
std::string quote_cell(std::string_view s) {
  constexpr size_t kMaxShown = 40;
  std::string out = "'";
  if (s.size() > kMaxShown) {
    out.append(s.substr(0, kMaxShown));
    out += "...";
  } else {
    out.append(s);
  }
  return out + "'";
}

enum class CellParse { kOk, kNotNumber };

// Parses a trimmed cell: empty, nan and inf (any case, optional sign) give non-finite values.
// yyyymmdd of "yyyy-mm-dd", "yyyy/mm/dd", "yyyymmdd" (a time after it is ignored); 0 for anything else.
int32_t parse_date(std::string_view s) {
  int32_t digits[8];
  int32_t count = 0;
  size_t i = 0;
  for (; i < s.size() && count < 8; ++i) {
    const char ch = s[i];
    if (ch >= '0' && ch <= '9') {
      digits[count++] = ch - '0';
    } else if (!((ch == '-' || ch == '/') && (count == 4 || count == 6))) {
      return 0;
    }
  }
  if (count < 8 || (i < s.size() && s[i] >= '0' && s[i] <= '9')) return 0;
  int32_t value = 0;
  for (const int32_t d : digits) value = value * 10 + d;
  const int32_t month = value / 100 % 100;
  const int32_t day = value % 100;
  return month >= 1 && month <= 12 && day >= 1 && day <= 31 ? value : 0;
}

CellParse parse_cell(std::string_view s, float& out) {
  if (s.empty()) {
    out = std::numeric_limits<float>::quiet_NaN();
    return CellParse::kOk;
  }
  std::string_view body = s;
  bool negative = false;
  if (body.front() == '+' || body.front() == '-') {
    negative = body.front() == '-';
    body.remove_prefix(1);
  }
  if (body.empty()) return CellParse::kNotNumber;
  const char first = ascii_lower(body.front());
  if (first == 'n' || first == 'i') {
    if (iequals(body, "nan")) {
      out = std::numeric_limits<float>::quiet_NaN();
      return CellParse::kOk;
    }
    if (iequals(body, "inf") || iequals(body, "infinity")) {
      out = negative ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
      return CellParse::kOk;
    }
    return CellParse::kNotNumber;
  }
  if (body.front() == '-' || body.front() == '+') return CellParse::kNotNumber;  // "+-1", "--1"
  double value = 0.0;
  const char* begin = body.data();
  const char* end = body.data() + body.size();
  const auto [ptr, ec] = std::from_chars(begin, end, value, std::chars_format::general);
  if (ptr != end) return CellParse::kNotNumber;
  if (ec == std::errc::result_out_of_range) {
    // Overflow or underflow: strtod gives the IEEE answer (HUGE_VAL, or 0/denormal).
    const std::string copy(body);
    value = std::strtod(copy.c_str(), nullptr);
  } else if (ec != std::errc()) {
    return CellParse::kNotNumber;
  }
  out = static_cast<float>(negative ? -value : value);
  return CellParse::kOk;
}

// A price row is a few dozen bytes; a record this long is not one (a quoted field can span the whole file, and one
// with "" escapes would be copied whole).
constexpr int64_t kCsvRecordMaxBytes = 1 << 20;

// A single-pass CSV scanner over [m_pos, m_end). Tracks the physical line number for error messages.
class CsvScanner {
 public:
  CsvScanner(const char* begin, const char* end, char delim) : m_pos(begin), m_end(end), m_delim(delim) {}

  bool at_end() const { return m_pos >= m_end; }
  int64_t line() const { return m_line; }

  // Skips lines holding only spaces; returns false at the end of the data.
  bool skip_blank_lines() {
    while (m_pos < m_end) {
      const char* p = m_pos;
      while (p < m_end && (*p == ' ' || *p == '\r' || (*p == '\t' && m_delim != '\t'))) ++p;
      if (p >= m_end) {
        m_pos = m_end;
        return false;
      }
      if (*p != '\n') {
        m_record = p;
        return true;
      }
      m_pos = p + 1;
      ++m_line;
    }
    return false;
  }

  // Reads one field. `cell` is the trimmed content (quotes removed; "" unescaped through `scratch`).
  // `last` is set when the field ends its record. Returns false on an unterminated quote or stray text.
  bool next_field(std::string_view& cell, bool& last, std::string& scratch, std::string& error) {
    const char* p = m_pos;
    while (p < m_end && (*p == ' ' || (*p == '\t' && m_delim != '\t'))) ++p;
    if (p < m_end && *p == '"') {
      ++p;
      const char* start = p;
      bool escaped = false;
      for (;;) {
        const char* q = static_cast<const char*>(std::memchr(p, '"', static_cast<size_t>(m_end - p)));
        if (q == nullptr) {
          error = "unterminated quoted field";
          return false;
        }
        if (q - m_record > kCsvRecordMaxBytes) return record_too_long(error);
        if (q + 1 < m_end && q[1] == '"') {
          escaped = true;
          p = q + 2;
          continue;
        }
        m_line += std::count(start, q, '\n');
        if (escaped) {
          scratch.clear();
          for (const char* c = start; c < q; ++c) {
            scratch.push_back(*c);
            if (*c == '"') ++c;  // "" -> "
          }
          cell = trim(scratch);
        } else {
          cell = trim(std::string_view(start, static_cast<size_t>(q - start)));
        }
        p = q + 1;
        break;
      }
      while (p < m_end && is_blank(*p) && *p != m_delim) ++p;
      if (p < m_end && *p != m_delim && *p != '\n') {
        error = "unexpected text after a quoted field";
        return false;
      }
    } else {
      const char* start = p;
      while (p < m_end && *p != m_delim && *p != '\n') ++p;
      if (p - m_record > kCsvRecordMaxBytes) return record_too_long(error);
      cell = trim(std::string_view(start, static_cast<size_t>(p - start)));
    }
    if (p >= m_end) {
      last = true;
      m_pos = m_end;
    } else if (*p == '\n') {
      last = true;
      m_pos = p + 1;
      m_record = m_pos;
      ++m_line;
    } else {
      last = false;
      m_pos = p + 1;
    }
    return true;
  }

  // Skips the rest of the current record (after a field that was not the last one).
  bool skip_record(std::string& error) {
    std::string scratch;
    std::string_view cell;
    bool last = false;
    while (!last) {
      if (!next_field(cell, last, scratch, error)) return false;
    }
    return true;
  }

 private:
  static bool record_too_long(std::string& error) {
    error = "a record longer than " + std::to_string(kCsvRecordMaxBytes >> 20) + " MiB (not a price series CSV)";
    return false;
  }

  const char* m_pos;
  const char* m_end;
  const char* m_record = m_pos;  // where the current record began
  char m_delim;
  int64_t m_line = 1;
};

// ',' unless the header has none and uses tabs or semicolons instead.
char detect_delimiter(const char* begin, const char* end) {
  if (begin == end) return ',';
  const char* nl = static_cast<const char*>(std::memchr(begin, '\n', static_cast<size_t>(end - begin)));
  const std::string_view header(begin, static_cast<size_t>((nl != nullptr ? nl : end) - begin));
  if (header.find(',') != std::string_view::npos) return ',';
  if (header.find('\t') != std::string_view::npos) return '\t';
  if (header.find(';') != std::string_view::npos) return ';';
  return ',';
}

std::string column_list(const std::vector<std::string>& names) {
  constexpr size_t kMaxListed = 16;
  std::string out;
  for (size_t i = 0; i < names.size() && i < kMaxListed; ++i) {
    if (i > 0) out += ", ";
    out += names[i].empty() ? std::string("''") : names[i];
  }
  if (names.size() > kMaxListed) out += ", ... (" + std::to_string(names.size()) + " in all)";
  return out;
}

}  // namespace

Result<CsvRows> series_load_csv_rows(const std::string& path, const std::string& column, bool ohlc,
                                     const std::string& volume_column, const CsvPanelColumns& panel) {
  MappedFile file;
  KILN_TRY(file.open(path));
  const char* begin = file.chars();
  const char* end = begin + file.size();
  if (file.size() >= 3 && std::memcmp(begin, "\xEF\xBB\xBF", 3) == 0) begin += 3;

  CsvScanner scanner(begin, end, detect_delimiter(begin, end));
  if (!scanner.skip_blank_lines()) return io_error(path + ": empty file");

  // Header.
  const int64_t header_line = scanner.line();
  std::vector<std::string> names;
  {
    std::string scratch;
    std::string error;
    std::string_view cell;
    bool last = false;
    while (!last) {
      if (!scanner.next_field(cell, last, scratch, error)) {
        return io_error(path + ":" + std::to_string(header_line) + ": " + error);
      }
      names.emplace_back(cell);
    }
  }

  // Wanted columns: field index for each channel.
  std::vector<std::string> wanted;
  if (ohlc) {
    wanted = {"Open", "High", "Low", "Close"};
  } else {
    wanted = {column.empty() ? std::string("Close") : column};
  }
  if (!volume_column.empty()) wanted.push_back(volume_column);
  const int32_t channels = static_cast<int32_t>(wanted.size());
  std::vector<int64_t> field_of(wanted.size(), -1);
  for (size_t c = 0; c < wanted.size(); ++c) {
    const std::string_view want = trim(wanted[c]);
    for (size_t f = 0; f < names.size(); ++f) {
      if (iequals(names[f], want)) {
        field_of[c] = static_cast<int64_t>(f);
        break;
      }
    }
    if (field_of[c] < 0) {
      return invalid_argument(path + ":" + std::to_string(header_line) + ": no column '" + std::string(want) +
                              "' (columns: " + column_list(names) + ")");
    }
  }
  // A Date column (yyyy-mm-dd, yyyy/mm/dd or yyyymmdd) dates the rows; other spellings date them 0.
  int64_t date_field = -1;
  for (size_t f = 0; f < names.size() && date_field < 0; ++f) {
    if (iequals(names[f], "Date")) date_field = static_cast<int64_t>(f);
  }
  // A panel's symbol column (the first of the candidates present) and market-cap column.
  int64_t symbol_field = -1;
  for (const std::string& candidate : panel.symbol_columns) {
    for (size_t f = 0; f < names.size() && symbol_field < 0; ++f) {
      if (iequals(names[f], trim(candidate))) symbol_field = static_cast<int64_t>(f);
    }
    if (symbol_field >= 0) break;
  }
  if (symbol_field < 0 && panel.symbol_required) {
    return invalid_argument(path + ":" + std::to_string(header_line) + ": no symbol column '" +
                            panel.symbol_columns.front() + "' (columns: " + column_list(names) + ")");
  }
  int64_t cap_field = -1;
  for (size_t f = 0; f < names.size() && cap_field < 0 && !panel.market_cap_column.empty(); ++f) {
    if (iequals(names[f], trim(panel.market_cap_column))) cap_field = static_cast<int64_t>(f);
  }
  if (!panel.market_cap_column.empty() && cap_field < 0) {
    return invalid_argument(path + ":" + std::to_string(header_line) + ": no market-cap column '" +
                            panel.market_cap_column + "' (columns: " + column_list(names) + ")");
  }
  const int64_t max_price_field = *std::max_element(field_of.begin(), field_of.end());
  const int64_t max_field = std::max({max_price_field, date_field, symbol_field, cap_field});
  // channel_of[f]: which channel field f feeds, kDateChannel, kSymbolChannel, kCapChannel or -1.
  constexpr int32_t kDateChannel = -2;
  constexpr int32_t kSymbolChannel = -3;
  constexpr int32_t kCapChannel = -4;
  std::vector<int32_t> channel_of(static_cast<size_t>(max_field + 1), -1);
  for (int32_t c = 0; c < channels; ++c) channel_of[static_cast<size_t>(field_of[c])] = c;
  for (const auto& [field, channel] : {std::pair{date_field, kDateChannel}, std::pair{symbol_field, kSymbolChannel},
                                       std::pair{cap_field, kCapChannel}}) {
    if (field >= 0 && channel_of[static_cast<size_t>(field)] == -1) channel_of[static_cast<size_t>(field)] = channel;
  }

  CsvRows table;
  std::unordered_map<std::string, int32_t> symbol_ids;
  Series& series = table.series;
  series.channels = channels;
  series.layers = volume_column.empty() ? 0 : 1;
  series.source = path;
  series.column = ohlc ? std::string("Open,High,Low,Close") : names[static_cast<size_t>(field_of[0])];
  {
    // Upper bound on the rows: one per newline after the header.
    size_t newlines = 0;
    for (const char* p = begin; p < end;) {
      const char* q = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
      if (q == nullptr) break;
      ++newlines;
      p = q + 1;
    }
    series.values.reserve((newlines + 1) * static_cast<size_t>(channels));
  }

  std::string scratch;
  std::string error;
  float row_values[5] = {0, 0, 0, 0, 0};
  int64_t rows = 0;
  while (scanner.skip_blank_lines()) {
    const int64_t line = scanner.line();
    bool last = false;
    int64_t field = 0;
    for (; field <= max_field && !last; ++field) {
      std::string_view cell;
      if (!scanner.next_field(cell, last, scratch, error)) {
        return io_error(path + ":" + std::to_string(line) + ": " + error);
      }
      const int32_t c = channel_of[static_cast<size_t>(field)];
      if (c == kDateChannel) {
        series.dates.push_back(parse_date(cell));
        continue;
      }
      if (c == kSymbolChannel) {
        if (cell.empty()) return io_error(path + ":" + std::to_string(line) + ": no symbol");
        const auto [at, added] =
            symbol_ids.try_emplace(std::string(cell), static_cast<int32_t>(table.symbol_names.size()));
        if (added) table.symbol_names.emplace_back(cell);
        table.symbol_of_row.push_back(at->second);
        continue;
      }
      if (c == kCapChannel) {
        float cap = 0;
        if (parse_cell(cell, cap) != CellParse::kOk) {
          return io_error(path + ":" + std::to_string(line) + ": column '" + names[static_cast<size_t>(cap_field)] +
                          "': not a number: " + quote_cell(cell));
        }
        table.market_caps.push_back(cap);
        continue;
      }
      if (c < 0) continue;
      if (parse_cell(cell, row_values[c]) != CellParse::kOk) {
        return io_error(path + ":" + std::to_string(line) + ": column '" +
                        names[static_cast<size_t>(field_of[c])] + "': not a number: " + quote_cell(cell));
      }
    }
    if (symbol_field >= field) return io_error(path + ":" + std::to_string(line) + ": no symbol");
    if (cap_field >= field) table.market_caps.push_back(std::numeric_limits<float>::quiet_NaN());
    if (date_field >= field && field > max_price_field) {
      series.dates.push_back(0);  // a short record without its date: undated
    } else if (field <= max_price_field) {
      // The record ended before the last wanted field.
      int32_t missing = 0;
      for (int32_t c = 0; c < channels; ++c) {
        if (field_of[c] >= field) {
          missing = c;
          break;
        }
      }
      return io_error(path + ":" + std::to_string(line) + ": only " + std::to_string(field) + " field" +
                      (field == 1 ? "" : "s") + ", column '" + names[static_cast<size_t>(field_of[missing])] +
                      "' is field " + std::to_string(field_of[missing] + 1));
    }
    if (!last && !scanner.skip_record(error)) {
      return io_error(path + ":" + std::to_string(line) + ": " + error);
    }
    series.values.insert(series.values.end(), row_values, row_values + channels);
    ++rows;
  }
  if (rows == 0) return io_error(path + ": header only, no data rows");
  series.rows = rows;
  return table;
}

int32_t date_parse(std::string_view text) { return parse_date(text); }

// H. Hinnant's civil_from_days.
int32_t date_of_day(int64_t n) {
  n += 719468;
  const int64_t era = (n >= 0 ? n : n - 146096) / 146097;
  const int64_t doe = n - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t day = doy - (153 * mp + 2) / 5 + 1;
  const int64_t month = mp < 10 ? mp + 3 : mp - 9;
  const int64_t year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  return year < 1 || year > 9999 ? 0 : static_cast<int32_t>(year * 10000 + month * 100 + day);
}

Result<Series> series_load_csv(const std::string& path, const std::string& column, bool ohlc,
                               const std::string& volume_column) {
  KILN_TRY_ASSIGN(CsvRows table, series_load_csv_rows(path, column, ohlc, volume_column, CsvPanelColumns{}));
  return std::move(table.series);
}

}  // namespace kiln
