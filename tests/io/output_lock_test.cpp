// One writer per output: a second lock is refused naming the owner's pid; a stale lock file (its writer killed) is
// no obstacle; the lock file goes when the writer is done.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>

#include "common/test_util.h"
#include "io/output_lock.h"

namespace kiln {
namespace {

TEST(OutputLock, SecondWriterIsRefusedNamingTheOwner) {
  test::TempDir dir;
  const std::string out = dir.file("out.h5");
  Result<OutputLock> first = OutputLock::acquire(out);
  ASSERT_TRUE(first.is_ok()) << first.status().message();
  EXPECT_EQ(first->path(), out + ".lock");
  const Result<OutputLock> second = OutputLock::acquire(out);
  ASSERT_FALSE(second.is_ok());
  EXPECT_EQ(second.status().code(), Errc::kInvalidArgument);
  EXPECT_NE(second.status().message().find("pid " + std::to_string(::getpid())), std::string::npos)
      << second.status().message();
  first->release();
  EXPECT_FALSE(std::filesystem::exists(out + ".lock"));
  EXPECT_TRUE(OutputLock::acquire(out).is_ok());
}

TEST(OutputLock, FolderOutputsLockBesideTheFolder) {
  test::TempDir dir;
  const Result<OutputLock> lock = OutputLock::acquire(dir.file("pngs") + "/");
  ASSERT_TRUE(lock.is_ok());
  EXPECT_EQ(lock->path(), dir.file("pngs") + ".lock");
}

TEST(OutputLock, AKilledWritersLockFileDoesNotBlock) {
  test::TempDir dir;
  const std::string out = dir.file("out.h5");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Result<OutputLock> held = OutputLock::acquire(out);
    ::pause();  // killed while holding it
    ::_exit(held.is_ok() ? 0 : 1);
  }
  for (int i = 0; i < 500 && !std::filesystem::exists(out + ".lock"); ++i) ::usleep(2000);
  ::usleep(20000);
  EXPECT_FALSE(OutputLock::acquire(out).is_ok());  // held by the live child
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(std::filesystem::exists(out + ".lock"));  // left behind by the kill
  const Result<OutputLock> after = OutputLock::acquire(out);
  EXPECT_TRUE(after.is_ok()) << after.status().message();
}

}  // namespace
}  // namespace kiln
