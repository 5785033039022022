// kiln serve's request bodies as the network delivers them: the crawler's face batch (with its base64 images), the
// Open Inference Protocol's JSON infer request, and the same with the binary tensor data extension (a JSON header
// of a length read from the input's first two bytes, then raw tensor bytes). Every input is answered with a value or
// a reason, never a crash.
#include <string_view>

#include "apps/serve/serve_parse.h"
#include "apps/serve/serve_tensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  (void)kiln::serve::face_batch_request_parse(body, 256);
  (void)kiln::serve::infer_request_parse(body);
  (void)kiln::serve::base64_decode(body);
  if (size >= 2) {
    const std::string_view rest = body.substr(2);
    const int64_t header_length = static_cast<int64_t>(data[0] | (data[1] << 8)) % static_cast<int64_t>(size);
    (void)kiln::serve::infer_request_parse(rest, header_length);
    for (const char* datatype : {"FP32", "INT64", "INT32", "UINT8", "BOOL"}) {
      (void)kiln::serve::tensor_raw_values(rest, datatype, static_cast<int64_t>(rest.size() / 4));
    }
  }
  return 0;
}
