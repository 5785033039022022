// Chrome trace event JSON: parsed back and checked against the format's rules for each phase.
#include "profiler/trace_export.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/test_util.h"
#include "profiler/profiler.h"

namespace kiln {
namespace {

using nlohmann::json;

class TraceExportTest : public ::testing::Test {
 protected:
  void SetUp() override { Profiler::instance().reset(); }
  void TearDown() override { Profiler::instance().reset(); }
};

// Two named stage threads, nested ranges, counters and one flow per sample from stage to stage.
void record_pipeline(int samples) {
  Profiler::instance().enable(true);
  std::thread decode([samples] {
    Profiler::instance().set_thread_name("decode");
    for (int s = 0; s < samples; ++s) {
      KILN_PROFILE_SCOPE("decode.sample");
      {
        KILN_PROFILE_SCOPE("decode.read");
      }
      profile_counter("queue_depth", s + 1);
      profile_flow_begin("sample", static_cast<uint64_t>(s));
    }
  });
  decode.join();
  std::thread render([samples] {
    Profiler::instance().set_thread_name("render");
    for (int s = 0; s < samples; ++s) {
      KILN_PROFILE_SCOPE("render.sample");
      profile_flow_end("sample", static_cast<uint64_t>(s));
      profile_counter("pool_bytes", 4096.0 * (s + 1));
    }
  });
  render.join();
}

// Checks every event against the Chrome trace event format; fills thread names by tid.
void validate_trace_into(const json& trace, std::map<int64_t, std::string>& names) {
  EXPECT_TRUE(trace.is_object());
  EXPECT_EQ(trace.value("displayTimeUnit", ""), "ms");
  const json& events = trace.at("traceEvents");
  EXPECT_TRUE(events.is_array());
  for (const json& e : events) {
    SCOPED_TRACE(e.dump());
    for (const char* key : {"name", "ph", "ts", "pid", "tid"}) EXPECT_TRUE(e.contains(key)) << key;
    EXPECT_TRUE(e["name"].is_string());
    EXPECT_TRUE(e["ts"].is_number());
    EXPECT_GE(e["ts"].get<double>(), 0.0);
    EXPECT_EQ(e["pid"], 1);
    EXPECT_TRUE(e["tid"].is_number_integer());
    std::string ph = e["ph"].get<std::string>();
    ASSERT_EQ(ph.size(), 1u);
    if (ph == "X") {
      ASSERT_TRUE(e.contains("dur"));
      EXPECT_TRUE(e["dur"].is_number());
      EXPECT_GE(e["dur"].get<double>(), 0.0);
    } else if (ph == "C") {
      ASSERT_TRUE(e.contains("args"));
      EXPECT_TRUE(e["args"].is_object());
      EXPECT_FALSE(e["args"].empty());
      for (const auto& [key, value] : e["args"].items()) EXPECT_TRUE(value.is_number()) << key;
    } else if (ph == "s" || ph == "f") {
      EXPECT_TRUE(e.contains("id"));
      EXPECT_TRUE(e.contains("cat"));
      if (ph == "f") {
        EXPECT_EQ(e.value("bp", ""), "e");
      }
    } else if (ph == "M") {
      ASSERT_TRUE(e.contains("args"));
      if (e["name"] == "thread_name") names[e["tid"].get<int64_t>()] = e["args"]["name"].get<std::string>();
    } else {
      ADD_FAILURE() << "unexpected phase " << ph;
    }
  }
}

std::map<int64_t, std::string> validate_trace(const json& trace) {
  std::map<int64_t, std::string> names;
  validate_trace_into(trace, names);
  return names;
}

TEST_F(TraceExportTest, JsonFollowsChromeTraceFormat) {
  constexpr int kSamples = 6;
  record_pipeline(kSamples);
  json trace = json::parse(trace_to_json());
  std::map<int64_t, std::string> names = validate_trace(trace);

  // Every tid that carries events is named, and the two stages are there.
  std::set<std::string> name_set;
  for (const auto& [tid, name] : names) name_set.insert(name);
  EXPECT_TRUE(name_set.count("decode"));
  EXPECT_TRUE(name_set.count("render"));
  std::map<std::string, int64_t> tid_of_range;
  std::map<std::string, int> phase_count;
  for (const json& e : trace["traceEvents"]) {
    std::string ph = e["ph"];
    ++phase_count[ph];
    if (ph != "M") {
      EXPECT_TRUE(names.count(e["tid"].get<int64_t>())) << e.dump();
    }
    if (ph == "X") tid_of_range[e["name"]] = e["tid"];
  }
  EXPECT_EQ(phase_count["X"], 3 * kSamples);
  EXPECT_EQ(phase_count["C"], 2 * kSamples);
  EXPECT_EQ(phase_count["s"], kSamples);
  EXPECT_EQ(phase_count["f"], kSamples);
  EXPECT_EQ(names[tid_of_range["decode.sample"]], "decode");
  EXPECT_EQ(names[tid_of_range["render.sample"]], "render");

  // Flow pairs: same name, cat and id; "s" on the decode thread inside a decode range, "f" after it.
  std::map<uint64_t, json> starts;
  std::map<uint64_t, json> finishes;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "s") starts[e["id"].get<uint64_t>()] = e;
    if (e["ph"] == "f") finishes[e["id"].get<uint64_t>()] = e;
  }
  ASSERT_EQ(starts.size(), static_cast<size_t>(kSamples));
  for (const auto& [id, s] : starts) {
    ASSERT_TRUE(finishes.count(id)) << id;
    const json& f = finishes[id];
    EXPECT_EQ(s["cat"], f["cat"]);
    EXPECT_EQ(s["name"], f["name"]);
    EXPECT_LE(s["ts"].get<double>(), f["ts"].get<double>());
    EXPECT_EQ(names[s["tid"].get<int64_t>()], "decode");
    EXPECT_EQ(names[f["tid"].get<int64_t>()], "render");
    // The flow start lies within one of its thread's ranges (Perfetto binds it to the enclosing slice).
    bool enclosed = false;
    for (const json& e : trace["traceEvents"]) {
      if (e["ph"] != "X" || e["tid"] != s["tid"]) continue;
      double ts = e["ts"];
      double end = ts + e["dur"].get<double>();
      if (ts <= s["ts"].get<double>() && s["ts"].get<double>() <= end) enclosed = true;
    }
    EXPECT_TRUE(enclosed) << id;
  }
}

TEST_F(TraceExportTest, NestedRangesStayNestedInMicroseconds) {
  Profiler::instance().enable(true);
  int64_t t0 = profile_now_ns();
  Profiler::instance().record_complete("child", t0 + 1'500, t0 + 2'250);
  Profiler::instance().record_complete("parent", t0, t0 + 10'000);
  json trace = json::parse(trace_to_json());
  validate_trace(trace);
  std::map<std::string, json> ranges;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "X") ranges[e["name"]] = e;
  }
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_DOUBLE_EQ(ranges["parent"]["ts"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(ranges["parent"]["dur"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(ranges["child"]["ts"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(ranges["child"]["dur"].get<double>(), 0.75);
}

TEST_F(TraceExportTest, EmptyTraceIsValid) {
  json trace = json::parse(trace_to_json());
  validate_trace(trace);
  for (const json& e : trace["traceEvents"]) EXPECT_EQ(e["ph"], "M");
}

TEST_F(TraceExportTest, NamesAreEscaped) {
  Profiler::instance().enable(true);
  const std::string odd = "quote\" back\\slash\nnew\ttab\x01 ctl \xc3\xa9";
  std::thread t([&] {
    Profiler::instance().set_thread_name(odd);
    Profiler::instance().record_complete(profile_intern(odd), 0, 1000);
  });
  t.join();
  json trace = json::parse(trace_to_json());
  std::map<int64_t, std::string> names = validate_trace(trace);
  bool named = false;
  for (const auto& [tid, name] : names) named |= name == odd;
  EXPECT_TRUE(named);
  bool ranged = false;
  for (const json& e : trace["traceEvents"]) ranged |= e["ph"] == "X" && e["name"] == odd;
  EXPECT_TRUE(ranged);
}

TEST_F(TraceExportTest, WritesFileAtomically) {
  record_pipeline(3);
  test::TempDir dir;
  std::string path = dir.file("trace.json");
  // A stale file at the path is replaced whole.
  test::write_text_file(path, "stale");
  Status status = trace_write_chrome(path);
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  json trace = json::parse(text.str());
  validate_trace(trace);
  EXPECT_EQ(trace, json::parse(trace_to_json()));
}

TEST_F(TraceExportTest, UnwritablePathIsIoError) {
  record_pipeline(1);
  test::TempDir dir;
  std::string path = (dir.path() / "missing" / "trace.json").string();
  Status status = trace_write_chrome(path);
  EXPECT_EQ(status.code(), Errc::kIoError);
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  EXPECT_EQ(trace_write_chrome("").code(), Errc::kInvalidArgument);
}

TEST_F(TraceExportTest, LargeTraceStreamsThroughFlushes) {
  Profiler::instance().enable(true);
  constexpr int kEvents = 30'000;  // > 1 MiB of JSON, so the file writer flushes several times
  for (int i = 0; i < kEvents; ++i) Profiler::instance().record_complete("bulk", 1000 * i, 1000 * i + 500);
  test::TempDir dir;
  std::string path = dir.file("big.json");
  ASSERT_TRUE(trace_write_chrome(path).is_ok());
  std::ifstream in(path);
  json trace = json::parse(in);
  int ranges = 0;
  for (const json& e : trace["traceEvents"]) ranges += e["ph"] == "X";
  EXPECT_EQ(ranges, kEvents);
  EXPECT_GT(std::filesystem::file_size(path), size_t{1} << 20);
}

}  // namespace
}  // namespace kiln
