// test::SinusoidalTester: one fluent, dtype-generic driver for posenc::WriteSinusoidal /
// AddSinusoidal tests (the sibling of tests/rope_tester.h, in the style of XNNPACK's
// test/operators/*-tester.h). Set the shape, dtype, convention and call options, then Test() makes
// the buffers (padded after each token and batch, optionally misaligned; x normal values rounded
// to the dtype), runs the op, and checks every written element against the double reference
// (reference::WriteSinusoidalF64 / AddSinusoidalF64):
//   - write, f32: within 0.5 ulp + 2^-50 of the exact sin / cos of the double angle, plus what
//     the reference's own frequencies may move it (SinusoidalFrequencyTerm);
//   - write, bf16 / f16: the RNE of the f32 table entry of the same call, within 1 ulp of the
//     storage type of the exact value;
//   - add, f32: exactly f32(x * x_scale + the f32 table entry), within 0.5 ulp(out) + 2^-25 of
//     x * x_scale + the exact entry (the table entry's own rounding), plus the same frequency
//     term;
//   - add, bf16 / f16: the RNE of that f32 result, within 1 ulp of the storage type of the exact
//     value;
//   - nothing outside the output view written, and an out-of-place add leaves x as it was.
//   test::SinusoidalTester().batch(2).seq(5).d_model(34).dtype(DType::kBF16).add(true)
//       .layout(SinusoidalLayout::kConcatSinCos).token_pad(3).lead(1).Test();
// Test() returns the outputs' bytes (gathered to contiguous [batch, seq, d_model]) for further
// checks (threads, in place against out of place).
#ifndef POSENC_TESTS_SINUSOIDAL_TESTER_H_
#define POSENC_TESTS_SINUSOIDAL_TESTER_H_

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "posenc/reference.h"
#include "posenc/sinusoidal.h"
#include "tests/rope_test_util.h"
#include "tests/sinusoidal_frequency_term.h"

namespace posenc {
namespace test {

class SinusoidalTester {
 public:
  SinusoidalTester& batch(int64_t v) { batch_ = v; return *this; }
  SinusoidalTester& seq(int64_t v) { seq_ = v; return *this; }
  SinusoidalTester& d_model(int64_t v) { d_ = v; return *this; }
  SinusoidalTester& dtype(DType v) { dtype_ = v; return *this; }
  SinusoidalTester& layout(SinusoidalLayout v) { params_.layout = v; return *this; }
  SinusoidalTester& spacing(FrequencySpacing v) { params_.spacing = v; return *this; }
  SinusoidalTester& base(double v) { params_.base = v; return *this; }
  SinusoidalTester& positions(const Positions& v) { params_.positions = v; return *this; }
  SinusoidalTester& position_offset(int64_t v) { params_.position_offset = v; return *this; }
  SinusoidalTester& x_scale(double v) { params_.x_scale = v; return *this; }
  SinusoidalTester& max_threads(int v) { params_.exec.max_threads = v; return *this; }
  // add(true): AddSinusoidal of x (in place, or into a separate out view of the same strides);
  // add(false): WriteSinusoidal.
  SinusoidalTester& add(bool v) { add_ = v; return *this; }
  SinusoidalTester& inplace(bool v) { inplace_ = v; return *this; }
  // Padding (elements) after each token / batch of the views.
  SinusoidalTester& token_pad(int64_t v) { token_pad_ = v; return *this; }
  SinusoidalTester& batch_pad(int64_t v) { batch_pad_ = v; return *this; }
  // Elements in front of every buffer (odd values misalign the data for every vector width).
  SinusoidalTester& lead(size_t v) { lead_ = v; return *this; }
  SinusoidalTester& seed(uint32_t v) { seed_ = v; return *this; }
  SinusoidalTester& label(const std::string& v) { label_ = v; return *this; }

  const SinusoidalParams& params() const { return params_; }

  // Runs the op once and checks it (gtest failures name label()); see the file comment.
  std::vector<uint8_t> Test() const {
    const size_t n = static_cast<size_t>(batch_ * StrideBatch()) + lead_ + 8;
    std::vector<uint8_t> x_buf(n * Size()), out_buf(n * Size(), 0x7E);  // 0x7E..: NaN in every dtype
    if (add_) FillValues(x_buf);
    const std::vector<uint8_t> x_before = x_buf, out_before = out_buf;
    const EmbeddingView x = View(x_buf.data()), out = View(out_buf.data());
    const bool to_x = add_ && inplace_;
    const Status st = add_ ? AddSinusoidal(params_, x, inplace_ ? nullptr : &out)
                           : WriteSinusoidal(params_, out);
    EXPECT_TRUE(st.ok()) << label_ << ": " << st.message();
    if (!st.ok()) return {};

    // The f32 table of the same positions (contiguous), and the double reference.
    const int64_t tokens = batch_ * seq_;
    std::vector<float> table(static_cast<size_t>(tokens * d_));
    const Status ts = WriteSinusoidal(params_, EmbeddingBSD(table.data(), batch_, seq_, d_));
    EXPECT_TRUE(ts.ok()) << label_ << ": f32 table: " << ts.message();
    std::vector<double> exact(table.size());
    std::vector<uint8_t> x_copy = x_before;
    const Status rs = add_ ? reference::AddSinusoidalF64(params_, View(x_copy.data()), exact.data())
                           : reference::WriteSinusoidalF64(
                                 params_, EmbeddingBSD(table.data(), batch_, seq_, d_), exact.data());
    EXPECT_TRUE(rs.ok()) << label_ << ": reference: " << rs.message();
    if (!ts.ok() || !rs.ok()) return {};

    const std::vector<uint8_t>& written = to_x ? x_buf : out_buf;
    std::vector<uint8_t> gathered;
    size_t failures = 0;
    for (int64_t b = 0; b < batch_; ++b)
      for (int64_t s = 0; s < seq_; ++s)
        for (int64_t j = 0; j < d_; ++j) {
          const size_t at = Offset(b, s, j), flat = static_cast<size_t>((b * seq_ + s) * d_ + j);
          gathered.insert(gathered.end(), &written[at * Size()], &written[(at + 1) * Size()]);
          const double got = Read(written, at), e = exact[flat];
          // The f32 value the call rounds to the dtype (f32: the result itself).
          const double f32_result =
              add_ ? static_cast<float>(Read(x_before, at) * params_.x_scale +
                                        static_cast<double>(table[flat]))
                   : table[flat];
          bool ok;
          if (dtype_ == DType::kF32) {
            const double frequency_term = SinusoidalFrequencyTerm(params_, d_, j, AnglePosition(b, s));
            ok = add_ ? got == f32_result && std::fabs(got - e) <= 0.5 * UlpOf(got) +
                                                                  std::ldexp(1.0, -25) + frequency_term
                      : std::fabs(got - e) <= 0.5 * UlpOf(e) + std::ldexp(1.0, -50) + frequency_term;
          } else {
            ok = Bits(written, at) == Round(f32_result) &&
                 std::fabs(got - e) <= reference::UlpOf(dtype_, e);
          }
          if (!ok && failures++ < 5) {
            ADD_FAILURE() << label_ << " (" << DTypeName(dtype_) << (add_ ? " add" : " write")
                          << "): element b " << b << " s " << s << " j " << j << " = " << got
                          << ", f32 result " << f32_result << ", exact " << e;
          }
        }
    EXPECT_EQ(failures, 0u) << label_ << ": elements off the bound";
    EXPECT_TRUE(OutsideUntouched(written, to_x ? x_before : out_before))
        << label_ << ": wrote outside the output view";
    if (add_ && !inplace_) {
      EXPECT_TRUE(x_buf == x_before) << label_ << ": out of place, x changed";
    }
    return gathered;
  }

 private:
  size_t Size() const { return DTypeSize(dtype_); }
  // The position the call gives token (b, s), plus position_offset (posenc/positions.h). The
  // M-RoPE stream kinds, which the sinusoidal entries reject, never get this far.
  double AnglePosition(int64_t b, int64_t s) const {
    const Positions& p = params_.positions;
    int64_t position = 0;
    switch (p.kind) {
      case Positions::Kind::kOffset: position = p.offset + s; break;
      case Positions::Kind::kPerBatchOffsets: position = p.batch_offsets[b] + s; break;
      case Positions::Kind::kIds32: position = p.ids32[b * seq_ + s]; break;
      case Positions::Kind::kIds64: position = p.ids64[b * seq_ + s]; break;
      case Positions::Kind::kStreamIds32:
      case Positions::Kind::kStreamIds64: break;
    }
    return static_cast<double>(position) + static_cast<double>(params_.position_offset);
  }
  int64_t StrideSeq() const { return d_ + token_pad_; }
  int64_t StrideBatch() const { return seq_ * StrideSeq() + batch_pad_; }
  size_t Offset(int64_t b, int64_t s, int64_t j) const {
    return lead_ + static_cast<size_t>(b * StrideBatch() + s * StrideSeq() + j);
  }
  EmbeddingView View(uint8_t* buf) const {
    EmbeddingView v;
    v.data = buf + lead_ * Size();
    v.dtype = dtype_;
    v.batch = batch_;
    v.seq = seq_;
    v.d_model = d_;
    v.stride_seq = StrideSeq();
    v.stride_batch = StrideBatch();
    return v;
  }
  uint16_t Round(double v) const {
    return dtype_ == DType::kBF16 ? reference::RoundToBF16(v) : reference::RoundToF16(v);
  }
  uint16_t Bits(const std::vector<uint8_t>& buf, size_t at) const {
    uint16_t h;
    std::memcpy(&h, &buf[at * 2], 2);
    return h;
  }
  double Read(const std::vector<uint8_t>& buf, size_t at) const {
    if (dtype_ == DType::kF32) {
      float f;
      std::memcpy(&f, &buf[at * 4], 4);
      return f;
    }
    const uint16_t h = Bits(buf, at);
    return dtype_ == DType::kBF16 ? reference::BF16ToDouble(h) : reference::F16ToDouble(h);
  }
  // Normal values rounded to the dtype over the whole buffer (lead and padding included).
  void FillValues(std::vector<uint8_t>& buf) const {
    const size_t n = buf.size() / Size();
    std::vector<float> v(n);
    FillNormal(v.data(), n, seed_);
    for (size_t i = 0; i < n; ++i) {
      if (dtype_ == DType::kF32) {
        std::memcpy(&buf[i * 4], &v[i], 4);
      } else {
        const uint16_t h = Round(v[i]);
        std::memcpy(&buf[i * 2], &h, 2);
      }
    }
  }
  // Whether every element of `now` outside the view equals `before`.
  bool OutsideUntouched(const std::vector<uint8_t>& now, const std::vector<uint8_t>& before) const {
    std::vector<char> inside(now.size() / Size(), 0);
    for (int64_t b = 0; b < batch_; ++b)
      for (int64_t s = 0; s < seq_; ++s)
        for (int64_t j = 0; j < d_; ++j) inside[Offset(b, s, j)] = 1;
    for (size_t i = 0; i < inside.size(); ++i) {
      if (!inside[i] && std::memcmp(&now[i * Size()], &before[i * Size()], Size()) != 0) return false;
    }
    return true;
  }

  int64_t batch_ = 1, seq_ = 1, d_ = 64, token_pad_ = 0, batch_pad_ = 0;
  DType dtype_ = DType::kF32;
  bool add_ = false, inplace_ = true;
  size_t lead_ = 0;
  uint32_t seed_ = 1;
  std::string label_ = "SinusoidalTester";
  SinusoidalParams params_;
};

}  // namespace test
}  // namespace posenc

#endif  // POSENC_TESTS_SINUSOIDAL_TESTER_H_
