// The predecessor's gpu_config.yaml (kiln segment --config).
#include "fuzz_input.h"
#include "kiln/apps/segment.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = kiln::fuzz::input_file(data, size, ".yaml");
  kiln::SegmentJobConfig config;
  std::vector<std::string> notes;
  (void)kiln::segment_config_apply_yaml(path, &config, &notes);
  return 0;
}
