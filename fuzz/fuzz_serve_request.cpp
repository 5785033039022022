// kiln serve's request bodies as the network delivers them: the crawler's face batch (with its base64 images) and
// the Open Inference Protocol's JSON infer request. Every input is answered with a value or a reason, never a crash.
#include <string_view>

#include "apps/serve/serve_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  (void)kiln::serve::face_batch_request_parse(body, 256);
  (void)kiln::serve::infer_request_parse(body);
  (void)kiln::serve::base64_decode(body);
  return 0;
}
