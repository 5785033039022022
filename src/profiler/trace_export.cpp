#include "profiler/trace_export.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "profiler/profiler.h"

namespace kiln {
namespace {

constexpr const char* kFlowCategory = "flow";
constexpr size_t kFlushBytes = size_t{1} << 20;

void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (byte < 0x20) {
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", byte);
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

// Microseconds since base_ns with nanosecond precision.
void append_us(std::string& out, int64_t ns) {
  fmt::format_to(std::back_inserter(out), "{:.3f}", static_cast<double>(ns) / 1000.0);
}

// Event head shared by every phase: {"name":..,"ph":"X","ts":..,"pid":1,"tid":..
void append_head(std::string& out, const char* name, char phase, int64_t ts_ns, uint32_t tid) {
  out += "{\"name\":";
  append_json_string(out, name != nullptr ? name : "");
  fmt::format_to(std::back_inserter(out), ",\"ph\":\"{}\",\"ts\":", phase);
  append_us(out, ts_ns);
  fmt::format_to(std::back_inserter(out), ",\"pid\":1,\"tid\":{}", tid);
}

// Streams the trace into out; flush(out) is called whenever out grows past kFlushBytes, and may empty it.
template <typename Flush>
Status write_trace(std::string& out, Flush&& flush) {
  std::vector<ProfileThreadEvents> threads = Profiler::instance().snapshot();

  int64_t base_ns = std::numeric_limits<int64_t>::max();
  for (ProfileThreadEvents& thread : threads) {
    // Parents before children at equal start times, so viewers nest them without relying on dur.
    std::stable_sort(thread.events.begin(), thread.events.end(), [](const ProfileEvent& a, const ProfileEvent& b) {
      if (a.ts_ns != b.ts_ns) return a.ts_ns < b.ts_ns;
      bool a_complete = a.kind == ProfileEventKind::kComplete;
      bool b_complete = b.kind == ProfileEventKind::kComplete;
      if (a_complete != b_complete) return a_complete;
      return a.dur_ns > b.dur_ns;
    });
    if (!thread.events.empty()) base_ns = std::min(base_ns, thread.events.front().ts_ns);
  }
  if (base_ns == std::numeric_limits<int64_t>::max()) base_ns = Profiler::instance().epoch_ns();

  out += "{\"traceEvents\":[\n";
  out += R"({"name":"process_name","ph":"M","ts":0,"pid":1,"tid":0,"args":{"name":"kiln"}})";
  for (const ProfileThreadEvents& thread : threads) {
    out += ",\n";
    append_head(out, "thread_name", 'M', 0, thread.tid);
    out += ",\"args\":{\"name\":";
    append_json_string(out, thread.name.empty() ? fmt::format("thread {}", thread.tid) : thread.name);
    out += "}}";
    out += ",\n";
    append_head(out, "thread_sort_index", 'M', 0, thread.tid);
    fmt::format_to(std::back_inserter(out), ",\"args\":{{\"sort_index\":{}}}}}", thread.tid);
  }
  for (const ProfileThreadEvents& thread : threads) {
    for (const ProfileEvent& event : thread.events) {
      out += ",\n";
      int64_t ts_ns = event.ts_ns - base_ns;
      switch (event.kind) {
        case ProfileEventKind::kComplete:
          append_head(out, event.name, 'X', ts_ns, thread.tid);
          out += ",\"dur\":";
          append_us(out, event.dur_ns);
          out += '}';
          break;
        case ProfileEventKind::kCounter: {
          append_head(out, event.name, 'C', ts_ns, thread.tid);
          double value = std::isfinite(event.value) ? event.value : 0.0;
          fmt::format_to(std::back_inserter(out), ",\"args\":{{\"value\":{}}}}}", value);
          break;
        }
        case ProfileEventKind::kFlowBegin:
        case ProfileEventKind::kFlowEnd: {
          bool begin = event.kind == ProfileEventKind::kFlowBegin;
          append_head(out, event.name, begin ? 's' : 'f', ts_ns, thread.tid);
          fmt::format_to(std::back_inserter(out), ",\"cat\":\"{}\",\"id\":{}", kFlowCategory, event.id);
          // "bp":"e" binds the arrival to the enclosing range rather than the next one to start.
          out += begin ? "}" : ",\"bp\":\"e\"}";
          break;
        }
      }
      if (out.size() >= kFlushBytes) KILN_TRY(flush(out));
    }
  }
  out += "\n],\"displayTimeUnit\":\"ms\"}\n";
  return flush(out);
}

}  // namespace

std::string trace_to_json() {
  std::string out;
  Status status = write_trace(out, [](std::string&) { return Status::ok(); });
  (void)status;  // the in-memory sink cannot fail
  return out;
}

Status trace_write_chrome(const std::string& path) {
  if (path.empty()) return invalid_argument("trace_write_chrome: empty path");
  std::string tmp_path = path + ".tmp";
  std::FILE* file = std::fopen(tmp_path.c_str(), "wb");
  if (file == nullptr) return io_error(fmt::format("{}: cannot open for writing", tmp_path));

  std::string out;
  out.reserve(kFlushBytes + 4096);
  Status status = write_trace(out, [&](std::string& chunk) -> Status {
    if (!chunk.empty() && std::fwrite(chunk.data(), 1, chunk.size(), file) != chunk.size()) {
      return io_error(fmt::format("{}: write failed", tmp_path));
    }
    chunk.clear();
    return Status::ok();
  });
  if (std::fclose(file) != 0 && status.is_ok()) status = io_error(fmt::format("{}: write failed", tmp_path));
  if (status.is_ok() && std::rename(tmp_path.c_str(), path.c_str()) != 0) {
    status = io_error(fmt::format("{}: cannot rename to {}", tmp_path, path));
  }
  if (!status.is_ok()) std::remove(tmp_path.c_str());
  return status;
}

}  // namespace kiln
