// The rotation floors (bench/rotation_floor.h), per SIMD target.
#include "bench/rotation_floor.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bench/rotation_floor.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "lib/kernels/exact_fma-inl.h"
#include "posenc/rope.h"

HWY_BEFORE_NAMESPACE();
namespace posenc {
namespace bench {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr size_t kPairs = static_cast<size_t>(kFloorPairs);

// The row's vectors, loaded once per token: an array of kLen / Lanes vectors where the
// target's vectors have a size known at compile time; on the scalable targets (SVE, RVV), whose
// vector types cannot form arrays, loaded again with every head (an L1 load each: those targets
// run the suite only as a cross-build check).
#if HWY_HAVE_SCALABLE
template <class D, size_t kRows, size_t kLen = kPairs>
class RowVectors {
 public:
  RowVectors(D d, const hn::TFromD<D>* const (&rows)[kRows]) : d_(d) {
    for (size_t r = 0; r < kRows; ++r) rows_[r] = rows[r];
  }
  hn::Vec<D> Get(size_t r, size_t k) const { return hn::LoadU(d_, rows_[r] + k * hn::Lanes(d_)); }

 private:
  D d_;
  const hn::TFromD<D>* rows_[kRows];
};
#else
template <class D, size_t kRows, size_t kLen = kPairs>
class RowVectors {
 public:
  static constexpr size_t kV = kLen / hn::MaxLanes(D());
  RowVectors(D d, const hn::TFromD<D>* const (&rows)[kRows]) {
    for (size_t r = 0; r < kRows; ++r)
      for (size_t k = 0; k < kV; ++k) v_[r][k] = hn::LoadU(d, rows[r] + k * hn::MaxLanes(d));
  }
  hn::Vec<D> Get(size_t r, size_t k) const { return v_[r][k]; }

 private:
  hn::Vec<D> v_[kRows][kV];
};
#endif

// One token's heads of half pairs: step(x, y, row, k) rotates the vector of pairs at x[i], y[i]
// (i in [k * Lanes, (k + 1) * Lanes)) in place with the row's vectors k.
template <class D, size_t kRows, class Step>
HWY_INLINE void HalfHeads(D d, const hn::TFromD<D>* const (&rows)[kRows], float* x, int64_t heads,
                          const Step& step) {
  const size_t N = hn::Lanes(d);
  const RowVectors<D, kRows> row(d, rows);
  for (int64_t h = 0; h < heads; ++h) {
    float* p = x + h * 2 * kFloorPairs;
    for (size_t k = 0; k < kPairs / N; ++k) step(p + k * N, p + kPairs + k * N, row, k);
  }
}

// kF32: 2 multiplies and 1 add / subtract per output vector.
void F32Heads(const float* c, const float* s, float* x, int64_t heads) {
  const hn::ScalableTag<float> d;
  const float* const rows[2] = {c, s};
  HalfHeads(d, rows, x, heads, [d](float* px, float* py, const auto& row, size_t k) {
    const auto xv = hn::LoadU(d, px), yv = hn::LoadU(d, py);
    const auto cv = row.Get(0, k), sv = row.Get(1, k);
    hn::StoreU(hn::Sub(hn::Mul(xv, cv), hn::Mul(yv, sv)), d, px);
    hn::StoreU(hn::Add(hn::Mul(yv, cv), hn::Mul(xv, sv)), d, py);
  });
}

// kF64: f32 lanes widened, one product fused where the target has FMA, rounded once.
void F64Heads(const double* c, const double* s, float* x, int64_t heads) {
  const hn::ScalableTag<double> d;
  const double* const rows[2] = {c, s};
  HalfHeads(d, rows, x, heads, [d](float* px, float* py, const auto& row, size_t k) {
    const hn::Rebind<float, decltype(d)> df;
    const auto xv = hn::PromoteTo(d, hn::LoadU(df, px)), yv = hn::PromoteTo(d, hn::LoadU(df, py));
    const auto cv = row.Get(0, k), sv = row.Get(1, k);
    hn::StoreU(hn::DemoteTo(df, hn::MulSub(xv, cv, hn::Mul(yv, sv))), df, px);
    hn::StoreU(hn::DemoteTo(df, hn::MulAdd(yv, cv, hn::Mul(xv, sv))), df, py);
  });
}

// Below M = max(|x|, |y|) = 2^-124 the chain's B < 2 fails (docs/performance.md section 3.29),
// so a head holding such a pair takes kF64's operations on the hi rows instead (B = 2, math.md
// section 9.2): a choice per head, so the bits stay the same on every target. The test is
// conservative: with a, b the magnitudes' bit patterns, max(a, b) <= (a | b) < 2 max(a, b), so
// (a | b) < 2 * bits(2^-124) holds for every such pair (and for some up to M < 2^-121).
constexpr int32_t kChainGuardBits = 2 * (3 << 23);  // 2 * bits(2^-124)

// Whether any pair of the head at (x, y) may have M < 2^-124: an OR, an AND and a minimum per
// two input vectors.
template <class D>
HWY_INLINE bool ChainNeedsGuard(D d, const float* x, const float* y) {
  const hn::RebindToSigned<D> di;
  const auto magnitude = hn::Set(di, 0x7FFFFFFF);
  auto least = magnitude;
  for (size_t i = 0; i < kPairs; i += hn::Lanes(d)) {
    const auto bits =
        hn::Or(hn::BitCast(di, hn::LoadU(d, x + i)), hn::BitCast(di, hn::LoadU(d, y + i)));
    least = hn::Min(least, hn::And(bits, magnitude));
  }
  return !hn::AllFalse(di, hn::Lt(least, hn::Set(di, kChainGuardBits)));
}

// The FMA chain on hi / lo rows: t from the lo parts, then two fused steps with the hi parts,
// each rounded once on every target (MulAddExact: the FMA instruction, or its emulation); heads
// the guard flags take kF64's operations on the hi rows, in scalar double (exact products, the
// difference rounded in double, then to f32: kF64's value on every target).
void ChainHeads(const float* ch, const float* sh, const float* cl, const float* sl, float* x,
                int64_t heads) {
  using posenc::HWY_NAMESPACE::MulAddExact;
  using posenc::HWY_NAMESPACE::NegMulAddExact;
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const float* const rows[4] = {ch, sh, cl, sl};
  const RowVectors<decltype(d), 4> row(d, rows);
  for (int64_t h = 0; h < heads; ++h) {
    float* px = x + h * 2 * kFloorPairs;
    float* py = px + kPairs;
    if (ChainNeedsGuard(d, px, py)) {
      for (size_t i = 0; i < kPairs; ++i) {
        const double xi = px[i], yi = py[i], c = ch[i], s = sh[i];
        px[i] = static_cast<float>(xi * c - yi * s);
        py[i] = static_cast<float>(yi * c + xi * s);
      }
      continue;
    }
    for (size_t k = 0; k < kPairs / N; ++k) {
      const auto xv = hn::LoadU(d, px + k * N), yv = hn::LoadU(d, py + k * N);
      const auto chv = row.Get(0, k), shv = row.Get(1, k), clv = row.Get(2, k);
      const auto slv = row.Get(3, k);
      const auto tx = hn::Sub(hn::Mul(xv, clv), hn::Mul(yv, slv));
      const auto ty = hn::Add(hn::Mul(yv, clv), hn::Mul(xv, slv));
      hn::StoreU(MulAddExact(d, xv, chv, NegMulAddExact(d, yv, shv, tx)), d, px + k * N);
      hn::StoreU(MulAddExact(d, yv, chv, MulAddExact(d, xv, shv, ty)), d, py + k * N);
    }
  }
}

// Interleaved pairs (x0, y0, x1, y1, ...) with the pair rows pc = (c0, c0, c1, c1, ...),
// ps = (-s0, s0, -s1, s1, ...): o = v pc + swap(v) ps, the swap within the register (Reverse2):
// posenc's interleaved step (lib/kernels/rope-inl.h, PairSteps). 1-lane vectors (SCALAR) take
// the partner from memory, as posenc's tail step does.
template <class R>
void PairHeads(const R* pc, const R* ps, float* x, int64_t heads) {
#if HWY_TARGET == HWY_SCALAR
  for (int64_t h = 0; h < heads; ++h) {
    float* p = x + h * 2 * kFloorPairs;
    for (size_t j = 0; j < 2 * kPairs; j += 2) {
      const R a = p[j], b = p[j + 1];  // exact (f32 -> f32 / f64)
      p[j] = static_cast<float>(a * pc[j] + b * ps[j]);  // f64: exact products, one rounding
      p[j + 1] = static_cast<float>(b * pc[j + 1] + a * ps[j + 1]);
    }
  }
#else
  const hn::ScalableTag<R> d;
  const hn::Rebind<float, decltype(d)> df;
  const size_t N = hn::Lanes(d);
  const R* const rows[2] = {pc, ps};
  const RowVectors<decltype(d), 2, 2 * kPairs> row(d, rows);
  for (int64_t h = 0; h < heads; ++h) {
    float* p = x + h * 2 * kFloorPairs;
    for (size_t k = 0; k < 2 * kPairs / N; ++k) {
      const auto pcv = row.Get(0, k), psv = row.Get(1, k);
      if constexpr (sizeof(R) == sizeof(double)) {
        const auto v = hn::PromoteTo(d, hn::LoadU(df, p + k * N));
        hn::StoreU(hn::DemoteTo(df, hn::MulAdd(v, pcv, hn::Mul(hn::Reverse2(d, v), psv))), df,
                   p + k * N);
      } else {
        const auto v = hn::LoadU(d, p + k * N);
        hn::StoreU(hn::Add(hn::Mul(v, pcv), hn::Mul(hn::Reverse2(d, v), psv)), d, p + k * N);
      }
    }
  }
#endif
}

// Token by token, q's heads then k's (posenc's order), so both see the same cache state.
void RotateFloorImpl(FloorArithmetic a, PairLayout pairs, const FloorRows& rows, float* q,
                     int64_t q_heads, float* k, int64_t k_heads) {
  for (int64_t t = 0; t < rows.tokens; ++t) {
    const size_t at = static_cast<size_t>(t) * kPairs;
    for (auto [x, heads] : {std::pair{q, q_heads}, std::pair{k, k_heads}}) {
      if (x == nullptr) continue;
      float* token = x + t * heads * 2 * kFloorPairs;
      if (pairs == PairLayout::kInterleaved) {
        if (a == FloorArithmetic::kF64) {
          PairHeads(rows.pair_cos64.data() + 2 * at, rows.pair_sin64.data() + 2 * at, token, heads);
        } else {
          PairHeads(rows.pair_cos.data() + 2 * at, rows.pair_sin.data() + 2 * at, token, heads);
        }
        continue;
      }
      switch (a) {
        case FloorArithmetic::kF32:
          F32Heads(rows.cos.data() + at, rows.sin.data() + at, token, heads);
          break;
        case FloorArithmetic::kF64:
          F64Heads(rows.cos64.data() + at, rows.sin64.data() + at, token, heads);
          break;
        case FloorArithmetic::kFmaChain:
          ChainHeads(rows.cos.data() + at, rows.sin.data() + at, rows.cos_lo.data() + at,
                     rows.sin_lo.data() + at, token, heads);
          break;
      }
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace bench
}  // namespace posenc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc {
namespace bench {

const char* FloorArithmeticName(FloorArithmetic a) {
  switch (a) {
    case FloorArithmetic::kF32: return "f32";
    case FloorArithmetic::kF64: return "f64";
    case FloorArithmetic::kFmaChain: return "fma_chain";
  }
  return "?";
}

bool MakeFloorRows(const RopeTable& table, int64_t first, int64_t tokens, FloorRows* rows) {
  if (table.rotary_dim() != 2 * kFloorPairs || first < 0 || tokens < 1 ||
      first + tokens > table.max_positions()) {
    return false;
  }
  const size_t n = static_cast<size_t>(tokens * kFloorPairs);
  rows->tokens = tokens;
  for (auto* v : {&rows->cos, &rows->sin, &rows->cos_lo, &rows->sin_lo}) v->assign(n, 0.0f);
  for (auto* v : {&rows->cos64, &rows->sin64}) v->assign(n, 0.0);
  rows->pair_cos.assign(2 * n, 0.0f);
  rows->pair_sin.assign(2 * n, 0.0f);
  rows->pair_cos64.assign(2 * n, 0.0);
  rows->pair_sin64.assign(2 * n, 0.0);
  const double m = table.attention_factor();
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t i = 0; i < kFloorPairs; ++i) {
      const size_t at = static_cast<size_t>(t * kFloorPairs + i);
      const float c = table.cos_row(first + t)[i], s = table.sin_row(first + t)[i];
      const double angle = static_cast<double>(first + t) * table.inv_freq()[static_cast<size_t>(i)];
      rows->cos[at] = c;
      rows->sin[at] = s;
      rows->cos64[at] = c;
      rows->sin64[at] = s;
      rows->cos_lo[at] = static_cast<float>(m * std::cos(angle) - c);
      rows->sin_lo[at] = static_cast<float>(m * std::sin(angle) - s);
      for (size_t j : {2 * at, 2 * at + 1}) {
        rows->pair_cos[j] = c;
        rows->pair_cos64[j] = c;
        rows->pair_sin[j] = j == 2 * at ? -s : s;  // negation: exact
        rows->pair_sin64[j] = rows->pair_sin[j];
      }
    }
  }
  return true;
}

HWY_EXPORT(RotateFloorImpl);
bool RotateFloor(FloorArithmetic a, PairLayout pairs, const FloorRows& rows, float* q,
                 int64_t q_heads, float* k, int64_t k_heads) {
  if (pairs != PairLayout::kHalf &&
      (pairs != PairLayout::kInterleaved || a == FloorArithmetic::kFmaChain)) {
    return false;
  }
  HWY_DYNAMIC_DISPATCH(RotateFloorImpl)(a, pairs, rows, q, q_heads, k, k_heads);
  return true;
}

}  // namespace bench
}  // namespace posenc
#endif
