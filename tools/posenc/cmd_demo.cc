// posenc demo: Llama-3-8B-shaped q (32 heads) and k (8 heads), head_dim 128, 512 tokens, rotated
// on every SIMD target this CPU runs; each checked against the double reference and against the
// scalar fallback's bits, and timed.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "posenc/rope.h"
#include "posenc/targets.h"
#include "tools/posenc/cli.h"

namespace posenc {
namespace cli {
namespace {

constexpr int64_t kTokens = 512, kHeadsQ = 32, kHeadsK = 8, kHeadDim = 128;

struct DemoRun {
  std::vector<float> q, k;
  double seconds = 0;
};

DemoRun RunOnce(const std::vector<float>& q_in, const std::vector<float>& k_in, int reps) {
  DemoRun r;
  r.q.resize(q_in.size());
  r.k.resize(k_in.size());
  RopeTensors t;
  t.q = TensorBSHD(q_in.data(), 1, kTokens, kHeadsQ, kHeadDim);
  t.k = TensorBSHD(k_in.data(), 1, kTokens, kHeadsK, kHeadDim);
  t.q_out = TensorBSHD(r.q.data(), DType::kF32, 1, kTokens, kHeadsQ, kHeadDim);
  t.k_out = TensorBSHD(r.k.data(), DType::kF32, 1, kTokens, kHeadsK, kHeadDim);
  RopeParams p;
  p.freqs.base = 500000.0;
  p.exec.max_threads = 1;
  r.seconds = 1e30;
  for (int i = 0; i < reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const Status st = ApplyRope(t, p);
    const auto stop = std::chrono::steady_clock::now();
    if (!st.ok()) throw std::runtime_error(st.message());
    r.seconds = std::min(r.seconds, std::chrono::duration<double>(stop - start).count());
  }
  return r;
}

void RunDemo() {
  const Status env = TargetEnvironmentStatus();
  if (!env.ok()) throw UsageError(env.message());
  std::vector<float> q(kTokens * kHeadsQ * kHeadDim), k(kTokens * kHeadsK * kHeadDim);
  unsigned state = 12345;
  auto next = [&state] {  // uniform in [-2, 2), deterministic
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(state >> 8) * (4.0f / 16777216.0f) - 2.0f;
  };
  for (float& x : q) x = next();
  for (float& x : k) x = next();

  // The exact result, once.
  RopeTensors t;
  t.q = TensorBSHD(q.data(), 1, kTokens, kHeadsQ, kHeadDim);
  t.k = TensorBSHD(k.data(), 1, kTokens, kHeadsK, kHeadDim);
  RopeParams p;
  p.freqs.base = 500000.0;
  std::vector<double> q64(q.size()), k64(k.size());
  Status st = reference::ApplyRopeF64(t, p, q64.data(), k64.data());
  if (!st.ok()) throw std::runtime_error(st.message());

  const char* env_cap = std::getenv("POSENC_MAX_TARGET");
  const std::vector<std::string> targets = SupportedTargets();
  if (!SetMaxTarget(targets.back()).ok()) throw std::runtime_error("cannot select " + targets.back());
  const DemoRun scalar = RunOnce(q, k, 1);

  const double bytes = 2.0 * 4.0 * static_cast<double>(q.size() + k.size());
  std::printf("RoPE, Llama-3-8B shape: q %lld heads, k %lld heads, head_dim %lld, %lld tokens, "
              "theta 5e5, half pairs, positions 0..%lld, 1 thread\n",
              static_cast<long long>(kHeadsQ), static_cast<long long>(kHeadsK),
              static_cast<long long>(kHeadDim), static_cast<long long>(kTokens),
              static_cast<long long>(kTokens - 1));
  std::printf("%-8s %-10s %-16s %-16s %10s %8s\n", "target", "dispatched", "max err (ulp*)",
              "bitwise=scalar", "time (ms)", "GB/s");
  bool all_ok = true;
  for (const std::string& name : targets) {
    if (!SetMaxTarget(name).ok()) throw std::runtime_error("cannot select " + name);
    const DemoRun run = RunOnce(q, k, 5);
    RopeTensors out;
    out.q = TensorBSHD(run.q.data(), 1, kTokens, kHeadsQ, kHeadDim);
    out.k = TensorBSHD(run.k.data(), 1, kTokens, kHeadsK, kHeadDim);
    const double err = std::max(
        reference::MaxPairUlpError(out.q, t.q, q64.data(), kHeadDim, PairLayout::kHalf),
        reference::MaxPairUlpError(out.k, t.k, k64.data(), kHeadDim, PairLayout::kHalf));
    const bool same = std::memcmp(run.q.data(), scalar.q.data(), q.size() * 4) == 0 &&
                      std::memcmp(run.k.data(), scalar.k.data(), k.size() * 4) == 0;
    all_ok = all_ok && same && err <= 2.0;
    std::printf("%-8s %-10s %-16.3f %-16s %10.3f %8.2f\n", name.c_str(), ChosenTarget().c_str(),
                err, same ? "yes" : "NO", run.seconds * 1e3, bytes / run.seconds / 1e9);
  }
  (void)SetMaxTarget(env_cap != nullptr ? env_cap : "");
  std::printf("* ulp of max(|x|,|y|) of each pair against posenc::reference in double; the "
              "contract is <= 2.\n%s\n",
              all_ok ? "all targets within the bound and bitwise equal to scalar"
                     : "SOME TARGET FAILED");
  if (!all_ok) throw std::runtime_error("demo check failed");
}

}  // namespace

void AddDemo(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("demo", "RoPE on Llama-3-8B shapes on every SIMD target");
  cmd->callback(RunDemo);
}

}  // namespace cli
}  // namespace posenc
