// Where rendered images go: HDF5 (single file or shards + VDS), a folder of PNG/JPEG files, or one NPY.
// Encoding (compression) runs in the caller's worker threads through per-thread ImageEncoders; writing runs
// in one writer thread that receives EncodedBatches in job order.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/apps/render.h"
#include "kiln/image.h"
#include "kiln/status.h"

namespace kiln {

// Shape of the whole dataset, known before the first image is rendered.
struct DatasetLayout {
  int64_t total = 0;  // images in this output
  // A piece of a sharded job (kiln/scale.h): the job's ordinal of this output's first image, the job's image count
  // (0: total) and which piece it is. HDF5 output only.
  int64_t first_index = 0;
  int64_t job_total = 0;
  int64_t shard_index = 0;
  int64_t shard_count = 0;
  int32_t width = 0;
  int32_t height = 0;
  int32_t channels = 1;  // 3: RGB images (--color), stored (N, H, W, 3)
  PixelType dtype = PixelType::kU8;
  int32_t seq_len = 0;
  int32_t seq_channels = 1;  // 1: sequences (N, seq_len); 4: (N, seq_len, 4) for OHLC
  bool has_labels = false;
};

// Written as HDF5 attributes (and into the manifest / npy sidecar). Stable across a resumed run except
// created_at, so resume can check it is continuing the same job.
struct DatasetAttributes {
  int64_t seq_len = 0;
  int64_t stride = 1;
  double line_width = 0;
  std::string style;  // "line" | "ohlc" | "candlestick"
  int32_t width = 0;
  int32_t height = 0;
  int32_t dpi = 100;
  std::string source;
  std::string column;
  int64_t skipped_windows = 0;    // windows with NaN/inf
  int64_t dropped_no_future = 0;  // windows without a label horizon value
  int64_t label_horizon = 0;
  double label_threshold = -1;
  std::string kiln_version;
  std::string config_json;  // the full effective configuration
  std::string created_at;   // ISO 8601 UTC; excluded from resume comparisons
  // How the run went (JSON: backend, fallback events), known only at finish(); excluded from resume comparisons.
  std::string run_report;
  int64_t fallbacks = 0;
};

// One batch of consecutive images, encoded, with their per-image metadata.
struct EncodedBatch {
  int64_t first = 0;  // ordinal of the first image in the job (0-based)
  int32_t count = 0;
  std::vector<uint8_t> bytes;      // concatenated encoded images
  std::vector<uint64_t> offsets;   // count + 1 entries; image i is bytes[offsets[i], offsets[i+1])
  std::vector<float> sequences;    // count * seq_len * seq_channels raw window values
  std::vector<int64_t> index;      // count start rows
  std::vector<int8_t> labels;      // count entries, or empty without labels

  void clear() {
    count = 0;
    bytes.clear();
    offsets.assign(1, 0);
    sequences.clear();
    index.clear();
    labels.clear();
  }
};

// Per-thread encoder (owns its compression context). Appends one encoded image to `out`.
class ImageEncoder {
 public:
  virtual ~ImageEncoder() = default;
  virtual Status encode(const ImageView& image, std::vector<uint8_t>& out) = 0;
};

struct ImageTable;  // apps/render/image_table.h

class ImageSink {
 public:
  virtual ~ImageSink() = default;
  // Prepares the output. Returns how many leading images are already durable from an earlier run of the same
  // job (only with spec.resume; always a multiple of the sink's commit unit), so the job starts there.
  // Refuses an existing output unless spec.overwrite or spec.resume.
  virtual Result<int64_t> open(const DatasetLayout& layout, const DatasetAttributes& attributes) = 0;
  virtual std::unique_ptr<ImageEncoder> make_encoder() = 0;  // thread-safe
  virtual Status write(const EncodedBatch& batch) = 0;     // single writer thread, batches in job order
  // Marks the output complete and makes it visible under its final name (fsync + rename). `run_report` (JSON)
  // and `fallbacks` are stored with the final output's attributes.
  virtual Status finish(const std::string& run_report = "", int64_t fallbacks = 0) = 0;
  virtual uint64_t bytes_written() const = 0;  // encoded bytes on disk so far
  virtual std::string describe() const = 0;    // e.g. "demo.h5 (zstd-1, 1 file)"
  // What open() found and did on resume that the user should hear of (a damaged part rendered again).
  virtual std::vector<std::string> resume_notes() const { return {}; }
  // A panel's per-image table (symbol, dates, returns) for this output's images, before finish(): HDF5 stores it
  // beside the images (hdf5_image_table.h); other sinks ignore it.
  virtual void image_table_set(std::shared_ptr<const ImageTable> /*table*/) {}
};

// Dispatches on spec.format to one of the factories below.
Result<std::unique_ptr<ImageSink>> sink_create(const OutputSpec& spec);

Result<std::unique_ptr<ImageSink>> hdf5_sink_create(const OutputSpec& spec);  // src/io/hdf5_sink.cpp
Result<std::unique_ptr<ImageSink>> png_sink_create(const OutputSpec& spec);   // src/io/png_sink.cpp
Result<std::unique_ptr<ImageSink>> jpeg_sink_create(const OutputSpec& spec);  // src/io/jpeg_sink.cpp
Result<std::unique_ptr<ImageSink>> npy_sink_create(const OutputSpec& spec);   // src/io/npy_sink.cpp

}  // namespace kiln
