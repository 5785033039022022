#include "kiln/apps/merge.h"
namespace kiln {
Result<MergeSummary> segment_merge(const std::vector<std::string>&, const MergeConfig&, std::vector<std::string>*) {
  return Status(Errc::kNotImplemented, "kiln merge of segment pieces is not implemented yet");
}
}  // namespace kiln
