// Quality on the CPU: one pass over each image's rows with a sliding window of three gray rows (each row converted
// to gray once per block), integer Laplacian and Sobel, int64 sums. Work items are (image, block of rows); all
// sums are exact integers, so the result does not depend on the split or on the number of threads.
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/thread_pool.h"
#include "ops/quality.h"

namespace kiln {

namespace {

// Rows per work item when a pool spreads the work (a single image is split into blocks of this many rows).
constexpr int32_t kBlockRows = 64;
// Columns summed per chunk: int32 sums of up to 2048 squared Laplacians stay below 2048 * 1020^2 < 2^31, and a
// double sum of up to 2048 magnitudes (multiples of 2^-23 below 2^11) stays below 2^30, so it is exact in double
// (53-bit mantissa) whatever the order of the additions.
constexpr int32_t kChunk = 2048;

struct WorkItem {
  int64_t image = 0;
  int32_t y0 = 0;
  int32_t y1 = 0;
};

// Row buffers of one worker: three gray rows padded by one reflected pixel each side, and one row of magnitudes.
struct RowBuffers {
  std::vector<uint8_t> gray[3];
  int32_t tag[3] = {-1, -1, -1};
  const ImageView* image = nullptr;
  std::vector<float> magnitude;

  void reset_for(const ImageView& v) {
    const auto padded = static_cast<size_t>(v.width) + 2;
    for (auto& g : gray) {
      if (g.size() < padded) g.resize(padded);
    }
    if (magnitude.size() < static_cast<size_t>(v.width)) magnitude.resize(static_cast<size_t>(v.width));
    tag[0] = tag[1] = tag[2] = -1;
    image = &v;
  }
};

// Gray levels of an interleaved row; channel indices as constants so the loop vectorizes.
template <int kChannels, int kRed, int kBlue>
void gray_hwc(const uint8_t* src, int32_t width, uint8_t* g) {
  for (int32_t x = 0; x < width; ++x) {
    const uint8_t* p = src + kChannels * x;
    g[x] = static_cast<uint8_t>(kiln_quality_gray_rgb(p[kRed], p[1], p[kBlue]));
  }
}

// Gray levels of row y of `v` into out[1 .. width], with the reflect-101 pixels at out[0] and out[width + 1].
void gray_row(const ImageView& v, int32_t y, bool bgr, uint8_t* out) {
  const int32_t w = v.width;
  uint8_t* g = out + 1;
  if (v.channels == 1) {
    std::memcpy(g, v.row<const uint8_t>(y), static_cast<size_t>(w));
  } else if (v.layout == Layout::kHWC) {
    const uint8_t* src = v.row<const uint8_t>(y);
    if (v.channels == 3) {
      bgr ? gray_hwc<3, 2, 0>(src, w, g) : gray_hwc<3, 0, 2>(src, w, g);
    } else {
      bgr ? gray_hwc<4, 2, 0>(src, w, g) : gray_hwc<4, 0, 2>(src, w, g);
    }
  } else {
    const uint8_t* r = v.row<const uint8_t>(y, bgr ? 2 : 0);
    const uint8_t* gg = v.row<const uint8_t>(y, 1);
    const uint8_t* b = v.row<const uint8_t>(y, bgr ? 0 : 2);
    for (int32_t x = 0; x < w; ++x) g[x] = static_cast<uint8_t>(kiln_quality_gray_rgb(r[x], gg[x], b[x]));
  }
  out[0] = g[kiln_quality_reflect(-1, w)];
  out[w + 1] = g[kiln_quality_reflect(w, w)];
}

// The padded gray row `y`, converted at most once while it stays among the three rows in use.
const uint8_t* row_get(RowBuffers& rb, int32_t y, const int32_t keep[3], bool bgr) {
  for (int k = 0; k < 3; ++k) {
    if (rb.tag[k] == y) return rb.gray[k].data();
  }
  for (int k = 0; k < 3; ++k) {
    if (rb.tag[k] != keep[0] && rb.tag[k] != keep[1] && rb.tag[k] != keep[2]) {
      gray_row(*rb.image, y, bgr, rb.gray[k].data());
      rb.tag[k] = y;
      return rb.gray[k].data();
    }
  }
  return nullptr;  // unreachable: at most three rows are kept
}

// One row's sums: up/cur/dn are padded gray rows (index x + 1 is column x).
void row_sums(const uint8_t* up, const uint8_t* cur, const uint8_t* dn, int32_t width, float* magnitude,
              KilnQualitySums& sums) {
  for (int32_t x0 = 0; x0 < width; x0 += kChunk) {
    const int32_t n = std::min(kChunk, width - x0);
    const uint8_t* u = up + x0;
    const uint8_t* c = cur + x0;
    const uint8_t* d = dn + x0;
    int32_t gray_sum = 0, gray_sq = 0, lap_sum = 0, lap_sq = 0;
    for (int32_t x = 0; x < n; ++x) {
      const int32_t g00 = u[x], g01 = u[x + 1], g02 = u[x + 2];
      const int32_t g10 = c[x], g11 = c[x + 1], g12 = c[x + 2];
      const int32_t g20 = d[x], g21 = d[x + 1], g22 = d[x + 2];
      const int32_t lap = g01 + g10 + g12 + g21 - 4 * g11;
      const int32_t gx = (g02 - g00) + 2 * (g12 - g10) + (g22 - g20);
      const int32_t gy = (g20 + 2 * g21 + g22) - (g00 + 2 * g01 + g02);
      gray_sum += g11;
      gray_sq += g11 * g11;
      lap_sum += lap;
      lap_sq += lap * lap;
      magnitude[x] = kiln_sqrtf(static_cast<float>(gx * gx + gy * gy));
    }
    // Exact in any order (see kChunk): eight lanes so the compiler can vectorize the additions.
    double lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int32_t x = 0;
    for (; x + 8 <= n; x += 8) {
      for (int k = 0; k < 8; ++k) lanes[k] += static_cast<double>(magnitude[x + k]);
    }
    for (; x < n; ++x) lanes[0] += static_cast<double>(magnitude[x]);
    const double mag = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
    sums.gray_sum += gray_sum;
    sums.gray_sq += gray_sq;
    sums.lap_sum += lap_sum;
    sums.lap_sq += lap_sq;
    sums.mag_fixed += static_cast<int64_t>(mag * static_cast<double>(KILN_QUALITY_MAG_SCALE));
  }
}

KilnQualitySums block_sums(RowBuffers& rb, const ImageView& v, int32_t y0, int32_t y1, bool bgr) {
  KilnQualitySums sums{};
  rb.reset_for(v);
  for (int32_t y = y0; y < y1; ++y) {
    const int32_t keep[3] = {kiln_quality_reflect(y - 1, v.height), y, kiln_quality_reflect(y + 1, v.height)};
    const uint8_t* up = row_get(rb, keep[0], keep, bgr);
    const uint8_t* cur = row_get(rb, keep[1], keep, bgr);
    const uint8_t* dn = row_get(rb, keep[2], keep, bgr);
    row_sums(up, cur, dn, v.width, rb.magnitude.data(), sums);
  }
  return sums;
}

}  // namespace

Status quality_cpu(const OpCall& call, ThreadPool* pool) {
  if (call.in.count > 0 && call.in.space != MemorySpace::kHost) {
    return invalid_argument("quality: the CPU backend needs host images");
  }
  const auto& params = *static_cast<const QualityParams*>(call.params);
  auto* results = static_cast<QualityMetrics*>(call.results);
  const bool bgr = params.bgr;

  // Work items: one per image without a pool; blocks of kBlockRows rows with one.
  std::vector<WorkItem> items;
  for (int64_t i = 0; i < call.in.count; ++i) {
    const int32_t h = call.in[i].height;
    const int32_t step = pool != nullptr ? kBlockRows : h;
    for (int32_t y = 0; y < h; y += step) items.push_back(WorkItem{i, y, std::min(h, y + step)});
  }
  std::vector<KilnQualitySums> partial(items.size());
  const auto run = [&](int64_t begin, int64_t end) {
    RowBuffers rb;
    for (int64_t k = begin; k < end; ++k) {
      const WorkItem& item = items[static_cast<size_t>(k)];
      partial[static_cast<size_t>(k)] = block_sums(rb, call.in[item.image], item.y0, item.y1, bgr);
    }
  };
  if (pool != nullptr && items.size() > 1) {
    pool->parallel_for(static_cast<int64_t>(items.size()), run);
  } else {
    run(0, static_cast<int64_t>(items.size()));
  }

  // Partial sums combined in block order (exact integers in any case).
  std::vector<KilnQualitySums> totals(static_cast<size_t>(call.in.count), KilnQualitySums{});
  for (size_t k = 0; k < items.size(); ++k) quality_sums_add(totals[static_cast<size_t>(items[k].image)], partial[k]);
  for (int64_t i = 0; i < call.in.count; ++i) {
    const int64_t pixels = static_cast<int64_t>(call.in[i].width) * call.in[i].height;
    results[i] = quality_metrics_from_sums(totals[static_cast<size_t>(i)], pixels);
  }
  return Status::ok();
}

}  // namespace kiln
