// Settings declared once: name, type, range, help and where it is stored in a config struct (whose default state
// holds the defaults). The CLI's flags (--seq-len), the Python keywords (seq_len=), the config file's keys and the
// environment variables are all made from these declarations, so one setting has one name everywhere.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "kiln/enum_names.h"
#include "kiln/status.h"

namespace kiln {

enum class ParamType : uint8_t {
  kInt = 0,  // int64
  kFloat,    // double
  kBool,
  kString,
  kChoice,   // one of `choices` (a string)
  kFloats,   // 1 or more doubles: "0.5,0.5,0.5" on the command line, a list in Python
};
const char* param_type_name(ParamType type);  // "integer", "number", ...

using ParamValue = std::variant<int64_t, double, bool, std::string, std::vector<double>>;

struct ParamSpec {
  std::string name{};  // snake_case; the CLI flag is --name with '-' for '_'
  ParamType type = ParamType::kString;
  std::string help{};
  double min = -std::numeric_limits<double>::infinity();  // kInt, kFloat, kFloats (each value)
  double max = std::numeric_limits<double>::infinity();
  std::vector<std::string> choices{};  // kChoice: the names shown and accepted (setters may accept aliases too)
  int32_t min_count = 1;             // kFloats
  int32_t max_count = 1;
  std::string env{};           // an environment variable that sets it too (GPU_BATCH_SIZE), or empty
  std::string default_text{};  // shown instead of the default value when set ("800, or 4 x seq_len for OHLC")
  bool required = false;
};

// "--seq-len" for "seq_len".
std::string param_flag(const std::string& name);
// The value of `text` (a flag's argument, an environment variable, a config file scalar) for `spec`:
// InvalidArgument "<what>: expected ..." when it does not parse or is out of range.
Result<ParamValue> param_parse(const ParamSpec& spec, const std::string& text, const std::string& what);
// Checks a value of any origin (e.g. Python) against the spec and converts it to the declared type where that is
// lossless (an integer for a number, a single number for a list).
Result<ParamValue> param_check(const ParamSpec& spec, ParamValue value, const std::string& what);
// "800", "true", "chw", "0.485,0.456,0.406".
std::string param_text(const ParamValue& value);

// The declarations of one config type, type-erased so that the CLI, Python and config-file layers need no
// template: values are set on and read from a `void*` that must point to that type.
class ParamSet {
 public:
  struct Entry {
    ParamSpec spec;
    std::function<Status(void*, const ParamValue&)> set;  // value already checked against the spec
    std::function<ParamValue(const void*)> get;
  };

  const std::vector<Entry>& entries() const { return m_entries; }
  const Entry* find(std::string_view name) const;
  // Checks `value` against the declaration of `name` and stores it; InvalidArgument "<what>: ..." otherwise.
  Status set(void* config, std::string_view name, const ParamValue& value, const std::string& what) const;
  ParamValue get(const void* config, std::string_view name) const;
  // The value a default-constructed config has (for help texts and Python signatures).
  ParamValue default_value(const Entry& entry) const;
  // Applies every declared environment variable that is set (lookup returns null when unset).
  Status apply_env(void* config, const std::function<const char*(const char*)>& lookup) const;
  // Changes a declaration after it was added or included (e.g. a job's own default text).
  void spec_update(std::string_view name, const std::function<void(ParamSpec&)>& change);

 protected:
  std::vector<Entry> m_entries;
  std::shared_ptr<const void> m_defaults;  // a default-constructed config
};

// The declarations of `C`. Each add() names a field (through an accessor, so nested fields work) and its spec.
template <typename C>
class ParamTable : public ParamSet {
 public:
  ParamTable() { m_defaults = std::make_shared<const C>(); }

  // Integers, numbers, booleans, strings and lists of numbers: the field's own type decides the spec's type and how
  // values convert. `field` is a lambda C& -> the field&.
  template <typename F>
  ParamTable& add(ParamSpec spec, F field) {
    using T = std::remove_reference_t<std::invoke_result_t<F, C&>>;
    spec.type = type_of<T>();
    m_entries.push_back(Entry{std::move(spec),
                              [field](void* c, const ParamValue& v) { return value_store(v, &field(*static_cast<C*>(c))); },
                              [field](const void* c) { return value_load(field(*const_cast<C*>(static_cast<const C*>(c)))); }});
    return *this;
  }
  // An enum (or any value with a name): parse gives InvalidArgument for unknown names.
  template <typename F, typename T = std::remove_reference_t<std::invoke_result_t<F, C&>>>
  ParamTable& add_choice(ParamSpec spec, F field, Result<T> (*parse)(const std::string&), const char* (*name)(T)) {
    spec.type = ParamType::kChoice;
    m_entries.push_back(Entry{std::move(spec),
                              [field, parse](void* c, const ParamValue& v) -> Status {
                                KILN_TRY_ASSIGN(T parsed, parse(std::get<std::string>(v)));
                                field(*static_cast<C*>(c)) = parsed;
                                return Status::ok();
                              },
                              [field, name](const void* c) -> ParamValue {
                                return std::string(name(field(*const_cast<C*>(static_cast<const C*>(c)))));
                              }});
    return *this;
  }
  // An enum named by a table (kiln/enum_names.h): its names are the choices unless the spec lists a subset.
  template <typename F, typename E, size_t N>
  ParamTable& add_choice(ParamSpec spec, F field, const EnumName<E> (&table)[N], const char* what) {
    if (spec.choices.empty()) spec.choices = enum_names(table);
    spec.type = ParamType::kChoice;
    m_entries.push_back(Entry{std::move(spec),
                              [field, &table, what](void* c, const ParamValue& v) -> Status {
                                KILN_TRY_ASSIGN(E parsed, enum_parse(table, std::get<std::string>(v), what));
                                field(*static_cast<C*>(c)) = parsed;
                                return Status::ok();
                              },
                              [field, &table](const void* c) -> ParamValue {
                                return std::string(enum_name(table, field(*const_cast<C*>(static_cast<const C*>(c)))));
                              }});
    return *this;
  }
  // A string field that takes one of spec.choices.
  template <typename F>
  ParamTable& add_string_choice(ParamSpec spec, F field) {
    spec.type = ParamType::kChoice;
    m_entries.push_back(Entry{spec,
                              [field, choices = spec.choices, name = spec.name](void* c, const ParamValue& v) -> Status {
                                const auto& text = std::get<std::string>(v);
                                if (std::find(choices.begin(), choices.end(), text) == choices.end()) {
                                  std::string list;
                                  for (const auto& choice : choices) list += (list.empty() ? "" : ", ") + choice;
                                  return invalid_argument(name + " '" + text + "': expected one of " + list);
                                }
                                field(*static_cast<C*>(c)) = text;
                                return Status::ok();
                              },
                              [field](const void* c) -> ParamValue {
                                return field(*const_cast<C*>(static_cast<const C*>(c)));
                              }});
    return *this;
  }
  // Any other field: the caller converts.
  ParamTable& add_custom(ParamSpec spec, std::function<Status(C&, const ParamValue&)> set,
                         std::function<ParamValue(const C&)> get) {
    m_entries.push_back(Entry{std::move(spec),
                              [set](void* c, const ParamValue& v) { return set(*static_cast<C*>(c), v); },
                              [get](const void* c) { return get(*static_cast<const C*>(c)); }});
    return *this;
  }
  // The declarations of `part` (all, or those named in `only`), stored in the sub-struct `field` of C.
  template <typename P, typename F>
  ParamTable& include(const ParamTable<P>& part, F field, std::initializer_list<std::string_view> only = {}) {
    for (const Entry& e : part.entries()) {
      if (only.size() > 0 && std::find(only.begin(), only.end(), e.spec.name) == only.end()) continue;
      m_entries.push_back(Entry{e.spec,
                                [set = e.set, field](void* c, const ParamValue& v) { return set(&field(*static_cast<C*>(c)), v); },
                                [get = e.get, field](const void* c) {
                                  return get(&field(*const_cast<C*>(static_cast<const C*>(c))));
                                }});
    }
    return *this;
  }

  Status set(C& config, std::string_view name, const ParamValue& value, const std::string& what) const {
    return ParamSet::set(&config, name, value, what);
  }

 private:
  template <typename T>
  static constexpr ParamType type_of() {
    if constexpr (std::is_same_v<T, bool>) {
      return ParamType::kBool;
    } else if constexpr (std::is_integral_v<T>) {
      return ParamType::kInt;
    } else if constexpr (std::is_floating_point_v<T>) {
      return ParamType::kFloat;
    } else if constexpr (std::is_same_v<T, std::string>) {
      return ParamType::kString;
    } else {
      static_assert(std::is_same_v<T, std::vector<double>>, "use add_choice or add_custom for this field");
      return ParamType::kFloats;
    }
  }
  template <typename T>
  static Status value_store(const ParamValue& v, T* out) {
    if constexpr (std::is_same_v<T, bool>) {
      *out = std::get<bool>(v);
    } else if constexpr (std::is_integral_v<T>) {
      *out = static_cast<T>(std::get<int64_t>(v));
    } else if constexpr (std::is_floating_point_v<T>) {
      *out = static_cast<T>(std::get<double>(v));
    } else if constexpr (std::is_same_v<T, std::string>) {
      *out = std::get<std::string>(v);
    } else {
      static_assert(std::is_same_v<T, std::vector<double>>, "use add_choice or add_custom for this field");
      *out = std::get<std::vector<double>>(v);
    }
    return Status::ok();
  }
  template <typename T>
  static ParamValue value_load(const T& value) {
    if constexpr (std::is_same_v<T, bool>) {
      return value;
    } else if constexpr (std::is_integral_v<T>) {
      return static_cast<int64_t>(value);
    } else if constexpr (std::is_floating_point_v<T>) {
      return static_cast<double>(value);
    } else {
      return value;
    }
  }
};

}  // namespace kiln
