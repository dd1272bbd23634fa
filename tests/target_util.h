// Shared helpers of the tests that go through the public API once per SIMD target (dispatch
// capped with posenc::SetMaxTarget) and compare f32 bit patterns.
#ifndef POSENC_TESTS_TARGET_UTIL_H_
#define POSENC_TESTS_TARGET_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "posenc/targets.h"

namespace posenc {
namespace test {

// Runs `fn(target)` with dispatch capped at each target this CPU supports, then lifts the cap.
template <class Fn>
void ForEachTarget(const Fn& fn) {
  for (const std::string& target : SupportedTargets()) {
    ASSERT_TRUE(SetMaxTarget(target).ok()) << target;
    SCOPED_TRACE(target);
    fn(target);
  }
  ASSERT_TRUE(SetMaxTarget("").ok());
}

inline uint32_t F32Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float F32FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace test
}  // namespace posenc

#endif  // POSENC_TESTS_TARGET_UTIL_H_
