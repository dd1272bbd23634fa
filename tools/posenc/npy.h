// Minimal NumPy .npy (format 1.0/2.0/3.0) reading and writing: little-endian, C order, the dtypes
// posenc uses ('<f4', '<f8', '<i4', '<i8', '<f2', '<u2').
//
// Reading treats every file as hostile: the header must be exactly the dict numpy writes
// ({'descr': ..., 'fortran_order': False, 'shape': (...)}, each key once, nothing else, integer
// extents without signs or stray characters), the element count and byte size are computed with
// overflow checks, and the data must be exactly as long as the file really is before anything
// is allocated. So no header, however it lies, drives an allocation larger than the file.
#ifndef POSENC_TOOLS_POSENC_NPY_H_
#define POSENC_TOOLS_POSENC_NPY_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace posenc {
namespace npy {

// Header limits: numpy's own NPY_MAXDIMS, and far more header text than a simple dtype needs.
constexpr size_t kMaxRank = 32;
constexpr size_t kMaxHeaderBytes = 65536;

struct Array {
  std::string descr;           // e.g. "<f4"
  std::vector<int64_t> shape;  // C order
  std::vector<unsigned char> bytes;

  // Number of elements: the product of shape, or -1 when it overflows int64 (never for an array
  // that Load or Parse returned: they reject such headers).
  int64_t size() const;
  size_t item_size() const;     // bytes per element (0 for an unsupported descr)
  template <typename T>
  T* as() { return reinterpret_cast<T*>(bytes.data()); }
  template <typename T>
  const T* as() const { return reinterpret_cast<const T*>(bytes.data()); }
};

// Returns "" on success, else one line that names the file and what is wrong. *out is only
// written on success.
std::string Load(const std::string& path, Array* out);
// The same for a .npy image in memory (`name` prefixes messages).
std::string Parse(const std::string& name, const void* data, size_t size, Array* out);

// The .npy image of `array` (format 1.0 when the header fits in 65535 bytes, else 2.0); "" or
// a message when descr, shape and bytes disagree.
std::string Serialize(const Array& array, std::string* image);
std::string Save(const std::string& path, const Array& array);

// Copies of the elements as double / int64 (for any supported float / integer descr).
std::vector<double> ToDoubles(const Array& a);
std::vector<int64_t> ToInt64(const Array& a);

}  // namespace npy
}  // namespace posenc

#endif  // POSENC_TOOLS_POSENC_NPY_H_
