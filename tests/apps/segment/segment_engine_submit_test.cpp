// SegmentEngine::submit with a wait limit: a caller that submits more frames than its stream's budget before it takes
// any gets a Cancelled status saying why (the engine itself still runs: stopped() is false) instead of waiting forever,
// and once frames are taken and released the next submit goes in. The packaged selfie model on the CPU.
#include <gtest/gtest.h>

#include "apps/segment/segment_engine.h"

namespace kiln {
namespace {

SegmentFrame grey_frame(int32_t stream, int64_t index) {
  SegmentFrame f;
  f.stream = stream;
  f.frame.index = index;
  f.frame.rgb.width = 64;
  f.frame.rgb.height = 48;
  f.frame.rgb.channels = 3;
  f.frame.rgb.pixels.assign(64 * 48 * 3, static_cast<uint8_t>(40 + index));
  return f;
}

TEST(SegmentEngineSubmit, AFullStreamsSubmitGivesUpAfterItsWaitWithTheReason) {
  SegmentEngineConfig config;
  config.exec.mode = ExecMode::kCpu;
  config.exec.threads = 2;
  auto opened = SegmentEngine::open(config);
  ASSERT_TRUE(opened.is_ok()) << opened.status().to_string() << " (make deps builds the selfie model)";
  SegmentEngine& engine = *opened.value();
  const int32_t stream = engine.stream_add(2, 0);
  ASSERT_TRUE(engine.submit(grey_frame(stream, 0), 0).is_ok());
  ASSERT_TRUE(engine.submit(grey_frame(stream, 1), 0).is_ok());

  const Status full = engine.submit(grey_frame(stream, 2), 200'000);
  EXPECT_EQ(full.code(), Errc::kCancelled);
  EXPECT_NE(full.message().find("within 200 ms"), std::string::npos) << full.message();
  EXPECT_NE(full.message().find("2 frames of the stream in flight"), std::string::npos) << full.message();
  EXPECT_NE(full.message().find("take() and release()"), std::string::npos) << full.message();
  EXPECT_FALSE(engine.stopped());
  EXPECT_TRUE(engine.error().is_ok());

  SegmentFrame out;
  ASSERT_TRUE(engine.take(stream, &out));
  EXPECT_EQ(out.frame.index, 0);
  engine.release(stream);
  ASSERT_TRUE(engine.submit(grey_frame(stream, 2), 60'000'000).is_ok());  // the released slot is free again
  engine.stream_end(stream, 3);
  for (int64_t index = 1; index < 3; ++index) {
    ASSERT_TRUE(engine.take(stream, &out));
    EXPECT_EQ(out.frame.index, index);
    EXPECT_FALSE(out.dropped);
    engine.release(stream);
  }
  EXPECT_FALSE(engine.take(stream, &out));
  engine.finish();
  EXPECT_TRUE(engine.error().is_ok());
}

}  // namespace
}  // namespace kiln
