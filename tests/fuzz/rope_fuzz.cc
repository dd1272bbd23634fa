// Differential fuzz target for posenc::ApplyRope (libFuzzer). The input decides a whole call:
// dtype, shapes, strides and padding (sometimes absurd), q/k presence, in or out of place, pair
// layout, rotary_dim, inverse, arithmetic, positions of every kind (sometimes inside an output),
// the cos/sin source (on the fly with base or explicit inv_freq, a RopeTable, caches of any
// dtype by position or per token), the attention factor, the data (with Inf/NaN/huge values).
// Each call runs on several SIMD targets and on posenc::reference; then:
//   - every run returns the same status (code and message);
//   - a failed call changed no byte anywhere (guards, inputs, outputs);
//   - a successful call changed no byte outside its output views, gives the same output bits on
//     every target, and is within the accuracy bound of posenc/rope.h against
//     reference::ApplyRopeF64 wherever the bound's domain holds.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "posenc/half.h"
#include "posenc/rope.h"
#include "tests/fuzz/fuzz_common.h"

namespace posenc {
namespace fuzz {
namespace {

struct ViewSpec {
  int64_t heads = 0, head_pad = 0, token_pad = 0, batch_pad = 0;
  bool bhsd = false;
};

Tensor MakeView(void* data, DType dtype, int64_t batch, int64_t seq, int64_t head_dim,
                const ViewSpec& v) {
  Tensor t;
  t.data = data;
  t.dtype = dtype;
  t.shape[0] = batch;
  t.shape[1] = seq;
  t.shape[2] = v.heads;
  t.shape[3] = head_dim;
  t.strides[3] = 1;
  if (!v.bhsd) {
    t.strides[2] = head_dim + v.head_pad;
    t.strides[1] = v.heads * t.strides[2] + v.token_pad;
    t.strides[0] = seq * t.strides[1] + v.batch_pad;
  } else {
    t.strides[1] = head_dim + v.token_pad;
    t.strides[2] = seq * t.strides[1] + v.head_pad;
    t.strides[0] = v.heads * t.strides[2] + v.batch_pad;
  }
  return t;
}

int64_t Span(const Tensor& t) {  // elements from the first to the last one of a sane view
  int64_t m = 0;
  for (int i = 0; i < 4; ++i) m += (t.shape[i] - 1) * t.strides[i];
  return m + 1;
}

ViewSpec PickSpec(FuzzedDataProvider& in, int64_t heads) {
  ViewSpec v;
  v.heads = heads;
  const uint8_t pad = in.ConsumeIntegral<uint8_t>();
  v.head_pad = pad & 3;
  v.token_pad = (pad >> 2) & 3;
  v.batch_pad = (pad >> 4) & 3;
  v.bhsd = (pad >> 6) & 1;
  return v;
}

DType PickDType(FuzzedDataProvider& in) {
  const uint8_t k = in.ConsumeIntegral<uint8_t>();
  if (k == 255) return static_cast<DType>(7);  // not a DType: validation must say so
  return k < 150 ? DType::kF32 : k < 200 ? DType::kBF16 : DType::kF16;
}

int64_t PickPosition(FuzzedDataProvider& in, int64_t rows) {
  const uint8_t k = in.ConsumeIntegral<uint8_t>();
  if (rows > 0 && k < 200) return in.ConsumeIntegralInRange<int64_t>(0, rows - 1);
  if (k < 220) return in.ConsumeIntegralInRange<int64_t>(-70000, 70000);
  if (k < 250) return in.ConsumeIntegralInRange<int64_t>(-(int64_t{1} << 30), int64_t{1} << 30);
  return in.ConsumeIntegral<int64_t>();
}

// Stores f32 values as `dtype` (for an invalid dtype, DTypeSize(dtype) bytes of each value).
void StoreAs(DType dtype, const std::vector<float>& v, unsigned char* dst) {
  if (v.empty()) return;
  if (dtype == DType::kBF16 || dtype == DType::kF16) {
    Check(ConvertFromF32(v.data(), v.size(), dtype, dst).ok(), "ConvertFromF32");
  } else if (dtype == DType::kF32) {
    std::memcpy(dst, v.data(), v.size() * 4);
  } else {
    std::memcpy(dst, v.data(), v.size() * DTypeSize(dtype));
  }
}

double Bound(DType dtype, RotationArithmetic a) {
  if (dtype == DType::kF16) return 1.0 + 3.0 * std::ldexp(1.0, -13);
  if (dtype == DType::kBF16) return 1.0 + 3.0 * std::ldexp(1.0, -16);
  return a == RotationArithmetic::kF32 ? 3.0 : 2.0;  // kF64, kFmaChain: 2
}

void FuzzOne(FuzzedDataProvider& in) {
  Arena arena;
  const DType dtype = PickDType(in);
  const size_t esize = DTypeSize(dtype);
  const int64_t batch = in.ConsumeIntegralInRange<int64_t>(1, 3);
  const int64_t seq = in.ConsumeIntegralInRange<int64_t>(1, 4);
  const int64_t hq = in.ConsumeIntegralInRange<int64_t>(0, 3);
  const int64_t hk = in.ConsumeIntegralInRange<int64_t>(0, 2);
  int64_t head_dim = in.ConsumeIntegralInRange<int64_t>(1, 40);
  if (in.ConsumeIntegral<uint8_t>() == 7) head_dim = 1026;  // > 512 pairs: the heap row buffer

  RopeParams p;
  const uint8_t rot = in.ConsumeIntegral<uint8_t>();
  if (rot >= 150) p.rotary_dim = 2 * in.ConsumeIntegralInRange<int64_t>(1, std::max<int64_t>(1, head_dim / 2));
  if (rot >= 240) p.rotary_dim = in.ConsumeIntegralInRange<int64_t>(-3, head_dim + 3);
  const int64_t rotary = p.rotary_dim == 0 ? head_dim : p.rotary_dim;
  const int64_t half = std::max<int64_t>(0, rotary / 2);
  const uint8_t flags = in.ConsumeIntegral<uint8_t>();
  p.pairs = (flags & 1) ? PairLayout::kInterleaved : PairLayout::kHalf;
  p.inverse = (flags >> 1) & 1;
  p.arithmetic = (flags >> 2) & 1 ? RotationArithmetic::kF32 : RotationArithmetic::kF64;
  if ((flags >> 3) & 1 && !((flags >> 2) & 1)) p.arithmetic = RotationArithmetic::kFmaChain;
  if (flags == 255) p.pairs = static_cast<PairLayout>(2);
  if (flags == 254) p.arithmetic = static_cast<RotationArithmetic>(5);
  const uint8_t threads = in.ConsumeIntegral<uint8_t>();
  p.exec.max_threads = threads == 255 ? -1 : threads % 3;

  // Tensors: q [batch, seq, hq, head_dim], k with hk heads; each in place or with its output.
  const ViewSpec qs = PickSpec(in, hq), ks = PickSpec(in, hk);
  const bool q_out_of_place = in.ConsumeBool(), k_out_of_place = in.ConsumeBool();
  const ViewSpec qos = PickSpec(in, hq), kos = PickSpec(in, hk);
  struct Side {
    size_t in_at = 0, out_at = 0;
    Tensor in, out;
  } q, k;
  auto add_side = [&](Side& side, const ViewSpec& s, const ViewSpec& os, bool out_of_place,
                      uint32_t seed) {
    if (s.heads == 0) return;
    const Tensor shape = MakeView(nullptr, dtype, batch, seq, head_dim, s);
    const size_t n = static_cast<size_t>(Span(shape));
    side.in_at = arena.Add(n * esize, 8, esize * in.ConsumeIntegralInRange<size_t>(0, 3));
    Rng rng(seed);
    std::vector<float> v(n);
    const bool specials = in.ConsumeBool();
    for (float& x : v) x = rng.Value(specials);
    std::vector<unsigned char> bytes(n * esize);
    StoreAs(dtype, v, bytes.data());
    arena.Fill(side.in_at, bytes.data(), bytes.size());
    if (out_of_place) {
      const Tensor oshape = MakeView(nullptr, dtype, batch, seq, head_dim, os);
      side.out_at = arena.Add(static_cast<size_t>(Span(oshape)) * esize, 8, esize * (in.ConsumeIntegral<uint8_t>() & 1));
    }
  };
  add_side(q, qs, qos, q_out_of_place, in.ConsumeIntegral<uint32_t>());
  add_side(k, ks, kos, k_out_of_place, in.ConsumeIntegral<uint32_t>());

  // The cos/sin source; rows bound the positions it accepts.
  const uint8_t src_kind = in.ConsumeIntegral<uint8_t>();
  const int source = src_kind < 110 ? 0 : src_kind < 150 ? 1 : src_kind < 200 ? 2 : src_kind < 254 ? 3 : 4;
  int64_t rows = 0;
  std::shared_ptr<const RopeTable> table;
  Frequencies freqs;
  freqs.base = PickDouble(in, {10000.0, 500000.0, 1e6, 10.0, 1.5, 10000.0});
  freqs.attention_factor = PickDouble(in, {1.0, 1.0, 1.0, 0.5, 0.0, -1.0, 1.25, 1e-3});
  size_t inv_at = 0;
  int64_t inv_len = 0;
  std::vector<double> inv_values;
  if ((source == 0 || source == 1) && in.ConsumeIntegral<uint8_t>() < 80) {
    inv_len = half;
    const uint8_t wrong = in.ConsumeIntegral<uint8_t>();
    if (wrong == 255) inv_len = half + 1;
    inv_values.resize(static_cast<size_t>(std::max<int64_t>(inv_len, 0)));
    for (double& f : inv_values) f = in.ConsumeBool() ? in.ConsumeProbability<double>() : PickDouble(in, {1.0, 0.5, 1e-4});
    inv_at = arena.Add(inv_values.size() * 8 + (inv_values.empty() ? 1 : 0), 8);
    if (!inv_values.empty()) arena.Fill(inv_at, inv_values.data(), inv_values.size() * 8);
  }
  DType cache_dtype = DType::kF32;
  size_t cos_at = 0, sin_at = 0;
  bool cache_in_domain = true;
  if (source == 1) {
    rows = in.ConsumeIntegralInRange<int64_t>(1, 64);
    Frequencies tf = freqs;
    if (!inv_values.empty()) {
      tf.inv_freq = inv_values.data();
      tf.inv_freq_len = inv_len;
    }
    const int64_t table_rotary = in.ConsumeIntegral<uint8_t>() == 3 ? rotary + 2 : rotary;
    // For kFmaChain calls with lo rows, except now and then (a refusal that must write nothing).
    const RotationArithmetic ta =
        in.ConsumeIntegral<uint8_t>() == 5 ? RotationArithmetic::kF64 : p.arithmetic;
    if (!RopeTable::Create(table_rotary, tf, rows, ta, &table).ok()) table.reset();
  } else if (source == 2 || source == 3) {
    const uint8_t cd = in.ConsumeIntegral<uint8_t>();
    cache_dtype = cd < 120 ? DType::kF32 : cd < 190 ? DType::kBF16 : DType::kF16;
    rows = source == 3 ? batch * seq : in.ConsumeIntegralInRange<int64_t>(1, 64);
    const size_t n = static_cast<size_t>(rows * half);
    const bool raw = in.ConsumeIntegral<uint8_t>() < 20;
    Rng rng(in.ConsumeIntegral<uint32_t>());
    std::vector<float> c(n), s(n);
    for (size_t i = 0; i < n; ++i) {
      const double theta = static_cast<double>(rng.Next()) * 1e-6;
      c[i] = raw ? rng.Value(true) : static_cast<float>(std::cos(theta));
      s[i] = raw ? rng.Value(true) : static_cast<float>(std::sin(theta));
      cache_in_domain &= std::fabs(c[i]) <= 1.f && std::fabs(s[i]) <= 1.f;
    }
    const size_t csize = DTypeSize(cache_dtype);
    cos_at = arena.Add(std::max<size_t>(1, n * csize), 8);
    sin_at = arena.Add(std::max<size_t>(1, n * csize), 8);
    std::vector<unsigned char> bytes(n * csize);
    StoreAs(cache_dtype, c, bytes.data());
    if (n) arena.Fill(cos_at, bytes.data(), bytes.size());
    StoreAs(cache_dtype, s, bytes.data());
    if (n) arena.Fill(sin_at, bytes.data(), bytes.size());
  }

  // Positions.
  const uint8_t pk = in.ConsumeIntegral<uint8_t>();
  const int pos_kind = pk < 90 ? 0 : pk < 130 ? 1 : pk < 190 ? 2 : pk < 254 ? 3 : 4;
  std::vector<int64_t> pos_values(static_cast<size_t>(pos_kind == 1 ? batch : batch * seq));
  for (int64_t& v : pos_values) v = PickPosition(in, rows > 0 ? std::max<int64_t>(1, rows - seq + 1) : 0);
  if (pos_kind == 0) {
    p.positions = Positions::Offset(pos_values[0]);
  }
  size_t pos_at = 0;
  if (pos_kind == 1 || pos_kind == 3) {
    pos_at = arena.Add(pos_values.size() * 8, 8);
    arena.Fill(pos_at, pos_values.data(), pos_values.size() * 8);
  } else if (pos_kind == 2) {
    std::vector<int32_t> v32(pos_values.size());
    for (size_t i = 0; i < v32.size(); ++i) v32[i] = static_cast<int32_t>(pos_values[i]);
    pos_at = arena.Add(v32.size() * 4, 8);
    arena.Fill(pos_at, v32.data(), v32.size() * 4);
  }

  // Hostile placements: an input or an output moved onto another buffer (rare).
  const uint8_t hostile = in.ConsumeIntegral<uint8_t>();
  const uint8_t hostile_shift = in.ConsumeIntegral<uint8_t>();
  arena.Seal();

  auto ptr = [&](size_t at) -> void* { return arena.at(at); };
  RopeTensors t;
  if (hq > 0) {
    q.in = MakeView(ptr(q.in_at), dtype, batch, seq, head_dim, qs);
    t.q = q.in;
    if (q_out_of_place) t.q_out = q.out = MakeView(ptr(q.out_at), dtype, batch, seq, head_dim, qos);
  }
  if (hk > 0) {
    k.in = MakeView(ptr(k.in_at), dtype, batch, seq, head_dim, ks);
    t.k = k.in;
    if (k_out_of_place) t.k_out = k.out = MakeView(ptr(k.out_at), dtype, batch, seq, head_dim, kos);
  }
  if (pos_kind == 1) p.positions = Positions::PerBatch(static_cast<const int64_t*>(ptr(pos_at)));
  if (pos_kind == 2) p.positions = Positions::Ids(static_cast<const int32_t*>(ptr(pos_at)));
  if (pos_kind == 3) p.positions = Positions::Ids(static_cast<const int64_t*>(ptr(pos_at)));
  if (pos_kind == 4) p.positions.kind = static_cast<Positions::Kind>(9);
  p.freqs = freqs;
  if (!inv_values.empty() || inv_len != 0) {
    p.freqs.inv_freq = static_cast<const double*>(ptr(inv_at));
    p.freqs.inv_freq_len = inv_len;
  }
  if (source == 1) p.source = CosSinSource::Table(table.get());
  if (source == 2 || source == 3) {
    CosSinCache c;
    c.kind = source == 3 ? CosSinCache::Kind::kPerToken : CosSinCache::Kind::kByPosition;
    c.dtype = cache_dtype;
    c.rows = rows;
    c.cos = ptr(cos_at);
    c.sin = ptr(sin_at);
    p.source = CosSinSource::Cache(c);
  }
  if (source == 4) p.source.kind = static_cast<CosSinSource::Kind>(6);
  Tensor* victim = t.q_out.present() ? &t.q_out : t.q.present() ? &t.q : &t.k;
  switch (hostile) {
    case 1:  // an output partially over its input
      if (t.q_out.present()) t.q_out.data = static_cast<unsigned char*>(t.q.data) + esize * (1 + hostile_shift % 4);
      break;
    case 2:  // position ids inside an output
      if (pos_kind >= 1 && pos_kind <= 3 && victim->present()) {
        const size_t room = static_cast<size_t>(Span(*victim)) * esize;
        const size_t need = pos_values.size() * (pos_kind == 2 ? 4 : 8);
        unsigned char* first = static_cast<unsigned char*>(victim->data);
        unsigned char* dst = first + (8 - reinterpret_cast<uintptr_t>(first) % 8) % 8;
        if (dst + need <= first + room) {
          p.positions.ids64 = pos_kind == 3 ? reinterpret_cast<const int64_t*>(dst) : p.positions.ids64;
          p.positions.ids32 = pos_kind == 2 ? reinterpret_cast<const int32_t*>(dst) : p.positions.ids32;
          p.positions.batch_offsets =
              pos_kind == 1 ? reinterpret_cast<const int64_t*>(dst) : p.positions.batch_offsets;
        }
      }
      break;
    case 3:  // a cache inside an output (rejected), or inside an input (allowed: both are only
             // read; its values are then the tensor's bits, outside the bound's domain)
      if ((source == 2 || source == 3) && victim->present()) {
        p.source.cache.cos = victim->data;
        cache_in_domain = false;
      }
      break;
    case 4:  // k on top of q
      if (t.q.present() && t.k.present()) t.k.data = t.q.data;
      break;
    case 5:  // an absurd stride: negative, or so large the byte size overflows (never a stride
             // that is valid but leaves the buffer: that would be the harness's bug)
      if (t.q.present()) {
        t.q.strides[hostile_shift % 4] = hostile_shift & 4 ? -1 - (hostile_shift >> 3)
                                                           : (int64_t{1} << 62) + (hostile_shift >> 3);
      }
      break;
    case 6:  // an output whose extent differs from its input's
      if (t.q_out.present()) {
        const int axis = hostile_shift % 4;
        const int64_t v = in.ConsumeIntegral<int64_t>();
        t.q_out.shape[axis] = v == t.q.shape[axis] ? v + 1 : v;
      }
      break;
    default:
      break;
  }

  // Runs: every compared target, then the reference.
  const std::vector<int64_t> targets = TargetsToCompare(hostile_shift);
  std::vector<std::vector<unsigned char>> after;
  if (!RunOnTargets(
          arena, targets, [&] { return ApplyRope(t, p); }, [&] { return reference::ApplyRope(t, p); },
          &after)) {
    return;
  }

  // Success: only bytes inside the written views may change, identically on every target.
  std::vector<char> written(arena.image().size(), 0);
  for (const Tensor* w : {t.q_out.present() ? &t.q_out : &t.q, t.k_out.present() ? &t.k_out : &t.k}) {
    if (!w->present()) continue;
    const size_t origin = arena.offset_of(w->data);
    for (int64_t b = 0; b < w->shape[0]; ++b)
      for (int64_t s = 0; s < w->shape[1]; ++s)
        for (int64_t h = 0; h < w->shape[2]; ++h)
          for (int64_t j = 0; j < w->shape[3]; ++j) {
            const size_t e = origin + static_cast<size_t>(b * w->strides[0] + s * w->strides[1] +
                                                          h * w->strides[2] + j) * esize;
            for (size_t byte = 0; byte < esize; ++byte) written[e + byte] = 1;
          }
  }
  CheckOnlyOutputsChanged(arena, targets, after, written);

  // Accuracy where the bound's domain holds: |factor| <= 1 (caches: |cos|, |sin| <= 1), angles
  // below 2^29; pairs with non-finite or huge inputs are skipped by the measure itself.
  bool in_domain = true;
  if (p.source.kind == CosSinSource::Kind::kCache) {
    in_domain = cache_in_domain;
  } else {
    const double factor = p.source.kind == CosSinSource::Kind::kTable ? table->attention_factor()
                                                                       : p.freqs.attention_factor;
    std::vector<double> inv = p.source.kind == CosSinSource::Kind::kTable ? table->inv_freq() : inv_values;
    double max_inv = 0.0;
    if (inv.empty()) max_inv = 1.0;  // base^(-2i/r) <= 1 for base >= 1
    for (double f : inv) max_inv = std::max(max_inv, std::fabs(f));
    if (inv.empty() && !(p.freqs.base >= 1.0)) in_domain = false;
    double max_pos = 0.0;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t s = 0; s < seq; ++s) {
        int64_t v = 0;
        if (pos_kind == 0) v = pos_values[0] + s;
        if (pos_kind == 1) v = pos_values[static_cast<size_t>(b)] + s;
        if (pos_kind >= 2) v = pos_values[static_cast<size_t>(b * seq + s)];
        if (pos_kind == 2) v = static_cast<int32_t>(v);
        max_pos = std::max(max_pos, std::fabs(static_cast<double>(v)));
      }
    in_domain &= std::fabs(factor) <= 1.0 && max_pos * max_inv < std::ldexp(1.0, 29);
  }
  if (!in_domain) return;
  const Tensor& shape_src = t.q.present() ? t.q : t.k;
  std::vector<double> q64, k64;
  if (t.q.present()) q64.resize(static_cast<size_t>(batch * seq * hq * head_dim));
  if (t.k.present()) k64.resize(static_cast<size_t>(batch * seq * hk * head_dim));
  arena.Reset();
  Check(reference::ApplyRopeF64(t, p, q64.data(), k64.data()).ok(), "ApplyRopeF64");
  std::vector<unsigned char> image = arena.image();
  std::vector<unsigned char> result = after[0];
  auto rebase = [&](const Tensor& v, std::vector<unsigned char>& buf) {
    Tensor r = v;
    r.data = buf.data() + arena.offset_of(v.data);
    return r;
  };
  (void)shape_src;
  for (int side = 0; side < 2; ++side) {
    const Tensor& input = side == 0 ? t.q : t.k;
    if (!input.present()) continue;
    const Tensor& output = side == 0 ? (t.q_out.present() ? t.q_out : t.q) : (t.k_out.present() ? t.k_out : t.k);
    const double err = reference::MaxPairUlpError(rebase(output, result), rebase(input, image),
                                                  (side == 0 ? q64 : k64).data(), rotary, p.pairs);
    if (!(err < Bound(dtype, p.arithmetic))) {
      char msg[400];
      std::snprintf(msg, sizeof msg,
                    "%s error %.6f ulp exceeds the bound %.6f (%s, %s, %s, %s, rotary %lld of %lld, "
                    "source %d (cache %s), factor %.17g, base %.17g, %s inv_freq, positions kind %d, "
                    "batch %lld seq %lld)",
                    side == 0 ? "q" : "k", err, Bound(dtype, p.arithmetic), DTypeName(dtype),
                    PairLayoutName(p.pairs), p.inverse ? "inverse" : "forward",
                    p.arithmetic == RotationArithmetic::kF64 ? "kF64" : p.arithmetic == RotationArithmetic::kF32 ? "kF32" : "kFmaChain",
                    static_cast<long long>(rotary), static_cast<long long>(head_dim), source,
                    DTypeName(cache_dtype), p.freqs.attention_factor, p.freqs.base,
                    inv_values.empty() ? "default" : "explicit", pos_kind,
                    static_cast<long long>(batch), static_cast<long long>(seq));
      Check(false, msg);
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
