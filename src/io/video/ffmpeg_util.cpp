#include "io/video/ffmpeg_util.h"

#include <cstdarg>
#include <mutex>

extern "C" {
#include <libavutil/error.h>
#include <libavutil/hwcontext.h>
#include <libavutil/log.h>
}

namespace kiln {

namespace {

thread_local AvLogCapture* t_capture = nullptr;

void log_callback(void* object, int level, const char* format, va_list args) {
  if (t_capture != nullptr && level <= AV_LOG_ERROR) {
    va_list copy;
    va_copy(copy, args);
    char line[512];
    int prefix = 0;  // no "[AVHWDeviceContext @ 0x...]": the address differs from run to run
    av_log_format_line2(object, level, format, copy, line, sizeof line, &prefix);
    va_end(copy);
    std::string text(line);
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    if (!text.empty()) t_capture->add(std::move(text));
  }
  av_log_default_callback(object, level, format, args);
}

}  // namespace

AvLogCapture::AvLogCapture() : m_outer(t_capture) {
  av_log_quiet();
  t_capture = this;
}

AvLogCapture::~AvLogCapture() { t_capture = m_outer; }

void AvLogCapture::add(std::string line) {
  if (m_text.size() > 1000) return;
  m_text += (m_text.empty() ? "" : "; ") + line;
}

std::string AvLogCapture::text(const std::string& fallback) const { return m_text.empty() ? fallback : m_text; }

int sws_colorspace(int32_t space) {
  switch (space) {
    case AVCOL_SPC_BT709: return SWS_CS_ITU709;
    case AVCOL_SPC_FCC: return SWS_CS_FCC;
    case AVCOL_SPC_SMPTE240M: return SWS_CS_SMPTE240M;
    case AVCOL_SPC_BT2020_NCL:
    case AVCOL_SPC_BT2020_CL: return SWS_CS_BT2020;
    default: return SWS_CS_DEFAULT;
  }
}

Result<AvBufferPtr> cuda_hw_device_open(int32_t index) {
  const std::string name = std::to_string(index);
  AVDictionary* options = nullptr;
  av_dict_set(&options, "primary_ctx", "1", 0);
  AVBufferRef* device = nullptr;
  const AvLogCapture capture;
  const int rc = av_hwdevice_ctx_create(&device, AV_HWDEVICE_TYPE_CUDA, name.c_str(), options, 0);
  av_dict_free(&options);
  if (rc < 0) {
    return Status(Errc::kDeviceError, "no CUDA device " + name + " (" + capture.text(av_error_text(rc)) + ")");
  }
  return AvBufferPtr(device);
}

std::string av_error_text(int code) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(code, text, sizeof(text));
  return text;
}

void av_log_quiet() {
  static std::once_flag once;
  std::call_once(once, [] {
    av_log_set_level(AV_LOG_FATAL);
    av_log_set_callback(log_callback);
  });
}

}  // namespace kiln
