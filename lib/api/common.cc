// Small public helpers: names of enums, tensor view factories.
#include "posenc/rope.h"
#include "posenc/status.h"
#include "posenc/tensor.h"

namespace posenc {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid_argument";
    case StatusCode::kOutOfRange: return "out_of_range";
    case StatusCode::kUnsupported: return "unsupported";
    case StatusCode::kInternal: return "internal";
  }
  return "unknown";
}

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "f32";
    case DType::kBF16: return "bf16";
    case DType::kF16: return "f16";
  }
  return "unknown";
}

size_t DTypeSize(DType dtype) { return dtype == DType::kF32 ? 4 : 2; }

const char* PairLayoutName(PairLayout pairs) {
  return pairs == PairLayout::kInterleaved ? "interleaved" : "half";
}

Tensor TensorBSHD(void* data, DType dtype, int64_t batch, int64_t seq, int64_t heads,
                  int64_t head_dim) {
  Tensor t;
  t.data = data;
  t.dtype = dtype;
  t.shape[0] = batch;
  t.shape[1] = seq;
  t.shape[2] = heads;
  t.shape[3] = head_dim;
  t.strides[3] = 1;
  t.strides[2] = head_dim;
  t.strides[1] = heads * head_dim;
  t.strides[0] = seq * heads * head_dim;
  return t;
}

Tensor TensorBHSD(void* data, DType dtype, int64_t batch, int64_t heads, int64_t seq,
                  int64_t head_dim) {
  Tensor t;
  t.data = data;
  t.dtype = dtype;
  t.shape[0] = batch;
  t.shape[1] = seq;
  t.shape[2] = heads;
  t.shape[3] = head_dim;
  t.strides[3] = 1;
  t.strides[1] = head_dim;
  t.strides[2] = seq * head_dim;
  t.strides[0] = heads * seq * head_dim;
  return t;
}

}  // namespace posenc
