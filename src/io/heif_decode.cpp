// HEIC and AVIF through libheif (Debian's build decodes HEVC with libde265, and AV1 with aom: av1_decoder_id): the
// primary image, with the container's rotation and mirroring (irot, imir) applied by libheif, its ICC profile
// returned for image_decode. The primary image's size (a grid's too, which adds up its tiles) is checked against
// max_pixels before anything is decoded, and so is the size each item's own stream codes (heif_coded_size.h:
// libheif 1.15 trusts the declared sizes, its decoders do not).
#include <libheif/heif.h>

#include <cstring>
#include <memory>
#include <string>

#include "io/decode_limits.h"
#include "io/decode_memory.h"
#include "io/heif_coded_size.h"
#include "io/web_codecs.h"

namespace kiln {

namespace {

struct HeifContextDeleter {
  void operator()(heif_context* c) const { heif_context_free(c); }
};
struct HeifHandleDeleter {
  void operator()(heif_image_handle* h) const { heif_image_handle_release(h); }
};
struct HeifImageDeleter {
  void operator()(heif_image* i) const { heif_image_release(i); }
};

struct HeifOptionsDeleter {
  void operator()(heif_decoding_options* o) const { heif_decoding_options_free(o); }
};

// AV1 through libaom where libheif has it: Debian's dav1d 1.0.0 crashes (SIGSEGV in a worker thread) on damaged
// streams that aom refuses with an error (fuzz/corpus/image_heif/crash-dav1d-segv.avif). nullptr: libheif's choice.
const char* av1_decoder_id() {
  static const char* const id = [] {
    const heif_decoder_descriptor* decoders[16] = {};
    const int count = heif_get_decoder_descriptors(heif_compression_AV1, decoders, 16);
    for (int i = 0; i < count; ++i) {
      const char* name = heif_decoder_descriptor_get_id_name(decoders[i]);
      if (name != nullptr && std::strcmp(name, "aom") == 0) return "aom";
    }
    return static_cast<const char*>(nullptr);
  }();
  return id;
}

Status heif_failed(const char* what, const heif_error& error) {
  return unsupported_format(std::string("heif: ") + what + ": " + (error.message != nullptr ? error.message : ""));
}

}  // namespace

Result<DecodedImage> heif_decode(const uint8_t* data, size_t size, int64_t max_pixels) {
  const std::unique_ptr<heif_context, HeifContextDeleter> context(heif_context_alloc());
  if (!context) return Status(Errc::kOutOfMemory, "heif: cannot allocate a context");
  heif_error error = heif_context_read_from_memory_without_copy(context.get(), data, size, nullptr);
  if (error.code != heif_error_Ok) return heif_failed("cannot read the file", error);
  bool has_av1 = false;
  KILN_TRY(heif_coded_size_check(data, size, max_pixels, &has_av1));
  heif_image_handle* raw_handle = nullptr;
  error = heif_context_get_primary_image_handle(context.get(), &raw_handle);
  if (error.code != heif_error_Ok) return heif_failed("no primary image", error);
  const std::unique_ptr<heif_image_handle, HeifHandleDeleter> handle(raw_handle);
  KILN_TRY(decode_pixels_check("heif", heif_image_handle_get_width(handle.get()),
                               heif_image_handle_get_height(handle.get()), max_pixels));
  const bool alpha = heif_image_handle_has_alpha_channel(handle.get()) != 0;
  const std::unique_ptr<heif_decoding_options, HeifOptionsDeleter> options(heif_decoding_options_alloc());
  if (!options) return Status(Errc::kOutOfMemory, "heif: cannot allocate decoding options");
  if (has_av1) options->decoder_id = av1_decoder_id();
  heif_image* raw_image = nullptr;
  error = heif_decode_image(handle.get(), &raw_image, heif_colorspace_RGB,
                            alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, options.get());
  if (error.code != heif_error_Ok) return heif_failed("cannot decode", error);
  const std::unique_ptr<heif_image, HeifImageDeleter> image(raw_image);
  int stride = 0;
  const uint8_t* plane = heif_image_get_plane_readonly(image.get(), heif_channel_interleaved, &stride);
  if (plane == nullptr) return unsupported_format("heif: the decoder gave no pixels");
  DecodedImage out;
  out.width = heif_image_get_width(image.get(), heif_channel_interleaved);
  out.height = heif_image_get_height(image.get(), heif_channel_interleaved);
  out.channels = alpha ? 4 : 3;
  KILN_TRY(decode_pixels_check("heif", out.width, out.height, max_pixels));
  const size_t row = static_cast<size_t>(out.width) * static_cast<size_t>(out.channels);
  decode_buffer_reserve(out.pixels, row * static_cast<size_t>(out.height));
  for (int32_t y = 0; y < out.height; ++y) {  // appended row by row: nothing zeroed first
    const uint8_t* from = plane + size_t(stride) * y;
    out.pixels.insert(out.pixels.end(), from, from + row);
  }
  const heif_color_profile_type profile = heif_image_handle_get_color_profile_type(handle.get());
  if (profile == heif_color_profile_type_prof || profile == heif_color_profile_type_rICC) {
    out.icc.resize(heif_image_handle_get_raw_color_profile_size(handle.get()));
    if (heif_image_handle_get_raw_color_profile(handle.get(), out.icc.data()).code != heif_error_Ok) out.icc.clear();
  }
  return out;
}

}  // namespace kiln
