// The names of an enum's values in one table: the name of a value, the value of a name (any case), and the names
// a setting accepts. Later rows with a value already named are aliases ("h5" for hdf5): parsed, never printed.
#pragma once

#include <cctype>
#include <cstddef>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln {

template <typename E>
struct EnumName {
  E value;
  const char* name;
};

template <typename E, size_t N>
const char* enum_name(const EnumName<E> (&table)[N], E value) {
  for (const EnumName<E>& row : table) {
    if (row.value == value) return row.name;
  }
  return "?";
}

// The first name of each value, in table order.
template <typename E, size_t N>
std::vector<std::string> enum_names(const EnumName<E> (&table)[N]) {
  std::vector<std::string> names;
  for (size_t i = 0; i < N; ++i) {
    bool alias = false;
    for (size_t j = 0; j < i; ++j) alias = alias || table[j].value == table[i].value;
    if (!alias) names.emplace_back(table[i].name);
  }
  return names;
}

// InvalidArgument "unknown <what> 'x' (expected a, b or c)" when no row names `text`.
template <typename E, size_t N>
Result<E> enum_parse(const EnumName<E> (&table)[N], const std::string& text, const char* what) {
  std::string lower = text;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const EnumName<E>& row : table) {
    if (lower == row.name) return row.value;
  }
  const std::vector<std::string> names = enum_names(table);
  std::string expected;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) expected += i + 1 == names.size() ? " or " : ", ";
    expected += names[i];
  }
  return invalid_argument("unknown " + std::string(what) + " '" + text + "' (expected " + expected + ")");
}

}  // namespace kiln
