// kiln preprocess: decode images (RGB), run the fused preprocess op in batches and write one (N, C, H, W) or
// (N, H, W, C) float32/float16 array to .npy or .h5; unreadable inputs are skipped and reported.
#include <chrono>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/thread_pool.h"
#include "io/image_inputs.h"
#include "io/tensor_writer.h"
#include "kiln/codec.h"
#include "kiln/device.h"
#include "kiln/image_ops.h"

namespace kiln::cli {

namespace {

struct PreprocessFlags {
  std::vector<std::string> inputs;
  std::string list;
  std::string output;
  std::string size;
  std::string layout = "chw";
  std::string dtype = "f32";
  std::string interp = "bilinear";
  std::string mean;
  std::string std;
  std::string mode;
  float scale = 1.0f / 255.0f;
  float pad = 0;
  bool letterbox = false;
  bool bgr = false;
  bool quiet = false;
  int64_t batch = 64;
  int32_t threads = 0;
  int64_t max_pixels = kImageMaxPixels;
};

// "512x384" (width x height) or "512" (square).
Status size_parse(const std::string& text, int32_t* width, int32_t* height) {
  const auto bad = [&] {
    return invalid_argument("--size '" + text + "': expected WIDTHxHEIGHT with positive integers, e.g. 512x512");
  };
  const size_t x = text.find_first_of("xX");
  const std::string w = x == std::string::npos ? text : text.substr(0, x);
  const std::string h = x == std::string::npos ? text : text.substr(x + 1);
  const auto to_int = [](const std::string& s, int32_t* out) {
    if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos) return false;
    *out = std::stoi(s);
    return *out > 0;
  };
  if (!to_int(w, width) || !to_int(h, height)) return bad();
  return Status::ok();
}

// "0.485,0.456,0.406" -> 3 floats (or 1, used for all channels).
Status triple_parse(const char* name, const std::string& text, float out[4]) {
  std::vector<float> values;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      size_t used = 0;
      values.push_back(std::stof(item, &used));
      if (used != item.size()) throw std::invalid_argument(item);
    } catch (const std::exception&) {
      return invalid_argument(std::string(name) + " '" + text + "': expected three numbers like 0.5,0.5,0.5");
    }
  }
  if (values.size() == 1) values.assign(3, values[0]);
  if (values.size() != 3) return invalid_argument(std::string(name) + " '" + text + "': expected three numbers (r,g,b)");
  for (int c = 0; c < 3; ++c) out[c] = values[static_cast<size_t>(c)];
  return Status::ok();
}

int run_preprocess(const PreprocessFlags& f, const CLI::App& cmd) {
  ExecOptions exec;
  std::vector<std::string> notes;
  if (cmd.count("--mode") > 0) {
    auto mode = exec_mode_parse(f.mode);
    if (!mode.is_ok()) return exit_with(mode.status());
    exec.mode = mode.value();
  }
  if (Status s = exec_options_apply_env(OpKind::kPreprocess, &exec, &notes); !s.is_ok()) return exit_with(s);

  int32_t width = 0, height = 0;
  if (Status s = size_parse(f.size, &width, &height); !s.is_ok()) return exit_with(s);
  Layout layout = Layout::kHWC;
  if (f.layout == "chw") {
    layout = Layout::kCHW;
  } else if (f.layout != "hwc") {
    return exit_with(invalid_argument("--layout '" + f.layout + "': expected chw or hwc"));
  }
  PixelType dtype = PixelType::kF32;
  if (f.dtype == "f16" || f.dtype == "float16") {
    dtype = PixelType::kF16;
  } else if (f.dtype != "f32" && f.dtype != "float32") {
    return exit_with(invalid_argument("--dtype '" + f.dtype + "': expected f32 or f16"));
  }
  PreprocessParams params;
  auto interp = interp_parse(f.interp);
  if (!interp.is_ok()) return exit_with(interp.status());
  params.interp = interp.value();
  params.fit = f.letterbox ? ResizeFit::kLetterbox : ResizeFit::kStretch;
  for (float& p : params.pad) p = f.pad;
  params.swap_rb = f.bgr;
  params.scale = f.scale;
  if (!f.mean.empty()) {
    if (Status s = triple_parse("--mean", f.mean, params.mean); !s.is_ok()) return exit_with(s);
  }
  if (!f.std.empty()) {
    if (Status s = triple_parse("--std", f.std, params.std); !s.is_ok()) return exit_with(s);
  }
  for (int c = 0; c < 3; ++c) {
    if (params.std[c] == 0.0f) return exit_with(invalid_argument("--std values must not be 0"));
  }
  if (f.batch < 1) return exit_with(invalid_argument("--batch must be at least 1"));
  if (auto fmt = tensor_file_format_from_path(f.output); !fmt.is_ok()) return exit_with(fmt.status());

  std::vector<std::string> args = f.inputs;
  if (!f.list.empty()) args.push_back("@" + f.list);
  if (args.empty()) return exit_with(invalid_argument("no INPUTS given (files, folders, @list.txt or --list)"));
  auto collected = image_inputs_collect(args);
  if (!collected.is_ok()) return exit_with(collected.status());
  const std::vector<std::string>& paths = collected.value();
  if (paths.empty()) return exit_with(invalid_argument("no .jpg/.jpeg/.png images found in the inputs"));

  for (const auto& note : notes) std::fprintf(stderr, "%s\n", note.c_str());
  ThreadPool pool(f.threads);
  exec.pool = &pool;
  DecodeOptions decode;
  decode.channels = 3;
  decode.max_pixels = f.max_pixels;

  const std::vector<int64_t> item_shape = layout == Layout::kCHW ? std::vector<int64_t>{3, height, width}
                                                                  : std::vector<int64_t>{height, width, 3};
  TensorWriter writer;
  if (Status s = writer.open(f.output, item_shape, dtype); !s.is_ok()) return exit_with(s);
  std::vector<std::string> written;
  int64_t unreadable = 0;
  std::string backend, placement;
  std::vector<std::string> fallback_events;
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t begin = 0; begin < paths.size(); begin += static_cast<size_t>(f.batch)) {
    const size_t end = std::min(paths.size(), begin + static_cast<size_t>(f.batch));
    const std::vector<std::string> chunk(paths.begin() + static_cast<std::ptrdiff_t>(begin),
                                         paths.begin() + static_cast<std::ptrdiff_t>(end));
    DecodedBatch batch = image_decode_files(chunk, decode, &pool);
    for (size_t i = 0; i < chunk.size(); ++i) {
      if (batch.index[i] < 0) {
        ++unreadable;
        std::fprintf(stderr, "kiln: skipped %s\n", batch.status[i].message().c_str());
      }
    }
    const int64_t n = batch.images.count();
    if (n == 0) continue;
    const std::vector<ImageShape> shapes(static_cast<size_t>(n), ImageShape{width, height, 3, dtype, layout});
    VarShapeBatch out = VarShapeBatch::allocate(shapes);
    ExecReport report;
    if (Status s = preprocess(params, batch.images.view(), out.view(), exec, &report); !s.is_ok()) return exit_with(s);
    if (backend.empty()) {
      backend = report.backend;
      placement = report.placement;
    } else if (backend.find(report.backend) == std::string::npos) {
      backend += "+" + report.backend;
    }
    if (!report.fallback.empty()) fallback_events.push_back(report.fallback);
    for (int64_t k = 0; k < n; ++k) {
      const ImageView& img = out[k];
      if (!img.is_packed()) return exit_with(Status(Errc::kInvalidArgument, "preprocess: output image not packed"));
      if (Status s = writer.append(img.data, 1); !s.is_ok()) return exit_with(s);
      written.push_back(chunk[static_cast<size_t>(batch.source[static_cast<size_t>(k)])]);
    }
    if (!f.quiet) {
      std::fprintf(stderr, "Processed %zu/%zu inputs (%s)\n", end, paths.size(), report.backend.c_str());
    }
  }
  if (written.empty()) {
    writer.abandon();
    return exit_with(io_error("none of the " + std::to_string(paths.size()) + " inputs could be read"));
  }
  TensorAttributes attrs;
  attrs.text = {{"layout", layout == Layout::kCHW ? "chw" : "hwc"},
                {"dtype", dtype == PixelType::kF16 ? "float16" : "float32"},
                {"interp", interp_name(params.interp)},
                {"fit", f.letterbox ? "letterbox" : "stretch"},
                {"channel_order", f.bgr ? "bgr" : "rgb"},
                {"backend", backend}};
  attrs.numbers = {{"size", {static_cast<double>(width), static_cast<double>(height)}},
                   {"scale", {params.scale}},
                   {"mean", {params.mean[0], params.mean[1], params.mean[2]}},
                   {"std", {params.std[0], params.std[1], params.std[2]}},
                   {"pad", {f.pad}},
                   {"skipped", {static_cast<double>(unreadable)}}};
  if (Status s = writer.finish(written, attrs); !s.is_ok()) return exit_with(s);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string shape = layout == Layout::kCHW
                                ? "(" + std::to_string(written.size()) + ", 3, " + std::to_string(height) + ", " +
                                      std::to_string(width) + ")"
                                : "(" + std::to_string(written.size()) + ", " + std::to_string(height) + ", " +
                                      std::to_string(width) + ", 3)";
  std::printf("Preprocessed %zu images, %lld unreadable (skipped)\n", written.size(), static_cast<long long>(unreadable));
  std::printf("Time: %.2f s, %.0f images/s\n", seconds,
              seconds > 0 ? static_cast<double>(written.size()) / seconds : 0.0);
  std::printf("Backend: %s (%s)\n", backend.c_str(), placement.c_str());
  if (!fallback_events.empty()) {
    std::printf("Fallbacks: %zu\n", fallback_events.size());
    for (const auto& e : fallback_events) std::printf("  %s\n", e.c_str());
  }
  std::printf("Output: %s %s %s\n", f.output.c_str(), shape.c_str(), dtype == PixelType::kF16 ? "float16" : "float32");
  return 0;
}

}  // namespace

Runner preprocess_command_add(CLI::App& app) {
  auto* cmd = app.add_subcommand("preprocess", "Decode, resize and normalize images into one .npy/.h5 tensor");
  auto f = std::make_shared<PreprocessFlags>();
  cmd->add_option("inputs", f->inputs, "Image files, folders (recursive .jpg/.jpeg/.png) or @list.txt");
  cmd->add_option("--list", f->list, "A list file: one path per line, '#' comments");
  cmd->add_option("-o,--output", f->output, "Output .npy or .h5")->required();
  cmd->add_option("--size", f->size, "Output size WIDTHxHEIGHT, e.g. 512x512")->required();
  cmd->add_option("--layout", f->layout, "chw (default) | hwc");
  cmd->add_option("--dtype", f->dtype, "f32 (default) | f16");
  cmd->add_option("--interp", f->interp, "bilinear (default) | nearest | area | bicubic");
  cmd->add_flag("--letterbox", f->letterbox, "Keep the aspect ratio, center and pad with --pad");
  cmd->add_option("--pad", f->pad, "Letterbox border level 0-255 (default 0)")->check(CLI::Range(0.0, 255.0));
  cmd->add_option("--scale", f->scale, "Multiply levels by this before mean/std (default 1/255)");
  cmd->add_option("--mean", f->mean, "Per output channel, after scale (default 0.485,0.456,0.406)");
  cmd->add_option("--std", f->std, "Per output channel (default 0.229,0.224,0.225)");
  cmd->add_flag("--bgr", f->bgr, "Write channels in B,G,R order (inputs decode as RGB)");
  cmd->add_option("--batch", f->batch, "Images per batch (default 64)");
  cmd->add_option("--threads", f->threads, "Worker threads for decoding and the CPU op (default: all cores)");
  cmd->add_option("--max-pixels", f->max_pixels, "Refuse images larger than this many pixels (default 64 Mi)");
  cmd->add_option("--mode", f->mode, "auto | gpu | cpu");
  cmd->add_flag("-q,--quiet", f->quiet, "No progress output");
  return [f, cmd] { return run_preprocess(*f, *cmd); };
}

}  // namespace kiln::cli
