// The matte family on the CPU: the reference implementation. Per output row, each source column is blended
// vertically once (vectorized), then every output pixel blends its two columns: the order of matte_px.h, so the
// bytes equal kiln_matte_at's. Mask rows are written run by run (see mask_row); a composite's row blends the frame
// over the background by the row's alphas. Threaded by rows; person pixels counted per row when asked for.
#include <atomic>
#include <cstring>
#include <vector>

#include "core/thread_pool.h"
#include "ops/matte.h"

namespace kiln {

namespace {

struct Span {  // output columns [begin, end) that blend the same two source columns
  int32_t begin = 0, end = 0, i0 = 0, i1 = 0;
};

class ImageMatte {
 public:
  // frame, back: a composite's (else unused).
  ImageMatte(const ImageView& in, const ImageView& out, const KilnMatteParams& p, const ImageView& frame,
             const ImageView& back)
      : m_in(in), m_out(out), m_p(p), m_frame(frame), m_back(back) {
    float r[4];
    kiln_matte_region(p, in.width, in.height, r);
    m_x = matte_taps_make(out.width, r[0], r[2], in.width);
    m_y = matte_taps_make(out.height, r[1], r[3], in.height);
    for (int32_t x = 0; x < out.width; ++x) {
      if (m_spans.empty() || m_spans.back().i0 != m_x.i0[x]) m_spans.push_back({x, x, m_x.i0[x], m_x.i1[x]});
      m_spans.back().end = x + 1;
    }
  }

  // Rows [begin, end); returns their person pixels when `count`, else 0.
  int64_t rows(int32_t begin, int32_t end, bool count) const {
    std::vector<float> column(static_cast<size_t>(m_in.width));
    std::vector<uint8_t> alpha(m_p.composite ? static_cast<size_t>(m_out.width) : 0);
    int64_t person = 0;
    for (int32_t y = begin; y < end; ++y) {
      column_fill(y, column.data());
      uint8_t* dst = m_out.row<uint8_t>(y);
      uint8_t* matte = m_p.composite ? alpha.data() : dst;
      if (m_p.alpha) {
        alpha_row(column.data(), matte);
      } else {
        mask_row(column.data(), matte);
      }
      if (m_p.composite) composite_row(y, matte, dst);
      if (count) {
        for (int32_t x = 0; x < m_out.width; ++x) person += kiln_matte_person(matte[x], m_p);
      }
    }
    return person;
  }

 private:
  void column_fill(int32_t y, float* column) const {
    const float wy = m_y.w[y];
    const float* r0 = m_in.row<float>(m_y.i0[y]);
    const float* r1 = m_in.row<float>(m_y.i1[y]);
    for (int32_t i = 0; i < m_in.width; ++i) column[i] = r0[i] + (r1[i] - r0[i]) * wy;
  }

  void alpha_row(const float* column, uint8_t* dst) const {
    for (int32_t x = 0; x < m_out.width; ++x) {
      const float a = column[m_x.i0[x]];
      dst[x] = kiln_matte_byte(a + (column[m_x.i1[x]] - a) * m_x.w[x], m_p);
    }
  }

  // Along a span the value a + (b - a) * w is monotonic in w (each rounding is), and w grows with x: the threshold
  // switches at most once per span, so both ends decide it, and only the switches are searched. A mask row is a
  // few long runs.
  void mask_row(const float* column, uint8_t* dst) const {
    const float* w = m_x.w.data();
    const auto fg = static_cast<uint8_t>(m_p.foreground);
    const auto bg = static_cast<uint8_t>(m_p.background);
    int32_t run_begin = 0;
    bool run_on = false;
    const auto run_end = [&](int32_t end) {
      std::memset(dst + run_begin, run_on ? fg : bg, static_cast<size_t>(end - run_begin));
      run_begin = end;
    };
    for (const Span& s : m_spans) {
      const float a = column[s.i0];
      const float d = column[s.i1] - a;
      const auto on = [&](int32_t x) { return a + d * w[x] >= m_p.threshold; };
      const bool first = on(s.begin);
      if (first != run_on) {
        run_end(s.begin);
        run_on = first;
      }
      if (on(s.end - 1) != first) {
        int32_t x = s.begin + 1;
        while (on(x) == first) ++x;
        run_end(x);
        run_on = !first;
      }
    }
    run_end(m_out.width);
  }

  void composite_row(int32_t y, const uint8_t* alpha, uint8_t* dst) const {
    const uint8_t* front = m_frame.row<uint8_t>(y);
    const uint8_t* back = m_back.row<uint8_t>(y);
    const std::array<float, 256>& units = matte_blend_units();
    for (int32_t x = 0; x < m_out.width; ++x) {
      const float unit = units[alpha[x]];
      for (int32_t c = 0; c < 3; ++c) dst[3 * x + c] = kiln_matte_blend_unit(front[3 * x + c], back[3 * x + c], unit);
    }
  }

  ImageView m_in, m_out;
  KilnMatteParams m_p;
  ImageView m_frame, m_back;
  MatteTaps m_x, m_y;
  std::vector<Span> m_spans;  // m_x grouped by source column pair, left to right
};

}  // namespace

Status matte_cpu(const OpCall& call, ThreadPool* pool) {
  if (call.in.space != MemorySpace::kHost || call.out.space != MemorySpace::kHost) {
    return invalid_argument("matte: the CPU takes host batches only");
  }
  const auto& params = *static_cast<const MatteParams*>(call.params);
  const KilnMatteParams p = matte_params_resolve(params);
  auto* counts = static_cast<int64_t*>(call.results);
  for (int64_t i = 0; i < call.in.count; ++i) {
    const ImageMatte matte(call.in[i], call.out[i], p, p.composite ? params.frames[i] : ImageView{},
                           p.composite ? params.backgrounds[i] : ImageView{});
    std::atomic<int64_t> person{0};
    const auto body = [&](int64_t begin, int64_t end) {
      person += matte.rows(static_cast<int32_t>(begin), static_cast<int32_t>(end), counts != nullptr);
    };
    parallel_for(pool, call.out[i].height, body);
    if (counts != nullptr) counts[i] = person.load();
  }
  return Status::ok();
}

}  // namespace kiln
