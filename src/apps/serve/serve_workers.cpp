#include "apps/serve/serve_workers.h"

#include <algorithm>
#include <string>
#include <thread>

#include "kiln/infer.h"

namespace kiln::serve {

namespace {

bool gpu_provider_available() {
  for (const ProviderStatus& status : infer_provider_statuses()) {
    if (status.provider != InferProvider::kCpu && status.available) return true;
  }
  return false;
}

}  // namespace

ServeConfig serve_workers_resolve(ServeConfig config, const LogFn& log) {
  if (config.instances != 0) return config;
  constexpr int32_t kMostCpuInstances = 4;
  const bool gpu = config.exec.mode != ExecMode::kCpu && gpu_provider_available();
  const int32_t cores = std::max(1, static_cast<int32_t>(std::thread::hardware_concurrency()));
  config.instances = gpu ? 1 : std::min(cores, kMostCpuInstances);
  if (!gpu && config.exec.threads == 0) config.exec.threads = std::max(1, cores / config.instances);
  if (log) {
    log("serve: " + std::to_string(config.instances) + " instance(s) per model" +
        (gpu ? " (a GPU provider)" : ", " + std::to_string(config.exec.threads) + " CPU thread(s) each"));
  }
  return config;
}

}  // namespace kiln::serve
