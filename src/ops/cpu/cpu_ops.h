// The CPU backend's image ops (every family; the reference implementations).
#pragma once

#include "kiln/device.h"
#include "kiln/ops.h"

namespace kiln {

class ThreadPool;

Status cpu_op_run(const OpCall& call, ThreadPool* pool);

}  // namespace kiln
