#include "cli/params_cli.h"

#include <cmath>

namespace kiln::cli {

namespace {

std::string bound_text(double v) { return param_text(ParamValue(v)); }

std::string type_hint(const ParamSpec& spec) {
  switch (spec.type) {
    case ParamType::kInt: return "INT";
    case ParamType::kFloat: return "FLOAT";
    case ParamType::kFloats: return spec.max_count > 1 ? "FLOAT[,...]" : "FLOAT";
    case ParamType::kChoice: return "NAME";
    case ParamType::kBool:
    case ParamType::kString: break;
  }
  return "TEXT";
}

}  // namespace

std::string param_help(const ParamSet& params, const ParamSet::Entry& entry) {
  const ParamSpec& s = entry.spec;
  std::string help = s.help;
  if (!s.choices.empty()) {
    std::string names;
    for (const auto& c : s.choices) {
      if (!names.empty()) names += " | ";
      names += c;
    }
    help += ": " + names;
  } else if (std::isfinite(s.min) && std::isfinite(s.max) && s.type != ParamType::kString) {
    help += ", " + bound_text(s.min) + " to " + bound_text(s.max);
  }
  std::string value = s.default_text.empty() ? param_text(params.default_value(entry)) : s.default_text;
  if (s.required) {
    help += " (required)";
  } else if (!value.empty()) {
    help += " (default: " + value + ")";
  }
  if (!s.env.empty()) help += " [env " + s.env + "]";
  return help;
}

CliParams::CliParams(CLI::App* cmd, const ParamSet& params, const std::map<std::string, std::string>& short_names)
    : m_params(params) {
  for (const ParamSet::Entry& entry : params.entries()) {
    Flag flag;
    flag.entry = &entry;
    std::string names = param_flag(entry.spec.name);
    if (auto it = short_names.find(entry.spec.name); it != short_names.end()) names = it->second + "," + names;
    const std::string help = param_help(params, entry);
    if (entry.spec.type == ParamType::kBool) {
      flag.on = std::make_shared<bool>(false);
      names += ",!--no-" + param_flag(entry.spec.name).substr(2);
      flag.option = cmd->add_flag(names, *flag.on, help);
    } else {
      flag.text = std::make_shared<std::string>();
      flag.option = cmd->add_option(names, *flag.text, help)->type_name(type_hint(entry.spec));
      if (entry.spec.required) flag.option->required();
    }
    m_flags.push_back(std::move(flag));
  }
}

Status CliParams::apply(void* config) const {
  for (const Flag& flag : m_flags) {
    if (flag.option->count() == 0) continue;
    const ParamSpec& spec = flag.entry->spec;
    const std::string what = param_flag(spec.name);
    ParamValue value;
    if (flag.on) {
      value = *flag.on;
    } else {
      KILN_TRY_ASSIGN(value, param_parse(spec, *flag.text, what));
    }
    KILN_TRY(m_params.set(config, spec.name, value, what));
  }
  return Status::ok();
}

bool CliParams::given(const std::string& name) const {
  for (const Flag& flag : m_flags) {
    if (flag.entry->spec.name == name) return flag.option->count() > 0;
  }
  return false;
}

}  // namespace kiln::cli
