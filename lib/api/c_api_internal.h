// Internal: what the C API's translation units share (lib/api/c_api*.cc): the opaque config
// object, the per-thread error message, the exception barrier and the view conversions.
#ifndef POSENC_LIB_API_C_API_INTERNAL_H_
#define POSENC_LIB_API_C_API_INTERNAL_H_

#include <cstring>
#include <new>
#include <string>

#include "posenc/freqs.h"
#include "posenc/posenc.h"
#include "posenc/rope.h"
#include "posenc/status.h"
#include "posenc/tensor.h"

struct posenc_config {
  posenc::RopeConfig config;
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

// The status code of st, recording its message for posenc_last_error() when it failed.
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

// C views to C++ views (enum fields read as ints; validation happens in the C++ API).
Tensor ToTensor(const posenc_tensor* t);  // null: an absent tensor
Positions ToPositions(const posenc_positions& p);

}  // namespace capi
}  // namespace posenc

#endif  // POSENC_LIB_API_C_API_INTERNAL_H_
