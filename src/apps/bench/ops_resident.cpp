#include "apps/bench/ops_resident.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

namespace kiln::bench {

namespace {

constexpr size_t kImageAlign = 256;

size_t aligned(size_t bytes) { return (bytes + kImageAlign - 1) / kImageAlign * kImageAlign; }

// One block of the backend's device or host memory holding every image of `host` packed, and views of them:
// device_acquire fails here for a backend without device pointers.
template <MemorySpace kSpace>
Result<BackendBlock<kSpace>> block_images(Backend& backend, const VarShapeBatch& host,
                                          std::vector<ImageView>* views) {
  size_t total = 0;
  for (const ImageView& v : host.images()) total += aligned(v.packed_bytes());
  KILN_TRY_ASSIGN(BackendBlock<kSpace> block,
                  BackendBlock<kSpace>::acquire(backend, std::max<size_t>(total, kImageAlign)));
  size_t offset = 0;
  for (const ImageView& v : host.images()) {
    ImageView d = image_view_packed(static_cast<uint8_t*>(block.data()) + offset, v.width, v.height, v.channels,
                                    v.type, v.layout);
    views->push_back(d);
    offset += aligned(v.packed_bytes());
  }
  return block;
}

double value_diff(const ImageView& host, const std::vector<uint8_t>& device) {
  const size_t values = host.packed_bytes() / pixel_type_size(host.type);
  double worst = 0;
  if (host.type == PixelType::kU8) {
    const auto* a = static_cast<const uint8_t*>(host.data);
    for (size_t i = 0; i < values; ++i) worst = std::max(worst, std::abs(double(a[i]) - double(device[i])));
  } else if (host.type == PixelType::kF32) {
    const auto* a = static_cast<const float*>(host.data);
    for (size_t i = 0; i < values; ++i) {
      float b;
      std::memcpy(&b, device.data() + i * sizeof(float), sizeof b);
      if (std::isnan(a[i]) != std::isnan(b)) return std::numeric_limits<double>::infinity();
      if (!std::isnan(b)) worst = std::max(worst, std::abs(double(a[i]) - double(b)));
    }
  } else if (std::memcmp(host.data, device.data(), host.packed_bytes()) != 0) {
    return std::numeric_limits<double>::infinity();
  }
  return worst;
}

double metrics_diff(const QualityMetrics& a, const QualityMetrics& b) {
  return std::max({std::abs(a.blur - b.blur), std::abs(a.brightness - b.brightness),
                   std::abs(a.contrast - b.contrast), std::abs(a.sharpness - b.sharpness),
                   std::abs(a.occlusion - b.occlusion), std::abs(a.score - b.score)});
}

}  // namespace

Result<ResidentCall> ResidentCall::make(Backend& backend, const Workload& workload, bool on_device) {
  ResidentCall r;
  r.m_backend = &backend;
  r.m_on_device = on_device;
  std::vector<ImageView> in_views, out_views;
  if (on_device) {
    KILN_TRY_ASSIGN(r.m_in_block, block_images<MemorySpace::kDevice>(backend, workload.in, &in_views));
    KILN_TRY_ASSIGN(r.m_out_block, block_images<MemorySpace::kDevice>(backend, workload.out, &out_views));
  } else {
    KILN_TRY_ASSIGN(r.m_in_host, block_images<MemorySpace::kHost>(backend, workload.in, &in_views));
    KILN_TRY_ASSIGN(r.m_out_host, block_images<MemorySpace::kHost>(backend, workload.out, &out_views));
  }
  for (size_t i = 0; i < in_views.size(); ++i) {
    const ImageView& host = workload.in[static_cast<int64_t>(i)];
    if (on_device) KILN_TRY(backend.device_upload(host.data, in_views[i].data, host.packed_bytes()));
    else std::memcpy(in_views[i].data, host.data, host.packed_bytes());
  }
  const MemorySpace space = on_device ? MemorySpace::kDevice : MemorySpace::kHost;
  r.m_in = VarShapeBatch::wrap(std::move(in_views), space);
  r.m_out = VarShapeBatch::wrap(std::move(out_views), space);
  r.m_metrics.resize(workload.metrics.size());
  r.m_call = OpCall{workload.kind, workload.params.get(), r.m_in.view(), r.m_out.view(),
                    r.m_metrics.empty() ? nullptr : r.m_metrics.data()};
  return r;
}

Result<double> ResidentCall::max_abs_diff(const Workload& host) const {
  double worst = 0;
  for (size_t i = 0; i < m_metrics.size() && i < host.metrics.size(); ++i) {
    worst = std::max(worst, metrics_diff(m_metrics[i], host.metrics[i]));
  }
  std::vector<uint8_t> copy;
  for (int64_t i = 0; i < m_out.count(); ++i) {
    const ImageView& want = host.out[i];
    copy.resize(want.packed_bytes());
    if (m_on_device) KILN_TRY(m_backend->device_download(m_out[i].data, copy.data(), copy.size()));
    else std::memcpy(copy.data(), m_out[i].data, copy.size());
    worst = std::max(worst, value_diff(want, copy));
  }
  return worst;
}

Result<CopyRates> copy_bytes_per_s(Backend& backend) {
  constexpr size_t kBytes = size_t{64} << 20;
  KILN_TRY_ASSIGN(HostBlock host, HostBlock::acquire(backend, kBytes));
  KILN_TRY_ASSIGN(DeviceBlock device, DeviceBlock::acquire(backend, kBytes));
  std::memset(host.data(), 1, kBytes);
  CopyRates best;
  for (int round = 0; round < 6; ++round) {  // the first warms the path up
    auto begin = std::chrono::steady_clock::now();
    KILN_TRY(backend.device_upload(host.data(), device.data(), kBytes));
    const double up = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    begin = std::chrono::steady_clock::now();
    KILN_TRY(backend.device_download(device.data(), host.data(), kBytes));
    const double down = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    if (round > 0 && up > 0) best.up = std::max(best.up, static_cast<double>(kBytes) / up);
    if (round > 0 && down > 0) best.down = std::max(best.down, static_cast<double>(kBytes) / down);
  }
  return best;
}

}  // namespace kiln::bench
