// Internal: validation of strided views, shared by every entry family.
#ifndef POSENC_LIB_API_TENSOR_CHECKS_H_
#define POSENC_LIB_API_TENSOR_CHECKS_H_

#include <cstdint>
#include <string>

#include "lib/core/status_util.h"
#include "posenc/status.h"
#include "posenc/tensor.h"

namespace posenc {
namespace api {

// The most elements a posenc-owned table (RopeTable: each of cos and sin; SinusoidalTable) may
// hold: 2^32 (16 GiB of f32), a documented limit rather than an attempt at any allocation.
constexpr int64_t kMaxTableElements = int64_t{1} << 32;

using core::Err;  // lib/core/status_util.h

// DTypeSize (posenc/tensor.h) inline, for the checks every call runs.
inline size_t ElementBytes(DType dtype) { return dtype == DType::kF32 ? 4 : 2; }

// Shape "[a, b, c, d]" and strides for messages.
std::string ShapeString(const int64_t* dims, int rank);

// Checks one view of rank `rank` (its last axis contiguous): non-null data aligned to its
// element size, a valid DType, every extent > 0, strides >= 0, last stride 1, and byte offsets
// that fit in 64 bits and in the address space. `name` prefixes every message ("q", "k_out").
Status CheckView(const void* data, DType dtype, const int64_t* shape, const int64_t* strides,
                 int rank, const char* name);

// True when the view's elements are pairwise distinct (writes cannot race). Sufficient test:
// sorted by stride, each stride >= the span of all smaller axes.
bool HasNoSelfOverlap(const int64_t* shape, const int64_t* strides, int rank);

// Byte interval [first, last] of every element the view touches.
struct ByteSpan {
  uintptr_t first = 0, last = 0;
};
ByteSpan SpanOf(const void* data, DType dtype, const int64_t* shape, const int64_t* strides,
                int rank);

// Whether two views of `rank` = 4 share any byte, at the granularity of one token's row (all
// heads of token (b, s)): exact for separate buffers and for q/k/v slices of a fused QKV buffer;
// conservative (reports overlap) for views whose heads interleave within a token.
bool ViewsOverlap(const Tensor& a, const Tensor& b);

// kInvalidArgument naming `name` unless `data` is a multiple of `alignment` (a power of two):
// posenc reads ids, offsets, inv_freq and caches through typed pointers.
Status CheckAligned(const void* data, size_t alignment, const char* name);

// Whether `view` (rank 4, validated) shares a byte with [data, data + bytes), at the same
// token-row granularity as ViewsOverlap: an input buffer (ids, inv_freq, a cache) placed in the
// padding between an output's token rows is accepted, one inside a row is rejected.
bool ViewOverlapsBytes(const Tensor& view, const void* data, uint64_t bytes);
// The same, with the view's span (SpanOf of the view) computed once by a caller that checks one
// view against several buffers.
bool ViewOverlapsBytes(const Tensor& view, const ByteSpan& view_span, const void* data,
                       uint64_t bytes);

// Same data pointer, dtype, shape and strides.
bool SameView(const Tensor& a, const Tensor& b);

}  // namespace api
}  // namespace posenc

#endif  // POSENC_LIB_API_TENSOR_CHECKS_H_
