// Which piece of a job this run is: --shard I/N, or the index a scheduler puts in the environment.
#include "kiln/scale.h"

#include <charconv>
#include <optional>

namespace kiln {

namespace {

std::optional<int64_t> integer_parse(const std::string& text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

// A set variable that is not an integer is an error; an unset one is nullopt.
Result<std::optional<int64_t>> env_integer(const ShardEnvLookup& lookup, const char* name) {
  const char* text = lookup(name);
  if (text == nullptr) return std::optional<int64_t>{};
  const auto value = integer_parse(text);
  if (!value) return invalid_argument(std::string(name) + "='" + text + "' is not an integer");
  return std::optional<int64_t>{*value};
}

Result<Shard> shard_make(int64_t index, int64_t count, std::string source) {
  if (count < 1) return invalid_argument(source + ": the piece count must be at least 1");
  if (count > kShardCountMax) {
    return invalid_argument(source + ": at most " + std::to_string(kShardCountMax) + " pieces");
  }
  if (index < 0 || index >= count) {
    return invalid_argument(source + ": the piece index must be in 0.." + std::to_string(count - 1));
  }
  return Shard{index, count, std::move(source)};
}

std::string assignment(const char* name, int64_t value) { return std::string(name) + "=" + std::to_string(value); }

// Slurm job arrays: the task id, relative to the array's first id and step; the count from SLURM_ARRAY_TASK_COUNT,
// else from MIN/MAX. An array given as a list (--array=1,5,9) has no step and cannot be mapped: refused. With
// --shard-count N the task id is the piece itself (so `sbatch --array=17` reruns piece 17 of N alone).
Result<std::optional<Shard>> slurm_shard(const ShardEnvLookup& lookup, int64_t shard_count) {
  KILN_TRY_ASSIGN(const auto id, env_integer(lookup, "SLURM_ARRAY_TASK_ID"));
  if (!id) return std::optional<Shard>{};
  if (shard_count > 0) {
    KILN_TRY_ASSIGN(Shard shard, shard_make(*id, shard_count,
                                            assignment("SLURM_ARRAY_TASK_ID", *id) + " of --shard-count " +
                                                std::to_string(shard_count)));
    return std::optional<Shard>{shard};
  }
  KILN_TRY_ASSIGN(const auto min, env_integer(lookup, "SLURM_ARRAY_TASK_MIN"));
  KILN_TRY_ASSIGN(const auto max, env_integer(lookup, "SLURM_ARRAY_TASK_MAX"));
  KILN_TRY_ASSIGN(const auto step, env_integer(lookup, "SLURM_ARRAY_TASK_STEP"));
  KILN_TRY_ASSIGN(const auto task_count, env_integer(lookup, "SLURM_ARRAY_TASK_COUNT"));
  const int64_t first = min.value_or(0);
  const int64_t stride = step.value_or(1);
  if (stride < 1) return invalid_argument(assignment("SLURM_ARRAY_TASK_STEP", stride) + " must be at least 1");
  int64_t count = 0;
  if (task_count) {
    count = *task_count;
  } else if (max) {
    count = (*max - first) / stride + 1;
  } else {
    return invalid_argument("SLURM_ARRAY_TASK_ID is set but neither SLURM_ARRAY_TASK_COUNT nor SLURM_ARRAY_TASK_MAX");
  }
  if ((*id - first) % stride != 0) {
    return invalid_argument(assignment("SLURM_ARRAY_TASK_ID", *id) + " is not on the array's step (" +
                            assignment("SLURM_ARRAY_TASK_MIN", first) + ", " +
                            assignment("SLURM_ARRAY_TASK_STEP", stride) + "); use --shard I/N");
  }
  const int64_t index = (*id - first) / stride;
  std::string source = assignment("SLURM_ARRAY_TASK_ID", *id);
  if (index != *id || count != task_count.value_or(-1)) {
    source += " (" + std::string(task_count ? assignment("SLURM_ARRAY_TASK_COUNT", count)
                                            : "SLURM_ARRAY_TASK_MIN/MAX/STEP") + ")";
  } else {
    source += " of " + assignment("SLURM_ARRAY_TASK_COUNT", count);
  }
  if (max && task_count && first + (count - 1) * stride != *max) {
    return invalid_argument("SLURM_ARRAY_TASK_COUNT=" + std::to_string(count) + " does not match the range " +
                            std::to_string(first) + "-" + std::to_string(*max) + ":" + std::to_string(stride) +
                            " (an array given as a list); use --shard I/N");
  }
  KILN_TRY_ASSIGN(Shard shard, shard_make(index, count, source));
  return std::optional<Shard>{shard};
}

// A rank/size pair (MPI launchers).
Result<std::optional<Shard>> rank_shard(const ShardEnvLookup& lookup, const char* rank_name, const char* size_name) {
  KILN_TRY_ASSIGN(const auto rank, env_integer(lookup, rank_name));
  if (!rank) return std::optional<Shard>{};
  KILN_TRY_ASSIGN(const auto size, env_integer(lookup, size_name));
  if (!size) return invalid_argument(std::string(rank_name) + " is set but " + size_name + " is not");
  KILN_TRY_ASSIGN(Shard shard,
                  shard_make(*rank, *size, assignment(rank_name, *rank) + " of " + assignment(size_name, *size)));
  return std::optional<Shard>{shard};
}

}  // namespace

std::string Shard::label() const {
  return "piece " + std::to_string(index) + " of " + std::to_string(count);
}

Result<Shard> shard_parse(const std::string& text) {
  const size_t slash = text.find('/');
  const auto index = slash == std::string::npos ? std::nullopt : integer_parse(text.substr(0, slash));
  const auto count = slash == std::string::npos ? std::nullopt : integer_parse(text.substr(slash + 1));
  if (!index || !count) return invalid_argument("--shard '" + text + "': expected I/N (e.g. 0/4), auto or none");
  return shard_make(*index, *count, "--shard " + text);
}

Result<Shard> shard_resolve(const ShardSettings& settings, const ShardEnvLookup& lookup) {
  if (settings.shard == "none") return Shard{};
  if (settings.shard != "auto") return shard_parse(settings.shard);
  // A scheduler's count of 1 (an srun step of one task, mpirun -np 1, an array of one task) is the whole job.
  const auto found = [](const std::optional<Shard>& shard) { return shard && shard->count > 1; };
  KILN_TRY_ASSIGN(const auto slurm, slurm_shard(lookup, settings.shard_count));
  if (slurm && (found(slurm) || settings.shard_count > 0)) return *slurm;
  KILN_TRY_ASSIGN(const auto k8s_index, env_integer(lookup, "JOB_COMPLETION_INDEX"));
  if (k8s_index) {
    if (settings.shard_count < 1) {
      return invalid_argument("JOB_COMPLETION_INDEX=" + std::to_string(*k8s_index) +
                              " (a Kubernetes Indexed Job) needs --shard-count N, the Job's completions");
    }
    return shard_make(*k8s_index, settings.shard_count,
                      assignment("JOB_COMPLETION_INDEX", *k8s_index) + " of --shard-count " +
                          std::to_string(settings.shard_count));
  }
  KILN_TRY_ASSIGN(const auto mpi, rank_shard(lookup, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"));
  if (found(mpi)) return *mpi;
  KILN_TRY_ASSIGN(const auto pmi, rank_shard(lookup, "PMI_RANK", "PMI_SIZE"));
  if (found(pmi)) return *pmi;
  return Shard{};
}

IndexRange shard_range(int64_t index, int64_t count, int64_t total) {
  if (count < 1 || index < 0 || index >= count || total <= 0) return {};
  const auto at = [&](int64_t i) {
    return static_cast<int64_t>(static_cast<__int128>(total) * i / count);
  };
  return IndexRange{at(index), at(index + 1) - at(index)};
}

const ParamTable<ShardSettings>& shard_params() {
  static const ParamTable<ShardSettings> table = [] {
    using S = ShardSettings;
    ParamTable<S> t;
    t.add({.name = "shard",
           .help = "Do only piece I of N of the job (I/N), into its own files for `kiln merge`; auto: the "
                   "scheduler's index (Slurm array, Kubernetes Indexed Job, MPI) when there is one; none: the whole "
                   "job"},
          [](S& s) -> std::string& { return s.shard; });
    t.add({.name = "shard_count",
           .help = "Pieces of the job, where the scheduler gives only the index (a Kubernetes Indexed Job's "
                   "completions)",
           .min = 0},
          [](S& s) -> int64_t& { return s.shard_count; });
    return t;
  }();
  return table;
}

}  // namespace kiln
