// test::RopeTester: one fluent, dtype-generic driver for posenc::ApplyRope tests (in the style of
// XNNPACK's test/operators/*-tester.h). Set the shape, layout, dtype and call options, then
// Test() makes random inputs (normal values rounded to the dtype) in padded, optionally
// misaligned and strided buffers, runs the op, and checks against the double reference:
//   - every rotated output within Bound() ulp of max(|x|, |y|) of its pair
//     (reference::MaxPairUlpError against reference::ApplyRopeF64: 2 for f32 with kF64
//     arithmetic, 3 with kF32, 1 + 3 * 2^-13 for f16, 1 + 3 * 2^-16 for bf16: the bounds proved in
//     lib/kernels/rope-inl.h), pass-through elements bit-equal to the input;
//   - nothing outside the output views written, and an out-of-place call leaves its input as it
//     was.
//   test::RopeTester().batch(2).seq(7).heads(3).kv_heads(1).head_dim(10).pairs(PairLayout::kInterleaved)
//       .dtype(DType::kBF16).inplace(true).Test();
// Test() returns what it measured (the largest error, the outputs' bytes) for further checks.
#ifndef POSENC_TESTS_ROPE_TESTER_H_
#define POSENC_TESTS_ROPE_TESTER_H_

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "posenc/half.h"
#include "posenc/rope.h"
#include "tests/rope_test_util.h"

namespace posenc {
namespace test {

struct RopeTestResult {
  double max_ulp = 0.0;            // the contract's measure, over q and k
  std::vector<uint8_t> q_bytes;    // the outputs gathered to contiguous BSHD
  std::vector<uint8_t> k_bytes;
};

class RopeTester {
 public:
  RopeTester& batch(int64_t v) { batch_ = v; return *this; }
  RopeTester& seq(int64_t v) { seq_ = v; return *this; }
  RopeTester& heads(int64_t v) { heads_ = v; return *this; }        // q heads; 0: q absent
  RopeTester& kv_heads(int64_t v) { kv_heads_ = v; return *this; }  // k heads; 0: k absent
  RopeTester& head_dim(int64_t v) { head_dim_ = v; return *this; }
  RopeTester& rotary_dim(int64_t v) { params_.rotary_dim = v; return *this; }
  RopeTester& pairs(PairLayout v) { params_.pairs = v; return *this; }
  RopeTester& dtype(DType v) { dtype_ = v; return *this; }
  RopeTester& inplace(bool v) { inplace_ = v; return *this; }
  RopeTester& inverse(bool v) { params_.inverse = v; return *this; }
  RopeTester& arithmetic(RotationArithmetic v) { params_.arithmetic = v; return *this; }
  RopeTester& base(double v) { params_.freqs.base = v; return *this; }
  RopeTester& attention_factor(double v) { params_.freqs.attention_factor = v; return *this; }
  RopeTester& offset(int64_t v) { params_.positions = Positions::Offset(v); return *this; }
  RopeTester& positions(const Positions& v) { params_.positions = v; return *this; }
  RopeTester& source(const CosSinSource& v) { params_.source = v; return *this; }
  RopeTester& max_threads(int v) { params_.exec.max_threads = v; return *this; }
  // Padding (elements) after each head / token / batch of both views, and the BHSD order.
  RopeTester& head_pad(int64_t q, int64_t k) { q_pad_[0] = q; k_pad_[0] = k; return *this; }
  RopeTester& token_pad(int64_t q, int64_t k) { q_pad_[1] = q; k_pad_[1] = k; return *this; }
  RopeTester& batch_pad(int64_t q, int64_t k) { q_pad_[2] = q; k_pad_[2] = k; return *this; }
  RopeTester& bhsd(bool v) { bhsd_ = v; return *this; }
  // Elements in front of every buffer (odd values misalign the data for every vector width).
  RopeTester& lead(size_t v) { lead_ = v; return *this; }
  RopeTester& seed(uint32_t v) { seed_ = v; return *this; }
  RopeTester& label(const std::string& v) { label_ = v; return *this; }

  const RopeParams& params() const { return params_; }

  // The bound of the file comment for this tester's dtype and arithmetic.
  double Bound() const {
    switch (dtype_) {
      case DType::kF32: return MaxUlp(params_.arithmetic);
      case DType::kF16: return 1.0 + 3.0 * std::ldexp(1.0, -13);
      case DType::kBF16: return 1.0 + 3.0 * std::ldexp(1.0, -16);
    }
    return 0.0;
  }

  // Runs the op once and checks it (gtest failures name label()); see the file comment.
  RopeTestResult Test() const {
    Side q, k;
    MakeSide({batch_, seq_, heads_, head_dim_, q_pad_[0], q_pad_[1], q_pad_[2], bhsd_}, seed_, &q);
    MakeSide({batch_, seq_, kv_heads_, head_dim_, k_pad_[0], k_pad_[1], k_pad_[2], bhsd_},
             seed_ * 7919u + 1u, &k);
    RopeTensors t;
    if (q.present) {
      t.q = q.in;
      if (!inplace_) t.q_out = q.out;
    }
    if (k.present) {
      t.k = k.in;
      if (!inplace_) t.k_out = k.out;
    }
    RopeTestResult r;
    const Status st = ApplyRope(t, params_);
    EXPECT_TRUE(st.ok()) << label_ << ": " << st.message();
    if (!st.ok()) return r;

    RopeTensors copies;  // the inputs as they were, for the reference
    std::vector<uint8_t> q_src = q.in_before, k_src = k.in_before;
    if (q.present) copies.q = View(q_src.data() + lead_ * Size(), q.spec);
    if (k.present) copies.k = View(k_src.data() + lead_ * Size(), k.spec);
    std::vector<double> q64(Elements(q.spec)), k64(Elements(k.spec));
    const Status rs = reference::ApplyRopeF64(copies, params_, q.present ? q64.data() : nullptr,
                                              k.present ? k64.data() : nullptr);
    EXPECT_TRUE(rs.ok()) << label_ << ": reference: " << rs.message();
    if (!rs.ok()) return r;
    const int64_t rotary = params_.rotary_dim == 0 ? head_dim_ : params_.rotary_dim;
    for (Side* side : {&q, &k}) {
      if (!side->present) continue;
      const Tensor& out = inplace_ ? side->in : side->out;
      const Tensor& src = side == &q ? copies.q : copies.k;
      const std::vector<double>& exact = side == &q ? q64 : k64;
      const PairLayout layout =
          params_.pairs == PairLayout::kInterleaved ? PairLayout::kInterleaved : PairLayout::kHalf;
      r.max_ulp = std::max(r.max_ulp, reference::MaxPairUlpError(out, src, exact.data(), rotary, layout));
      (side == &q ? r.q_bytes : r.k_bytes) = Gather(out);
      if (inplace_) {
        EXPECT_TRUE(OutsideUntouched(side->in, side->in_buf, side->in_before))
            << label_ << ": wrote outside the " << (side == &q ? "q" : "k") << " view";
      } else {
        EXPECT_TRUE(OutsideUntouched(side->out, side->out_buf, side->out_before))
            << label_ << ": wrote outside the " << (side == &q ? "q_out" : "k_out") << " view";
        EXPECT_TRUE(side->in_buf == side->in_before) << label_ << ": out of place, input changed";
      }
    }
    EXPECT_LE(r.max_ulp, Bound()) << label_ << " (" << DTypeName(dtype_) << ", bound " << Bound() << ")";
    return r;
  }

 private:
  struct Side {
    bool present = false;
    StridedSpec spec{0, 0, 0, 0};
    Tensor in, out;
    std::vector<uint8_t> in_buf, out_buf, in_before, out_before;
  };

  size_t Size() const { return DTypeSize(dtype_); }
  static size_t Elements(const StridedSpec& s) {
    return s.heads > 0 ? static_cast<size_t>(s.batch * s.seq * s.heads * s.head_dim) : 0;
  }
  Tensor View(uint8_t* data, const StridedSpec& s) const {
    Tensor t = MakeView(nullptr, s);
    t.data = data;
    t.dtype = dtype_;
    return t;
  }

  // Normal values rounded to the dtype over the whole buffer (lead and padding included).
  void FillValues(std::vector<uint8_t>& buf, uint32_t seed) const {
    const size_t n = buf.size() / Size();
    std::vector<float> v(n);
    FillNormal(v.data(), n, seed);
    if (dtype_ == DType::kF32) {
      std::memcpy(buf.data(), v.data(), n * 4);
      return;
    }
    std::vector<uint16_t> h(n);
    for (size_t i = 0; i < n; ++i) {
      h[i] = dtype_ == DType::kBF16 ? reference::RoundToBF16(v[i]) : reference::RoundToF16(v[i]);
    }
    std::memcpy(buf.data(), h.data(), n * 2);
  }

  void MakeSide(const StridedSpec& spec, uint32_t seed, Side* side) const {
    side->present = spec.heads > 0;
    side->spec = spec;
    if (!side->present) return;
    const size_t n = ElementsSpanned(MakeView(nullptr, spec)) + lead_ + 64;
    side->in_buf.assign(n * Size(), 0);
    FillValues(side->in_buf, seed);
    side->in = View(side->in_buf.data() + lead_ * Size(), spec);
    side->in_before = side->in_buf;
    if (!inplace_) {
      side->out_buf.assign(n * Size(), 0x7E);  // NaN in every dtype (0x7E7E..)
      side->out = View(side->out_buf.data() + lead_ * Size(), spec);
      side->out_before = side->out_buf;
    }
  }

  std::vector<uint8_t> Gather(const Tensor& t) const {
    std::vector<uint8_t> v;
    const uint8_t* base = static_cast<const uint8_t*>(t.data);
    for (int64_t b = 0; b < t.shape[0]; ++b)
      for (int64_t s = 0; s < t.shape[1]; ++s)
        for (int64_t h = 0; h < t.shape[2]; ++h) {
          const uint8_t* p = base + (b * t.strides[0] + s * t.strides[1] + h * t.strides[2]) * Size();
          v.insert(v.end(), p, p + t.shape[3] * Size());
        }
    return v;
  }

  // Whether every element of `now` outside view `t` equals `before`.
  bool OutsideUntouched(const Tensor& t, const std::vector<uint8_t>& now,
                        const std::vector<uint8_t>& before) const {
    std::vector<char> inside(now.size() / Size(), 0);
    const size_t origin = static_cast<size_t>(static_cast<const uint8_t*>(t.data) - now.data()) / Size();
    for (int64_t b = 0; b < t.shape[0]; ++b)
      for (int64_t s = 0; s < t.shape[1]; ++s)
        for (int64_t h = 0; h < t.shape[2]; ++h)
          for (int64_t j = 0; j < t.shape[3]; ++j)
            inside[origin + static_cast<size_t>(b * t.strides[0] + s * t.strides[1] + h * t.strides[2] + j)] = 1;
    for (size_t i = 0; i < inside.size(); ++i) {
      if (!inside[i] && std::memcmp(&now[i * Size()], &before[i * Size()], Size()) != 0) return false;
    }
    return true;
  }

  int64_t batch_ = 1, seq_ = 1, heads_ = 1, kv_heads_ = 0, head_dim_ = 64;
  int64_t q_pad_[3] = {0, 0, 0}, k_pad_[3] = {0, 0, 0};
  bool bhsd_ = false;
  DType dtype_ = DType::kF32;
  bool inplace_ = true;
  size_t lead_ = 0;
  uint32_t seed_ = 1;
  std::string label_ = "RopeTester";
  RopeParams params_;
};

}  // namespace test
}  // namespace posenc

#endif  // POSENC_TESTS_ROPE_TESTER_H_
