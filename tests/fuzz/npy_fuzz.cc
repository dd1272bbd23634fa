// Fuzz target for the .npy reader (tools/posenc/npy.cc, libFuzzer): any bytes as a file image.
// Parse must never crash, read out of bounds or allocate more than the image holds; what it
// accepts must be self-consistent (shape x item size == data bytes, a supported dtype, at most 32
// dimensions) and survive Serialize -> Parse unchanged. A rejection is one line and leaves the
// output untouched.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tools/posenc/npy.h"

namespace {
void Check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "npy fuzz check failed: %s\n", what);
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using posenc::npy::Array;
  Array a;
  a.descr = "untouched";
  const std::string err = posenc::npy::Parse("fuzz.npy", data, size, &a);
  if (!err.empty()) {
    Check(a.descr == "untouched" && a.shape.empty() && a.bytes.empty(), "a rejected image wrote *out");
    Check(err.find('\n') == std::string::npos, "message spans lines");
    return 0;
  }
  Check(a.item_size() != 0, "unsupported dtype accepted");
  Check(a.shape.size() <= posenc::npy::kMaxRank, "rank above the limit accepted");
  Check(a.size() >= 0 && static_cast<uint64_t>(a.size()) * a.item_size() == a.bytes.size(),
        "shape and data size disagree");
  Check(a.bytes.size() <= size, "more data than the image holds");
  std::string image;
  Check(posenc::npy::Serialize(a, &image).empty(), "Serialize rejected a parsed array");
  Array b;
  Check(posenc::npy::Parse("again.npy", image.data(), image.size(), &b).empty(), "round trip failed");
  Check(b.descr == a.descr && b.shape == a.shape && b.bytes == a.bytes, "round trip changed the array");
  return 0;
}
