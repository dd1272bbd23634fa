// posenc/tensor.h: non-owning strided views of the tensors posenc reads and writes.
#ifndef POSENC_TENSOR_H_
#define POSENC_TENSOR_H_

#include "posenc/export.h"

#include <cstddef>
#include <cstdint>

namespace posenc {

// Element type of a view. Storage only: RoPE rotates f32 data in double by default (f32 with
// RotationArithmetic::kF32), half data in f32; posenc::reference computes in double.
enum class DType { kF32 = 0, kBF16 = 1, kF16 = 2 };

POSENC_API const char* DTypeName(DType dtype);
POSENC_API size_t DTypeSize(DType dtype);

// A 4-D view [batch, seq, heads, head_dim] with strides counted in elements (not bytes). The
// head_dim axis must be contiguous (strides[3] == 1); the other strides are free, which covers
// BSHD, BHSD and q/k/v slices of one fused QKV buffer. Input views are only read even though
// `data` is not const (one type serves inputs and outputs).
struct Tensor {
  void* data = nullptr;
  DType dtype = DType::kF32;
  int64_t shape[4] = {0, 0, 0, 0};    // batch, seq, heads, head_dim
  int64_t strides[4] = {0, 0, 0, 0};  // elements between neighbours along each axis

  int64_t batch() const { return shape[0]; }
  int64_t seq() const { return shape[1]; }
  int64_t heads() const { return shape[2]; }
  int64_t head_dim() const { return shape[3]; }
  bool present() const { return data != nullptr; }
};

// Contiguous [batch, seq, heads, head_dim] (row-major BSHD, the HF "q_proj output" layout).
POSENC_API Tensor TensorBSHD(void* data, DType dtype, int64_t batch, int64_t seq, int64_t heads,
                  int64_t head_dim);
inline Tensor TensorBSHD(const float* data, int64_t batch, int64_t seq, int64_t heads,
                         int64_t head_dim) {
  return TensorBSHD(const_cast<float*>(data), DType::kF32, batch, seq, heads, head_dim);
}

// Contiguous [batch, heads, seq, head_dim] memory (row-major BHSD, HF after transpose(1, 2)),
// viewed with the logical axis order [batch, seq, heads, head_dim].
POSENC_API Tensor TensorBHSD(void* data, DType dtype, int64_t batch, int64_t heads, int64_t seq,
                  int64_t head_dim);
inline Tensor TensorBHSD(const float* data, int64_t batch, int64_t heads, int64_t seq,
                         int64_t head_dim) {
  return TensorBHSD(const_cast<float*>(data), DType::kF32, batch, heads, seq, head_dim);
}

}  // namespace posenc

#endif  // POSENC_TENSOR_H_
