#include "io/icc_srgb.h"

#include <lcms2.h>

#include <array>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace kiln {

namespace {

struct ProfileCloser {
  void operator()(void* p) const { cmsCloseProfile(p); }
};
using Profile = std::unique_ptr<void, ProfileCloser>;

struct TransformDeleter {
  void operator()(void* t) const { cmsDeleteTransform(t); }
};
using Transform = std::unique_ptr<void, TransformDeleter>;

// A transform per (profile, pixel format), the last few kept per thread: a crawler's photos share a handful of
// profiles, and making a transform costs far more than applying it to a small photo.
struct CachedTransform {
  size_t key = 0;
  Transform transform;
  bool identity = false;  // an sRGB profile: nothing to do
};

std::string profile_description(cmsHPROFILE profile) {
  char text[256] = {};
  cmsGetProfileInfoASCII(profile, cmsInfoDescription, "en", "US", text, sizeof(text));
  return text;
}

Result<CachedTransform*> transform_for(const std::vector<uint8_t>& icc, cmsUInt32Number in_format,
                                       cmsUInt32Number out_format, cmsColorSpaceSignature space) {
  thread_local std::array<CachedTransform, 8> cache;
  thread_local size_t next = 0;
  const std::string_view bytes(reinterpret_cast<const char*>(icc.data()), icc.size());
  const size_t key = std::hash<std::string_view>{}(bytes) ^ (size_t{in_format} * 0x9E3779B97F4A7C15ull);
  for (CachedTransform& c : cache) {
    if (c.key == key && (c.transform || c.identity)) return &c;
  }
  const Profile source(cmsOpenProfileFromMem(icc.data(), static_cast<cmsUInt32Number>(icc.size())));
  if (!source) return unsupported_format("icc profile: not a profile lcms2 can read");
  if (cmsGetColorSpace(source.get()) != space) return static_cast<CachedTransform*>(nullptr);
  CachedTransform& slot = cache[next++ % cache.size()];
  slot = CachedTransform();
  slot.key = key;
  if (space == cmsSigRgbData && profile_description(source.get()).find("sRGB") != std::string::npos) {
    slot.identity = true;
    return &slot;
  }
  const Profile srgb(cmsCreate_sRGBProfile());
  slot.transform.reset(cmsCreateTransform(source.get(), in_format, srgb.get(), out_format, INTENT_PERCEPTUAL,
                                          cmsFLAGS_COPY_ALPHA));
  if (!slot.transform) {
    slot.key = 0;
    return unsupported_format("icc profile: lcms2 cannot convert '" + profile_description(source.get()) +
                              "' to sRGB");
  }
  return &slot;
}

}  // namespace

Status icc_to_srgb(DecodedImage* image) {
  std::vector<uint8_t> icc = std::move(image->icc);
  image->icc.clear();
  if (icc.empty() || (image->channels != 3 && image->channels != 4)) return Status::ok();
  const cmsUInt32Number format = image->channels == 3 ? TYPE_RGB_8 : TYPE_RGBA_8;
  KILN_TRY_ASSIGN(CachedTransform * t, transform_for(icc, format, format, cmsSigRgbData));
  if (t == nullptr || t->identity) return Status::ok();  // a gray or CMYK profile on RGB pixels: left alone
  // Row by row keeps each call's size within lcms2's 32-bit count.
  const size_t row = static_cast<size_t>(image->width) * static_cast<size_t>(image->channels);
  for (int32_t y = 0; y < image->height; ++y) {
    uint8_t* p = image->pixels.data() + row * static_cast<size_t>(y);
    cmsDoTransform(t->transform.get(), p, p, static_cast<cmsUInt32Number>(image->width));
  }
  return Status::ok();
}

Status cmyk_to_rgb(const uint8_t* cmyk, int64_t count, bool inverted, const std::vector<uint8_t>& icc,
                   uint8_t* rgb) {
  if (!icc.empty()) {
    const cmsUInt32Number format = inverted ? TYPE_CMYK_8_REV : TYPE_CMYK_8;
    Result<CachedTransform*> t = transform_for(icc, format, TYPE_RGB_8, cmsSigCmykData);
    if (t.is_ok() && t.value() != nullptr && t.value()->transform) {
      constexpr int64_t kChunk = int64_t{1} << 20;
      for (int64_t at = 0; at < count; at += kChunk) {
        const int64_t n = count - at < kChunk ? count - at : kChunk;
        cmsDoTransform(t.value()->transform.get(), cmyk + at * 4, rgb + at * 3, static_cast<cmsUInt32Number>(n));
      }
      return Status::ok();
    }
  }
  for (int64_t i = 0; i < count; ++i, cmyk += 4, rgb += 3) {
    const uint32_t k = inverted ? cmyk[3] : 255u - cmyk[3];
    for (int c = 0; c < 3; ++c) {
      const uint32_t v = inverted ? cmyk[c] : 255u - cmyk[c];
      rgb[c] = static_cast<uint8_t>((v * k + 127) / 255);
    }
  }
  return Status::ok();
}

}  // namespace kiln
