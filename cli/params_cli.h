// A command's flags made from declared settings (kiln/params.h): --name for each (booleans: --name and
// --no-name), the help text with the range, choices and default; values stay text until apply().
#pragma once

#include <CLI/CLI.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/params.h"

namespace kiln::cli {

class CliParams {
 public:
  // `short_names` adds short flags: {{"output", "-o"}}.
  CliParams(CLI::App* cmd, const ParamSet& params, const std::map<std::string, std::string>& short_names = {});
  // Stores the flags that were given into `config` (which must be the ParamSet's type); InvalidArgument names the
  // flag. Call after the config file and the environment were applied: flags win.
  Status apply(void* config) const;
  bool given(const std::string& name) const;

 private:
  struct Flag {
    const ParamSet::Entry* entry = nullptr;
    CLI::Option* option = nullptr;
    std::shared_ptr<std::string> text;  // non-boolean settings
    std::shared_ptr<bool> on;           // booleans
  };

  const ParamSet& m_params;
  std::vector<Flag> m_flags;
};

// "Image width in pixels, 1 to 32768 (default: 800)".
std::string param_help(const ParamSet& params, const ParamSet::Entry& entry);

}  // namespace kiln::cli
