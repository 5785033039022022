// What the folder and NPY sinks keep beside the images: the job description that resume compares (run.json,
// manifest.json, the npy .progress sidecar) and the index CSV of image, start row and label.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>

#include <nlohmann/json_fwd.hpp>

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

}  // namespace kiln
