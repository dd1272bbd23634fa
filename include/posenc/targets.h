// posenc/targets.h: which SIMD instruction set posenc dispatches to, and capping it.
//
// posenc compiles every kernel for AVX3 (AVX-512), AVX2, SSE4, SSSE3 and a scalar fallback and
// picks the best one this CPU supports at run time. The environment variable POSENC_MAX_TARGET
// (any compiled target name: AVX3, AVX2, SSE4, SSSE3 on x86, NEON, SVE, SVE2, SVE_256, SVE2_128 on
// aarch64, or SCALAR for the least capable one) caps the choice when the library is first used; an unknown
// name makes every call fail with a message naming the variable (never a silent default).
#ifndef POSENC_TARGETS_H_
#define POSENC_TARGETS_H_

#include "posenc/export.h"

#include <string>
#include <vector>

#include "posenc/status.h"
#include "posenc/version.h"

namespace posenc {

// The linked library's version, "MAJOR.MINOR.PATCH" (POSENC_VERSION_STRING of its build).
POSENC_API const char* Version();

// Target names compiled into this build, best first ("AVX3", ..., "SCALAR" or "EMU128"). These
// three have no error channel: if the library runs out of memory building the answer, it is empty.
POSENC_API std::vector<std::string> CompiledTargets();
// Compiled targets this CPU can run (after any cap), best first.
POSENC_API std::vector<std::string> SupportedTargets();
// The target the kernels dispatch to now. Empty when POSENC_MAX_TARGET is invalid.
POSENC_API std::string ChosenTarget();

// Caps dispatch at `name` (a name as for POSENC_MAX_TARGET; "" removes the cap). Affects the whole
// process; call it before starting work on other threads.
POSENC_API Status SetMaxTarget(const std::string& name);

// OK, or the error describing an invalid POSENC_MAX_TARGET (every kernel call returns it too).
POSENC_API Status TargetEnvironmentStatus();

}  // namespace posenc

#endif  // POSENC_TARGETS_H_
