// How many workers each served model gets when --instances is 0 (the default), and their CPU threads.
#pragma once

#include "kiln/apps/serve.h"

namespace kiln::serve {

// instances 0: one where a GPU provider runs the models (the GPU batches); on the CPU provider one per core, at most
// 4, each with an equal share of the cores (threads 0): the small face and embedding models run faster side by side
// on separate images than with all cores on one (64 clients here: 63 against 16 requests/s on 2 cores).
ServeConfig serve_workers_resolve(ServeConfig config, const LogFn& log);

}  // namespace kiln::serve
