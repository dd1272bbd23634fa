// posenc/aligned.h, and the 64-byte rows of posenc's own tables that the kernels' vector loads
// rely on for speed (docs/performance.md §3.23). glibc's malloc gives 16 bytes past a 64-byte
// boundary for large blocks, so a table stored in a plain std::vector fails these checks.
#include "posenc/aligned.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <type_traits>

#include "posenc/rerope.h"
#include "posenc/rope.h"
#include "posenc/sinusoidal.h"

namespace posenc {
namespace {

bool Aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kAlignment == 0; }

template <class T>
void ExpectAlignedVectors() {
  for (size_t n : {1, 3, 16, 17, 1000, 40000, 1 << 20}) {
    AlignedVector<T> v(n, T(1));
    EXPECT_TRUE(Aligned(v.data())) << n << " elements of " << sizeof(T) << " bytes";
    v.resize(3 * n + 5);  // reallocates
    EXPECT_TRUE(Aligned(v.data())) << 3 * n + 5 << " elements of " << sizeof(T) << " bytes";
    EXPECT_EQ(v[n - 1], T(1));
  }
}

TEST(AlignedVector, DataIsAlignedForEveryElementTypeAndSize) {
  ExpectAlignedVectors<float>();
  ExpectAlignedVectors<double>();
  ExpectAlignedVectors<uint16_t>();
  ExpectAlignedVectors<char>();
}

TEST(AlignedVector, AllocatorRebindsAndCompares) {
  using Rebound = std::allocator_traits<AlignedAllocator<float>>::rebind_alloc<double>;
  static_assert(std::is_same_v<Rebound, AlignedAllocator<double>>);
  const AlignedAllocator<double> a{AlignedAllocator<float>()};
  EXPECT_TRUE(a == AlignedAllocator<float>());
  EXPECT_FALSE(a != AlignedAllocator<float>());
  AlignedVector<float> v(100, 2.0f);
  const AlignedVector<float> copy = v;  // copies allocate aligned storage too
  EXPECT_TRUE(Aligned(copy.data()));
  EXPECT_EQ(copy, v);
}

TEST(TableRows, RopeTableRowsAreAligned) {
  Frequencies f;
  f.base = 500000.0;
  for (int64_t max_positions : {1, 7, 100, 8192}) {
    std::shared_ptr<const RopeTable> table;
    ASSERT_TRUE(RopeTable::Create(128, f, max_positions, &table).ok());
    for (int64_t p : {int64_t{0}, max_positions / 2, max_positions - 1}) {
      EXPECT_TRUE(Aligned(table->cos_row(p))) << max_positions << " positions, row " << p;
      EXPECT_TRUE(Aligned(table->sin_row(p))) << max_positions << " positions, row " << p;
    }
  }
  std::shared_ptr<const RopeTable> odd;  // rows of 3 floats: only row 0 can be aligned
  ASSERT_TRUE(RopeTable::Create(6, f, 50, &odd).ok());
  EXPECT_TRUE(Aligned(odd->cos_row(0)));
  EXPECT_TRUE(Aligned(odd->sin_row(0)));
}

TEST(TableRows, SinusoidalTableRowsAreAligned) {
  for (int64_t max_positions : {1, 9, 2048}) {
    std::shared_ptr<const SinusoidalTable> table;
    ASSERT_TRUE(SinusoidalTable::Create(SinusoidalParams(), 768, max_positions, &table).ok());
    for (int64_t p : {int64_t{0}, max_positions - 1}) {
      EXPECT_TRUE(Aligned(table->row(p))) << max_positions << " positions, row " << p;
    }
  }
}

TEST(TableRows, RelativeRopeTableRowsAreAligned) {
  Frequencies f;
  for (int64_t max_distance : {1, 5, 4096}) {
    std::shared_ptr<const RelativeRopeTable> table;
    ASSERT_TRUE(RelativeRopeTable::Create(128, f, DistanceMap(), max_distance, &table).ok());
    for (int64_t a : {int64_t{0}, table->stored_rows() - 1}) {
      EXPECT_TRUE(Aligned(table->cos_row(a))) << max_distance << " distances, row " << a;
      EXPECT_TRUE(Aligned(table->sin_row(a))) << max_distance << " distances, row " << a;
    }
  }
}

}  // namespace
}  // namespace posenc
