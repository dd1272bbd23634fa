// Internal: what the C API translation units (c_api.cc, c_api_config.cc, ...) share: the opaque
// handle types, the error channel (posenc_last_error) and the one exception guard.
#ifndef POSENC_LIB_API_C_API_INTERNAL_H_
#define POSENC_LIB_API_C_API_INTERNAL_H_

#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "posenc/freqs.h"
#include "posenc/model.h"
#include "posenc/posenc.h"
#include "posenc/rope.h"

struct posenc_rope_table {
  std::shared_ptr<const posenc::RopeTable> table;
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
// POSENC_OK, or the status code with its message recorded.
posenc_status Report(const Status& st);
posenc_status Fail(posenc_status code, const std::string& message);

// Runs body() -> Status, turning any exception into POSENC_INTERNAL.
template <class Body>
posenc_status Guard(const Body& body) {
  try {
    return Report(body());
  } catch (const std::bad_alloc&) {
    return Fail(POSENC_INTERNAL, "out of memory");
  } catch (...) {
    return Fail(POSENC_INTERNAL, "unexpected exception inside posenc");
  }
}

posenc::Tensor ToTensor(const posenc_tensor* t);
// The C parameters as RopeParams (params->config is not read here).
Status ToRopeParams(const posenc_rope_params* p, RopeParams* out);
Positions ToPositions(const posenc_positions& p);

}  // namespace capi
}  // namespace posenc

#endif  // POSENC_LIB_API_C_API_INTERNAL_H_
