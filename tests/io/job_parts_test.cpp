// The parts of a resumable job: round trip, checksums, a damaged part and what follows it redone, runs refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "common/test_util.h"
#include "io/job_parts.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

JobPart part_of(int k) {
  JobPart part;
  part.header = {{"first", k * 10}, {"lines", {"a", "b"}}};
  part.blob = std::string("\x00\x01\x02", 3) + std::to_string(k);
  return part;
}

std::string bytes_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void bytes_put(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST(JobParts, PartsRoundTripAndAResumeKeepsThem) {
  test::TempDir dir;
  const std::string base = dir.file("out.jsonl");
  JobParts parts(base, "quality");
  std::vector<std::string> notes;
  ASSERT_TRUE(parts.open("run-1", false, &notes).is_ok());
  for (int k = 0; k < 3; ++k) ASSERT_TRUE(parts.write(k, part_of(k)).is_ok());
  auto kept = JobParts(base, "quality").open("run-1", true, &notes);
  ASSERT_TRUE(kept.is_ok()) << kept.status().to_string();
  ASSERT_EQ(kept->size(), 3u);
  EXPECT_EQ((*kept)[2].header, part_of(2).header);
  EXPECT_EQ((*kept)[2].blob, part_of(2).blob);
  EXPECT_TRUE(notes.empty());
  ASSERT_TRUE(parts.remove().is_ok());
  EXPECT_FALSE(fs::exists(base + ".parts"));
}

TEST(JobParts, ADamagedPartAndEveryLaterOneAreRedone) {
  test::TempDir dir;
  const std::string base = dir.file("out.jsonl");
  JobParts parts(base, "quality");
  std::vector<std::string> notes;
  ASSERT_TRUE(parts.open("run", false, &notes).is_ok());
  for (int k = 0; k < 4; ++k) ASSERT_TRUE(parts.write(k, part_of(k)).is_ok());
  const fs::path second = base + ".parts/part-00000001.bin";
  std::string bytes = bytes_of(second);
  bytes[bytes.size() - 2] ^= 0x01;  // one bit of the blob
  bytes_put(second, bytes);
  bytes_put(base + ".parts/part-00000004.bin.tmp", "a killed write");
  auto kept = parts.open("run", true, &notes);
  ASSERT_TRUE(kept.is_ok());
  EXPECT_EQ(kept->size(), 1u);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("part-00000001.bin is damaged (checksum mismatch)"), std::string::npos) << notes[0];
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(base + ".parts")) left.push_back(entry.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"part-00000000.bin", "run.json"}));
}

TEST(JobParts, TruncatedForeignAndOtherRunsAreRefused) {
  test::TempDir dir;
  const std::string base = dir.file("out.jsonl");
  JobParts parts(base, "quality");
  std::vector<std::string> notes;
  ASSERT_TRUE(parts.open("run", false, &notes).is_ok());
  ASSERT_TRUE(parts.write(0, part_of(0)).is_ok());
  const fs::path first = base + ".parts/part-00000000.bin";
  const std::string whole = bytes_of(first);
  EXPECT_NE(JobParts(base, "faces").read(0).status().message().find("not a part of this job"), std::string::npos);
  bytes_put(first, whole.substr(0, whole.size() / 2));
  EXPECT_FALSE(parts.read(0).is_ok());
  bytes_put(first, whole);

  auto forgotten = JobParts(base, "quality").open("run", false, &notes);
  ASSERT_FALSE(forgotten.is_ok());
  EXPECT_NE(forgotten.status().message().find("use --resume"), std::string::npos);
  auto other = JobParts(base, "quality").open("another run", true, &notes);
  ASSERT_FALSE(other.is_ok());
  EXPECT_NE(other.status().message().find("other inputs or settings"), std::string::npos);
}

TEST(JobParts, TheFuzzSeedsAreValidParts) {
  test::TempDir dir;
  const std::string base = dir.file("seed");
  fs::create_directories(base + ".parts");
  for (const char* kind : {"quality", "faces"}) {
    fs::copy_file(std::string(KILN_SOURCE_DIR) + "/fuzz/corpus/job_part/" + kind + "_part.bin",
                  base + ".parts/part-00000000.bin", fs::copy_options::overwrite_existing);
    auto part = JobParts(base, kind).read(0);
    ASSERT_TRUE(part.is_ok()) << kind << ": " << part.status().to_string();
    EXPECT_TRUE(part->header.at("lines").is_array());
  }
}

}  // namespace
}  // namespace kiln
