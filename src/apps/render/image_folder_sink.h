// The folder-of-images sink shared by PNG and JPEG (one file per image, price_pattern_{i:06d}.{ext}, plus
// index.csv, run.json while running and manifest.json when complete), and the pieces the NPY sink reuses:
// the job description JSON that resume compares, and the index CSV writer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "io/durable_file.h"
#include "apps/render/image_sink.h"

namespace kiln {

// --- job description (run.json, manifest.json, the npy .progress sidecar) ---

// All DatasetAttributes fields plus the output shape: format, dtype, shape [N, H, W], count, has_labels,
// seq_len/seq_channels. `complete` is false while running.
nlohmann::json job_json_make(OutputFormat format, const DatasetLayout& layout, const DatasetAttributes& attributes,
                             bool complete);
// Compares two job descriptions on every field except created_at, complete and the keys in `ignore`.
// Returns "" when equal, else a short "seq_len (stored 60, now 30)" naming the first difference.
std::string job_json_diff(const nlohmann::json& stored, const nlohmann::json& now,
                          std::initializer_list<const char*> ignore = {});

// --- index CSV: "image,start_row,label", one row per image in job order ---

class IndexCsv {
 public:
  IndexCsv() = default;
  ~IndexCsv();
  IndexCsv(const IndexCsv&) = delete;
  IndexCsv& operator=(const IndexCsv&) = delete;

  // Truncates or creates `path` and writes the header.
  Status create(const std::string& path);
  // Keeps the header and the first min(complete rows, max_rows) data rows of an existing file (a partial last
  // line from a crash is dropped), positions for appending and returns how many rows were kept. A missing or
  // headerless file is recreated with 0 rows.
  Result<int64_t> open_resume(const std::string& path, int64_t max_rows);
  // One row per image of the batch; image_name(ordinal) gives the first column.
  Status append(const EncodedBatch& batch, const std::function<std::string(int64_t)>& image_name);
  Status sync();
  void reset();  // closes without syncing
  uint64_t bytes() const { return m_bytes; }

 private:
  int m_fd = -1;
  std::string m_path;
  std::string m_line_buffer;
  uint64_t m_bytes = 0;
};

// --- folder sink ---

constexpr const char* kImageFilePrefix = "price_pattern_";

// "price_pattern_000042.png" for ordinal 42 and extension "png" (more digits past 999999).
std::string image_file_name(int64_t ordinal, const std::string& extension);

struct ImageFolderFormat {
  OutputFormat format = OutputFormat::kPng;
  std::string extension;  // file extension without the dot: "png", "jpg"
  std::string detail;     // for describe(): "zlib-1", "q95"
  std::function<std::unique_ptr<ImageEncoder>()> encoder_create;
};

// The folder sink behind png_sink_create and jpeg_sink_create. spec.path is the folder.
Result<std::unique_ptr<ImageSink>> image_folder_sink_create(const OutputSpec& spec, ImageFolderFormat format);

}  // namespace kiln
