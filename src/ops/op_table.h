// A backend's op table: one row per family it implements, `op` first. Rows may be in any order; families without
// a row are not supported by that backend.
#pragma once

#include <cstddef>

#include "kiln/ops.h"

namespace kiln {

template <typename Row, size_t N>
constexpr const Row* op_table_find(const Row (&table)[N], OpKind op) {
  for (const Row& row : table) {
    if (row.op == op) return &row;
  }
  return nullptr;
}

// True when no family has two rows (checked at compile time by each backend).
template <typename Row, size_t N>
constexpr bool op_table_unique(const Row (&table)[N]) {
  for (size_t i = 0; i < N; ++i) {
    for (size_t j = i + 1; j < N; ++j) {
      if (table[i].op == table[j].op) return false;
    }
  }
  return true;
}

}  // namespace kiln
