// The C API's shared part (posenc/posenc.h): the error channel every entry reports through, the
// tensor helpers, version and status names. The families live beside it: c_api_rope.cc,
// c_api_sinusoidal.cc, c_api_convert.cc, c_api_targets.cc, c_api_config.cc, c_api_rerope.cc,
// c_api_shift.cc, c_api_vision.cc.
#include <string>

#include "lib/api/c_api_internal.h"
#include "posenc/posenc.h"
#include "posenc/targets.h"
#include "posenc/tensor.h"

// The C enums are the C++ ones, value for value (the C API casts one to the other). Each family's
// file asserts its own enums.
static_assert(POSENC_OK == static_cast<int>(posenc::StatusCode::kOk) &&
                  POSENC_INVALID_ARGUMENT == static_cast<int>(posenc::StatusCode::kInvalidArgument) &&
                  POSENC_OUT_OF_RANGE == static_cast<int>(posenc::StatusCode::kOutOfRange) &&
                  POSENC_UNSUPPORTED == static_cast<int>(posenc::StatusCode::kUnsupported) &&
                  POSENC_INTERNAL == static_cast<int>(posenc::StatusCode::kInternal),
              "posenc_status must match posenc::StatusCode");
static_assert(POSENC_F32 == static_cast<int>(posenc::DType::kF32) &&
                  POSENC_BF16 == static_cast<int>(posenc::DType::kBF16) &&
                  POSENC_F16 == static_cast<int>(posenc::DType::kF16),
              "posenc_dtype must match posenc::DType");
static_assert(POSENC_POSITIONS_OFFSET == static_cast<int>(posenc::Positions::Kind::kOffset) &&
                  POSENC_POSITIONS_PER_BATCH == static_cast<int>(posenc::Positions::Kind::kPerBatchOffsets) &&
                  POSENC_POSITIONS_IDS32 == static_cast<int>(posenc::Positions::Kind::kIds32) &&
                  POSENC_POSITIONS_IDS64 == static_cast<int>(posenc::Positions::Kind::kIds64) &&
                  POSENC_POSITIONS_STREAM_IDS32 == static_cast<int>(posenc::Positions::Kind::kStreamIds32) &&
                  POSENC_POSITIONS_STREAM_IDS64 == static_cast<int>(posenc::Positions::Kind::kStreamIds64),
              "posenc_positions_kind must match posenc::Positions::Kind");

namespace posenc {
namespace capi {

std::string& LastError() {
  thread_local std::string message;
  return message;
}

namespace {
// Stores `message` for posenc_last_error(); "" when even that allocation fails.
void Record(const std::string& message) noexcept {
  std::string& last = LastError();
  const bool stored = core::GuardedOr("recording an error", false, [&] {
    last = message;
    return true;
  });
  if (!stored) last.clear();
}
}  // namespace

posenc_status Report(const Status& st) noexcept {
  if (st.ok()) return POSENC_OK;
  Record(st.message());
  return static_cast<posenc_status>(st.code());
}

posenc_status Fail(posenc_status code, const std::string& message) noexcept {
  Record(message);
  return code;
}

posenc::Tensor ToTensor(const posenc_tensor* t) {
  posenc::Tensor out;
  if (t == nullptr) return out;
  out.data = t->data;
  out.dtype = static_cast<posenc::DType>(RawEnum(t->dtype));
  for (int i = 0; i < 4; ++i) {
    out.shape[i] = t->shape[i];
    out.strides[i] = t->strides[i];
  }
  return out;
}

Positions ToPositions(const posenc_positions& p) {
  Positions out;
  out.kind = static_cast<Positions::Kind>(RawEnum(p.kind));
  out.offset = p.offset;
  out.batch_offsets = p.batch_offsets;
  out.ids32 = p.ids32;
  out.ids64 = p.ids64;
  out.streams = p.streams;
  return out;
}

}  // namespace capi
}  // namespace posenc

namespace {

using posenc::capi::RawEnum;

posenc_tensor FromTensor(const posenc::Tensor& t) {
  posenc_tensor out;
  out.data = t.data;
  out.dtype = static_cast<posenc_dtype>(static_cast<int>(t.dtype));
  for (int i = 0; i < 4; ++i) {
    out.shape[i] = t.shape[i];
    out.strides[i] = t.strides[i];
  }
  return out;
}

}  // namespace

extern "C" {

posenc_tensor posenc_tensor_bshd(void* data, posenc_dtype dtype, int64_t batch, int64_t seq,
                                 int64_t heads, int64_t head_dim) {
  return FromTensor(posenc::TensorBSHD(data, static_cast<posenc::DType>(RawEnum(dtype)), batch, seq,
                                       heads, head_dim));
}

posenc_tensor posenc_tensor_bhsd(void* data, posenc_dtype dtype, int64_t batch, int64_t heads,
                                 int64_t seq, int64_t head_dim) {
  return FromTensor(posenc::TensorBHSD(data, static_cast<posenc::DType>(RawEnum(dtype)), batch, heads,
                                       seq, head_dim));
}

const char* posenc_version(void) { return posenc::Version(); }

const char* posenc_last_error(void) { return posenc::capi::LastError().c_str(); }

const char* posenc_status_name(posenc_status status) {
  return posenc::StatusCodeName(static_cast<posenc::StatusCode>(RawEnum(status)));
}

}  // extern "C"
