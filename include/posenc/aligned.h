// posenc/aligned.h: storage that starts at a 64-byte boundary.
//
// posenc's kernels read and write whole SIMD vectors (64 bytes on AVX-512). A vector access at an
// address that is not a multiple of 64 straddles two cache lines, and std::vector<float> gives 16
// bytes past a 64-byte boundary (glibc: 16 bytes past a page for large blocks). posenc's own
// tables (RopeTable, SinusoidalTable, RelativeRopeTable) store their rows in AlignedVector, and
// callers may do the same for q, k, caches and embeddings: on a Zen 4 CPU a 16-token Llama-3-8B
// table + kF32 call took 1.05x the time with its table 16 bytes off (docs/performance.md §3.23),
// and the suite's in-place rows took 1.2-1.5x (§3.22). Results do not depend on alignment.
#ifndef POSENC_ALIGNED_H_
#define POSENC_ALIGNED_H_

#include <cstddef>
#include <new>
#include <vector>

namespace posenc {

// The alignment, in bytes, of AlignedAllocator's blocks: a cache line, and the widest vector.
inline constexpr std::size_t kAlignment = 64;

// A standard allocator whose blocks start at a multiple of kAlignment (C++17 aligned new).
template <class T>
struct AlignedAllocator {
  using value_type = T;
  AlignedAllocator() = default;
  template <class U>
  AlignedAllocator(const AlignedAllocator<U>&) noexcept {}  // NOLINT: rebinding converts implicitly
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{kAlignment}));
  }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, std::align_val_t{kAlignment}); }
  template <class U>
  bool operator==(const AlignedAllocator<U>&) const noexcept {
    return true;
  }
  template <class U>
  bool operator!=(const AlignedAllocator<U>&) const noexcept {
    return false;
  }
};

// A std::vector whose data() is a multiple of kAlignment.
template <class T>
using AlignedVector = std::vector<T, AlignedAllocator<T>>;

}  // namespace posenc

#endif  // POSENC_ALIGNED_H_
