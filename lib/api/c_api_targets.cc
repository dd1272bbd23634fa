// The C API of SIMD targets (posenc_*_target*): thin translation to posenc/targets.h. Entries
// returning a size or a string run in the shared guard's value form (GuardOr): on an exception
// they return their fallback (0, "") with the message in posenc_last_error().
#include <cstring>
#include <string>
#include <vector>

#include "lib/api/c_api_internal.h"
#include "lib/api/targets_internal.h"
#include "posenc/posenc.h"
#include "posenc/targets.h"

namespace {

using posenc::capi::Guard;
using posenc::capi::GuardOr;

size_t JoinNames(const std::vector<std::string>& names, char* buf, size_t capacity) {
  std::string all;
  for (const std::string& n : names) all += (all.empty() ? "" : " ") + n;
  if (buf != nullptr && capacity > 0) {
    const size_t n = all.size() < capacity - 1 ? all.size() : capacity - 1;
    std::memcpy(buf, all.data(), n);
    buf[n] = '\0';
  }
  return all.size();
}

}  // namespace

extern "C" {

const char* posenc_chosen_target(void) {
  return GuardOr(__func__, static_cast<const char*>(""),
                 [] { return posenc::api::ChosenTargetName(); });
}

size_t posenc_supported_targets(char* buf, size_t capacity) {
  return GuardOr(__func__, size_t{0},
                 [&] { return JoinNames(posenc::SupportedTargets(), buf, capacity); });
}

size_t posenc_compiled_targets(char* buf, size_t capacity) {
  return GuardOr(__func__, size_t{0},
                 [&] { return JoinNames(posenc::CompiledTargets(), buf, capacity); });
}

posenc_status posenc_set_max_target(const char* name) {
  return Guard(__func__, [&] { return posenc::SetMaxTarget(name != nullptr ? name : ""); });
}

}  // extern "C"
