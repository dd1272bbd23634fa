// Internal: what posenc's own tables (RopeTable, SinusoidalTable, RelativeRopeTable) share: the
// size rule, the allocation under it, and the fill of rows [0, rows) split over threads.
#ifndef POSENC_LIB_API_TABLE_BUILD_H_
#define POSENC_LIB_API_TABLE_BUILD_H_

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "lib/api/tensor_checks.h"
#include "lib/parallel/split.h"
#include "posenc/aligned.h"
#include "posenc/rope.h"
#include "posenc/status.h"

namespace posenc {
namespace api {

// The extent of a table as its factory's argument names it.
struct TableSize {
  const char* name;        // the argument ("max_positions", "max_distance")
  int64_t value;           // its value
  int64_t rows;            // rows stored (value, or fewer when rows past a cap repeat)
  int64_t row_elements;    // elements per row in each buffer
  int64_t max_elements;    // the documented limit on rows * row_elements
  const char* rule;        // the limit as messages state it ("max_positions * d_model <= 2^32")
};

// kInvalidArgument "<name> = <value>: must be > 0 and <rule>" unless value > 0 and
// rows * row_elements <= max_elements (without overflow). Checked before anything is allocated.
inline Status CheckTableSize(const TableSize& t) {
  int64_t elements;
  if (t.value <= 0 || __builtin_mul_overflow(t.rows, t.row_elements, &elements) ||
      elements > t.max_elements) {
    return Err(StatusCode::kInvalidArgument, t.name, " = ", t.value, ": must be > 0 and ", t.rule);
  }
  return Status::Ok();
}

// For a size CheckTableSize accepted: sizes every buffer to rows * row_elements, runs prepare()
// (validation that needs the storage; its failure is returned and the table dropped), then
// fill(begin, end) over disjoint row ranges covering [0, rows), split over threads by `exec`.
// Rows are independent, so the contents do not depend on the split.
template <class T, class Prepare, class Fill>
Status FillTableRows(const TableSize& t, std::initializer_list<AlignedVector<T>*> buffers,
                     const Execution& exec, const Prepare& prepare, const Fill& fill) {
  for (AlignedVector<T>* b : buffers) b->resize(static_cast<size_t>(t.rows * t.row_elements));
  Status st = prepare();
  if (!st.ok()) return st;
  const int64_t bytes_per_row =
      t.row_elements * static_cast<int64_t>(sizeof(T) * buffers.size());
  parallel::ForEachRange(t.rows, bytes_per_row, exec, fill);
  return Status::Ok();
}

}  // namespace api
}  // namespace posenc

#endif  // POSENC_LIB_API_TABLE_BUILD_H_
