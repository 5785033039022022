// A job's inputs in batches: files decoded on the worker threads (a bad file only gets an error), caller images
// wrapped without a copy. Also the executor bookkeeping both image jobs share.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "kiln/apps/images.h"
#include "kiln/codec.h"

namespace kiln {

class ImageBatches {
 public:
  // InvalidArgument when nothing is given or the paths name no image; IoError for unreadable folders and lists.
  static Result<ImageBatches> make(const ImageInputs& inputs);

  int64_t count() const { return m_from_files ? static_cast<int64_t>(m_paths.size()) : m_images.count; }
  // Inputs [first, first + count) of these (a piece of a sharded job); names keep their place in the whole list.
  ImageBatches range(int64_t first, int64_t count) const;
  int64_t offset() const { return m_offset; }  // the whole list's index of input 0
  bool from_files() const { return m_from_files; }
  std::string name(int64_t i) const;
  // A CRC-32 of the inputs' names in order: what a resumed or merged run checks it shares with the first.
  std::string names_crc32() const;
  // Inputs [first, first + n): the images that could be had, and a status per input.
  DecodedBatch take(int64_t first, int64_t n, const DecodeOptions& decode, ThreadPool* pool) const;

 private:
  bool m_from_files = true;
  std::vector<std::string> m_paths;
  VarShapeBatchView m_images;
  int64_t m_offset = 0;
};

// The settings of every job over image files, declared once: max_pixels, decode_timeout, then the execution
// settings.
template <typename C>
void file_job_params_add(ParamTable<C>& t) {
  t.add({.name = "max_pixels", .help = "Refuse images with more pixels than this", .min = 1},
        [](C& c) -> int64_t& { return c.max_pixels; });
  t.add({.name = "decode_timeout",
         .help = "Seconds one image may take to decode; a slower one is reported and skipped (0: no limit)",
         .min = 0},
        [](C& c) -> double& { return c.decode_timeout; });
  t.include(exec_params(), [](C& c) -> ExecSettings& { return c.exec; });
}

// Inputs per part of a resumable job (io/job_parts.h): whole batches, at least `min_images` (a killed run loses at
// most one part's work).
inline int64_t part_unit_images(int64_t batch_size, int64_t min_images) {
  return batch_size * ((min_images + batch_size - 1) / batch_size);
}

// How a file job decodes its images (RGB when channels is 3).
template <typename C>
DecodeOptions file_job_decode_options(const C& config, int32_t channels = 0) {
  DecodeOptions decode;
  decode.channels = channels;
  decode.max_pixels = config.max_pixels;
  decode.timeout_seconds = config.decode_timeout;
  return decode;
}

// Which backends ran a job's batches: "opencl", then "opencl+cpu" once a fallback moved the rest to the CPU.
void backends_note(const ExecReport& report, std::string* backend, std::string* placement);

// Where one batch's process call writes: `slot` 0 or 1 (two batches are processed at once at most, so a job keeps
// two sets of outputs and finish reads the batch's), and how many images the batches before it decoded (the place of
// its outputs among the run's).
struct BatchSlot {
  int slot = 0;
  int64_t decoded_before = 0;
};

// A batch whose decoded images take more bytes than this is processed alone: two at once would need twice the device
// memory, and one that barely fits would be split or moved to the CPU because of the other.
inline constexpr size_t kConcurrentBatchBytes = size_t{512} << 20;

// The loop both image jobs run: inputs in batches of `batch_size`, each decoded while the ones before are processed;
// `process` runs the job's op on the images that could be had (decoded index k is image k of the batch); then, for
// every input in order, `finish` completes its record (k, or -1 when it could not be read: record.error says why)
// before the record and the progress are reported, and `batch_done` (when given) is told the batch's inputs
// [first, first + n) are finished. Two batches are processed at once (not one over kConcurrentBatchBytes), each on a
// thread of its own: the executor gives each GPU call its own stream and staging slot, so one batch's upload
// overlaps the other's kernels and download. finish and batch_done run on the caller's thread, batch after batch in
// order; a failed batch stops the run once the other has ended (no batch starts once the failure is known). At most
// three decoded batches are held: two processed and one decoded or decoding. Inputs [begin, end) only when end >= 0
// (a part of a resumable job).
template <typename Record>
Status image_batches_run(const ImageBatches& batches, int64_t batch_size, const DecodeOptions& decode,
                         ThreadPool* pool, const JobEvents<Record>& events, std::string* backend,
                         std::string* placement,
                         const std::function<Status(const DecodedBatch& batch, BatchSlot slot, ExecReport* report)>& process,
                         const std::function<Status(Record& record, int64_t k, int slot)>& finish, int64_t begin = 0,
                         int64_t end = -1, const std::function<Status(int64_t first, int64_t n)>& batch_done = {}) {
  if (end < 0) end = batches.count();
  struct Decoded {
    int64_t first = 0, n = 0;
    DecodedBatch batch;
    size_t bytes = 0;
  };
  struct InFlight {
    Decoded decoded;
    int slot = 0;
    ExecReport report;
    std::future<Status> processed;  // last: destroyed first, it waits for the thread that uses the rest
  };
  // Destroyed in reverse order on every way out: `ahead` and then each InFlight wait for their threads to end.
  std::optional<Decoded> held;  // decoded, waiting to be processed alone
  std::deque<InFlight> in_flight;
  std::future<DecodedBatch> ahead;  // the next batch, decoding on a thread of its own with the pool's workers
  int64_t next = begin, decoded_before = 0;
  int slot = 0;
  const auto decode_ahead = [&] {
    const int64_t first = next, n = std::min(batch_size, end - next);
    ahead = std::async(std::launch::async, [&batches, &decode, pool, first, n] {
      return batches.take(first, n, decode, pool);
    });
  };
  const auto take = [&] {
    Decoded d;
    d.first = next;
    d.n = std::min(batch_size, end - next);
    d.batch = ahead.get();
    for (const ImageView& image : d.batch.images.images()) d.bytes += image.packed_bytes();
    next += batch_size;
    if (next < end) decode_ahead();
    return d;
  };
  // Starts what may run now: up to two batches, one over kConcurrentBatchBytes alone.
  const auto refill = [&] {
    while (in_flight.size() < 2 && (held || next < end)) {
      if (!held) held = take();
      const bool large = held->bytes > kConcurrentBatchBytes ||
                         (!in_flight.empty() && in_flight.front().decoded.bytes > kConcurrentBatchBytes);
      if (large && !in_flight.empty()) return;
      InFlight& f = in_flight.emplace_back();
      f.decoded = std::move(*held);
      held.reset();
      f.slot = slot;
      slot = 1 - slot;
      const BatchSlot where{f.slot, decoded_before};
      decoded_before += f.decoded.batch.images.count();
      f.processed = std::async(std::launch::async, [&process, &f, where] {
        return f.decoded.batch.images.count() > 0 ? process(f.decoded.batch, where, &f.report) : Status::ok();
      });
    }
  };
  if (begin < end) decode_ahead();
  refill();
  while (!in_flight.empty()) {
    InFlight& done = in_flight.front();
    KILN_TRY(done.processed.get());
    const Decoded& d = done.decoded;
    if (d.batch.images.count() > 0) backends_note(done.report, backend, placement);
    for (int64_t i = 0; i < d.n; ++i) {
      Record record;
      record.name = batches.name(d.first + i);
      const int64_t k = d.batch.index[static_cast<size_t>(i)];
      if (k < 0) {
        record.error = d.batch.status[static_cast<size_t>(i)].message();
      } else {
        record.ok = true;
        record.backend = done.report.backend;
      }
      KILN_TRY(finish(record, k, done.slot));
      if (events.record) events.record(record);
    }
    if (events.progress) events.progress(d.first + d.n, batches.count(), done.report.backend);
    if (batch_done) KILN_TRY(batch_done(d.first, d.n));
    in_flight.pop_front();
    refill();  // only now: the next batch takes the finished one's slot
  }
  return Status::ok();
}

}  // namespace kiln
