// Small public helpers: names of enums, tensor view factories.
#include "lib/api/tensor_checks.h"
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

size_t DTypeSize(DType dtype) { return api::ElementBytes(dtype); }

const char* PairLayoutName(PairLayout pairs) {
  switch (pairs) {
    case PairLayout::kHalf: return "half";
    case PairLayout::kInterleaved: return "interleaved";
    case PairLayout::kFromConfig: return "from_config";
  }
  return "unknown";
}

namespace {
Tensor Contiguous(void* data, DType dtype, int64_t batch, int64_t seq, int64_t heads,
                  int64_t head_dim, int64_t stride_seq, int64_t stride_head, int64_t stride_batch) {
  Tensor t;
  t.data = data;
  t.dtype = dtype;
  t.shape[0] = batch;
  t.shape[1] = seq;
  t.shape[2] = heads;
  t.shape[3] = head_dim;
  t.strides[0] = stride_batch;
  t.strides[1] = stride_seq;
  t.strides[2] = stride_head;
  t.strides[3] = 1;
  return t;
}
}  // namespace

Tensor TensorBSHD(void* data, DType dtype, int64_t batch, int64_t seq, int64_t heads,
                  int64_t head_dim) {
  return Contiguous(data, dtype, batch, seq, heads, head_dim, heads * head_dim, head_dim,
                    seq * heads * head_dim);
}

Tensor TensorBHSD(void* data, DType dtype, int64_t batch, int64_t heads, int64_t seq,
                  int64_t head_dim) {
  return Contiguous(data, dtype, batch, seq, heads, head_dim, head_dim, seq * head_dim,
                    heads * seq * head_dim);
}

}  // namespace posenc
