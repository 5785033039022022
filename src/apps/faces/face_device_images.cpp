#include "apps/faces/face_device_images.h"

#include <algorithm>
#include <vector>

namespace kiln {

namespace {

size_t aligned_bytes(const ImageView& v) { return (v.packed_bytes() + 255) / 256 * 256; }

}  // namespace

Status FaceDeviceImages::upload(Backend& device, const VarShapeBatchView& originals,
                                const std::vector<ImageShape>& prepared_shapes) {
  reset();
  std::vector<ImageView> slots;  // the originals' shapes, then the prepared copies'
  for (int64_t i = 0; i < originals.count; ++i) slots.push_back(originals[i]);
  for (const ImageShape& s : prepared_shapes) {
    slots.push_back(image_view_packed(nullptr, s.width, s.height, s.channels, s.type, s.layout));
  }
  size_t total = 0;
  for (const ImageView& v : slots) total += aligned_bytes(v);
  KILN_TRY_ASSIGN(m_block, DeviceBlock::acquire(device, std::max<size_t>(total, 256)));
  std::vector<ImageView> on_device;
  auto* at = static_cast<uint8_t*>(m_block.data());
  for (const ImageView& v : slots) {
    on_device.push_back(image_view_packed(at, v.width, v.height, v.channels, v.type, v.layout));
    at += aligned_bytes(v);
  }
  const auto split = on_device.begin() + originals.count;
  m_originals = VarShapeBatch::wrap(std::vector<ImageView>(on_device.begin(), split), MemorySpace::kDevice);
  m_storage = VarShapeBatch::wrap(std::vector<ImageView>(split, on_device.end()), MemorySpace::kDevice);
  m_prepared = VarShapeBatch::wrap(m_originals.images(), MemorySpace::kDevice);
  return device.images_upload(originals, m_originals.view());
}

Status FaceDeviceImages::storage_upload(const VarShapeBatchView& host, const std::vector<int64_t>& changed) {
  if (changed.empty()) return Status::ok();
  std::vector<ImageView> sources;
  for (const int64_t i : changed) sources.push_back(host[i]);
  const VarShapeBatch batch = VarShapeBatch::wrap(std::move(sources));
  return m_block.backend()->images_upload(batch.view(), storage());
}

void FaceDeviceImages::prepared_set(const std::vector<int64_t>& changed) {
  std::vector<ImageView> views = m_originals.images();
  for (size_t k = 0; k < changed.size(); ++k) {
    views[static_cast<size_t>(changed[k])] = m_storage[static_cast<int64_t>(k)];
  }
  m_prepared = VarShapeBatch::wrap(std::move(views), MemorySpace::kDevice);
}

void FaceDeviceImages::reset() {
  m_originals = VarShapeBatch();
  m_storage = VarShapeBatch();
  m_prepared = VarShapeBatch();
  m_block.reset();
}

bool face_call_placed_on(OpExecutor& executor, const OpCall& call, const Backend* device) {
  if (device == nullptr || executor.moved_to_cpu()) return false;
  const auto placement = executor.place(call);
  return placement.is_ok() && placement.value().backend == device;
}

}  // namespace kiln
