// The cases of ops_peers: per op and size, kiln's call and the equivalent OpenCV calls on the same input, with
// preallocated outputs reused by both, and a check of how far apart their outputs are.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kiln/exec.h"
#include "kiln/status.h"

namespace kiln::bench {

struct Check {
  std::string kind;  // max_abs_diff | max_rel_diff | mismatch_fraction
  double value = 0;
};

struct Case {
  std::string op{};
  std::string size{};  // "1920x1080->512x512"
  std::string peer{};  // "opencv", or "" for kiln-only
  std::string peer_calls{};
  std::function<kiln::Status()> kiln_run{};
  std::function<void()> peer_run{};
  std::function<Check()> check{};  // after both ran: how far apart the outputs are
};

struct Env {
  kiln::ExecOptions exec;
  kiln::ExecReport* report = nullptr;  // the last kiln call's placement
};

// Every case, in the order ops_peers runs them.
std::vector<Case> ops_peers_cases_make(const Env& env);

}  // namespace kiln::bench
