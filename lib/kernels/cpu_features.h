// x86 instructions that posenc's kernels use beyond what Highway 1.0.3's targets guarantee,
// found at run time. Today one: AVX512_BF16's VCVTNE2PS2BF16 for the bf16 stores of the AVX3
// RoPE kernels (half-inl.h, StoreBF16Pair), which Highway's AVX3 target does not include.
#ifndef POSENC_LIB_KERNELS_CPU_FEATURES_H_
#define POSENC_LIB_KERNELS_CPU_FEATURES_H_

#include <atomic>

namespace posenc {
namespace kernels {

// Whether the CPU has AVX512_BF16 (CPUID leaf 7, sub-leaf 1, EAX bit 5); false off x86.
bool CpuHasAvx512Bf16();

// Whether bf16 stores on AVX3 may use VCVTNE2PS2BF16: the CPU has it and no test switched it
// off. Read once per store of 32 values, hence a relaxed load of a flag set at start-up.
extern std::atomic<bool> g_avx512_bf16_stores;
inline bool Avx512Bf16Stores() { return g_avx512_bf16_stores.load(std::memory_order_relaxed); }

// For tests, so that one machine runs both roundings on its AVX3 target: false switches the
// instruction off, true switches it back on where the CPU has it. Returns the previous state.
// Not for use while kernels run on other threads (the outputs would still be the same bits).
bool SetAvx512Bf16Stores(bool on);

}  // namespace kernels
}  // namespace posenc

#endif  // POSENC_LIB_KERNELS_CPU_FEATURES_H_
