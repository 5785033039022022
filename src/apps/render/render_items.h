// What flows through the render pipeline: a batch of consecutive windows, the host memory it was rendered into
// (GPU path) and its encoded images; plus the per-thread encoders the encode stage borrows and the encoded batches'
// buffers, reused.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "core/backend_block.h"
#include "apps/render/image_sink.h"
#include "kiln/device.h"

namespace kiln {

// The block as `count` packed images of the dataset's shape.
inline BatchView host_batch_view(const HostBlock& host, int64_t count, const DatasetLayout& layout) {
  const auto image_bytes = static_cast<int64_t>(layout.width) * layout.height * layout.channels *
                           static_cast<int64_t>(pixel_type_size(layout.dtype));
  return BatchView{host.data(), count, layout.width, layout.height, layout.channels, layout.dtype, image_bytes};
}

struct RenderItem {
  int64_t first = 0;  // ordinal of the batch's first image in the job
  int32_t count = 0;
  HostBlock host;     // GPU path: rendered, not yet encoded
  EncodedBatch encoded;
};

// Encoders (each owns a compression context) lent to whichever stage worker needs one.
class EncoderPool {
 public:
  explicit EncoderPool(ImageSink& sink) : m_sink(sink) {}

  class Lease {
   public:
    Lease(EncoderPool& pool, std::unique_ptr<ImageEncoder> encoder) : m_pool(pool), m_encoder(std::move(encoder)) {}
    ~Lease() { m_pool.put(std::move(m_encoder)); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ImageEncoder* operator->() const { return m_encoder.get(); }

   private:
    EncoderPool& m_pool;
    std::unique_ptr<ImageEncoder> m_encoder;
  };

  Lease acquire() {
    std::unique_ptr<ImageEncoder> encoder;
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      if (!m_idle.empty()) {
        encoder = std::move(m_idle.back());
        m_idle.pop_back();
      }
    }
    if (!encoder) encoder = m_sink.make_encoder();
    return Lease(*this, std::move(encoder));
  }

 private:
  void put(std::unique_ptr<ImageEncoder> encoder) {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_idle.push_back(std::move(encoder));
  }

  ImageSink& m_sink;
  std::mutex m_mutex;
  std::vector<std::unique_ptr<ImageEncoder>> m_idle;
};

// The encoded batches' buffers, handed back once written and lent to the next batches: a fresh buffer grows by
// reallocation (copying what it holds) into fresh pages for every batch, ~15 µs an image of 800 x 500.
class EncodedBatchBuffers {
 public:
  EncodedBatch take() {
    EncodedBatch batch;
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_spare.empty()) {
      batch = std::move(m_spare.back());
      m_spare.pop_back();
    }
    batch.clear();
    return batch;
  }
  void give_back(EncodedBatch&& batch) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_spare.size() < kKept) m_spare.push_back(std::move(batch));
  }

 private:
  static constexpr size_t kKept = 64;  // more than the batches in flight
  std::mutex m_mutex;
  std::vector<EncodedBatch> m_spare;
};

}  // namespace kiln
