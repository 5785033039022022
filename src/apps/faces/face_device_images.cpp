#include "apps/faces/face_device_images.h"

#include <algorithm>
#include <vector>

namespace kiln {

namespace {

size_t aligned_bytes(const ImageView& v) { return (v.packed_bytes() + 255) / 256 * 256; }

}  // namespace

Status FaceDeviceImages::upload(Backend& device, const VarShapeBatchView& originals, const PreparedImages& prepared) {
  reset();
  const VarShapeBatchView changed = prepared.prepared.view();
  std::vector<const ImageView*> sources;  // the originals, then the prepared images that differ from them
  for (int64_t i = 0; i < originals.count; ++i) sources.push_back(&originals[i]);
  for (int64_t i = 0; i < originals.count; ++i) {
    if (changed[i].data != originals[i].data) sources.push_back(&changed[i]);
  }
  size_t total = 0;
  for (const ImageView* v : sources) total += aligned_bytes(*v);
  KILN_TRY_ASSIGN(m_block, DeviceBlock::acquire(device, std::max<size_t>(total, 256)));
  std::vector<ImageView> host, on_device;
  auto* at = static_cast<uint8_t*>(m_block.data());
  for (const ImageView* v : sources) {
    host.push_back(*v);
    on_device.push_back(image_view_packed(at, v->width, v->height, v->channels, v->type, v->layout));
    at += aligned_bytes(*v);
  }
  const VarShapeBatch host_batch = VarShapeBatch::wrap(host);
  const VarShapeBatch device_batch = VarShapeBatch::wrap(on_device, MemorySpace::kDevice);
  KILN_TRY(device.images_upload(host_batch.view(), device_batch.view()));

  std::vector<ImageView> device_originals(on_device.begin(), on_device.begin() + originals.count);
  std::vector<ImageView> device_prepared = device_originals;
  size_t next = static_cast<size_t>(originals.count);
  for (int64_t i = 0; i < originals.count; ++i) {
    if (changed[i].data != originals[i].data) device_prepared[static_cast<size_t>(i)] = on_device[next++];
  }
  m_originals = VarShapeBatch::wrap(std::move(device_originals), MemorySpace::kDevice);
  m_prepared = VarShapeBatch::wrap(std::move(device_prepared), MemorySpace::kDevice);
  return Status::ok();
}

void FaceDeviceImages::reset() {
  m_originals = VarShapeBatch();
  m_prepared = VarShapeBatch();
  m_block.reset();
}

bool face_call_placed_on(OpExecutor& executor, const OpCall& call, const Backend* device) {
  if (device == nullptr || executor.moved_to_cpu()) return false;
  const auto placement = executor.place(call);
  return placement.is_ok() && placement.value().backend == device;
}

}  // namespace kiln
