#include "ops/cuda/cuda_ops.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "core/fault.h"
#include "ops/image_desc.h"
#include "ops/op_table.h"
#include "ops/cuda/common.cuh"
#include "ops/cuda/current_device.h"

namespace kiln {

namespace {


Result<CudaDeviceBatch> batch_describe(CudaOpContext& ctx, CudaCallMemory& memory, const VarShapeBatchView& batch) {
  CudaDeviceBatch out;
  out.count = batch.count;
  if (batch.space == MemorySpace::kDevice) {
    uintptr_t lowest = UINTPTR_MAX;
    for (int64_t i = 0; i < batch.count; ++i) lowest = std::min(lowest, reinterpret_cast<uintptr_t>(batch[i].data));
    out.base = reinterpret_cast<uint8_t*>(lowest);
    for (int64_t i = 0; i < batch.count; ++i) {
      const ImageView& v = batch[i];
      out.host_descs.push_back(image_desc(v, static_cast<int64_t>(reinterpret_cast<uintptr_t>(v.data) - lowest)));
      out.max_width = std::max(out.max_width, v.width);
      out.max_height = std::max(out.max_height, v.height);
    }
  } else {
    int64_t total = 0;
    for (int64_t i = 0; i < batch.count; ++i) {
      const ImageView& v = batch[i];
      out.host_descs.push_back(image_desc_packed(v, total));
      total += static_cast<int64_t>((v.packed_bytes() + 255) / 256 * 256);
      out.max_width = std::max(out.max_width, v.width);
      out.max_height = std::max(out.max_height, v.height);
    }
    out.bytes = static_cast<size_t>(std::max<int64_t>(total, 256));
    KILN_TRY_ASSIGN(void* pixels, memory.acquire(out.bytes, "image batch"));
    out.base = static_cast<uint8_t*>(pixels);
  }
  KILN_TRY_ASSIGN(void* descs, cuda_buffer_upload(ctx, memory, out.host_descs.data(),
                                                  sizeof(KilnImageDesc) * out.host_descs.size(), "image descriptors"));
  out.descs = static_cast<const KilnImageDesc*>(descs);
  return out;
}

// cudaMemcpy2DAsync arguments between a host view and its packed device place (per plane for CHW).
template <typename Copy>
Status planes_copy(const ImageView& v, const KilnImageDesc& d, Copy copy) {
  const int32_t planes = v.layout == Layout::kCHW ? v.channels : 1;
  const size_t row_bytes = v.pixel_size() * static_cast<size_t>(v.width);
  for (int32_t p = 0; p < planes; ++p) {
    KILN_TRY(copy(static_cast<size_t>(d.offset + p * d.plane_stride), static_cast<size_t>(d.row_stride),
                  static_cast<uint8_t*>(v.data) + p * v.plane_stride, static_cast<size_t>(v.row_stride), row_bytes,
                  static_cast<size_t>(v.height)));
  }
  return Status::ok();
}

// The bytes an image's view spans from its data pointer.
size_t view_span(const ImageView& v) {
  const int32_t planes = v.layout == Layout::kCHW ? v.channels : 1;
  return static_cast<size_t>((planes - 1) * v.plane_stride + (v.height - 1) * v.row_stride) +
         v.pixel_size() * static_cast<size_t>(v.width);
}

// Marks a staging slot as used by the copies queued on a stream, on every way out of the scope (an error return after
// some copies were queued too): the slot's next user waits for them.
class SlotUse {
 public:
  SlotUse(PinnedSlot& slot, cudaStream_t stream) : m_slot(slot), m_stream(stream) {}
  ~SlotUse() { (void)m_slot.used_by(m_stream); }
  SlotUse(const SlotUse&) = delete;
  SlotUse& operator=(const SlotUse&) = delete;

 private:
  PinnedSlot& m_slot;
  cudaStream_t m_stream;
};

// Waits for a stream's queued work when the scope ends, unless now() already did (and reported how it went).
class StreamWait {
 public:
  explicit StreamWait(cudaStream_t stream) : m_stream(stream) {}
  ~StreamWait() {
    if (!m_done) (void)cudaStreamSynchronize(m_stream);
  }
  StreamWait(const StreamWait&) = delete;
  StreamWait& operator=(const StreamWait&) = delete;
  Status now() {
    m_done = true;
    KILN_CUDA_CHECK(cudaStreamSynchronize(m_stream));
    return Status::ok();
  }

 private:
  cudaStream_t m_stream;
  bool m_done = false;
};

// Queues the copy of `from` (host or device memory, as `kind` says) into the device image `to` of the same shape,
// plane by plane (any strides on both sides), on `stream`.
Status planes_to_device(const ImageView& from, const ImageView& to, cudaMemcpyKind kind, cudaStream_t stream) {
  return planes_copy(from, image_desc(to),
                     [&](size_t offset, size_t pitch, const uint8_t* rows, size_t rows_pitch, size_t width,
                         size_t count) -> Status {
                       KILN_CUDA_CHECK(cudaMemcpy2DAsync(static_cast<uint8_t*>(to.data) + offset, pitch, rows,
                                                         rows_pitch, width, count, kind, stream));
                       return Status::ok();
                     });
}

// Device images into device images of the same shapes, on ctx.stream, which it synchronizes.
Status images_copy_on_device(CudaOpContext& ctx, const VarShapeBatchView& from, const VarShapeBatchView& to) {
  StreamWait wait(ctx.stream);
  for (int64_t i = 0; i < from.count; ++i) {
    KILN_TRY(planes_to_device(from[i], to[i], cudaMemcpyDeviceToDevice, ctx.stream));
  }
  return wait.now();
}

// True when every image of a host batch lies in a block of host_acquire() (copied from and to directly).
bool host_batch_pinned(const PinnedBlocks& pinned, const VarShapeBatchView& batch) {
  for (int64_t i = 0; i < batch.count; ++i) {
    if (!pinned.contains(batch[i].data, view_span(batch[i]))) return false;
  }
  return true;
}

}  // namespace

CudaCallMemory::CudaCallMemory(const CudaOpContext& ctx)
    : m_pool(ctx.device_pool), m_pinned_pool(ctx.table_pool), m_stream(ctx.stream) {}

CudaCallMemory::~CudaCallMemory() {
  if (!m_blocks.empty() || !m_pinned_blocks.empty()) (void)cudaStreamSynchronize(m_stream);
  for (const PoolBlock& block : m_blocks) m_pool.release(block);
  for (const PoolBlock& block : m_pinned_blocks) m_pinned_pool.release(block);
}

Result<void*> CudaCallMemory::acquire(size_t bytes, const char* what) {
  if (fault_should_fail(FaultSite::kAlloc)) {
    return Status(Errc::kOutOfMemory, std::string("cuda: injected allocation failure (KILN_FAULT) for ") + what);
  }
  KILN_TRY_ASSIGN(PoolBlock block, m_pool.acquire(bytes));
  m_blocks.push_back(block);
  return reinterpret_cast<void*>(block.handle);
}

Result<void*> CudaCallMemory::acquire_pinned(size_t bytes) {
  KILN_TRY_ASSIGN(PoolBlock block, m_pinned_pool.acquire(bytes));
  m_pinned_blocks.push_back(block);
  return reinterpret_cast<void*>(block.handle);
}

Result<void*> cuda_buffer_upload(CudaOpContext& ctx, CudaCallMemory& memory, const void* data, size_t bytes,
                                 const char* what) {
  KILN_TRY_ASSIGN(void* d, memory.acquire(std::max<size_t>(bytes, 16), what));
  if (bytes > 0) {
    // Queued from a page-locked copy, so the call goes on at once. From `data` (pageable, often a temporary) the
    // copy would have to end before returning: this thread would wait for every copy queued before it, a call's
    // four or five tables one after the other.
    KILN_TRY_ASSIGN(void* pinned, memory.acquire_pinned(bytes));
    std::memcpy(pinned, data, bytes);
    KILN_CUDA_CHECK(cudaMemcpyAsync(d, pinned, bytes, cudaMemcpyHostToDevice, ctx.stream));
  }
  return d;
}

Result<CudaDeviceBatch> cuda_batch_upload(CudaOpContext& ctx, CudaCallMemory& memory, const VarShapeBatchView& in) {
  KILN_TRY_ASSIGN(CudaDeviceBatch batch, batch_describe(ctx, memory, in));
  if (in.space == MemorySpace::kDevice) return batch;
  if (host_batch_pinned(ctx.pinned, in)) {
    for (int64_t i = 0; i < in.count; ++i) {
      KILN_TRY(planes_copy(in[i], batch.host_descs[static_cast<size_t>(i)],
                           [&](size_t dev_offset, size_t dev_pitch, const uint8_t* host, size_t host_pitch,
                               size_t width, size_t rows) -> Status {
                             KILN_CUDA_CHECK(cudaMemcpy2DAsync(batch.base + dev_offset, dev_pitch, host, host_pitch,
                                                               width, rows, cudaMemcpyHostToDevice, ctx.stream));
                             return Status::ok();
                           }));
    }
    return batch;
  }
  // Each image is packed into the slot where it lies in the device batch and its copy queued at once, so the DMA of
  // one image runs while the next is packed.
  KILN_TRY_ASSIGN(auto slot, ctx.staging.acquire());
  KILN_TRY_ASSIGN(uint8_t* staged, slot->ready(batch.bytes));
  const SlotUse use(*slot, ctx.stream);
  for (int64_t i = 0; i < in.count; ++i) {
    const KilnImageDesc& d = batch.host_descs[static_cast<size_t>(i)];
    KILN_TRY(planes_copy(in[i], d,
                         [&](size_t dev_offset, size_t dev_pitch, const uint8_t* host, size_t host_pitch,
                             size_t width, size_t rows) -> Status {
                           host_rows_copy(staged + dev_offset, dev_pitch, host, host_pitch, width, rows);
                           return Status::ok();
                         }));
    const size_t offset = static_cast<size_t>(d.offset);
    KILN_CUDA_CHECK(cudaMemcpyAsync(batch.base + offset, staged + offset, in[i].packed_bytes(),
                                    cudaMemcpyHostToDevice, ctx.stream));
  }
  return batch;
}

Status cuda_images_upload(CudaOpContext& ctx, const VarShapeBatchView& host, const VarShapeBatchView& device) {
  if (device.space != MemorySpace::kDevice || host.count != device.count) {
    return invalid_argument("images_upload: host or device images and as many device images");
  }
  for (int64_t i = 0; i < host.count; ++i) {
    const ImageView &h = host[i], &d = device[i];
    if (h.width != d.width || h.height != d.height || h.channels != d.channels || h.type != d.type ||
        h.layout != d.layout) {
      return invalid_argument("images_upload: image " + std::to_string(i) + " differs in shape from its device image");
    }
  }
  if (host.space == MemorySpace::kDevice) return images_copy_on_device(ctx, host, device);
  // Straight from pinned memory; otherwise each image is packed into a staging slot and its DMA queued at once.
  const bool pinned = host_batch_pinned(ctx.pinned, host);
  std::vector<KilnImageDesc> staged_descs;
  int64_t total = 0;
  for (int64_t i = 0; i < host.count && !pinned; ++i) {
    staged_descs.push_back(image_desc_packed(host[i], total));
    total += static_cast<int64_t>((host[i].packed_bytes() + 255) / 256 * 256);
  }
  std::optional<PinnedStaging::Lease> slot;
  uint8_t* staged = nullptr;
  if (!pinned && total > 0) {
    auto acquired = ctx.staging.acquire();
    if (!acquired.is_ok()) return acquired.status();
    slot.emplace(std::move(acquired).value());
    KILN_TRY_ASSIGN(staged, (*slot)->ready(static_cast<size_t>(total)));
  }
  std::optional<SlotUse> use;
  if (staged != nullptr) use.emplace(**slot, ctx.stream);
  // On every way out the queued copies end first: the caller frees or reuses both sides as soon as this returns.
  StreamWait wait(ctx.stream);
  for (int64_t i = 0; i < host.count; ++i) {
    const ImageView& h = host[i];
    const ImageView& d = device[i];
    if (!pinned) {
      KILN_TRY(planes_copy(h, staged_descs[static_cast<size_t>(i)],
                           [&](size_t offset, size_t pitch, const uint8_t* rows, size_t rows_pitch, size_t width,
                               size_t count) -> Status {
                             host_rows_copy(staged + offset, pitch, rows, rows_pitch, width, count);
                             return Status::ok();
                           }));
    }
    // From the packed copy (or the pinned image itself) to the device image's rows, plane by plane.
    const ImageView from = pinned ? h
                                  : image_view_packed(staged + staged_descs[static_cast<size_t>(i)].offset, h.width,
                                                      h.height, h.channels, h.type, h.layout);
    KILN_TRY(planes_to_device(from, d, cudaMemcpyHostToDevice, ctx.stream));
  }
  return wait.now();
}

Result<CudaDeviceBatch> cuda_batch_alloc(CudaOpContext& ctx, CudaCallMemory& memory, const VarShapeBatchView& out) {
  return batch_describe(ctx, memory, out);
}

Status cuda_batch_download(CudaOpContext& ctx, const CudaDeviceBatch& batch, const VarShapeBatchView& out) {
  if (out.space == MemorySpace::kHost && host_batch_pinned(ctx.pinned, out)) {
    for (int64_t i = 0; i < out.count; ++i) {
      KILN_TRY(planes_copy(out[i], batch.host_descs[static_cast<size_t>(i)],
                           [&](size_t dev_offset, size_t dev_pitch, uint8_t* host, size_t host_pitch, size_t width,
                               size_t rows) -> Status {
                             KILN_CUDA_CHECK(cudaMemcpy2DAsync(host, host_pitch, batch.base + dev_offset, dev_pitch,
                                                               width, rows, cudaMemcpyDeviceToHost, ctx.stream));
                             return Status::ok();
                           }));
    }
  } else if (out.space == MemorySpace::kHost) {
    // The whole packed batch down in one DMA, then unpacked on the host.
    KILN_TRY_ASSIGN(auto slot, ctx.staging.acquire());
    KILN_TRY_ASSIGN(uint8_t* staged, slot->ready(batch.bytes));
    const SlotUse use(*slot, ctx.stream);
    KILN_CUDA_CHECK(cudaMemcpyAsync(staged, batch.base, batch.bytes, cudaMemcpyDeviceToHost, ctx.stream));
    KILN_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    for (int64_t i = 0; i < out.count; ++i) {
      KILN_TRY(planes_copy(out[i], batch.host_descs[static_cast<size_t>(i)],
                           [&](size_t dev_offset, size_t dev_pitch, uint8_t* host, size_t host_pitch, size_t width,
                               size_t rows) -> Status {
                             host_rows_copy(host, host_pitch, staged + dev_offset, dev_pitch, width, rows);
                             return Status::ok();
                           }));
    }
    return Status::ok();
  }
  KILN_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  return Status::ok();
}

namespace {

// Launch failures injected by KILN_FAULT=kernel:N, before the family's own code.
template <Status (*Run)(CudaOpContext&, const OpCall&)>
Status with_fault(CudaOpContext& ctx, const OpCall& call) {
  if (fault_should_fail(FaultSite::kLaunch)) {
    return Status(Errc::kDeviceError, "cuda: injected kernel launch failure (KILN_FAULT)");
  }
  return Run(ctx, call);
}

constexpr CudaOp kCudaOps[] = {
    {OpKind::kRender, render_cuda_supports, render_cuda},
    {OpKind::kResize, resize_cuda_supports, with_fault<resize_cuda>},
    {OpKind::kColor, color_cuda_supports, with_fault<color_cuda>},
    {OpKind::kPreprocess, preprocess_cuda_supports, with_fault<preprocess_cuda>},
    {OpKind::kNormalize, normalize_cuda_supports, with_fault<normalize_cuda>},
    {OpKind::kQuality, quality_cuda_supports, with_fault<quality_cuda>},
    {OpKind::kEnhance, enhance_cuda_supports, with_fault<enhance_cuda>},
    {OpKind::kWarp, warp_cuda_supports, with_fault<warp_cuda>},
    {OpKind::kMask, mask_cuda_supports, with_fault<mask_cuda>},
    {OpKind::kMatte, matte_cuda_supports, with_fault<matte_cuda>},
    {OpKind::kProbability, probability_cuda_supports, with_fault<probability_cuda>},
    {OpKind::kBlur, blur_cuda_supports, with_fault<blur_cuda>},
};
static_assert(op_table_unique(kCudaOps));

}  // namespace

const CudaOp* cuda_op_find(OpKind op) { return op_table_find(kCudaOps, op); }

bool cuda_in_place(const OpCall& call) {
  if (call.in.space != MemorySpace::kDevice || call.out.space != MemorySpace::kDevice) return false;
  for (int64_t i = 0; i < std::min(call.in.count, call.out.count); ++i) {
    if (call.in[i].data == call.out[i].data) return true;
  }
  return false;
}

CudaStream::~CudaStream() {
  if (stream == nullptr && events[0] == nullptr) return;
  const CurrentDevice current(m_device);
  if (stream != nullptr) (void)cudaStreamSynchronize(stream);
  for (cudaEvent_t& event : events) {
    if (event != nullptr) (void)cudaEventDestroy(event);
    event = nullptr;
  }
  if (stream != nullptr) (void)cudaStreamDestroy(stream);
}

Status CudaStream::init(int32_t device) {
  m_device = device;
  const CurrentDevice current(device);
  KILN_CUDA_CHECK(current.status());
  KILN_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (cudaEvent_t& event : events) KILN_CUDA_CHECK(cudaEventCreate(&event));
  return Status::ok();
}

Status CudaStream::synchronize() {
  KILN_CUDA_CHECK(cudaStreamSynchronize(stream));
  return Status::ok();
}

void PinnedBlocks::add(const PoolBlock& block) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_blocks[block.handle] = block.bytes;
}

PoolBlock PinnedBlocks::remove(PoolBlock block) {
  std::lock_guard<std::mutex> lock(m_mutex);
  auto it = m_blocks.find(block.handle);
  if (it == m_blocks.end()) return PoolBlock{};  // not one of ours (or released twice)
  block.bytes = it->second;
  m_blocks.erase(it);
  return block;
}

bool PinnedBlocks::contains(const void* data, size_t bytes) const {
  const auto address = reinterpret_cast<uintptr_t>(data);
  std::lock_guard<std::mutex> lock(m_mutex);
  auto it = m_blocks.upper_bound(address);
  if (it == m_blocks.begin()) return false;
  --it;
  return address >= it->first && address - it->first + bytes <= it->second;
}

}  // namespace kiln
