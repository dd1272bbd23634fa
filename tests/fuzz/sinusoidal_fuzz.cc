// Differential fuzz target for posenc::WriteSinusoidal / AddSinusoidal (libFuzzer). The input
// decides the call: dtype, shape and strides (sometimes absurd), write or add (in or out of
// place), layout, spacing, base, position_offset, x_scale, positions of every kind (sometimes
// inside the output), a SinusoidalTable (sometimes built with other conventions), x data with
// Inf/NaN/huge values. Each call runs on several SIMD targets and on posenc::reference; then:
//   - every run returns the same status; a failed call changed no byte anywhere;
//   - a successful call changed no byte outside `out`, gives the same bits on every target, and
//     - writes: each entry within 0.5 ulp (f32; halves: + 0.5 ulp of f32 from the double
//       rounding) + 2^-50 of the exact sin/cos, plus what the reference's own frequencies may
//       move it (tests/sinusoidal_frequency_term.h), for |position + offset| <= 2^24;
//     - adds: each output is bit for bit T(f32(double(x) * x_scale + double(PE))) with PE the
//       f32 table entry WriteSinusoidal gives for the same position (the contract "fused add ==
//       table, then add"), NaN x propagating and x_scale 0 * Inf giving the canonical NaN.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "posenc/half.h"
#include "posenc/sinusoidal.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/sinusoidal_frequency_term.h"

namespace posenc {
namespace fuzz {
namespace {

EmbeddingView View(void* data, DType dtype, int64_t batch, int64_t seq, int64_t d, int64_t pad_seq,
                   int64_t pad_batch) {
  EmbeddingView v = EmbeddingBSD(data, dtype, batch, seq, d);
  v.stride_seq = d + pad_seq;
  v.stride_batch = seq * v.stride_seq + pad_batch;
  return v;
}

size_t Span(const EmbeddingView& v) {
  return static_cast<size_t>((v.batch - 1) * v.stride_batch + (v.seq - 1) * v.stride_seq + v.d_model);
}

// f64 -> f32 with IEEE RNE overflow (static_cast of an out-of-range double is undefined).
float ToF32(double v) {
  if (!std::isnan(v) && std::fabs(v) >= 0x1.ffffffp+127) return v > 0 ? HUGE_VALF : -HUGE_VALF;
  return static_cast<float>(v);
}

double UlpAt(DType dtype, double m) { return reference::UlpOf(dtype, m); }

void FuzzOne(FuzzedDataProvider& in) {
  Arena arena;
  const uint8_t dk = in.ConsumeIntegral<uint8_t>();
  const DType dtype = dk == 255 ? static_cast<DType>(9)
                      : dk < 150 ? DType::kF32 : dk < 200 ? DType::kBF16 : DType::kF16;
  const size_t esize = DTypeSize(dtype);
  const int64_t batch = in.ConsumeIntegralInRange<int64_t>(1, 3);
  const int64_t seq = in.ConsumeIntegralInRange<int64_t>(1, 5);
  int64_t d = in.ConsumeIntegralInRange<int64_t>(1, 70);
  if (in.ConsumeIntegral<uint8_t>() == 7) d = 1030;
  const uint8_t mode = in.ConsumeIntegral<uint8_t>() % 3;  // 0 write, 1 add in place, 2 add out of place
  const int64_t pad_seq = in.ConsumeIntegralInRange<int64_t>(0, 3), pad_batch = in.ConsumeIntegralInRange<int64_t>(0, 3);
  const int64_t opad_seq = in.ConsumeIntegralInRange<int64_t>(0, 3);

  SinusoidalParams p;
  const uint8_t conv = in.ConsumeIntegral<uint8_t>();
  p.layout = static_cast<SinusoidalLayout>(conv % 3);
  p.spacing = static_cast<FrequencySpacing>((conv / 3) % 2);
  if (conv == 255) p.layout = static_cast<SinusoidalLayout>(4);
  if (conv == 254) p.spacing = static_cast<FrequencySpacing>(3);
  p.base = PickDouble(in, {10000.0, 10000.0, 500.0, 2.0, 1e6});
  p.position_offset = in.ConsumeIntegral<uint8_t>() < 220 ? in.ConsumeIntegralInRange<int64_t>(-3, 3)
                                                           : in.ConsumeIntegral<int64_t>();
  p.x_scale = PickDouble(in, {1.0, 1.0, 2.5, 0.0, -1.0, 27.712812921102035, 1e300});
  const uint8_t threads = in.ConsumeIntegral<uint8_t>();
  p.exec.max_threads = threads == 255 ? -1 : threads % 3;

  // x (add) and out.
  const EmbeddingView xshape = View(nullptr, dtype, batch, seq, d, pad_seq, pad_batch);
  const size_t x_at = arena.Add(Span(xshape) * esize, 8, esize * (in.ConsumeIntegral<uint8_t>() & 3));
  {
    Rng rng(in.ConsumeIntegral<uint32_t>());
    const bool specials = in.ConsumeBool();
    std::vector<float> v(Span(xshape));
    for (float& f : v) f = rng.Value(specials);
    std::vector<unsigned char> bytes(v.size() * esize);
    if (dtype == DType::kBF16 || dtype == DType::kF16) {
      Check(ConvertFromF32(v.data(), v.size(), dtype, bytes.data()).ok(), "ConvertFromF32");
    } else {
      std::memcpy(bytes.data(), v.data(), bytes.size());  // f32, or DTypeSize bytes of each
    }
    arena.Fill(x_at, bytes.data(), bytes.size());
  }
  const EmbeddingView oshape = View(nullptr, dtype, batch, seq, d, opad_seq, 0);
  const size_t out_at = mode == 2 ? arena.Add(Span(oshape) * esize, 8) : x_at;

  // A table (sometimes built with other conventions than the call asks for).
  std::shared_ptr<const SinusoidalTable> table;
  const uint8_t tk = in.ConsumeIntegral<uint8_t>();
  int64_t rows = 0;
  if (tk < 70) {
    rows = in.ConsumeIntegralInRange<int64_t>(1, 64);
    SinusoidalParams tp = p;
    if (tk < 8) tp.layout = static_cast<SinusoidalLayout>((conv + 1) % 3);
    if (tk == 9) tp.position_offset = tp.position_offset == INT64_MAX ? 0 : tp.position_offset + 1;
    if (!SinusoidalTable::Create(tp, tk == 10 ? d + 2 : d, rows, &table).ok()) table.reset();
    p.table = table.get();
  }

  // Positions.
  const uint8_t pk = in.ConsumeIntegral<uint8_t>();
  const int pos_kind = pk < 90 ? 0 : pk < 130 ? 1 : pk < 190 ? 2 : pk < 254 ? 3 : 4;
  std::vector<int64_t> pos(static_cast<size_t>(pos_kind == 1 ? batch : batch * seq));
  for (int64_t& v : pos) {
    const uint8_t k = in.ConsumeIntegral<uint8_t>();
    if (rows > 0 && k < 200) v = in.ConsumeIntegralInRange<int64_t>(0, std::max<int64_t>(0, rows - seq));
    else if (k < 240) v = in.ConsumeIntegralInRange<int64_t>(-70000, 70000);
    else v = in.ConsumeIntegral<int64_t>();
  }
  size_t pos_at = 0;
  if (pos_kind == 1 || pos_kind == 3) {
    pos_at = arena.Add(pos.size() * 8, 8);
    arena.Fill(pos_at, pos.data(), pos.size() * 8);
  } else if (pos_kind == 2) {
    std::vector<int32_t> v32(pos.size());
    for (size_t i = 0; i < pos.size(); ++i) v32[i] = static_cast<int32_t>(pos[i]);
    pos_at = arena.Add(v32.size() * 4, 8);
    arena.Fill(pos_at, v32.data(), v32.size() * 4);
  }
  const uint8_t hostile = in.ConsumeIntegral<uint8_t>();
  const uint8_t pick = in.ConsumeIntegral<uint8_t>();
  arena.Seal();

  EmbeddingView x = View(arena.at(x_at), dtype, batch, seq, d, pad_seq, pad_batch);
  EmbeddingView out = mode == 2 ? View(arena.at(out_at), dtype, batch, seq, d, opad_seq, 0) : x;
  if (pos_kind == 0) p.positions = Positions::Offset(pos[0]);
  if (pos_kind == 1) p.positions = Positions::PerBatch(reinterpret_cast<const int64_t*>(arena.at(pos_at)));
  if (pos_kind == 2) p.positions = Positions::Ids(reinterpret_cast<const int32_t*>(arena.at(pos_at)));
  if (pos_kind == 3) p.positions = Positions::Ids(reinterpret_cast<const int64_t*>(arena.at(pos_at)));
  if (pos_kind == 4) p.positions.kind = static_cast<Positions::Kind>(9);
  switch (hostile) {
    case 1:  // out partially over x
      if (mode == 2) out.data = static_cast<unsigned char*>(x.data) + esize;
      break;
    case 2:  // ids inside out
      if (pos_kind == 3 && Span(out) * esize >= pos.size() * 8 && reinterpret_cast<uintptr_t>(out.data) % 8 == 0) {
        p.positions.ids64 = static_cast<const int64_t*>(out.data);
      }
      break;
    case 3:
      out.stride_seq = -static_cast<int64_t>(pick);
      break;
    case 4:  // so large the byte size overflows (a valid stride past the buffer would be the
             // harness's bug)
      out.stride_batch = (int64_t{1} << 62) + pick;
      break;
    case 5:  // out's width differs from x's
      if (mode != 0) {
        const int64_t v = in.ConsumeIntegral<int64_t>();
        out.d_model = v == d ? v + 1 : v;
      }
      break;
    default:
      break;
  }

  auto call = [&](bool use_reference) {
    if (mode == 0) return use_reference ? reference::WriteSinusoidal(p, out) : WriteSinusoidal(p, out);
    return use_reference ? reference::AddSinusoidal(p, x, &out) : AddSinusoidal(p, x, &out);
  };
  const std::vector<int64_t> targets = TargetsToCompare(pick);
  std::vector<std::vector<unsigned char>> after;
  if (!RunOnTargets(
          arena, targets, [&] { return call(false); }, [&] { return call(true); }, &after)) {
    return;
  }
  std::vector<char> written(arena.image().size(), 0);
  const size_t origin = arena.offset_of(out.data);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < seq; ++s)
      for (int64_t j = 0; j < d; ++j) {
        const size_t e = origin + static_cast<size_t>(b * out.stride_batch + s * out.stride_seq + j) * esize;
        for (size_t byte = 0; byte < esize; ++byte) written[e + byte] = 1;
      }
  CheckOnlyOutputsChanged(arena, targets, after, written);

  // The PE rows of this call as f32, from WriteSinusoidal on the first target (the same engine).
  hwy::SetSupportedTargetsForTest(targets[0]);
  std::vector<float> pe(static_cast<size_t>(batch * seq * d));
  SinusoidalParams wp = p;
  wp.exec.max_threads = 1;
  Check(WriteSinusoidal(wp, EmbeddingBSD(pe.data(), DType::kF32, batch, seq, d)).ok(), "PE rows");
  hwy::SetSupportedTargetsForTest(0);
  auto out_bits = [&](int64_t b, int64_t s, int64_t j) {
    const size_t e = origin + static_cast<size_t>(b * out.stride_batch + s * out.stride_seq + j) * esize;
    uint32_t bits = 0;
    std::memcpy(&bits, after[0].data() + e, esize);
    return bits;
  };
  if (mode == 0) {
    // Accuracy of the table entries (computed rows; a table source was built by the same path).
    std::vector<double> exact(pe.size());
    Check(reference::WriteSinusoidalF64(wp, EmbeddingBSD(pe.data(), DType::kF32, batch, seq, d),
                                        exact.data()).ok(), "WriteSinusoidalF64");
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t s = 0; s < seq; ++s) {
        int64_t position = 0;
        if (pos_kind == 0) position = pos[0] + s;
        if (pos_kind == 1) position = pos[static_cast<size_t>(b)] + s;
        if (pos_kind >= 2) position = pos[static_cast<size_t>(b * seq + s)];
        if (pos_kind == 2) position = static_cast<int32_t>(position);
        // The bound's domain: angles below 2^29 (exact reduction). w_i <= 1 for base >= 1; for
        // base < 1 the largest frequency is the last one.
        const double angle_pos = static_cast<double>(position) + static_cast<double>(p.position_offset);
        const double h = static_cast<double>(d / 2);
        const double max_w = p.base >= 1.0 ? 1.0
                             : p.spacing == FrequencySpacing::kPaper
                                 ? std::pow(p.base, -2.0 * (h - 1.0) / static_cast<double>(d))
                                 : 1.0 / p.base;
        if (p.table == nullptr && !(std::fabs(angle_pos) * max_w < std::ldexp(1.0, 29))) continue;
        // ... and the header's |position + offset| <= 2^24: beyond it the double angle's own
        // rounding (up to 2^-53 |angle|) exceeds the 2^-50 term (a fuzzer find at position
        // 178491377, angle 5.9e7, 3.04e-8 off with tolerance 2.98e-8).
        if (!(std::fabs(angle_pos) <= std::ldexp(1.0, 24))) continue;
        for (int64_t j = 0; j < d; ++j) {
          const double e = exact[static_cast<size_t>((b * seq + s) * d + j)];
          const uint32_t bits = out_bits(b, s, j);
          double got;
          if (dtype == DType::kF32) {
            float f;
            std::memcpy(&f, &bits, 4);
            got = f;
          } else {
            got = dtype == DType::kBF16 ? reference::BF16ToDouble(static_cast<uint16_t>(bits))
                                        : reference::F16ToDouble(static_cast<uint16_t>(bits));
          }
          const double tol = 0.5 * UlpAt(dtype, std::max(std::fabs(e), std::fabs(got))) +
                             (dtype == DType::kF32 ? 0.0 : 0.5 * UlpAt(DType::kF32, e)) + std::ldexp(1.0, -50) +
                             (p.table == nullptr ? test::SinusoidalFrequencyTerm(p, d, j, angle_pos) : 0.0);
          if (!(std::fabs(got - e) <= tol)) {
            char msg[320];
            std::snprintf(msg, sizeof msg,
                          "%s table entry [b=%lld s=%lld j=%lld] = %.17g, exact %.17g, tolerance %.3g "
                          "(position %lld + offset %lld, base %.17g, spacing %d, layout %d, d %lld%s)",
                          DTypeName(dtype), static_cast<long long>(b), static_cast<long long>(s),
                          static_cast<long long>(j), got, e, tol, static_cast<long long>(position),
                          static_cast<long long>(p.position_offset), p.base, static_cast<int>(p.spacing),
                          static_cast<int>(p.layout), static_cast<long long>(d),
                          p.table != nullptr ? ", from a table" : "");
            Check(false, msg);
          }
        }
      }
    return;
  }
  // Adds: bit for bit T(f32(double(x) * x_scale + double(pe))).
  arena.Reset();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < seq; ++s) {
      const size_t xo = static_cast<size_t>(b * x.stride_batch + s * x.stride_seq);
      std::vector<float> xf(static_cast<size_t>(d)), row(static_cast<size_t>(d));
      const unsigned char* xsrc = arena.image().data() + arena.offset_of(x.data) + xo * esize;
      Check(ConvertToF32(xsrc, dtype, static_cast<size_t>(d), xf.data()).ok(), "ConvertToF32");
      for (int64_t j = 0; j < d; ++j) {
        const double xv = xf[static_cast<size_t>(j)];
        double v = xv * p.x_scale + static_cast<double>(pe[static_cast<size_t>((b * seq + s) * d + j)]);
        if (std::isnan(v) && !std::isnan(xv)) v = std::nan("");  // canonical: 0x7FF8000000000000
        row[static_cast<size_t>(j)] = ToF32(v);
      }
      std::vector<uint32_t> want(static_cast<size_t>(d), 0);
      if (dtype == DType::kF32) {
        std::memcpy(want.data(), row.data(), row.size() * 4);
      } else {
        std::vector<uint16_t> h(row.size());
        Check(ConvertFromF32(row.data(), row.size(), dtype, h.data()).ok(), "ConvertFromF32");
        for (size_t j = 0; j < h.size(); ++j) want[j] = h[j];
      }
      for (int64_t j = 0; j < d; ++j) {
        Check(out_bits(b, s, j) == want[static_cast<size_t>(j)],
              "add differs from table-then-add at b=" + std::to_string(b) + " s=" + std::to_string(s) +
                  " j=" + std::to_string(j));
      }
    }
}

}  // namespace
}  // namespace fuzz
}  // namespace posenc

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  posenc::fuzz::FuzzOne(in);
  return 0;
}
