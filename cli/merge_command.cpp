// kiln merge: the pieces of a sharded job (kiln render/faces/segment --shard I/N) -> one dataset.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/params_cli.h"
#include "kiln/apps/merge.h"

namespace kiln::cli {

Runner merge_command_add(CLI::App& app) {
  auto* cmd = app.add_subcommand("merge", "Join the pieces of a sharded job (--shard I/N) into one dataset, after "
                                          "checking that every piece is there, complete, intact and of the same job");
  auto inputs = std::make_shared<std::vector<std::string>>();
  auto quiet = std::make_shared<bool>(false);
  cmd->add_option("pieces", *inputs, "Folders holding the pieces, or the piece files")->required();
  cmd->add_flag("-q,--quiet", *quiet, "No progress output");
  auto flags = std::make_shared<CliParams>(cmd, merge_params(), std::map<std::string, std::string>{{"output", "-o"}});
  return [inputs, quiet, flags] {
    MergeConfig config;
    if (Status s = flags->apply(&config); !s.is_ok()) return exit_with(s);
    config.inputs = *inputs;
    std::vector<std::string> problems;
    const bool silent = *quiet;
    auto result = merge_run(config, &problems, [silent](const std::string& line) {
      if (!silent) std::fprintf(stderr, "%s\n", line.c_str());
    });
    for (const std::string& problem : problems) std::fprintf(stderr, "  %s\n", text_one_line(problem).c_str());
    if (!result.is_ok()) return exit_with(result.status());
    const MergeSummary& s = result.value();
    std::printf("Merged %lld pieces (%s, %lld %s) in %.2f s\n", static_cast<long long>(s.pieces), s.kind.c_str(),
                static_cast<long long>(s.items),
                s.kind == "render" ? "images" : s.kind == "faces" ? "faces" : "videos", s.seconds);
    for (const std::string& note : s.notes) std::printf("%s\n", note.c_str());
    std::printf("Output: %s\n", s.output.c_str());
    return 0;
  };
}

}  // namespace kiln::cli
