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

bool CpuIsIntel() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0, &eax, &ebx, &ecx, &edx) == 0) return false;
  // "GenuineIntel" in EBX, EDX, ECX.
  return ebx == 0x756e6547u && edx == 0x49656e69u && ecx == 0x6c65746eu;
#else
  return false;
#endif
}

std::atomic<bool> g_software_head_prefetch{CpuIsIntel()};

bool SetSoftwareHeadPrefetch(bool on) {
  return g_software_head_prefetch.exchange(on, std::memory_order_relaxed);
}

}  // namespace kernels
}  // namespace posenc
