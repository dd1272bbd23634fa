#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <mutex>
#include <string>

#include "hwy/targets.h"
#include "lib/api/targets_internal.h"
#include "lib/core/guard.h"
#include "lib/api/tensor_checks.h"
#include "lib/kernels/registry.h"
#include "posenc/targets.h"

namespace posenc {
namespace {

std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

// Highway target bit for a cap name (any compiled target: AVX3, AVX2, SSE4, SSSE3 on x86; NEON,
// SVE, SVE2, SVE_256, SVE2_128 on aarch64). "SCALAR" (or "EMU128") is the least capable compiled
// target: the scalar fallback on x86, NEON on aarch64 where no scalar fallback is compiled.
// 0 if unknown.
int64_t TargetBit(const std::string& name) {
  const std::string n = Upper(name);
  if (n == "SCALAR" || n == "EMU128") {
    int64_t worst = 0;
    for (int64_t t = HWY_TARGETS; t != 0; t &= t - 1) worst = t & -t;
    return worst;
  }
  for (int64_t t = HWY_TARGETS; t != 0; t &= t - 1) {
    if (n == hwy::TargetName(t & -t)) return t & -t;
  }
  // x86 names are accepted even on a build that did not compile them (no-op caps elsewhere).
  if (n == "AVX3") return HWY_AVX3;
  if (n == "AVX2") return HWY_AVX2;
  if (n == "SSE4") return HWY_SSE4;
  if (n == "SSSE3") return HWY_SSSE3;
  return 0;
}

// hwy::SupportedTargets() in Highway 1.0.3 re-detects the CPU and, as a side effect, re-chooses
// the dispatch target from the *uncapped* set. Every query goes through here, which re-chooses
// from the capped set afterwards.
int64_t CappedSupportedTargets() {
  const int64_t targets = hwy::SupportedTargets();
  hwy::GetChosenTarget().Update(targets);
  return targets;
}

std::vector<std::string> Names(int64_t mask) {
  std::vector<std::string> names;
  for (int64_t t = mask; t != 0; t &= t - 1) names.emplace_back(hwy::TargetName(t & -t));
  return names;
}

Status ApplyCap(const std::string& name, const char* what) {
  if (name.empty()) {
    hwy::DisableTargets(0);
    CappedSupportedTargets();
    return Status::Ok();
  }
  const int64_t bit = TargetBit(name);
  if (bit == 0) {
    return api::Err(StatusCode::kInvalidArgument, what, " = \"", name,
                    "\": unknown target; use AVX3, AVX2, SSE4, SSSE3, NEON, SVE, SVE2, SVE_256, "
                    "SVE2_128 or SCALAR");
  }
  // Better targets have smaller bits: disable every bit below the cap.
  hwy::DisableTargets(bit - 1);
  // 1.0.3's DisableTargets leaves the cached choice in place: re-choose now.
  CappedSupportedTargets();
  return Status::Ok();
}

}  // namespace

namespace api {
const Status& EnsureTargetsInitialized() {
  static Status status;
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv("POSENC_MAX_TARGET");
    if (env != nullptr && *env != '\0') status = ApplyCap(env, "POSENC_MAX_TARGET");
  });
  return status;
}

const char* ChosenTargetName() {
  if (!EnsureTargetsInitialized().ok()) return "";
  return kernels::DispatchedTargetName();
}
}  // namespace api

// Version() returns a literal; the others run in the one guard (lib/core/guard.h). The lists and
// the name have no error channel: on an exception (out of memory) they return empty.
const char* Version() { return POSENC_VERSION_STRING; }

std::vector<std::string> CompiledTargets() {
  return api::GuardedOr("posenc::CompiledTargets", std::vector<std::string>(),
                        [] { return Names(HWY_TARGETS); });
}

std::vector<std::string> SupportedTargets() {
  return api::GuardedOr("posenc::SupportedTargets", std::vector<std::string>(), [] {
    (void)api::EnsureTargetsInitialized();  // a bad POSENC_MAX_TARGET leaves the set uncapped
    return Names(CappedSupportedTargets() & HWY_TARGETS);
  });
}

std::string ChosenTarget() {
  return api::GuardedOr("posenc::ChosenTarget", std::string(),
                        [] { return std::string(api::ChosenTargetName()); });
}

Status SetMaxTarget(const std::string& name) {
  return api::Guarded("posenc::SetMaxTarget", [&] {
    (void)api::EnsureTargetsInitialized();  // the explicit cap replaces the environment's
    return ApplyCap(name, "max target");
  });
}

Status TargetEnvironmentStatus() {
  return api::Guarded("posenc::TargetEnvironmentStatus",
                      [] { return api::EnsureTargetsInitialized(); });
}

}  // namespace posenc
