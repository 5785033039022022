#include "io/video/ffmpeg_util.h"

#include <dlfcn.h>

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

// FFmpeg retains the primary context only with blocking-sync scheduling and refuses it ("Primary context already
// active with incompatible flags") once the CUDA runtime (kiln's kernels, ONNX Runtime) has made it active with its
// default flags, which it always has in kiln segment and kiln infer before a reader or writer opens. The driver lets
// an active primary context's flags be set (cuDevicePrimaryCtxSetFlags_v2), so they are set to FFmpeg's here; the
// runtime's waits then block instead of spinning. Through the libcuda the runtime loaded (nothing links it); false
// with no driver or device.
bool primary_context_flags_for_ffmpeg(int32_t index) {
  constexpr unsigned kBlockingSync = 0x04;  // CU_CTX_SCHED_BLOCKING_SYNC
  static void* const cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);  // kept loaded: FFmpeg loads it next
  if (cuda == nullptr) return false;
  using Init = int (*)(unsigned);
  using DeviceGet = int (*)(int*, int);
  using GetState = int (*)(int, unsigned*, int*);
  using SetFlags = int (*)(int, unsigned);
  const auto init = reinterpret_cast<Init>(dlsym(cuda, "cuInit"));
  const auto device_get = reinterpret_cast<DeviceGet>(dlsym(cuda, "cuDeviceGet"));
  const auto get_state = reinterpret_cast<GetState>(dlsym(cuda, "cuDevicePrimaryCtxGetState"));
  const auto set_flags = reinterpret_cast<SetFlags>(dlsym(cuda, "cuDevicePrimaryCtxSetFlags_v2"));
  int device = 0, active = 0;
  unsigned flags = 0;
  const bool set = init != nullptr && device_get != nullptr && get_state != nullptr && set_flags != nullptr &&
                   init(0) == 0 && device_get(&device, index) == 0 && get_state(device, &flags, &active) == 0 &&
                   (flags == kBlockingSync || set_flags(device, kBlockingSync) == 0);
  return set;
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
  (void)primary_context_flags_for_ffmpeg(index);  // where it cannot, FFmpeg's own check below says why
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
