// A job's inputs in batches: files decoded on the worker threads (a bad file only gets an error), caller images
// wrapped without a copy. Also the executor bookkeeping both image jobs share.
#pragma once

#include <cstdint>
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
  bool from_files() const { return m_from_files; }
  std::string name(int64_t i) const;
  // Inputs [first, first + n): the images that could be had, and a status per input.
  DecodedBatch take(int64_t first, int64_t n, const DecodeOptions& decode, ThreadPool* pool) const;

 private:
  bool m_from_files = true;
  std::vector<std::string> m_paths;
  VarShapeBatchView m_images;
};

// Which backends ran a job's batches: "opencl", then "opencl+cpu" once a fallback moved the rest to the CPU.
void backends_note(const ExecReport& report, std::string* backend, std::string* placement);

}  // namespace kiln
