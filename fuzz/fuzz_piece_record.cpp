// A segment piece's record as kiln merge reads it (pieces come from other machines).
#include <filesystem>

#include "fuzz_input.h"
#include "kiln/apps/merge.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string record = kiln::fuzz::input_file(data, size, ".shard-00000-of-00001.json");
  kiln::MergeConfig config;
  config.inputs = {record};
  config.output = record + ".merged.json";
  config.overwrite = true;
  std::vector<std::string> problems;
  (void)kiln::segment_merge(config.inputs, config, &problems);
  std::error_code ec;
  std::filesystem::remove(config.output, ec);
  return 0;
}
