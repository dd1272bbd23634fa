// Internal: the body every dtype dispatch TU shares (gemma.cpp ops/matmul_static_*.cc style).
// A TU lib/kernels/<op>_<dtype>.cc is three lines:
//   #define POSENC_DTYPE BF16                                  // F32, BF16 or F16
//   #define HWY_TARGET_INCLUDE "lib/kernels/<op>_bf16.cc"      // the TU itself
//   #include "lib/kernels/<op>_static-inl.h"
// and <op>_static-inl.h (re-included once per SIMD target by hwy/foreach_target.h) writes, per
// kernel, POSENC_ROW_KERNEL_TARGET(Name, Plan, Body) in the per-target namespace and
// POSENC_ROW_KERNEL_EXPORT(Name, Plan) under HWY_ONCE: kernels::<Name><dtype> (declared by its
// entry in lib/kernels/registry.cc, which no header repeats) then dispatches to Body<storage type
// of dtype> of the best target.
#ifndef POSENC_LIB_KERNELS_DTYPE_DISPATCH_H_
#define POSENC_LIB_KERNELS_DTYPE_DISPATCH_H_

#include <cstdint>

#define POSENC_STORAGE_F32 float
#define POSENC_STORAGE_BF16 hwy::bfloat16_t
#define POSENC_STORAGE_F16 hwy::float16_t
#define POSENC_CAT2_(a, b) a##b
#define POSENC_CAT2(a, b) POSENC_CAT2_(a, b)
#define POSENC_CAT3(a, b, c) POSENC_CAT2(POSENC_CAT2(a, b), c)
// The storage type of the TU's dtype, and the names of its kernel and per-target body.
#define POSENC_STORAGE POSENC_CAT2(POSENC_STORAGE_, POSENC_DTYPE)
#define POSENC_KERNEL_NAME(name) POSENC_CAT2(name, POSENC_DTYPE)
#define POSENC_KERNEL_IMPL(name) POSENC_CAT3(name, POSENC_DTYPE, Impl)

// Inside namespace posenc::HWY_NAMESPACE: the per-target function of kernel `name`.
#define POSENC_ROW_KERNEL_TARGET(name, Plan, Body)                                 \
  void POSENC_KERNEL_IMPL(name)(const kernels::Plan& plan, int64_t begin, int64_t end) { \
    Body<POSENC_STORAGE>(plan, begin, end);                                        \
  }

// Inside namespace posenc, under HWY_ONCE: the table of targets and kernels::<name><dtype>.
#define POSENC_ROW_KERNEL_EXPORT(name, Plan)                                       \
  HWY_EXPORT(POSENC_KERNEL_IMPL(name));                                            \
  namespace kernels {                                                              \
  void POSENC_KERNEL_NAME(name)(const Plan& plan, int64_t begin, int64_t end);     \
  void POSENC_KERNEL_NAME(name)(const Plan& plan, int64_t begin, int64_t end) {    \
    HWY_DYNAMIC_DISPATCH(POSENC_KERNEL_IMPL(name))(plan, begin, end);              \
  }                                                                                \
  }

#endif  // POSENC_LIB_KERNELS_DTYPE_DISPATCH_H_
