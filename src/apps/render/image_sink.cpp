#include "apps/render/image_sink.h"

#include "io/durable_file.h"

namespace kiln {

OutputFormat output_format_resolve(OutputFormat format, const std::string& path) {
  if (format != OutputFormat::kAuto) return format;
  return path_extension(path) == ".npy" ? OutputFormat::kNpy : OutputFormat::kHdf5;
}

Result<std::unique_ptr<ImageSink>> sink_create(const OutputSpec& spec) {
  if (spec.path.empty()) return invalid_argument("no output path given");
  switch (output_format_resolve(spec.format, spec.path)) {
    case OutputFormat::kAuto:
    case OutputFormat::kHdf5: return hdf5_sink_create(spec);
    case OutputFormat::kNpy: return npy_sink_create(spec);
    case OutputFormat::kJkxDat:  // the render job makes it: its labels need the windows' dates and returns
      return invalid_argument("jkx-dat output is written by the render job (jkx_dat_sink_create)");
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
