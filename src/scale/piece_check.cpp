// Whether a set of pieces is exactly one whole job: same size, every piece once, each on its fixed range, complete.
#include <algorithm>
#include <map>

#include "kiln/scale.h"

namespace kiln {

namespace {

std::string range_text(int64_t first, int64_t count) {
  return count == 0 ? "none" : std::to_string(first) + ".." + std::to_string(first + count - 1);
}

}  // namespace

PieceFacts piece_facts_from_name(const std::string& path) {
  PieceFacts facts;
  facts.path = path;
  facts.shard_index = -1;  // an unknown piece: it must not count as piece 0
  PieceName name;
  if (piece_name_parse(path, &name)) {
    facts.shard_index = name.index;
    facts.shard_count = name.count;
  }
  return facts;
}

Status pieces_refused(size_t pieces, size_t problems) {
  return invalid_argument("cannot merge " + std::to_string(pieces) + " pieces: " + std::to_string(problems) +
                          (problems == 1 ? " problem" : " problems") + ", nothing written");
}

std::vector<std::string> pieces_check(const std::vector<PieceFacts>& pieces) {
  std::vector<std::string> problems;
  if (pieces.empty()) return {"no pieces given"};
  for (const PieceFacts& p : pieces) {
    for (const std::string& problem : p.problems) problems.push_back(p.path + ": " + problem);
  }
  // The job is what most readable pieces say it is (the first piece may be the odd one out).
  std::map<std::pair<int64_t, int64_t>, int64_t> votes;  // (pieces, items) -> pieces saying so
  for (const PieceFacts& p : pieces) {
    if (p.problems.empty()) ++votes[{p.shard_count, p.total}];
  }
  if (votes.empty()) return problems;
  const auto job = std::max_element(votes.begin(), votes.end(),
                                    [](const auto& a, const auto& b) { return a.second < b.second; })->first;
  const int64_t count = job.first;
  const int64_t total = job.second;
  if (count < 1 || count > kShardCountMax || total < 0) {
    problems.push_back("the pieces say the job has " + std::to_string(count) + " pieces of " + std::to_string(total) +
                       " items: not a kiln job");
    return problems;
  }
  std::vector<int> seen(static_cast<size_t>(std::max<int64_t>(count, 0)), 0);
  for (const PieceFacts& p : pieces) {
    if (!p.problems.empty()) {
      if (p.shard_index >= 0 && p.shard_index < count) ++seen[static_cast<size_t>(p.shard_index)];
      continue;
    }
    if (p.shard_count != count) {
      problems.push_back(p.path + ": piece of " + std::to_string(p.shard_count) + ", the others are pieces of " +
                         std::to_string(count));
      continue;
    }
    if (p.total != total) {
      problems.push_back(p.path + ": its job has " + std::to_string(p.total) + " items, the others' " +
                         std::to_string(total) + " (made from another input or with other settings)");
      continue;
    }
    if (p.shard_index < 0 || p.shard_index >= count) {
      problems.push_back(p.path + ": piece index " + std::to_string(p.shard_index) + " is outside 0.." +
                         std::to_string(count - 1));
      continue;
    }
    if (++seen[static_cast<size_t>(p.shard_index)] > 1) {
      problems.push_back(p.path + ": piece " + std::to_string(p.shard_index) + " is given more than once");
      continue;
    }
    const IndexRange want = shard_range(p.shard_index, count, total);
    if (p.first != want.first || p.count != want.count) {
      problems.push_back(p.path + ": holds items " + range_text(p.first, p.count) + ", piece " +
                         std::to_string(p.shard_index) + " of " + std::to_string(count) + " is " +
                         range_text(want.first, want.count));
    }
    if (!p.complete) problems.push_back(p.path + ": incomplete (its run has not finished; rerun it with --resume)");
  }
  constexpr int64_t kMissingListed = 20;  // then a count: a wrong piece count must not print a million lines
  int64_t missing = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (seen[static_cast<size_t>(i)] != 0) continue;
    if (++missing <= kMissingListed) {
      const IndexRange range = shard_range(i, count, total);
      problems.push_back("piece " + std::to_string(i) + " of " + std::to_string(count) + " (items " +
                         range_text(range.first, range.count) + ") is missing");
    }
  }
  if (missing > kMissingListed) {
    problems.push_back("... and " + std::to_string(missing - kMissingListed) + " more pieces are missing");
  }
  return problems;
}

}  // namespace kiln
