// The execution settings every job shares, declared once.
#include <cstdlib>

#include "exec/exec_env.h"
#include "kiln/exec.h"

namespace kiln {

const ParamTable<ExecSettings>& exec_params() {
  static const ParamTable<ExecSettings> table = [] {
    ParamTable<ExecSettings> t;
    t.add_choice({.name = "mode", .help = "Where ops run (auto: a GPU that supports them, else the CPU; gpu: a GPU "
                                          "or an error)",
},
                 [](ExecSettings& s) -> ExecMode& { return s.mode; }, kExecModeNames, "mode");
    t.add({.name = "threads", .help = "CPU worker threads", .min = 0, .max = 4096, .env = "KILN_THREADS",
           .default_text = "0 = all cores"},
          [](ExecSettings& s) -> int32_t& { return s.threads; });
    t.add({.name = "batch_size", .help = "Images per batch (and at most per GPU launch)", .min = 1, .max = 1 << 24,
           .env = "GPU_BATCH_SIZE"},
          [](ExecSettings& s) -> int64_t& { return s.batch_size; });
    t.add({.name = "fallback_on_error", .help = "Rerun on the CPU (reported) when a GPU fails; otherwise stop"},
          [](ExecSettings& s) -> bool& { return s.fallback_on_error; });
    return t;
  }();
  return table;
}

const char* env_lookup_process(const char* name) { return std::getenv(name); }

Status exec_settings_apply_env(ExecSettings* settings, OpKind op, const EnvLookup& lookup,
                               std::vector<std::string>* notes) {
  KILN_TRY(exec_params().apply_env(settings, lookup));
  return exec_env_apply(op, &settings->mode, &settings->gpu_only, notes, lookup);
}

Status exec_settings_apply_env(ExecSettings* settings, const EnvLookup& lookup, std::vector<std::string>* notes) {
  KILN_TRY(exec_params().apply_env(settings, lookup));
  return exec_env_apply_switch(nullptr, &settings->mode, &settings->gpu_only, notes, lookup);
}

Status exec_mode_apply_env(const char* gpu_switch, ExecMode* mode, const EnvLookup& lookup,
                           std::vector<std::string>* notes) {
  std::optional<BackendKind> gpu_only;  // GPU_BACKEND's backend is the job's (exec_settings_apply_env)
  return exec_env_apply_switch(gpu_switch, mode, &gpu_only, notes, lookup);
}

ExecOptions exec_options_make(const ExecSettings& settings, ThreadPool* pool) {
  ExecOptions options;
  options.mode = settings.mode;
  options.gpu_only = settings.gpu_only;
  options.fallback_on_error = settings.fallback_on_error;
  options.pool = pool;
  options.gpu_batch_limit = settings.batch_size;
  return options;
}

}  // namespace kiln
