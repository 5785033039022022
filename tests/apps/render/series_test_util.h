// Shared by the series_*_test.cpp files: checks of what a series load returned.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/apps/render.h"

namespace kiln::test {

// Use as ASSERT_TRUE(load_failed(result, code, message)): the load failed with `code` and exactly `message`.
inline ::testing::AssertionResult load_failed(const Result<Series>& r, Errc code, const std::string& message) {
  const std::string want = Status(code, message).to_string();
  if (r.is_ok()) return ::testing::AssertionFailure() << "loaded " << r->rows << " rows, expected " << want;
  if (r.status().code() != code || r.status().message() != message) {
    return ::testing::AssertionFailure() << "got " << r.status().to_string() << ", expected " << want;
  }
  return ::testing::AssertionSuccess();
}

// An OHLC series whose interleaved Open, High, Low, Close values are `values` as floats.
inline void expect_ohlc(const Result<Series>& r, const std::vector<double>& values) {
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->rows, static_cast<int64_t>(values.size() / 4));
  EXPECT_EQ(r->channels, 4);
  ASSERT_EQ(r->values.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(r->values[i], static_cast<float>(values[i])) << i;
  EXPECT_EQ(r->column, "Open,High,Low,Close");
}

}  // namespace kiln::test
