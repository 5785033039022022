// jkx-dat sink (jkx_dat_sink.h): per year, {prefix}_{year}_images.dat.part grows image by image (raw bytes, fsynced
// when the year ends), the year's label tables (CSV, Feather, and Parquet when DuckDB's library is in the kiln cache)
// are written whole, then the .dat.part is renamed to .dat. The job's settings are kept in {prefix}_jkx.json, which
// resume compares with its own.
#include "apps/render/jkx_dat_sink.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/duckdb_library.h"
#include "io/durable_file.h"
#include "io/feather_writer.h"
#include "io/parquet_writer.h"

namespace kiln {

namespace {

namespace fs = std::filesystem;

struct YearSpan {
  int32_t year = 0;
  int64_t first = 0;  // ordinal of its first image
  int64_t end = 0;    // one past its last
};

class RawEncoder final : public ImageEncoder {
 public:
  Status encode(const ImageView& image, std::vector<uint8_t>& out) override {
    if (image.type != PixelType::kU8 || image.channels != 1 || image.data == nullptr) {
      return invalid_argument("jkx-dat: images are one channel of uint8");
    }
    for (int32_t y = 0; y < image.height; ++y) {
      const auto* row = image.row<const uint8_t>(y);
      out.insert(out.end(), row, row + image.width);
    }
    return Status::ok();
  }
};

std::string return_text(double r) { return std::isfinite(r) ? fmt::format("{:.9g}", r) : std::string(); }

std::string date_text(int32_t yyyymmdd) {
  return fmt::format("{:04d}-{:02d}-{:02d}", yyyymmdd / 10000, yyyymmdd / 100 % 100, yyyymmdd % 100);
}

// The year's rows [span.first, span.end) as the paper's Feather label files hold them, in the CSV's column order:
// Date a timestamp (pandas datetime64[ns]), StockID text, the others float64 with NaN. The Parquet file holds the same.
std::vector<FeatherColumn> label_columns(const ImageTable& labels, const YearSpan& span) {
  std::vector<FeatherColumn> columns(6);  // float64 unless set below
  const char* names[] = {"Date", "StockID", "MarketCap", "Ret_5d", "Ret_20d", "Ret_60d"};
  for (size_t c = 0; c < columns.size(); ++c) columns[c].name = names[c];
  columns[0].type = FeatherType::kTimestampNs;
  columns[1].type = FeatherType::kUtf8;
  const std::vector<double>* values[] = {&labels.market_cap, &labels.ret_5d, &labels.ret_20d, &labels.ret_60d};
  for (size_t c = 0; c < 4; ++c) {
    columns[2 + c].doubles.assign(values[c]->begin() + span.first, values[c]->begin() + span.end);
  }
  for (int64_t i = span.first; i < span.end; ++i) {
    columns[0].nanoseconds.push_back(feather_day_nanoseconds(labels.end_date[static_cast<size_t>(i)]));
    columns[1].strings.push_back(labels.symbol_of(i));
  }
  return columns;
}

bool exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

Status remove_file(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return errno_status(path + ": cannot remove");
  return Status::ok();
}

class JkxDatSink final : public ImageSink {
 public:
  JkxDatSink(OutputSpec spec, ImageTable labels)
      : m_spec(std::move(spec)), m_labels(std::move(labels)), m_parquet(duckdb_api("").is_ok()) {}
  ~JkxDatSink() override {
    if (m_fd >= 0) ::close(m_fd);
  }

  Result<int64_t> open(const DatasetLayout& layout, const DatasetAttributes& attributes) override;
  std::unique_ptr<ImageEncoder> make_encoder() override { return std::make_unique<RawEncoder>(); }
  Status write(const EncodedBatch& batch) override;
  Status finish(const std::string& run_report, int64_t fallbacks) override;
  uint64_t bytes_written() const override { return m_bytes; }
  std::string describe() const override {
    return fmt::format("{}_{{year}}_images.dat (jkx-dat, uint8, {} year{}; labels {})", m_spec.path, m_years.size(),
                       m_years.size() == 1 ? "" : "s",
                       m_parquet ? "CSV, Feather, Parquet"
                                 : "CSV, Feather; Parquet skipped: DuckDB's library is not in the kiln cache, "
                                   "make deps fetches it");
  }

 private:
  std::string images_path(int32_t year) const { return fmt::format("{}_{}_images.dat", m_spec.path, year); }
  std::string labels_path(int32_t year) const { return fmt::format("{}_{}_labels.csv", m_spec.path, year); }
  std::string feather_path(int32_t year) const { return fmt::format("{}_{}_labels.feather", m_spec.path, year); }
  std::string parquet_path(int32_t year) const { return fmt::format("{}_{}_labels.parquet", m_spec.path, year); }
  std::string job_path() const { return m_spec.path + "_jkx.json"; }
  bool year_complete(const YearSpan& span) const;
  Status start_year(size_t index);
  Status end_year();

  OutputSpec m_spec;
  ImageTable m_labels;
  bool m_parquet = false;  // DuckDB's library is there: Parquet labels too
  std::vector<YearSpan> m_years;
  int64_t m_image_bytes = 0;
  size_t m_current = 0;  // index into m_years of the year being written
  int m_fd = -1;         // its .dat.part
  std::string m_table;   // its label rows so far
  int64_t m_next = 0;    // ordinal of the next image
  uint64_t m_bytes = 0;
};

bool JkxDatSink::year_complete(const YearSpan& span) const {
  std::error_code ec;
  const auto size = fs::file_size(images_path(span.year), ec);
  return !ec && static_cast<int64_t>(size) == (span.end - span.first) * m_image_bytes &&
         exists(labels_path(span.year)) && exists(feather_path(span.year)) &&
         (!m_parquet || exists(parquet_path(span.year)));
}

Result<int64_t> JkxDatSink::open(const DatasetLayout& layout, const DatasetAttributes& attributes) {
  if (layout.dtype != PixelType::kU8) return invalid_argument("jkx-dat output stores uint8 images (--dtype uint8)");
  if (layout.channels != 1) {
    return invalid_argument("jkx-dat output stores the paper's gray images (N, H, W); --color is for hdf5, npy, png "
                            "and jpeg output");
  }
  if (m_labels.size() != layout.total) {
    return invalid_argument("jkx-dat: one label row per image is needed");
  }
  m_image_bytes = static_cast<int64_t>(layout.width) * layout.height;
  for (int64_t i = 0; i < layout.total; ++i) {
    const int32_t year = m_labels.end_date[static_cast<size_t>(i)] / 10000;
    if (m_years.empty() || m_years.back().year != year) {
      if (!m_years.empty() && year < m_years.back().year) {
        return invalid_argument("jkx-dat: the dates go back from " + std::to_string(m_years.back().year) + " to " +
                                std::to_string(year) + " (the series must be in date order)");
      }
      m_years.push_back(YearSpan{year, i, i});
    }
    m_years.back().end = i + 1;
  }
  KILN_TRY(parent_folder_create(images_path(0)));
  const std::string job = nlohmann::json{{"format", "jkx-dat"}, {"config", attributes.config_json},
                                         {"width", layout.width}, {"height", layout.height}, {"images", layout.total}}
                              .dump();
  bool any_final = exists(job_path());
  for (const YearSpan& span : m_years) any_final = any_final || exists(images_path(span.year));
  int64_t resumed = 0;
  if (m_spec.resume && exists(job_path())) {
    KILN_TRY_ASSIGN(const std::string stored, file_read_text(job_path()));
    if (stored != job) {
      return invalid_argument(job_path() + ": the output was made with other settings; resume needs the same job");
    }
    // Finished years are kept; the first unfinished one and every later one are written again.
    while (m_current < m_years.size() && year_complete(m_years[m_current])) {
      resumed = m_years[m_current].end;
      m_bytes += static_cast<uint64_t>((m_years[m_current].end - m_years[m_current].first) * m_image_bytes);
      ++m_current;
    }
  } else if (any_final && !m_spec.overwrite && !m_spec.resume) {
    return invalid_argument(m_spec.path + "_*: output exists (use --resume to continue or --overwrite to replace)");
  }
  for (size_t y = m_current; y < m_years.size(); ++y) {
    for (const std::string& path : {images_path(m_years[y].year), images_path(m_years[y].year) + ".part",
                                    labels_path(m_years[y].year), feather_path(m_years[y].year),
                                    parquet_path(m_years[y].year), parquet_path(m_years[y].year) + ".tmp"}) {
      KILN_TRY(remove_file(path));
    }
  }
  KILN_TRY(file_write_atomic(job_path(), job, TempName::kFixed));
  m_next = resumed;
  if (m_current < m_years.size()) KILN_TRY(start_year(m_current));
  return resumed;
}

Status JkxDatSink::start_year(size_t index) {
  m_current = index;
  const std::string part = images_path(m_years[index].year) + ".part";
  m_fd = ::open(part.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (m_fd < 0) return errno_status(part + ": cannot create");
  m_table = "Date,StockID,MarketCap,Ret_5d,Ret_20d,Ret_60d\n";
  return Status::ok();
}

Status JkxDatSink::end_year() {
  const int32_t year = m_years[m_current].year;
  const std::string part = images_path(year) + ".part";
  const int fd = m_fd;
  m_fd = -1;
  if (::fsync(fd) != 0) {
    ::close(fd);
    return errno_status(part + ": fsync failed");
  }
  if (::close(fd) != 0) return errno_status(part + ": close failed");
  // The tables first: a year counts as finished when its .dat has every image (and the tables are there).
  KILN_TRY(file_write_atomic(labels_path(year), m_table, TempName::kFixed));
  const std::vector<FeatherColumn> columns = label_columns(m_labels, m_years[m_current]);
  KILN_TRY_ASSIGN(const std::string feather, feather_file_make(columns));
  KILN_TRY(file_write_atomic(feather_path(year), feather, TempName::kFixed));
  if (m_parquet) KILN_TRY(parquet_file_write(parquet_path(year), columns));
  KILN_TRY(file_commit(part, images_path(year)));
  if (m_current + 1 < m_years.size()) return start_year(m_current + 1);
  ++m_current;
  return Status::ok();
}

Status JkxDatSink::write(const EncodedBatch& batch) {
  for (int32_t i = 0; i < batch.count; ++i) {
    const int64_t ordinal = batch.first + i;
    if (m_current >= m_years.size() || ordinal != m_next) {
      return invalid_argument("jkx-dat: image " + std::to_string(ordinal) + " out of order");
    }
    const uint64_t begin = batch.offsets[static_cast<size_t>(i)];
    const uint64_t size = batch.offsets[static_cast<size_t>(i) + 1] - begin;
    if (static_cast<int64_t>(size) != m_image_bytes) return invalid_argument("jkx-dat: image of the wrong size");
    KILN_TRY(fd_write_all(m_fd, batch.bytes.data() + begin, size, images_path(m_years[m_current].year) + ".part"));
    m_bytes += size;
    const auto row = static_cast<size_t>(ordinal);
    m_table += fmt::format("{},{},{},{},{},{}\n", date_text(m_labels.end_date[row]), m_labels.symbol_of(ordinal),
                           return_text(m_labels.market_cap[row]), return_text(m_labels.ret_5d[row]), return_text(m_labels.ret_20d[row]),
                           return_text(m_labels.ret_60d[row]));
    ++m_next;
    if (ordinal + 1 == m_years[m_current].end) KILN_TRY(end_year());
  }
  return Status::ok();
}

Status JkxDatSink::finish(const std::string&, int64_t) {
  if (m_current < m_years.size()) return invalid_argument("jkx-dat: the job ended before its last image");
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<ImageSink>> jkx_dat_sink_create(const OutputSpec& spec, ImageTable labels) {
  if (spec.path.empty()) return invalid_argument("no output prefix given");
  return std::unique_ptr<ImageSink>(std::make_unique<JkxDatSink>(spec, std::move(labels)));
}

}  // namespace kiln
