// Fused preprocess on the CPU: per output row, the resize row and then swap + normalize + store straight into the
// f32/f16 HWC/CHW output, with no intermediate image. Rows are spread over the pool. In the reference mode the
// resize row is resize_row_cpu (the float expression of kiln_resize_sample); otherwise two-tap resizes of 3/4
// channel u8 images take the fast path (resize_bilinear_u8.h; within 0.07 input levels * scale / std). NV12
// inputs are converted to RGB first (color_cpu); the device kernels convert each pixel a tap reads, with the same
// integer arithmetic.
#include <functional>
#include <optional>
#include <vector>

#include "core/thread_pool.h"
#include "ops/color.h"
#include "ops/cpu/resize_bilinear_u8.h"
#include "ops/preprocess.h"

namespace kiln {

namespace {

template <typename Out>
Out out_value(float v) {
  if constexpr (sizeof(Out) == 2) {
    return static_cast<uint16_t>(kiln_float_to_half(v));
  } else {
    return v;
  }
}

// Writes the pad value into columns [0, x0) and [x1, width) of every channel of output row y.
template <typename Out>
void pad_row(const ImageView& out, int32_t y, int32_t x0, int32_t x1, const Out* pad) {
  const bool planar = out.layout == Layout::kCHW;
  const int32_t cn = out.channels;
  for (int32_t c = 0; c < cn; ++c) {
    Out* dst = out.row<Out>(y, planar ? c : 0);
    const int32_t step = planar ? 1 : cn;
    const int32_t at = planar ? 0 : c;
    for (int32_t x = 0; x < x0; ++x) dst[x * step + at] = pad[c];
    for (int32_t x = x1; x < out.width; ++x) dst[x * step + at] = pad[c];
  }
}

// Per thread: the resized row of output row y, normalized into planes (the output's own rows for f32 CHW, else
// `planes` scratch), by the fast two-tap u8 path (resize_bilinear_u8.h).
class FastRows {
 public:
  FastRows(const BilinearU8Tables& tables, const ImageView& out, const KilnPreprocessConsts& k, const int32_t* source)
      : m_tables(tables),
        m_rows(tables),
        m_out(out),
        m_direct(out.layout == Layout::kCHW && out.type == PixelType::kF32) {
    for (int32_t c = 0; c < out.channels; ++c) {
      m_norm.mul[source[c]] = k.scale / k.std[c];
      m_norm.add[source[c]] = -k.mean[c] / k.std[c];
      m_plane_of[source[c]] = c;
    }
    if (!m_direct) m_scratch.resize(static_cast<size_t>(tables.width) * static_cast<size_t>(out.channels));
  }

  // Output row y, resized and normalized: in place when direct(), else into plane(c) for output channel c.
  void run(const ImageView& in, const ResizePlan& plan, int32_t y) {
    for (int32_t s = 0; s < m_out.channels; ++s) {
      const int32_t c = m_plane_of[s];
      m_norm.planes[s] = m_direct ? m_out.row<float>(y, c) + plan.dst.x
                                  : m_scratch.data() + static_cast<size_t>(c) * static_cast<size_t>(m_tables.width);
    }
    const float* h0 = nullptr;
    const float* h1 = nullptr;
    float b0 = 0.0f;
    float b1 = 0.0f;
    m_rows.rows_for(in, plan, y - plan.dst.y, &h0, &h1, &b0, &b1);
    avx2::bilinear_u8_vrow_planes(h0, h1, b0, b1, m_tables, m_norm);
  }
  bool direct() const { return m_direct; }
  const float* plane(int32_t c) const {
    return m_scratch.data() + static_cast<size_t>(c) * static_cast<size_t>(m_tables.width);
  }

 private:
  const BilinearU8Tables& m_tables;
  BilinearU8Rows m_rows;
  const ImageView& m_out;
  bool m_direct;
  BilinearPlanes m_norm;
  int32_t m_plane_of[4] = {};
  std::vector<float> m_scratch;
};

template <typename Out>
void preprocess_image(const ImageView& in, const ImageView& out, const ResizePlan& plan, const KilnPreprocessConsts& k,
                      ThreadPool* pool) {
  const int32_t cn = in.channels;
  const bool planar = out.layout == Layout::kCHW;
  const size_t span = static_cast<size_t>(plan.x.hi - plan.x.lo + 1) * static_cast<size_t>(cn);
  int32_t source[4];
  Out pad[4];
  for (int32_t c = 0; c < cn; ++c) {
    source[c] = kiln_preprocess_source_channel(k.swap_rb, c);
    pad[c] = out_value<Out>(kiln_preprocess_normalize(k.pad[source[c]], k.scale, k.mean[c], k.std[c]));
  }
  const bool fast = bilinear_u8_usable(plan, in, cn);
  const BilinearU8Tables tables = fast ? bilinear_u8_tables(plan, cn, in.width) : BilinearU8Tables{};
  auto rows = [&](int64_t begin, int64_t end) {
    std::optional<FastRows> fast_rows;
    if (fast) fast_rows.emplace(tables, out, k, source);
    std::vector<float> scratch(fast ? 0 : span);
    std::vector<float> values(fast ? 0 : static_cast<size_t>(plan.dst.width) * static_cast<size_t>(cn));
    for (int64_t yy = begin; yy < end; ++yy) {
      const auto y = static_cast<int32_t>(yy);
      const int32_t ty = y - plan.dst.y;
      const bool inside_row = ty >= 0 && ty < plan.dst.height;
      const int32_t x0 = inside_row ? plan.dst.x : out.width;
      const int32_t x1 = inside_row ? plan.dst.x + plan.dst.width : out.width;
      pad_row<Out>(out, y, x0, x1, pad);
      if (!inside_row) continue;
      if (fast) fast_rows->run(in, plan, y);
      if (fast && fast_rows->direct()) continue;
      if (!fast) resize_row_cpu(in, cn, plan, ty, scratch.data(), values.data());
      for (int32_t c = 0; c < cn; ++c) {
        Out* dst = out.row<Out>(y, planar ? c : 0);
        const int32_t step = planar ? 1 : cn;
        Out* d = dst + x0 * step + (planar ? 0 : c);
        const int32_t n = x1 - x0;
        if (fast) {
          const float* v = fast_rows->plane(c);
          for (int32_t x = 0; x < n; ++x) d[x * step] = out_value<Out>(v[x]);
          continue;
        }
        const float* v = values.data() + source[c];
        for (int32_t x = 0; x < n; ++x) {
          d[x * step] = out_value<Out>(kiln_preprocess_normalize(v[x * cn], k.scale, k.mean[c], k.std[c]));
        }
      }
    }
  };
  parallel_for(pool, out.height, rows, ThreadPool::min_rows(static_cast<int64_t>(out.width) * cn));
}

}  // namespace

Status preprocess_cpu(const OpCall& call, ThreadPool* pool) {
  KILN_TRY(preprocess_validate(call));
  const auto& params = *static_cast<const PreprocessParams*>(call.params);
  const KilnPreprocessConsts k = preprocess_consts(params);
  std::vector<uint8_t> rgb;
  for (int64_t i = 0; i < call.in.count; ++i) {
    ImageView in = call.in[i];
    const ImageView& out = call.out[i];
    if (params.nv12) {
      const int32_t rows = preprocess_nv12_rows(in.height);
      rgb.resize(static_cast<size_t>(in.width) * static_cast<size_t>(rows) * 3);
      const ImageView converted = image_view_packed(rgb.data(), in.width, rows, 3, PixelType::kU8, Layout::kHWC);
      ColorParams to_rgb;
      to_rgb.conversion = ColorConversion::kNv12ToRgb;
      to_rgb.yuv_matrix = params.yuv_matrix;
      to_rgb.yuv_full_range = params.yuv_full_range;
      KILN_TRY(color_cpu(OpCall{OpKind::kColor, &to_rgb, VarShapeBatchView{&in, 1}, VarShapeBatchView{&converted, 1},
                                nullptr},
                         pool));
      in = converted;
    }
    const ResizePlan plan =
        resize_plan_make(params.interp, params.fit, RectI{0, 0, in.width, in.height}, out.width, out.height);
    if (out.type == PixelType::kF16) {
      preprocess_image<uint16_t>(in, out, plan, k, pool);
    } else {
      preprocess_image<float>(in, out, plan, k, pool);
    }
  }
  return Status::ok();
}

}  // namespace kiln
