// What posenc's kernels learn about the CPU at run time, beyond Highway 1.0.3's targets:
// - AVX512_BF16's VCVTNE2PS2BF16 for the bf16 stores of the AVX3 RoPE kernels (half-inl.h,
//   StoreBF16Pair), which Highway's AVX3 target does not include;
// - whether large calls prefetch their heads in software (SoftwareHeadPrefetch).
#ifndef POSENC_LIB_KERNELS_CPU_FEATURES_H_
#define POSENC_LIB_KERNELS_CPU_FEATURES_H_

#include <atomic>

namespace posenc {
namespace kernels {

// Whether the CPU has AVX512_BF16 (CPUID leaf 7, sub-leaf 1, EAX bit 5); false off x86.
bool CpuHasAvx512Bf16();

// Whether bf16 stores on AVX3 may use VCVTNE2PS2BF16: the CPU has it and no test switched it
// off. Read once per token and tensor (rope-inl.h, RotateTokenHeads), which then runs its heads
// with or without the instruction; a relaxed load of a flag set at start-up.
extern std::atomic<bool> g_avx512_bf16_stores;
inline bool Avx512Bf16Stores() { return g_avx512_bf16_stores.load(std::memory_order_relaxed); }

// For tests, so that one machine runs both roundings on its AVX3 target: false switches the
// instruction off, true switches it back on where the CPU has it. Returns the previous state.
// Not for use while kernels run on other threads (the outputs would still be the same bits).
bool SetAvx512Bf16Stores(bool on);

// Whether the CPU is Intel's (CPUID leaf 0 vendor "GenuineIntel"); false off x86.
bool CpuIsIntel();

// Whether the calls large enough for it (rope_plan.h, PrefetchesHeads) ask for the lines of the
// heads ahead in software (rope-inl.h, HeadPrefetch::in_next_token): on Intel CPUs only. On an
// Intel Xeon VM it took in-place 4096-token Llama-3-8B calls from 6.8-10.4 ms to 3.8-5.8 ms (f32)
// and 16-bit ones to 0.42-0.60x the time; on an AMD Zen 4 VM the same calls took 1.04-1.30x the
// time with it (f32, bf16, f16; every distance and cache level tried lost; docs/performance.md
// section 3.17). On a 16-core Intel Xeon VM (family 6 model 207) one-thread 320 MiB calls took
// 0.71-0.78x the time with it (section 3.18). Other CPUs were not measured and rely on the
// hardware's prefetchers alone.
// A prefetch changes no bit.
extern std::atomic<bool> g_software_head_prefetch;
inline bool SoftwareHeadPrefetch() {
  return g_software_head_prefetch.load(std::memory_order_relaxed);
}

// For tests, so that one machine runs the prefetching loops whatever its vendor: sets the flag
// (on any CPU) and returns its previous state. Not for use while kernels run on other threads.
bool SetSoftwareHeadPrefetch(bool on);

}  // namespace kernels
}  // namespace posenc

#endif  // POSENC_LIB_KERNELS_CPU_FEATURES_H_
