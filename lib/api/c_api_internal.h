// Internal: what the C API translation units (c_api_common.cc, c_api_rope.cc, ...) share: the
// opaque handle types, the conversions of shared structs, the error channel (posenc_last_error)
// and the guard every entry runs in.
#ifndef POSENC_LIB_API_C_API_INTERNAL_H_
#define POSENC_LIB_API_C_API_INTERNAL_H_

#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "lib/core/guard.h"
#include "posenc/freqs.h"
#include "posenc/model.h"
#include "posenc/posenc.h"
#include "posenc/rope.h"
#include "posenc/sinusoidal.h"

struct posenc_rope_table {
  std::shared_ptr<const posenc::RopeTable> table;
};
struct posenc_rope_call {
  std::unique_ptr<posenc::RopeCall> call;
};
struct posenc_sinusoidal_table {
  std::shared_ptr<const posenc::SinusoidalTable> table;
};
struct posenc_config {
  posenc::RopeConfig config;
};
// A loaded model: its description and one posenc_config per RoPE layer type (handed out as
// borrowed pointers that live as long as the model).
struct posenc_model {
  posenc::ModelRope model;
  std::vector<std::unique_ptr<posenc_config>> configs;
};

namespace posenc {
namespace capi {

// The value of a C enum field as an int. A C caller may store any int in it; reading it as the
// C++ view of the enum would be undefined when the value is outside the enumerators' range.
template <class E>
int RawEnum(const E& e) {
  static_assert(sizeof(E) == sizeof(int), "C enums are int-sized here");
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

// The per-thread message posenc_last_error() returns.
std::string& LastError();
// POSENC_OK, or the status code with its message recorded. Never throws: when the message cannot
// be stored, posenc_last_error() returns "".
posenc_status Report(const Status& st) noexcept;
posenc_status Fail(posenc_status code, const std::string& message) noexcept;

// The guard of every C entry returning posenc_status: core::Guarded (lib/core/guard.h), the one
// exception barrier, with its Status reported. `what` names the entry in the message.
template <class Body>
posenc_status Guard(const char* what, const Body& body) {
  return Report(core::Guarded(what, body));
}

// The guard of C entries returning a value (a size, a string): body(), or `fallback` with the
// exception's message recorded for posenc_last_error().
template <class T, class Body>
T GuardOr(const char* what, const T& fallback, const Body& body) {
  return core::GuardedWith(what, body, [&fallback](const Status& st) {
    Report(st);
    return fallback;
  });
}

posenc::Tensor ToTensor(const posenc_tensor* t);
// The C parameters as RopeParams (params->config is not read here).
Status ToRopeParams(const posenc_rope_params* p, RopeParams* out);
Positions ToPositions(const posenc_positions& p);

}  // namespace capi
}  // namespace posenc

#endif  // POSENC_LIB_API_C_API_INTERNAL_H_
