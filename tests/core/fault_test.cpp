#include <gtest/gtest.h>

#include "core/fault.h"

namespace kiln {
namespace {

TEST(Fault, FailsExactlyTheNthCall) {
  ASSERT_TRUE(fault_configure("alloc:3,kernel:2").is_ok());
  EXPECT_FALSE(fault_should_fail(FaultSite::kAlloc));
  EXPECT_FALSE(fault_should_fail(FaultSite::kAlloc));
  EXPECT_TRUE(fault_should_fail(FaultSite::kAlloc));
  EXPECT_FALSE(fault_should_fail(FaultSite::kAlloc));
  EXPECT_FALSE(fault_should_fail(FaultSite::kLaunch));
  EXPECT_TRUE(fault_should_fail(FaultSite::kLaunch));
  EXPECT_FALSE(fault_should_fail(FaultSite::kLaunch));
  ASSERT_TRUE(fault_configure("").is_ok());
}

TEST(Fault, ProviderFailuresAndOutOfMemoryCountTheirOwnRuns) {
  ASSERT_TRUE(fault_configure("provider:2,provider_oom:1").is_ok());
  EXPECT_TRUE(fault_should_fail(FaultSite::kProviderMemory));
  EXPECT_FALSE(fault_should_fail(FaultSite::kProviderMemory));
  EXPECT_FALSE(fault_should_fail(FaultSite::kProvider));
  EXPECT_TRUE(fault_should_fail(FaultSite::kProvider));
  ASSERT_TRUE(fault_configure("").is_ok());
}

TEST(Fault, DeviceMapStepsCountTheirOwnCallsAndKernelsDoNotCountThem) {
  ASSERT_TRUE(fault_configure("device_map:2").is_ok());
  EXPECT_FALSE(fault_should_fail(FaultSite::kDeviceMap));
  EXPECT_FALSE(fault_should_fail(FaultSite::kLaunch));
  EXPECT_TRUE(fault_should_fail(FaultSite::kDeviceMap));
  EXPECT_FALSE(fault_should_fail(FaultSite::kDeviceMap));
  ASSERT_TRUE(fault_configure("").is_ok());
}

TEST(Fault, DeviceLostFailsEverythingAfterTheFirstLaunch) {
  ASSERT_TRUE(fault_configure("device_lost").is_ok());
  EXPECT_FALSE(fault_should_fail(FaultSite::kAlloc));
  EXPECT_TRUE(fault_should_fail(FaultSite::kLaunch));
  EXPECT_TRUE(fault_should_fail(FaultSite::kAlloc));
  EXPECT_TRUE(fault_should_fail(FaultSite::kLaunch));
  ASSERT_TRUE(fault_configure("").is_ok());
  EXPECT_FALSE(fault_should_fail(FaultSite::kLaunch));
}

TEST(Fault, RejectsBadSpecs) {
  for (const char* spec : {"alloc", "alloc:0", "alloc:x", "kernel:-1", "oom:3", "provider_oom:0"}) {
    EXPECT_EQ(fault_configure(spec).code(), Errc::kInvalidArgument) << spec;
  }
  ASSERT_TRUE(fault_configure("").is_ok());
}

}  // namespace
}  // namespace kiln
