// Shared by the hash batteries (hash_test, rerope_hash_test, mrope_hash_test): the FNV-1a hash of
// output bytes and the deterministic inputs every battery feeds its calls, so one change to either
// moves every recorded hash together.
#ifndef POSENC_TESTS_HASH_UTIL_H_
#define POSENC_TESTS_HASH_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace posenc {
namespace test {

// FNV-1a over bytes, 64 bits.
struct Hasher {
  uint64_t h = 1469598103934665603ULL;
  void Add(const void* data, size_t bytes) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
      h ^= p[i];
      h *= 1099511628211ULL;
    }
  }
};

// Deterministic values in [-4, 4): a 32-bit LCG's top 24 bits, scaled exactly.
inline std::vector<float> Values(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(static_cast<int32_t>(s >> 8) - (1 << 23)) * (1.0f / (1 << 21));
  }
  return v;
}

}  // namespace test
}  // namespace posenc

#endif  // POSENC_TESTS_HASH_UTIL_H_
