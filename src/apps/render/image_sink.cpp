#include "apps/render/image_sink.h"

#include <algorithm>
#include <cctype>

namespace kiln {

namespace {
std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}
}  // namespace

const char* output_format_name(OutputFormat format) {
  switch (format) {
    case OutputFormat::kAuto: return "auto";
    case OutputFormat::kHdf5: return "hdf5";
    case OutputFormat::kPng: return "png";
    case OutputFormat::kJpeg: return "jpeg";
    case OutputFormat::kNpy: return "npy";
  }
  return "?";
}

const char* compression_name(Compression compression) {
  switch (compression) {
    case Compression::kZstd: return "zstd";
    case Compression::kGzip: return "gzip";
    case Compression::kNone: return "none";
  }
  return "?";
}

Result<OutputFormat> output_format_parse(const std::string& name) {
  const std::string n = lower(name);
  if (n == "auto") return OutputFormat::kAuto;
  if (n == "hdf5" || n == "h5") return OutputFormat::kHdf5;
  if (n == "png") return OutputFormat::kPng;
  if (n == "jpeg" || n == "jpg") return OutputFormat::kJpeg;
  if (n == "npy") return OutputFormat::kNpy;
  return invalid_argument("unknown output format '" + name + "' (expected auto, hdf5, png, jpeg or npy)");
}

OutputFormat output_format_resolve(OutputFormat format, const std::string& path) {
  if (format != OutputFormat::kAuto) return format;
  const std::string p = lower(path);
  return p.size() >= 4 && p.compare(p.size() - 4, 4, ".npy") == 0 ? OutputFormat::kNpy : OutputFormat::kHdf5;
}

Result<Compression> compression_parse(const std::string& name) {
  const std::string n = lower(name);
  if (n == "zstd") return Compression::kZstd;
  if (n == "gzip" || n == "deflate") return Compression::kGzip;
  if (n == "none") return Compression::kNone;
  return invalid_argument("unknown compression '" + name + "' (expected zstd, gzip or none)");
}

Result<std::unique_ptr<ImageSink>> sink_create(const OutputSpec& spec) {
  if (spec.path.empty()) return invalid_argument("no output path given");
  switch (output_format_resolve(spec.format, spec.path)) {
    case OutputFormat::kAuto:
    case OutputFormat::kHdf5: return hdf5_sink_create(spec);
    case OutputFormat::kNpy: return npy_sink_create(spec);
#if KILN_HAS_JPEG
    case OutputFormat::kPng: return png_sink_create(spec);
    case OutputFormat::kJpeg: return jpeg_sink_create(spec);
#else
    case OutputFormat::kPng:
    case OutputFormat::kJpeg:
      return unsupported_format("this kiln was built without libspng/libturbojpeg (KILN_JPEG=OFF)");
#endif
  }
  return invalid_argument("unknown output format");
}

}  // namespace kiln
