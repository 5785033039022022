#include "apps/images/image_batches.h"

#include "io/crc32.h"
#include "io/image_inputs.h"

namespace kiln {

Result<ImageBatches> ImageBatches::make(const ImageInputs& inputs) {
  ImageBatches batches;
  if (inputs.images.count > 0 || inputs.paths.empty()) {
    if (!inputs.paths.empty()) return invalid_argument("give either image files or images, not both");
    if (inputs.images.count == 0) return invalid_argument("no inputs given (files, folders or @list.txt)");
    batches.m_from_files = false;
    batches.m_images = inputs.images;
    return batches;
  }
  KILN_TRY_ASSIGN(batches.m_paths, image_inputs_collect(inputs.paths));
  if (batches.m_paths.empty()) return invalid_argument("no .jpg/.jpeg/.png images found in the inputs");
  return batches;
}

std::string ImageBatches::name(int64_t i) const {
  if (m_from_files) return m_paths[static_cast<size_t>(i)];
  std::string name = "#";
  name += std::to_string(m_offset + i);
  return name;
}

std::string ImageBatches::names_crc32() const {
  Crc32 names;
  for (int64_t i = 0; i < count(); ++i) {
    const std::string text = name(i);
    names.update(text.data(), text.size() + 1);
  }
  return names.hex();
}

ImageBatches ImageBatches::range(int64_t first, int64_t count) const {
  ImageBatches part = *this;
  part.m_offset = m_offset + first;
  if (m_from_files) {
    part.m_paths.assign(m_paths.begin() + static_cast<std::ptrdiff_t>(first),
                        m_paths.begin() + static_cast<std::ptrdiff_t>(first + count));
  } else {
    part.m_images.images = m_images.images + first;
    part.m_images.count = count;
  }
  return part;
}

DecodedBatch ImageBatches::take(int64_t first, int64_t n, const DecodeOptions& decode, ThreadPool* pool) const {
  if (m_from_files) {
    const auto begin = m_paths.begin() + static_cast<std::ptrdiff_t>(first);
    return image_decode_files(std::vector<std::string>(begin, begin + static_cast<std::ptrdiff_t>(n)), decode, pool);
  }
  DecodedBatch batch;
  batch.images = VarShapeBatch::wrap(std::vector<ImageView>(m_images.images + first, m_images.images + first + n),
                                     m_images.space);
  batch.status.assign(static_cast<size_t>(n), Status::ok());
  for (int64_t i = 0; i < n; ++i) {
    batch.index.push_back(i);
    batch.source.push_back(i);
  }
  return batch;
}

void backends_note(const ExecReport& report, std::string* backend, std::string* placement) {
  if (backend->empty()) {
    *backend = report.backend;
    *placement = report.placement;
  } else if (backend->find(report.backend) == std::string::npos) {
    *backend += "+" + report.backend;
  }
}

}  // namespace kiln
