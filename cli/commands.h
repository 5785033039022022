// kiln subcommands. Each registers its options on the CLI11 app and runs after parsing.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

#include "kiln/status.h"

namespace kiln::cli {

using Runner = std::function<int()>;

Runner render_command_add(CLI::App& app);
Runner info_command_add(CLI::App& app);
Runner devices_command_add(CLI::App& app);
Runner bench_command_add(CLI::App& app);
Runner quality_command_add(CLI::App& app);
Runner preprocess_command_add(CLI::App& app);
Runner models_command_add(CLI::App& app);
Runner infer_command_add(CLI::App& app);
Runner faces_command_add(CLI::App& app);
Runner faces_search_command_add(CLI::App& faces);  // kiln faces search
Runner segment_command_add(CLI::App& app);
Runner merge_command_add(CLI::App& app);
Runner model_command_add(CLI::App& app);  // kiln model convert | quantize
Runner serve_command_add(CLI::App& app);

// Prints "kiln: <message>" to stderr and maps the error code to the process exit code.
int exit_with(const Status& status);

}  // namespace kiln::cli
