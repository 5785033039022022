#include "kiln/params.h"

#include "kiln/enum_names.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace kiln {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  const size_t b = s.find_last_not_of(" \t");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

// The shortest text that reads back as the same value; as the same float when `v` came from one (0.485, not
// 0.485000014).
std::string number_text(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::abs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  const bool from_float = static_cast<double>(static_cast<float>(v)) == v;
  for (int precision = 6; precision <= 17; ++precision) {
    std::ostringstream ss;
    ss.precision(precision);
    ss << v;
    const double back = std::strtod(ss.str().c_str(), nullptr);
    if (from_float ? static_cast<float>(back) == static_cast<float>(v) : back == v) return ss.str();
  }
  return std::to_string(v);
}

std::string range_text(const ParamSpec& spec) {
  const bool lo = std::isfinite(spec.min);
  const bool hi = std::isfinite(spec.max);
  if (lo && hi) return number_text(spec.min) + " to " + number_text(spec.max);
  if (lo) return "at least " + number_text(spec.min);
  if (hi) return "at most " + number_text(spec.max);
  return "finite";
}

Status range_check(const ParamSpec& spec, double v, const std::string& what) {
  if (!std::isfinite(v) || v < spec.min || v > spec.max) {
    return invalid_argument(what + ": " + number_text(v) + " is out of range (" + range_text(spec) + ")");
  }
  return Status::ok();
}

bool parse_int(const std::string& text, int64_t* out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end && !text.empty();
}

bool parse_double(const std::string& text, double* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

}  // namespace

const char* param_type_name(ParamType type) {
  static constexpr EnumName<ParamType> kNames[] = {{ParamType::kInt, "integer"},   {ParamType::kFloat, "number"},
                                                   {ParamType::kBool, "boolean"},  {ParamType::kString, "string"},
                                                   {ParamType::kChoice, "choice"}, {ParamType::kFloats, "numbers"}};
  return enum_name(kNames, type);
}

std::string param_flag(const std::string& name) {
  std::string flag = "--" + name;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

Result<ParamValue> param_parse(const ParamSpec& spec, const std::string& raw, const std::string& what) {
  const std::string text = trim(raw);
  switch (spec.type) {
    case ParamType::kInt: {
      int64_t v = 0;
      if (!parse_int(text, &v)) return invalid_argument(what + ": '" + raw + "' is not a whole number");
      return param_check(spec, v, what);
    }
    case ParamType::kFloat: {
      double v = 0;
      if (!parse_double(text, &v)) return invalid_argument(what + ": '" + raw + "' is not a number");
      return param_check(spec, v, what);
    }
    case ParamType::kBool: {
      const std::string v = lower(text);
      if (v == "1" || v == "true" || v == "yes" || v == "on") return ParamValue(true);
      if (v == "0" || v == "false" || v == "no" || v == "off") return ParamValue(false);
      return invalid_argument(what + ": '" + raw + "' is not true or false");
    }
    case ParamType::kString:
    case ParamType::kChoice: return param_check(spec, text, what);
    case ParamType::kFloats: {
      std::vector<double> values;
      std::stringstream ss(text);
      std::string item;
      while (std::getline(ss, item, ',')) {
        double v = 0;
        if (!parse_double(trim(item), &v)) {
          return invalid_argument(what + ": '" + raw + "' is not a comma-separated list of numbers");
        }
        values.push_back(v);
      }
      return param_check(spec, values, what);
    }
  }
  return invalid_argument(what + ": unknown setting type");
}

Result<ParamValue> param_check(const ParamSpec& spec, ParamValue value, const std::string& what) {
  const auto expected = [&]() {
    return invalid_argument(what + ": expected " + std::string(param_type_name(spec.type)) + ", got '" +
                            param_text(value) + "'");
  };
  switch (spec.type) {
    case ParamType::kInt: {
      if (const auto* d = std::get_if<double>(&value); d != nullptr && *d == std::floor(*d) && std::abs(*d) < 9e15) {
        value = static_cast<int64_t>(*d);
      }
      if (!std::holds_alternative<int64_t>(value)) return expected();
      KILN_TRY(range_check(spec, static_cast<double>(std::get<int64_t>(value)), what));
      return value;
    }
    case ParamType::kFloat: {
      if (const auto* i = std::get_if<int64_t>(&value)) value = static_cast<double>(*i);
      if (!std::holds_alternative<double>(value)) return expected();
      KILN_TRY(range_check(spec, std::get<double>(value), what));
      return value;
    }
    case ParamType::kBool:
      if (!std::holds_alternative<bool>(value)) return invalid_argument(what + ": expected true or false");
      return value;
    case ParamType::kString:
      if (!std::holds_alternative<std::string>(value)) return expected();
      return value;
    case ParamType::kChoice: {
      if (!std::holds_alternative<std::string>(value)) return expected();
      return value;  // the field's parser accepts the names (and aliases) and reports unknown ones
    }
    case ParamType::kFloats: {
      if (const auto* i = std::get_if<int64_t>(&value)) value = std::vector<double>{static_cast<double>(*i)};
      if (const auto* d = std::get_if<double>(&value)) value = std::vector<double>{*d};
      if (!std::holds_alternative<std::vector<double>>(value)) return expected();
      const auto& values = std::get<std::vector<double>>(value);
      const auto n = static_cast<int32_t>(values.size());
      if (n < spec.min_count || n > spec.max_count) {
        const std::string count = spec.min_count == spec.max_count
                                      ? std::to_string(spec.min_count)
                                      : std::to_string(spec.min_count) + " to " + std::to_string(spec.max_count);
        return invalid_argument(what + ": expected " + count + " numbers, got " + std::to_string(n));
      }
      for (double v : values) KILN_TRY(range_check(spec, v, what));
      return value;
    }
  }
  return expected();
}

std::string param_text(const ParamValue& value) {
  struct Text {
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return number_text(v); }
    std::string operator()(bool v) const { return v ? "true" : "false"; }
    std::string operator()(const std::string& v) const { return v; }
    std::string operator()(const std::vector<double>& v) const {
      std::string out;
      for (double x : v) {
        if (!out.empty()) out += ',';
        out += number_text(x);
      }
      return out;
    }
  };
  return std::visit(Text{}, value);
}

const ParamSet::Entry* ParamSet::find(std::string_view name) const {
  for (const Entry& e : m_entries) {
    if (e.spec.name == name) return &e;
  }
  return nullptr;
}

Status ParamSet::set(void* config, std::string_view name, const ParamValue& value, const std::string& what) const {
  const Entry* entry = find(name);
  if (entry == nullptr) return invalid_argument(what + ": unknown setting '" + std::string(name) + "'");
  KILN_TRY_ASSIGN(const ParamValue checked, param_check(entry->spec, value, what));
  const Status stored = entry->set(config, checked);
  if (!stored.is_ok()) return Status(stored.code(), what + ": " + stored.message());
  return Status::ok();
}

ParamValue ParamSet::get(const void* config, std::string_view name) const {
  const Entry* entry = find(name);
  return entry != nullptr ? entry->get(config) : ParamValue{};
}

ParamValue ParamSet::default_value(const Entry& entry) const { return entry.get(m_defaults.get()); }

Status ParamSet::apply_env(void* config, const std::function<const char*(const char*)>& lookup) const {
  for (const Entry& e : m_entries) {
    if (e.spec.env.empty()) continue;
    const char* text = lookup(e.spec.env.c_str());
    if (text == nullptr || *text == '\0') continue;
    const std::string what = e.spec.env + "='" + text + "'";
    KILN_TRY_ASSIGN(const ParamValue value, param_parse(e.spec, text, what));
    KILN_TRY(set(config, e.spec.name, value, what));
  }
  return Status::ok();
}

void ParamSet::spec_update(std::string_view name, const std::function<void(ParamSpec&)>& change) {
  for (Entry& e : m_entries) {
    if (e.spec.name == name) change(e.spec);
  }
}

}  // namespace kiln
