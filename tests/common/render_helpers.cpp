#include "common/render_helpers.h"

#include <gtest/gtest.h>

#include <memory>

#include "core/thread_pool.h"
#include "ops/render.h"

namespace kiln::test {

Status render_cpu_windows(const RenderParams& params, const WindowBatch& windows, const BatchView& out,
                          ThreadPool* pool) {
  KILN_TRY(render_validate(params, windows));
  const RenderCall call(params, windows, out);
  KILN_TRY(op_validate(call.call()));
  return render_cpu(call.call(), pool);
}

Status render_on(Backend& backend, const RenderParams& params, const WindowBatch& windows, const BatchView& out,
                 OpTimings* timings) {
  KILN_TRY(render_validate(params, windows));
  const RenderCall call(params, windows, out);
  KILN_TRY(op_validate(call.call()));
  return backend.run(call.call(), RunContext{nullptr, nullptr, timings});
}

bool render_supported(const Backend& backend, const RenderParams& params, int32_t channels) {
  std::vector<float> window(static_cast<size_t>(2 * channels));
  const int64_t start = 0;
  const WindowBatch windows{window.data(), channels, &start, 1, 2};
  const BatchView out{nullptr, 1, params.width, params.height, 1, params.dtype, 0};
  return backend.supports(RenderCall(params, windows, out).call());
}

std::vector<uint8_t> render_window(const std::vector<float>& window, const RenderParams& params, int32_t channels) {
  const int64_t start = 0;
  const WindowBatch windows{window.data(), channels, &start, 1, static_cast<int32_t>(window.size() / channels)};
  const int32_t image_channels = render_image_channels(params);
  std::vector<uint8_t> image(static_cast<size_t>(params.width) * params.height * image_channels);
  const BatchView out{image.data(), 1, params.width, params.height, image_channels, PixelType::kU8,
                      static_cast<int64_t>(image.size())};
  const Status status = render_cpu_windows(params, windows, out);
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  return image;
}

std::vector<uint8_t> render_series(const std::vector<float>& series, int32_t channels, const std::vector<int64_t>& starts,
                                   int32_t seq_len, const RenderParams& params, int64_t batch_size, int32_t threads) {
  const int32_t image_channels = render_image_channels(params);
  const size_t image_bytes =
      static_cast<size_t>(params.width) * params.height * image_channels * pixel_type_size(params.dtype);
  std::vector<uint8_t> images(image_bytes * starts.size());
  std::unique_ptr<ThreadPool> pool = threads > 1 ? std::make_unique<ThreadPool>(threads) : nullptr;
  const auto total = static_cast<int64_t>(starts.size());
  for (int64_t first = 0; first < total; first += batch_size) {
    const int64_t count = std::min(batch_size, total - first);
    const WindowBatch windows{series.data(), channels, starts.data() + first, count, seq_len};
    const BatchView out{images.data() + first * image_bytes, count,        params.width, params.height,
                        image_channels,                      params.dtype, static_cast<int64_t>(image_bytes)};
    const Status status = render_cpu_windows(params, windows, out, pool.get());
    EXPECT_TRUE(status.is_ok()) << status.to_string();
  }
  return images;
}

double coverage_of(uint8_t level, uint8_t background, uint8_t ink) {
  return static_cast<double>(background - level) / static_cast<double>(background - ink);
}

}  // namespace kiln::test
