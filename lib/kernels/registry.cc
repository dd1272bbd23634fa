// The kernel table (lib/kernels/registry.h). One line of POSENC_KERNELS per (operation, dtype):
//   X(op, DTYPE, "name", Kernel, Plan)
// lists kernels::<Kernel><DTYPE>, which the dispatch TU lib/kernels/<op>_<dtype>.cc defines
// (POSENC_ROW_KERNEL_EXPORT(Kernel, Plan), lib/kernels/dtype_dispatch.h). The line both declares
// that function and makes its entry, so no header names it; a line whose TU is missing, or whose
// Plan differs from the TU's, fails to link (the parameter type is in the mangled name).
#include "lib/kernels/registry.h"

#include <cstdint>
#include <iterator>

// RoPE and M-RoPE share their TUs (rope_<dtype>.cc). M-RoPE (plan.num_streams > 1): per token
// the cos/sin row with angle_i = p[pair_stream[i]] * inv_freq[i] (or table / cache row
// p[pair_stream[i]] per pair), then the same head rotation as RoPE.
#define POSENC_KERNELS(X)                                                  \
  X(kRope, F32, "rope_f32", RopeTokens, RopePlan)                          \
  X(kRope, BF16, "rope_bf16", RopeTokens, RopePlan)                        \
  X(kRope, F16, "rope_f16", RopeTokens, RopePlan)                          \
  X(kMRope, F32, "mrope_f32", MRopeTokens, RopePlan)                       \
  X(kMRope, BF16, "mrope_bf16", MRopeTokens, RopePlan)                     \
  X(kMRope, F16, "mrope_f16", MRopeTokens, RopePlan)                       \
  X(kSinusoidal, F32, "sinusoidal_f32", SinusoidalTokens, SinusoidalPlan)  \
  X(kSinusoidal, BF16, "sinusoidal_bf16", SinusoidalTokens, SinusoidalPlan) \
  X(kSinusoidal, F16, "sinusoidal_f16", SinusoidalTokens, SinusoidalPlan)  \
  X(kReropeTiles, F32, "rerope_tiles_f32", ReropeTiles, ReropePlan)        \
  X(kReropeTiles, BF16, "rerope_tiles_bf16", ReropeTiles, ReropePlan)      \
  X(kReropeTiles, F16, "rerope_tiles_f16", ReropeTiles, ReropePlan)        \
  X(kRerotate, F32, "rerotate_f32", RerotateTokens, RerotatePlan)          \
  X(kRerotate, BF16, "rerotate_bf16", RerotateTokens, RerotatePlan)        \
  X(kRerotate, F16, "rerotate_f16", RerotateTokens, RerotatePlan)

namespace posenc {
namespace kernels {

#define POSENC_DECLARE_KERNEL(op, DTYPE, name, Kernel, Plan) \
  void Kernel##DTYPE(const Plan& plan, int64_t begin, int64_t end);
POSENC_KERNELS(POSENC_DECLARE_KERNEL)
#undef POSENC_DECLARE_KERNEL

namespace {

#define POSENC_KERNEL_ENTRY(op, DTYPE, name, Kernel, Plan) \
  KernelEntry(KernelOp::op, DType::k##DTYPE, name, &Kernel##DTYPE),
constexpr KernelEntry kKernels[] = {POSENC_KERNELS(POSENC_KERNEL_ENTRY)};
#undef POSENC_KERNEL_ENTRY

}  // namespace

const char* KernelOpName(KernelOp op) {
  switch (op) {
    case KernelOp::kRope: return "rope";
    case KernelOp::kMRope: return "mrope";
    case KernelOp::kSinusoidal: return "sinusoidal";
    case KernelOp::kReropeTiles: return "rerope_tiles";
    case KernelOp::kRerotate: return "rerotate";
  }
  return "unknown";
}

KernelList AllKernels() { return KernelList{kKernels, std::size(kKernels)}; }

const KernelEntry* FindEntry(KernelOp op, DType dtype) {
  for (const KernelEntry& e : kKernels) {
    if (e.op == op && e.dtype == dtype) return &e;
  }
  return nullptr;
}

}  // namespace kernels
}  // namespace posenc
