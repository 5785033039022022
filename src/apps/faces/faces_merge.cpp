#include "kiln/apps/merge.h"
namespace kiln {
Result<MergeSummary> faces_merge(const std::vector<std::string>&, const MergeConfig&, std::vector<std::string>*) {
  return Status(Errc::kNotImplemented, "kiln merge of faces pieces is not implemented yet");
}
}  // namespace kiln
