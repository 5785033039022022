// The YAML job config (kiln render --config job.yaml).
#include "fuzz_input.h"
#include "kiln/apps/render.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = kiln::fuzz::input_file(data, size, ".yaml");
  kiln::RenderJobConfig config;
  std::vector<std::string> ignored;
  (void)kiln::render_config_apply_yaml(path, &config, &ignored);
  return 0;
}
