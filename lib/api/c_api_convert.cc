// The C API of the bf16 / f16 conversions (posenc_convert_*): thin translation to posenc/half.h
// inside the shared guard of c_api_internal.h.
#include "lib/api/c_api_internal.h"
#include "posenc/half.h"
#include "posenc/posenc.h"

using posenc::capi::Guard;
using posenc::capi::RawEnum;

extern "C" {

posenc_status posenc_convert_to_f32(const void* src, posenc_dtype dtype, size_t n, float* dst) {
  return Guard(__func__, [&] {
    return posenc::ConvertToF32(src, static_cast<posenc::DType>(RawEnum(dtype)), n, dst);
  });
}

posenc_status posenc_convert_from_f32(const float* src, size_t n, posenc_dtype dtype, void* dst) {
  return Guard(__func__, [&] {
    return posenc::ConvertFromF32(src, n, static_cast<posenc::DType>(RawEnum(dtype)), dst);
  });
}

}  // extern "C"
