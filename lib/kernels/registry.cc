// The kernel table (lib/kernels/registry.h). One line per (operation, dtype); the function is
// defined by that dtype's dispatch TU.
#include "lib/kernels/registry.h"

#include <iterator>

namespace posenc {
namespace kernels {
namespace {

constexpr KernelEntry kKernels[] = {
    {KernelOp::kRope, DType::kF32, "rope_f32", RopeTokensF32},
    {KernelOp::kRope, DType::kBF16, "rope_bf16", RopeTokensBF16},
    {KernelOp::kRope, DType::kF16, "rope_f16", RopeTokensF16},
    {KernelOp::kMRope, DType::kF32, "mrope_f32", MRopeTokensF32},
    {KernelOp::kMRope, DType::kBF16, "mrope_bf16", MRopeTokensBF16},
    {KernelOp::kMRope, DType::kF16, "mrope_f16", MRopeTokensF16},
    {KernelOp::kSinusoidal, DType::kF32, "sinusoidal_f32", SinusoidalTokensF32},
    {KernelOp::kSinusoidal, DType::kBF16, "sinusoidal_bf16", SinusoidalTokensBF16},
    {KernelOp::kSinusoidal, DType::kF16, "sinusoidal_f16", SinusoidalTokensF16},
    {KernelOp::kReropeTiles, DType::kF32, "rerope_tiles_f32", ReropeTilesF32},
    {KernelOp::kReropeTiles, DType::kBF16, "rerope_tiles_bf16", ReropeTilesBF16},
    {KernelOp::kReropeTiles, DType::kF16, "rerope_tiles_f16", ReropeTilesF16},
    {KernelOp::kRerotate, DType::kF32, "rerotate_f32", RerotateTokensF32},
    {KernelOp::kRerotate, DType::kBF16, "rerotate_bf16", RerotateTokensBF16},
    {KernelOp::kRerotate, DType::kF16, "rerotate_f16", RerotateTokensF16},
};

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
