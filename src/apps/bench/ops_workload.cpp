#include "apps/bench/ops_workload.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "apps/bench/bench_random.h"
#include "kiln/ops/blur.h"
#include "kiln/ops/color.h"
#include "kiln/ops/enhance.h"
#include "kiln/ops/mask.h"
#include "kiln/ops/matte.h"
#include "kiln/ops/normalize.h"
#include "kiln/ops/probability.h"
#include "kiln/ops/preprocess.h"
#include "kiln/ops/resize.h"
#include "kiln/ops/warp.h"

namespace kiln::bench {

namespace {

constexpr int64_t kMaxWorkloadBytes = int64_t{2} << 30;  // inputs + outputs of one call
constexpr int32_t kMaskClasses = 21;

// Sets the workload's kind and parameters and, for `batch` images, its shapes: in and out arrive as the size's
// u8 HWC RGB image.
using WorkloadFactory = void (*)(Workload& w, ImageShape& in, ImageShape& out, int64_t batch);

struct BenchOp {
  const char* name;
  WorkloadFactory make;
};

template <typename Params>
Params& params_make(Workload& w, OpKind kind) {
  auto params = std::make_shared<Params>();
  w.kind = kind;
  w.params = params;
  return *params;
}

void resize_make(Workload& w, ImageShape& out, Interp interp) {
  params_make<ResizeParams>(w, OpKind::kResize).interp = interp;
  out.width /= 2;
  out.height /= 2;
}

// A face-alignment-like similarity: a square of half the shorter side around the centre, rotated 12 degrees,
// onto 112x112.
void warp_affine_make(Workload& w, ImageShape& in, ImageShape& out, int64_t batch) {
  const int32_t width = in.width, height = in.height;
  out.width = out.height = 112;
  const double side = std::min(width, height) / 2.0, scale = 112.0 / side, angle = 12.0 * 3.14159265358979 / 180.0;
  const double a = scale * std::cos(angle), b = scale * std::sin(angle), cx = width / 2.0, cy = height / 2.0;
  const float m[6] = {static_cast<float>(a), static_cast<float>(-b), static_cast<float>(56.0 - (a * cx - b * cy)),
                      static_cast<float>(b), static_cast<float>(a), static_cast<float>(56.0 - (b * cx + a * cy))};
  w.matrices.reset(new float[static_cast<size_t>(batch)][6]);
  for (int64_t i = 0; i < batch; ++i) std::copy(m, m + 6, w.matrices[i]);
  params_make<WarpParams>(w, OpKind::kWarp).matrices = w.matrices.get();
}

const BenchOp kBenchOps[] = {
    {"fused_preprocess",
     [](Workload& w, ImageShape&, ImageShape& out, int64_t) {
       params_make<PreprocessParams>(w, OpKind::kPreprocess).swap_rb = true;
       out = {512, 512, 3, PixelType::kF32, Layout::kCHW};
     }},
    // Video frames as NVDEC decodes them (NV12: luma rows, then half as many chroma rows) -> the model's input, the
    // conversion to RGB in the same pass (kiln segment's mask path on the device).
    {"nv12_preprocess",
     [](Workload& w, ImageShape& in, ImageShape& out, int64_t) {
       params_make<PreprocessParams>(w, OpKind::kPreprocess).nv12 = true;
       in = {in.width, in.height + (in.height + 1) / 2, 1, PixelType::kU8, Layout::kHWC};
       out = {512, 512, 3, PixelType::kF32, Layout::kCHW};
     }},
    {"quality",
     [](Workload& w, ImageShape&, ImageShape&, int64_t batch) {
       params_make<QualityParams>(w, OpKind::kQuality);
       w.metrics.resize(static_cast<size_t>(batch));
     }},
    {"resize_bilinear",
     [](Workload& w, ImageShape&, ImageShape& out, int64_t) { resize_make(w, out, Interp::kBilinear); }},
    {"resize_area", [](Workload& w, ImageShape&, ImageShape& out, int64_t) { resize_make(w, out, Interp::kArea); }},
    {"cvt_gray",
     [](Workload& w, ImageShape&, ImageShape& out, int64_t) {
       params_make<ColorParams>(w, OpKind::kColor).conversion = ColorConversion::kRgbToGray;
       out.channels = 1;
     }},
    {"warp_affine", warp_affine_make},
    {"unsharp",
     [](Workload& w, ImageShape&, ImageShape&, int64_t) {
       EnhanceParams& p = params_make<EnhanceParams>(w, OpKind::kEnhance);
       p.unsharp_radius = 2.0f;
       p.unsharp_percent = 150.0f;
       p.unsharp_threshold = 3;
     }},
    // Segmentation logits at a quarter of the image resolution (a typical output stride), 21 classes.
    {"mask",
     [](Workload& w, ImageShape& in, ImageShape& out, int64_t) {
       params_make<MaskParams>(w, OpKind::kMask).activation = MaskActivation::kSoftmax;
       in = {std::max(in.width / 4, 1), std::max(in.height / 4, 1), kMaskClasses, PixelType::kF32, Layout::kCHW};
       out = {in.width, in.height, 1, PixelType::kU8, Layout::kCHW};
     }},
    // A segmentation model's 256 x 256 person probability -> the image size's mask (kiln segment's per-frame step).
    {"matte",
     [](Workload& w, ImageShape& in, ImageShape& out, int64_t) {
       params_make<MatteParams>(w, OpKind::kMatte);
       out = {in.width, in.height, 1, PixelType::kU8, Layout::kHWC};
       in = {256, 256, 1, PixelType::kF32, Layout::kHWC};
     }},
    // A two-class segmentation output at 256 x 256 -> the person's probability (kiln segment's step before the matte;
    // without temporal smoothing, so every run writes the same map whatever the output held).
    {"probability",
     [](Workload& w, ImageShape& in, ImageShape& out, int64_t) {
       ProbabilityParams& p = params_make<ProbabilityParams>(w, OpKind::kProbability);
       p.activation = ProbabilityActivation::kSoftmax;
       p.channel = 1;
       in = {256, 256, 2, PixelType::kF32, Layout::kCHW};
       out = {256, 256, 1, PixelType::kF32, Layout::kHWC};
     }},
    // kiln segment's blurred background at its default --blur_radius 25 (shrink by 6, two boxes of radius 2, enlarge).
    {"blur",
     [](Workload& w, ImageShape&, ImageShape&, int64_t) {
       params_make<BlurParams>(w, OpKind::kBlur) = blur_params_for_radius(25);
     }},
    {"normalize",
     [](Workload& w, ImageShape& in, ImageShape& out, int64_t) {
       NormalizeParams& p = params_make<NormalizeParams>(w, OpKind::kNormalize);
       p.mean = {0.485f, 0.456f, 0.406f};
       p.std = {0.229f, 0.224f, 0.225f};
       in = {in.width, in.height, 3, PixelType::kF32, Layout::kCHW};
       out = in;
     }},
};

// Seeded pixels: u8 uniform, f32 uniform in [-4, 4).
void batch_fill(const VarShapeBatch& batch, uint64_t seed) {
  uint64_t state = seed;
  for (const ImageView& v : batch.images()) {
    const int32_t planes = v.layout == Layout::kCHW ? v.channels : 1;
    const int64_t row_values = static_cast<int64_t>(v.width) * (v.layout == Layout::kHWC ? v.channels : 1);
    for (int32_t p = 0; p < planes; ++p) {
      for (int32_t y = 0; y < v.height; ++y) {
        if (v.type == PixelType::kU8) {
          auto* row = v.row<uint8_t>(y, p);
          for (int64_t x = 0; x < row_values; ++x) row[x] = static_cast<uint8_t>(bench::splitmix64(state) >> 56);
        } else if (v.type == PixelType::kF32) {
          auto* row = v.row<float>(y, p);
          for (int64_t x = 0; x < row_values; ++x) {
            row[x] = static_cast<float>(static_cast<double>(bench::splitmix64(state) >> 11) * 0x1.0p-53 * 8.0 - 4.0);
          }
        }
      }
    }
  }
}

// A person-like blob of probabilities (uniform noise would make every mask row runs of a pixel or two).
void probabilities_fill(const VarShapeBatch& batch) {
  for (const ImageView& v : batch.images()) {
    for (int32_t y = 0; y < v.height; ++y) {
      auto* row = v.row<float>(y);
      for (int32_t x = 0; x < v.width; ++x) {
        const double dx = (x - v.width * 0.5) / (v.width * 0.25), dy = (y - v.height * 0.55) / (v.height * 0.4);
        row[x] = static_cast<float>(1.0 / (1.0 + std::exp(6.0 * (dx * dx + dy * dy - 1.0))));
      }
    }
  }
}

std::string shape_text(const ImageShape& s) {
  return std::to_string(s.width) + "x" + std::to_string(s.height) + "x" + std::to_string(s.channels) + " " +
         pixel_type_name(s.type) + (s.channels > 1 ? std::string(" ") + layout_name(s.layout) : std::string());
}

int64_t shape_bytes(const ImageShape& s) {
  return static_cast<int64_t>(pixel_type_size(s.type)) * s.channels * s.width * s.height;
}

}  // namespace

const std::vector<std::string>& workload_op_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const BenchOp& op : kBenchOps) out.emplace_back(op.name);
    return out;
  }();
  return names;
}

std::string workload_op_names_text() {
  std::string text;
  for (const std::string& name : workload_op_names()) text += (text.empty() ? "" : ", ") + name;
  return text;
}

Result<std::unique_ptr<Workload>> workload_make(const std::string& op, const BenchSize& size, int64_t batch) {
  const auto it =
      std::find_if(std::begin(kBenchOps), std::end(kBenchOps), [&](const BenchOp& o) { return op == o.name; });
  if (it == std::end(kBenchOps)) return invalid_argument("bench ops: unknown op '" + op + "'");
  auto w = std::make_unique<Workload>();
  ImageShape in{size.width, size.height, 3, PixelType::kU8, Layout::kHWC};
  ImageShape out = in;
  it->make(*w, in, out, batch);
  const bool has_out = w->metrics.empty();  // quality gives per-image results instead of an output batch
  if ((shape_bytes(in) + (has_out ? shape_bytes(out) : 0)) * batch > kMaxWorkloadBytes) {
    return Status(Errc::kOutOfMemory, "bench ops: " + op + " " + size.name + " batch " + std::to_string(batch) +
                                          " needs more than 2 GiB; skipped");
  }
  w->shape = shape_text(in) + (has_out ? " -> " + shape_text(out) : std::string(" -> metrics"));
  w->in = VarShapeBatch::allocate(std::vector<ImageShape>(static_cast<size_t>(batch), in));
  batch_fill(w->in, 0x6b696c6e + static_cast<uint64_t>(batch));
  if (w->kind == OpKind::kMatte) probabilities_fill(w->in);
  if (has_out) w->out = VarShapeBatch::allocate(std::vector<ImageShape>(static_cast<size_t>(batch), out));
  return w;
}

}  // namespace kiln::bench
