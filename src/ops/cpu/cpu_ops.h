// The CPU backend's op table: every family (the CPU implementations are the references).
#pragma once

#include "kiln/ops.h"

namespace kiln {

class ThreadPool;

struct CpuOp {
  OpKind op;
  Status (*run)(const OpCall& call, ThreadPool* pool);
};

// The CPU row of `op`, or nullptr.
const CpuOp* cpu_op_find(OpKind op);

}  // namespace kiln
