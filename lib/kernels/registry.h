// Internal: the one table of posenc's row kernels, per (operation, dtype) (XNNPACK's
// src/configs/*-config.c). The public API (lib/api) picks the kernel of a call here
// (FindKernel, through api::ChooseKernel), the registry test runs every entry against
// posenc::reference, and the kernel benchmark registers every entry. The row kernels have no
// names in this header: each is defined by one dtype dispatch TU (lib/kernels/<op>_<dtype>.cc,
// 3 lines over lib/kernels/<op>_static-inl.h), declared only by its entry in
// lib/kernels/registry.cc, and dispatches to the best SIMD target of this CPU (posenc/targets.h).
// Adding a dtype or a kernel variant: one 3-line TU (and its line in CMakeLists.txt), one entry
// in lib/kernels/registry.cc (docs/layers.md).
#ifndef POSENC_LIB_KERNELS_REGISTRY_H_
#define POSENC_LIB_KERNELS_REGISTRY_H_

#include <cstddef>
#include <cstdint>

#include "lib/core/distance_map.h"
#include "lib/core/rerope_plan.h"
#include "lib/core/rerotate_plan.h"
#include "lib/core/rope_plan.h"
#include "lib/core/sinusoidal_plan.h"
#include "posenc/tensor.h"

namespace posenc {
namespace kernels {

// What a row kernel computes. Items are tokens (plan.tokens()) except for kReropeTiles, whose
// items are score tiles (plan.tiles()).
enum class KernelOp : uint8_t {
  kRope,         // RopePlan, num_streams == 1: rotate q / k (lib/kernels/rope_tokens-inl.h)
  kMRope,        // RopePlan, num_streams > 1: M-RoPE (lib/kernels/mrope_tokens-inl.h)
  kSinusoidal,   // SinusoidalPlan: write or add sinusoidal encodings (sinusoidal_tokens-inl.h)
  kReropeTiles,  // ReropePlan: relative-position scores (lib/kernels/rerope-inl.h)
  kRerotate,     // RerotatePlan: fused re-rotation of keys (lib/kernels/rerotate-inl.h)
};
const char* KernelOpName(KernelOp op);

// Processes items [begin, end) of a validated plan; items are independent, so any split of the
// range (parallel/split.h) gives the same bits.
template <class Plan>
using RowKernel = void (*)(const Plan& plan, int64_t begin, int64_t end);

// One registered kernel: the function of its op's plan type is set, the others are null.
struct KernelEntry {
  KernelOp op;
  DType dtype;     // of the plan's tensors (q / k, x / out)
  const char* name;  // "<op>_<dtype>", e.g. "rope_bf16": test and benchmark names
  RowKernel<RopePlan> rope = nullptr;
  RowKernel<SinusoidalPlan> sinusoidal = nullptr;
  RowKernel<ReropePlan> rerope = nullptr;
  RowKernel<RerotatePlan> rerotate = nullptr;

  constexpr KernelEntry(KernelOp o, DType d, const char* n, RowKernel<RopePlan> f)
      : op(o), dtype(d), name(n), rope(f) {}
  constexpr KernelEntry(KernelOp o, DType d, const char* n, RowKernel<SinusoidalPlan> f)
      : op(o), dtype(d), name(n), sinusoidal(f) {}
  constexpr KernelEntry(KernelOp o, DType d, const char* n, RowKernel<ReropePlan> f)
      : op(o), dtype(d), name(n), rerope(f) {}
  constexpr KernelEntry(KernelOp o, DType d, const char* n, RowKernel<RerotatePlan> f)
      : op(o), dtype(d), name(n), rerotate(f) {}

  // The kernel as a function of `Plan` (null when the op takes another plan type).
  template <class Plan>
  RowKernel<Plan> fn() const { return Fn(static_cast<const Plan*>(nullptr)); }

 private:
  RowKernel<RopePlan> Fn(const RopePlan*) const { return rope; }
  RowKernel<SinusoidalPlan> Fn(const SinusoidalPlan*) const { return sinusoidal; }
  RowKernel<ReropePlan> Fn(const ReropePlan*) const { return rerope; }
  RowKernel<RerotatePlan> Fn(const RerotatePlan*) const { return rerotate; }
};

// Every registered kernel, in table order (lib/kernels/registry.cc).
struct KernelList {
  const KernelEntry* first;
  size_t size;
  const KernelEntry* begin() const { return first; }
  const KernelEntry* end() const { return first + size; }
};
KernelList AllKernels();

// The entry of (op, dtype), or null when none is registered.
const KernelEntry* FindEntry(KernelOp op, DType dtype);

// The kernel of (op, dtype) as a function of Plan, or null when none is registered (or op takes
// another plan type).
template <class Plan>
RowKernel<Plan> FindKernel(KernelOp op, DType dtype) {
  const KernelEntry* e = FindEntry(op, dtype);
  return e == nullptr ? nullptr : e->fn<Plan>();
}

// Dispatched helpers outside the (op, dtype) table (tables and conversions).
// cos/sin rows for positions first, first+1, ..., first+count-1: row j at cos + j * half; where
// cos_lo is not null also their lo parts (RotationArithmetic::kFmaChain, sincos-inl.h) at cos_lo
// and sin_lo.
void CosSinRows(const double* inv_freq, int64_t half, double attention_factor, int64_t first,
                int64_t count, float* cos, float* sin, float* cos_lo = nullptr,
                float* sin_lo = nullptr);
// ReRoPE rows for distances first .. first + count - 1 (row j at rows + j * 2 * half), the values
// the tile kernels compute on the fly.
void ReropeRows(const double* inv_freq, int64_t half, double m2, const DistanceMap& map,
                int64_t first, int64_t count, double* rows);
// n elements of `dtype` (f32 / bf16 / f16, validated) to f32 and back (posenc/half.h).
void ToF32(const void* src, DType dtype, size_t n, float* dst);
void FromF32(const float* src, size_t n, DType dtype, void* dst);
// Name of the target the kernels dispatch to ("AVX2", ...).
const char* DispatchedTargetName();

}  // namespace kernels
}  // namespace posenc

#endif  // POSENC_LIB_KERNELS_REGISTRY_H_
