// Minimal NumPy .npy (format 1.0/2.0) reading and writing: little-endian, C order, the dtypes
// posenc uses ('<f4', '<f8', '<i4', '<i8', '<f2', '<u2').
#ifndef POSENC_TOOLS_POSENC_NPY_H_
#define POSENC_TOOLS_POSENC_NPY_H_

#include <cstdint>
#include <string>
#include <vector>

namespace posenc {
namespace npy {

struct Array {
  std::string descr;           // e.g. "<f4"
  std::vector<int64_t> shape;  // C order
  std::vector<unsigned char> bytes;

  int64_t size() const;         // number of elements
  size_t item_size() const;     // bytes per element
  template <typename T>
  T* as() { return reinterpret_cast<T*>(bytes.data()); }
  template <typename T>
  const T* as() const { return reinterpret_cast<const T*>(bytes.data()); }
};

// Returns "" on success, else a message that names the file and what is wrong.
std::string Load(const std::string& path, Array* out);
std::string Save(const std::string& path, const Array& array);

// Copies of the elements as double / int64 (for any supported float / integer descr).
std::vector<double> ToDoubles(const Array& a);
std::vector<int64_t> ToInt64(const Array& a);

}  // namespace npy
}  // namespace posenc

#endif  // POSENC_TOOLS_POSENC_NPY_H_
