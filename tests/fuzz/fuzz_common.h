// Shared pieces of the differential fuzz targets (tests/fuzz/*_fuzz.cc, libFuzzer):
//   - an Arena: every buffer of one call lives in one byte vector, separated by guard bytes of a
//     known pattern, so "nothing outside the output views changed" (guards, inputs, padding,
//     everything on a failed call) is one comparison against the arena's first image;
//   - the targets to compare: the best one this CPU runs, the fallback (SCALAR with g++, EMU128
//     with clang) and one more chosen by the input;
//   - RunOnTargets / CheckOnlyOutputsChanged: one call on each of them and on the reference, with
//     the status, nothing-written-on-failure and bytes-outside-the-outputs checks;
//   - Check(): a failed expectation prints what and aborts, which libFuzzer reports with the input.
#ifndef POSENC_TESTS_FUZZ_FUZZ_COMMON_H_
#define POSENC_TESTS_FUZZ_FUZZ_COMMON_H_

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

#include "hwy/targets.h"
#include "posenc/status.h"

namespace posenc {
namespace fuzz {

inline void Check(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz check failed: %s\n", what.c_str());
  std::abort();
}

class Arena {
 public:
  static constexpr unsigned char kGuard = 0xA5;
  static constexpr size_t kGap = 24;  // guard bytes before, between and after regions

  // Reserves `bytes` aligned to `align` (a power of two <= 16) plus `shift` bytes; returns the
  // offset of the region. Contents start as guard bytes.
  size_t Add(size_t bytes, size_t align, size_t shift = 0) {
    size_t at = image_.size() + kGap;
    at = (at + align - 1) / align * align + shift;
    image_.resize(at + bytes, kGuard);
    return at;
  }
  // Writes into the first image.
  void Fill(size_t at, const void* src, size_t bytes) {
    if (bytes != 0) std::memcpy(image_.data() + at, src, bytes);
  }
  // After the last Add: the trailing guard, and the live copy (16-byte aligned like the image's
  // offsets assume). Addresses from at() are stable from here on.
  void Seal() {
    image_.resize(image_.size() + kGap, kGuard);
    live_.assign(image_.size() + 16, 0);
    const uintptr_t p = reinterpret_cast<uintptr_t>(live_.data());
    base_ = live_.data() + ((16 - p % 16) % 16);
  }
  // Starts a run: the live bytes become the first image again.
  void Reset() { std::memcpy(base_, image_.data(), image_.size()); }
  unsigned char* at(size_t offset) { return base_ + offset; }
  size_t offset_of(const void* p) const { return static_cast<size_t>(static_cast<const unsigned char*>(p) - base_); }
  const std::vector<unsigned char>& image() const { return image_; }
  std::vector<unsigned char> Live() const { return {base_, base_ + image_.size()}; }

 private:
  std::vector<unsigned char> image_;
  std::vector<unsigned char> live_;
  unsigned char* base_ = nullptr;
};

// The targets one input runs on: best, fallback, and one picked by `pick` (may repeat).
inline std::vector<int64_t> TargetsToCompare(uint8_t pick) {
  const std::vector<int64_t> all = hwy::SupportedAndGeneratedTargets();
  std::vector<int64_t> t = {all.front()};
  if (all.size() > 1) t.push_back(all.back());
  if (all.size() > 2) t.push_back(all[1 + pick % (all.size() - 2)]);
  return t;
}

inline bool SameStatus(const Status& a, const Status& b) {
  return a.code() == b.code() && a.message() == b.message();
}

// Runs `call` (-> Status) once per target of `targets`, then `reference` (-> Status) with the
// dispatch reset, each on a fresh copy of the arena's first image, and checks what every
// differential target checks: each target returns the reference's status (its code, and its
// message unless kInternal), and a failed call changed no byte of the arena (guards, inputs and
// outputs alike). Returns whether the reference succeeded; *after receives the arena's bytes
// after each target's run.
template <class Call, class Reference>
bool RunOnTargets(Arena& arena, const std::vector<int64_t>& targets, const Call& call,
                  const Reference& reference, std::vector<std::vector<unsigned char>>* after) {
  std::vector<Status> status;
  after->clear();
  for (int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    arena.Reset();
    status.push_back(call());
    after->push_back(arena.Live());
  }
  hwy::SetSupportedTargetsForTest(0);
  arena.Reset();
  const Status ref = reference();
  for (size_t i = 0; i < status.size(); ++i) {
    Check(status[i].code() == ref.code() &&
              (ref.code() == StatusCode::kInternal || status[i].message() == ref.message()),
          std::string(hwy::TargetName(targets[i])) + " status \"" + status[i].message() +
              "\" vs reference \"" + ref.message() + "\"");
  }
  if (!ref.ok()) {
    for (size_t i = 0; i < after->size(); ++i) {
      Check((*after)[i] == arena.image(), std::string("failed call wrote on ") +
                                              hwy::TargetName(targets[i]) + ": " + ref.message());
    }
    Check(arena.Live() == arena.image(), "failed reference call wrote: " + ref.message());
  }
  return ref.ok();
}

// After a successful RunOnTargets: every target left the same bytes, and only bytes marked in
// `written` (one flag per arena byte: inside an output view) differ from the first image.
inline void CheckOnlyOutputsChanged(const Arena& arena, const std::vector<int64_t>& targets,
                                    const std::vector<std::vector<unsigned char>>& after,
                                    const std::vector<char>& written) {
  for (size_t i = 0; i < after.size(); ++i) {
    Check(after[i] == after[0], std::string("output bits differ between ") +
                                    hwy::TargetName(targets[0]) + " and " +
                                    hwy::TargetName(targets[i]));
  }
  for (size_t e = 0; e < written.size(); ++e) {
    Check(written[e] || after[0][e] == arena.image()[e],
          "byte " + std::to_string(e) + " outside the output views changed");
  }
}

// A double from the input biased to interesting values: one of `common` most of the time,
// sometimes raw bits (Inf, NaN, subnormals, huge).
inline double PickDouble(FuzzedDataProvider& in, const std::vector<double>& common) {
  const uint8_t k = in.ConsumeIntegral<uint8_t>();
  if (k < 200 || common.empty()) return common.empty() ? 0.0 : common[k % common.size()];
  if (k < 230) return in.ConsumeFloatingPointInRange<double>(-2.0, 2.0);
  uint64_t bits = in.ConsumeIntegral<uint64_t>();
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

// A 32-bit PRNG (xorshift) for bulk data, seeded from the input: cheap to run, and a few bytes of
// input decide megabytes of values.
struct Rng {
  explicit Rng(uint32_t seed) : s(seed | 1) {}
  uint32_t s;
  uint32_t Next() {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return s;
  }
  // Roughly normal values in [-4, 4), with rare specials when `specials` is set.
  float Value(bool specials) {
    const uint32_t r = Next();
    if (specials && (r & 63) == 0) {
      const uint32_t bits[] = {0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC01234u, 0x7F7FFFFFu,
                               0x00000001u, 0x80000000u, 0x7E000000u};
      float f;
      std::memcpy(&f, &bits[(r >> 6) % 8], 4);
      return f;
    }
    const int32_t a = static_cast<int32_t>(r >> 8) - (1 << 23), b = static_cast<int32_t>(Next() >> 8) - (1 << 23);
    return static_cast<float>(a + b) * (1.0f / (1 << 22));
  }
};

}  // namespace fuzz
}  // namespace posenc

#endif  // POSENC_TESTS_FUZZ_FUZZ_COMMON_H_
