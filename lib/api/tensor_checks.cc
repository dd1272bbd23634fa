#include "lib/api/tensor_checks.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace posenc {
namespace api {

std::string ShapeString(const int64_t* dims, int rank) {
  std::ostringstream os;
  os << "[";
  for (int i = 0; i < rank; ++i) os << (i ? ", " : "") << dims[i];
  os << "]";
  return os.str();
}

Status CheckView(const void* data, DType dtype, const int64_t* shape, const int64_t* strides,
                 int rank, const char* name) {
  if (data == nullptr) return Err(StatusCode::kInvalidArgument, name, ".data is null");
  if (dtype != DType::kF32 && dtype != DType::kBF16 && dtype != DType::kF16) {
    return Err(StatusCode::kInvalidArgument, name, ".dtype = ", static_cast<int>(dtype),
               ": not a posenc::DType");
  }
  // ElementBytes is 2 or 4: a mask, not the 64-bit division `%` compiles to (on Zen 4 ~20 % of
  // this check's time at decode, docs/performance.md section 3.30).
  if ((reinterpret_cast<uintptr_t>(data) & (ElementBytes(dtype) - 1)) != 0) {
    return Err(StatusCode::kInvalidArgument, name, ".data = ", data, ": must be aligned to ",
               ElementBytes(dtype), " bytes (", DTypeName(dtype), ")");
  }
  for (int i = 0; i < rank; ++i) {
    if (shape[i] <= 0) {
      return Err(StatusCode::kInvalidArgument, name, ".shape[", i, "] = ", shape[i],
                 ": every extent must be > 0 (shape ", ShapeString(shape, rank), ")");
    }
    if (strides[i] < 0) {
      return Err(StatusCode::kInvalidArgument, name, ".strides[", i, "] = ", strides[i],
                 ": strides must be >= 0");
    }
  }
  if (strides[rank - 1] != 1) {
    return Err(StatusCode::kInvalidArgument, name, ".strides[", rank - 1, "] = ",
               strides[rank - 1], ": the last (head_dim / channel) axis must be contiguous");
  }
  int64_t max_offset = 0;
  for (int i = 0; i < rank; ++i) {
    int64_t term;
    if (__builtin_mul_overflow(shape[i] - 1, strides[i], &term) ||
        __builtin_add_overflow(max_offset, term, &max_offset)) {
      return Err(StatusCode::kInvalidArgument, name, ": shape ", ShapeString(shape, rank),
                 " with strides ", ShapeString(strides, rank), " overflows 64-bit offsets");
    }
  }
  int64_t elements, bytes;
  uintptr_t end;
  if (__builtin_add_overflow(max_offset, int64_t{1}, &elements) ||
      __builtin_mul_overflow(elements, static_cast<int64_t>(ElementBytes(dtype)), &bytes) ||
      __builtin_add_overflow(reinterpret_cast<uintptr_t>(data), static_cast<uintptr_t>(bytes),
                             &end)) {
    return Err(StatusCode::kInvalidArgument, name, ": shape ", ShapeString(shape, rank),
               " with strides ", ShapeString(strides, rank),
               " overflows the 64-bit byte size / address space");
  }
  return Status::Ok();
}

bool HasNoSelfOverlap(const int64_t* shape, const int64_t* strides, int rank) {
  // (stride, extent) of the axes with extent > 1, insertion-sorted by stride (rank <= 8). The
  // axes are taken last to first: in the usual layouts (BSHD, BHSD) strides grow towards the
  // first axis, so no element moves.
  int64_t stride[8], extent[8];
  int n = 0;
  for (int i = std::min(rank, 8) - 1; i >= 0; --i) {
    if (shape[i] <= 1) continue;
    int j = n++;
    for (; j > 0 && stride[j - 1] > strides[i]; --j) {
      stride[j] = stride[j - 1];
      extent[j] = extent[j - 1];
    }
    stride[j] = strides[i];
    extent[j] = shape[i];
  }
  int64_t span = 1;  // elements spanned by the smaller axes
  for (int i = 0; i < n; ++i) {
    if (stride[i] < span) return false;
    span = stride[i] * (extent[i] - 1) + span;
  }
  return true;
}

ByteSpan SpanOf(const void* data, DType dtype, const int64_t* shape, const int64_t* strides,
                int rank) {
  int64_t max_offset = 0;
  for (int i = 0; i < rank; ++i) max_offset += (shape[i] - 1) * strides[i];
  const uintptr_t first = reinterpret_cast<uintptr_t>(data);
  const uintptr_t size = ElementBytes(dtype);
  return {first, first + static_cast<uintptr_t>(max_offset + 1) * size - 1};
}

namespace {
ByteSpan TensorSpan(const Tensor& t) { return SpanOf(t.data, t.dtype, t.shape, t.strides, 4); }

// Bytes of token (b, s): from its first head's first element to its last head's last element.
void AppendTokenRows(const Tensor& t, int tag, std::vector<std::pair<ByteSpan, int>>* rows) {
  const uintptr_t size = ElementBytes(t.dtype);
  const uintptr_t base = reinterpret_cast<uintptr_t>(t.data);
  const uintptr_t row_bytes =
      static_cast<uintptr_t>((t.shape[2] - 1) * t.strides[2] + t.shape[3]) * size;
  for (int64_t b = 0; b < t.shape[0]; ++b) {
    for (int64_t s = 0; s < t.shape[1]; ++s) {
      const uintptr_t first = base + static_cast<uintptr_t>(b * t.strides[0] + s * t.strides[1]) * size;
      rows->push_back({{first, first + row_bytes - 1}, tag});
    }
  }
}
}  // namespace

bool ViewsOverlap(const Tensor& a, const Tensor& b) {
  const ByteSpan sa = TensorSpan(a), sb = TensorSpan(b);
  if (sa.last < sb.first || sb.last < sa.first) return false;
  // Interleaved extents (e.g. q and k slices of one fused QKV buffer): sweep the token rows.
  std::vector<std::pair<ByteSpan, int>> rows;
  rows.reserve(static_cast<size_t>(a.shape[0] * a.shape[1] + b.shape[0] * b.shape[1]));
  AppendTokenRows(a, 0, &rows);
  AppendTokenRows(b, 1, &rows);
  std::sort(rows.begin(), rows.end(),
            [](const auto& x, const auto& y) { return x.first.first < y.first.first; });
  uintptr_t last_end[2] = {0, 0};
  bool seen[2] = {false, false};
  for (const auto& [span, tag] : rows) {
    const int other = 1 - tag;
    if (seen[other] && span.first <= last_end[other]) return true;
    last_end[tag] = seen[tag] ? std::max(last_end[tag], span.last) : span.last;
    seen[tag] = true;
  }
  return false;
}

Status CheckAligned(const void* data, size_t alignment, const char* name) {
  if ((reinterpret_cast<uintptr_t>(data) & (alignment - 1)) == 0) return Status::Ok();
  return Err(StatusCode::kInvalidArgument, name, " = ", data, ": must be aligned to ", alignment,
             " bytes");
}

bool ViewOverlapsBytes(const Tensor& view, const void* data, uint64_t bytes) {
  return ViewOverlapsBytes(view, TensorSpan(view), data, bytes);
}

bool ViewOverlapsBytes(const Tensor& view, const ByteSpan& sv, const void* data, uint64_t bytes) {
  if (data == nullptr || bytes == 0) return false;
  const uintptr_t first = reinterpret_cast<uintptr_t>(data);
  uintptr_t last;
  if (__builtin_add_overflow(first, static_cast<uintptr_t>(bytes - 1), &last)) last = UINTPTR_MAX;
  if (last < sv.first || sv.last < first) return false;
  // The spans meet: test each token row (as AppendTokenRows lays them out).
  const uintptr_t size = ElementBytes(view.dtype);
  const uintptr_t base = reinterpret_cast<uintptr_t>(view.data);
  const uintptr_t row_bytes =
      static_cast<uintptr_t>((view.shape[2] - 1) * view.strides[2] + view.shape[3]) * size;
  for (int64_t b = 0; b < view.shape[0]; ++b) {
    for (int64_t s = 0; s < view.shape[1]; ++s) {
      const uintptr_t row_first =
          base + static_cast<uintptr_t>(b * view.strides[0] + s * view.strides[1]) * size;
      if (!(last < row_first || row_first + row_bytes - 1 < first)) return true;
    }
  }
  return false;
}

bool SameView(const Tensor& a, const Tensor& b) {
  if (a.data != b.data || a.dtype != b.dtype) return false;
  for (int i = 0; i < 4; ++i) {
    if (a.shape[i] != b.shape[i] || a.strides[i] != b.strides[i]) return false;
  }
  return true;
}

}  // namespace api
}  // namespace posenc
