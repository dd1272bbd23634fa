#include "tools/posenc/npy.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace posenc {
namespace npy {
namespace {

size_t ItemSize(const std::string& descr) {
  if (descr == "<f4" || descr == "<i4") return 4;
  if (descr == "<f8" || descr == "<i8") return 8;
  if (descr == "<f2" || descr == "<u2") return 2;
  return 0;
}

// Value of `key` in the header dict, up to the next top-level ',' or '}' (tuples kept whole).
std::string DictValue(const std::string& header, const std::string& key) {
  const std::string quoted = "'" + key + "'";
  size_t pos = header.find(quoted);
  if (pos == std::string::npos) return "";
  pos = header.find(':', pos + quoted.size());
  if (pos == std::string::npos) return "";
  ++pos;
  int depth = 0;
  size_t end = pos;
  for (; end < header.size(); ++end) {
    const char c = header[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  std::string v = header.substr(pos, end - pos);
  const size_t a = v.find_first_not_of(" ");
  const size_t b = v.find_last_not_of(" ");
  return a == std::string::npos ? "" : v.substr(a, b - a + 1);
}

}  // namespace

int64_t Array::size() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

size_t Array::item_size() const { return ItemSize(descr); }

std::string Load(const std::string& path, Array* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return path + ": cannot open";
  char magic[8];
  if (!f.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
    return path + ": not a .npy file (bad magic)";
  }
  const int major = static_cast<unsigned char>(magic[6]);
  uint32_t header_len = 0;
  if (major == 1) {
    unsigned char l[2];
    if (!f.read(reinterpret_cast<char*>(l), 2)) return path + ": truncated header";
    header_len = l[0] | (l[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char l[4];
    if (!f.read(reinterpret_cast<char*>(l), 4)) return path + ": truncated header";
    header_len = l[0] | (l[1] << 8) | (l[2] << 16) | (static_cast<uint32_t>(l[3]) << 24);
  } else {
    return path + ": unsupported .npy version " + std::to_string(major);
  }
  std::string header(header_len, '\0');
  if (!f.read(&header[0], header_len)) return path + ": truncated header";
  Array a;
  std::string descr = DictValue(header, "descr");
  if (descr.size() < 2) return path + ": header has no descr";
  a.descr = descr.substr(1, descr.size() - 2);
  if (a.descr == "|u1" || a.descr.empty() || ItemSize(a.descr) == 0) {
    return path + ": dtype '" + a.descr + "' not supported (use <f4, <f8, <i4, <i8, <f2, <u2)";
  }
  if (DictValue(header, "fortran_order") != "False") {
    return path + ": Fortran-order arrays are not supported";
  }
  const std::string shape = DictValue(header, "shape");
  if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')') {
    return path + ": header has no shape";
  }
  std::stringstream ss(shape.substr(1, shape.size() - 2));
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.find_first_not_of(" ") == std::string::npos) continue;
    try {
      const long long d = std::stoll(item);
      if (d < 0) return path + ": negative dimension in shape " + shape;
      a.shape.push_back(d);
    } catch (...) {
      return path + ": bad shape " + shape;
    }
  }
  const int64_t n = a.size();
  a.bytes.resize(static_cast<size_t>(n) * a.item_size());
  if (!a.bytes.empty() && !f.read(reinterpret_cast<char*>(a.bytes.data()),
                                  static_cast<std::streamsize>(a.bytes.size()))) {
    return path + ": truncated data (expected " + std::to_string(a.bytes.size()) + " bytes)";
  }
  *out = std::move(a);
  return "";
}

std::string Save(const std::string& path, const Array& a) {
  std::ostringstream dict;
  dict << "{'descr': '" << a.descr << "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < a.shape.size(); ++i) dict << a.shape[i] << (a.shape.size() == 1 ? "," : (i + 1 < a.shape.size() ? ", " : ""));
  dict << "), }";
  std::string header = dict.str();
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return path + ": cannot open for writing";
  const unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                                 static_cast<unsigned char>(header.size() & 0xff),
                                 static_cast<unsigned char>(header.size() >> 8)};
  f.write(reinterpret_cast<const char*>(pre), 10);
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  f.write(reinterpret_cast<const char*>(a.bytes.data()), static_cast<std::streamsize>(a.bytes.size()));
  if (!f) return path + ": write failed";
  return "";
}

std::vector<double> ToDoubles(const Array& a) {
  std::vector<double> v(static_cast<size_t>(a.size()));
  for (size_t i = 0; i < v.size(); ++i) {
    if (a.descr == "<f4") v[i] = a.as<float>()[i];
    else if (a.descr == "<f8") v[i] = a.as<double>()[i];
    else if (a.descr == "<i4") v[i] = a.as<int32_t>()[i];
    else if (a.descr == "<i8") v[i] = static_cast<double>(a.as<int64_t>()[i]);
  }
  return v;
}

std::vector<int64_t> ToInt64(const Array& a) {
  std::vector<int64_t> v(static_cast<size_t>(a.size()));
  for (size_t i = 0; i < v.size(); ++i) {
    if (a.descr == "<i4") v[i] = a.as<int32_t>()[i];
    else if (a.descr == "<i8") v[i] = a.as<int64_t>()[i];
  }
  return v;
}

}  // namespace npy
}  // namespace posenc
