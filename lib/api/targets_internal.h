// Internal: applies POSENC_MAX_TARGET once, before the first dispatch; the chosen target's name.
#ifndef POSENC_LIB_API_TARGETS_INTERNAL_H_
#define POSENC_LIB_API_TARGETS_INTERNAL_H_

#include "posenc/status.h"

namespace posenc {
namespace api {
// Reads POSENC_MAX_TARGET on the first call (thread-safe) and returns its status every time.
const Status& EnsureTargetsInitialized();
// The dispatch target's name as Highway's static string (what posenc::ChosenTarget copies and
// posenc_chosen_target returns); "" when POSENC_MAX_TARGET is invalid. Allocates nothing.
const char* ChosenTargetName();
}  // namespace api
}  // namespace posenc

#endif  // POSENC_LIB_API_TARGETS_INTERNAL_H_
