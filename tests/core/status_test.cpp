#include <gtest/gtest.h>

#include "kiln/status.h"

namespace kiln {
namespace {

Result<int> parse_positive(int v) {
  if (v <= 0) return invalid_argument("not positive: " + std::to_string(v));
  return v;
}

Status chain(int v, int* out) {
  KILN_TRY_ASSIGN(*out, parse_positive(v));
  KILN_TRY(parse_positive(v - 1));
  return Status::ok();
}

TEST(Status, DefaultIsOkAndResetClears) {
  Status s;
  EXPECT_TRUE(s.is_ok());
  s = io_error("disk full");
  EXPECT_EQ(s.code(), Errc::kIoError);
  EXPECT_EQ(s.to_string(), "IoError: disk full");
  s.reset();
  EXPECT_TRUE(s.is_ok());
  EXPECT_TRUE(s.message().empty());
}

TEST(Status, TryPropagatesTheFirstError) {
  int out = 0;
  EXPECT_TRUE(chain(5, &out).is_ok());
  EXPECT_EQ(out, 5);
  const Status first = chain(-2, &out);
  EXPECT_EQ(first.code(), Errc::kInvalidArgument);
  EXPECT_EQ(first.message(), "not positive: -2");
  EXPECT_EQ(chain(1, &out).message(), "not positive: 0");
}

TEST(Result, HoldsValueOrStatus) {
  Result<std::string> ok = std::string("x");
  ASSERT_TRUE(ok.is_ok());
  EXPECT_EQ(*ok, "x");
  EXPECT_TRUE(ok.status().is_ok());
  Result<std::string> bad = unsupported_format("gif");
  EXPECT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), Errc::kUnsupportedFormat);
}

TEST(Status, MessageLineIsOneLineWithControlBytesEscaped) {
  const Status s = io_error("out.h5: write failed\n  No space left on device\x01\x1b[2J\x7f caf\xc3\xa9\n");
  EXPECT_EQ(s.message_line(), "out.h5: write failed No space left on device\\x01\\x1b[2J\\x7f caf\xc3\xa9");
}

TEST(Status, EveryCodeHasAName) {
  for (int c = 0; c <= static_cast<int>(Errc::kCancelled); ++c) {
    EXPECT_STRNE(errc_name(static_cast<Errc>(c)), "Unknown");
  }
}

}  // namespace
}  // namespace kiln
