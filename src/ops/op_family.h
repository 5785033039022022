// The family table: what placement, validation and batch slicing need to know of each op family. Adding a family
// adds one row here (src/ops/op_family.cpp) and one to each backend's op table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "kiln/ops.h"

namespace kiln {

struct OpFamily {
  OpKind op;
  const char* name;        // "resize"
  const char* gpu_switch;  // the predecessor's environment switch that governs it
  Status (*validate)(const OpCall& call);  // the family's own checks, after the generic batch checks
  size_t result_size;      // bytes of one per-image result (quality; matte's optional counts), 0 for none
  // A copy of the params whose per-image arrays start at image `first`; nullptr for families without any.
  std::shared_ptr<const void> (*params_slice)(const void* params, int64_t first);
};

const OpFamily& op_family(OpKind op);

}  // namespace kiln
