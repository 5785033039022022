// _kiln.merge: the `kiln merge` job (pieces of a sharded job -> one dataset).
#include <pybind11/stl.h>

#include "bindings.h"
#include "errors.h"
#include "kiln/apps/merge.h"
#include "py_jobs.h"

namespace kiln::py {

namespace pyb = pybind11;

namespace {

pyb::dict merge_py(const std::vector<std::string>& pieces, const pyb::kwargs& kwargs) {
  MergeConfig config;
  settings_apply(merge_params(), &config, nullptr, OpKind::kRender, kwargs, "merge");
  config.inputs = pieces;
  std::vector<std::string> problems;
  Result<MergeSummary> summary = MergeSummary{};
  {
    pyb::gil_scoped_release release;
    summary = merge_run(config, &problems);
  }
  if (!summary.is_ok()) {
    std::string message = summary.status().message();
    for (const std::string& problem : problems) message += "\n  " + problem;
    status_check(Status(summary.status().code(), message));
  }
  pyb::dict d;
  d["kind"] = summary->kind;
  d["pieces"] = summary->pieces;
  d["items"] = summary->items;
  d["output"] = config.output;
  d["description"] = summary->output;
  d["notes"] = summary->notes;
  d["seconds"] = summary->seconds;
  return d;
}

}  // namespace

void merge_bindings_add(pyb::module_& m) {
  using namespace pybind11::literals;
  m.def("merge", &merge_py, "pieces"_a,
        R"doc(Join the pieces of a sharded job (render/faces/segment with shard="I/N") into one dataset: `kiln merge`.

pieces: folders holding the pieces, or the piece files. Every piece is checked first; when one is missing,
incomplete, damaged or of another job nothing is written and KilnValueError lists every problem. Returns a summary
dict (kind, pieces, items, output, description, notes, seconds).)doc");
}

}  // namespace kiln::py
