// The video reader (kiln segment's inputs), through FFmpeg's demuxers and decoders: any bytes, read to the end or
// for at most 64 frames (a fuzzed header may declare hours of video).
#include "fuzz_input.h"
#include "io/video/video_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = kiln::fuzz::input_file(data, size, ".video");
  auto reader = kiln::VideoReader::open(path);
  if (!reader.is_ok()) return 0;
  for (int i = 0; i < 64; ++i) {
    kiln::VideoFrame frame;
    bool end = false;
    if (!reader.value()->read(&frame, &end).is_ok() || end) break;
  }
  return 0;
}
