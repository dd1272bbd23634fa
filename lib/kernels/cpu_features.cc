#include "lib/kernels/cpu_features.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace posenc {
namespace kernels {

bool CpuHasAvx512Bf16() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (eax >> 5) & 1u;
#else
  return false;
#endif
}

std::atomic<bool> g_avx512_bf16_stores{CpuHasAvx512Bf16()};

bool SetAvx512Bf16Stores(bool on) {
  return g_avx512_bf16_stores.exchange(on && CpuHasAvx512Bf16(), std::memory_order_relaxed);
}

}  // namespace kernels
}  // namespace posenc
