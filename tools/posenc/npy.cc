#include "tools/posenc/npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
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

// Where the bytes of a .npy come from: a file or memory, with its real size known up front.
class Source {
 public:
  virtual ~Source() = default;
  virtual uint64_t size() const = 0;
  // The next n bytes into dst; false if they are not there.
  virtual bool Read(void* dst, size_t n) = 0;
};

class MemorySource : public Source {
 public:
  MemorySource(const void* data, size_t size)
      : data_(static_cast<const unsigned char*>(data)), size_(size) {}
  uint64_t size() const override { return size_; }
  bool Read(void* dst, size_t n) override {
    if (n > size_ - pos_) return false;
    if (n != 0) std::memcpy(dst, data_ + pos_, n);
    pos_ += n;
    return true;
  }

 private:
  const unsigned char* data_;
  size_t size_, pos_ = 0;
};

class FileSource : public Source {
 public:
  explicit FileSource(int fd, uint64_t size) : fd_(fd), size_(size) {}
  ~FileSource() override { ::close(fd_); }
  uint64_t size() const override { return size_; }
  bool Read(void* dst, size_t n) override {
    unsigned char* p = static_cast<unsigned char*>(dst);
    while (n > 0) {
      const ssize_t got = ::read(fd_, p, n);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return false;
      p += got;
      n -= static_cast<size_t>(got);
    }
    return true;
  }

 private:
  int fd_;
  uint64_t size_;
};

// A strict reader of the header dict numpy writes:
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// Keys in any order, each exactly once; strings in single or double quotes without escapes;
// shape a tuple of decimal integers (no sign, no leading zeros, a trailing comma required for
// one element, as in Python); only whitespace around the tokens and after the closing brace.
class HeaderParser {
 public:
  explicit HeaderParser(const std::string& text) : s_(text) {}

  // "" or what is wrong.
  std::string Parse(std::string* descr, bool* fortran, std::vector<int64_t>* shape) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    SkipSpace();
    if (!Eat('{')) return "header does not start with '{'";
    SkipSpace();
    while (!Eat('}')) {
      std::string key;
      if (!String(&key)) return "header: expected a quoted key" + Where();
      SkipSpace();
      if (!Eat(':')) return "header: expected ':' after '" + key + "'" + Where();
      SkipSpace();
      if (key == "descr") {
        if (have_descr) return "header: 'descr' appears twice";
        if (!String(descr)) return "header: 'descr' must be a quoted string" + Where();
        have_descr = true;
      } else if (key == "fortran_order") {
        if (have_fortran) return "header: 'fortran_order' appears twice";
        if (Word("True")) {
          *fortran = true;
        } else if (Word("False")) {
          *fortran = false;
        } else {
          return "header: 'fortran_order' must be True or False" + Where();
        }
        have_fortran = true;
      } else if (key == "shape") {
        if (have_shape) return "header: 'shape' appears twice";
        const std::string err = Tuple(shape);
        if (!err.empty()) return err;
        have_shape = true;
      } else {
        return "header: unexpected key '" + key + "' (only descr, fortran_order, shape)";
      }
      SkipSpace();
      if (Eat(',')) {
        SkipSpace();
      } else if (Peek() != '}') {
        return "header: expected ',' or '}'" + Where();
      }
    }
    SkipSpace();
    if (pos_ != s_.size()) return "header: unexpected text after '}'" + Where();
    if (!have_descr) return "header has no 'descr'";
    if (!have_fortran) return "header has no 'fortran_order'";
    if (!have_shape) return "header has no 'shape'";
    return "";
  }

 private:
  char Peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool Eat(char c) {
    if (Peek() != c || pos_ >= s_.size()) return false;
    ++pos_;
    return true;
  }
  void SkipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' ||
                                s_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Word(const char* w) {
    const size_t n = std::strlen(w);
    if (s_.compare(pos_, n, w) != 0) return false;
    const char next = pos_ + n < s_.size() ? s_[pos_ + n] : '\0';
    if ((next >= 'A' && next <= 'Z') || (next >= 'a' && next <= 'z') || next == '_' ||
        (next >= '0' && next <= '9')) {
      return false;
    }
    pos_ += n;
    return true;
  }
  bool String(std::string* out) {
    const char quote = Peek();
    if (quote != '\'' && quote != '"') return false;
    const size_t start = ++pos_;
    while (pos_ < s_.size() && s_[pos_] != quote) {
      const unsigned char c = static_cast<unsigned char>(s_[pos_]);
      if (c < 0x20 || c >= 0x7f || c == '\\') return false;
      ++pos_;
    }
    if (pos_ >= s_.size()) return false;
    *out = s_.substr(start, pos_ - start);
    ++pos_;
    return true;
  }
  // A non-negative decimal integer <= INT64_MAX.
  bool Integer(int64_t* out) {
    const size_t start = pos_;
    int64_t v = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      if (__builtin_mul_overflow(v, int64_t{10}, &v) ||
          __builtin_add_overflow(v, int64_t{s_[pos_] - '0'}, &v)) {
        return false;
      }
      ++pos_;
    }
    if (pos_ == start) return false;
    if (pos_ - start > 1 && s_[start] == '0') return false;  // Python rejects leading zeros
    *out = v;
    return true;
  }
  std::string Tuple(std::vector<int64_t>* shape) {
    shape->clear();
    if (!Eat('(')) return "header: 'shape' must be a tuple" + Where();
    SkipSpace();
    bool trailing_comma = false;
    while (!Eat(')')) {
      int64_t d;
      if (!Integer(&d)) return "header: 'shape' holds a non-integer or too large extent" + Where();
      if (shape->size() == kMaxRank) {
        return "header: 'shape' has more than " + std::to_string(kMaxRank) + " dimensions";
      }
      shape->push_back(d);
      SkipSpace();
      trailing_comma = Eat(',');
      SkipSpace();
      if (!trailing_comma && Peek() != ')') return "header: expected ',' or ')' in 'shape'" + Where();
    }
    if (shape->size() == 1 && !trailing_comma) {
      return "header: a 1-D 'shape' needs a trailing comma, as in (n,)";
    }
    return "";
  }
  std::string Where() const { return " at header offset " + std::to_string(pos_); }

  const std::string& s_;
  size_t pos_ = 0;
};

std::string Describe(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string Read(const std::string& name, Source& src, Array* out) {
  const uint64_t file_size = src.size();
  unsigned char magic[8];
  if (!src.Read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
    return name + ": not a .npy file (bad magic)";
  }
  const int major = magic[6];
  uint64_t header_len = 0;
  uint64_t prefix = 0;
  if (major == 1) {
    unsigned char l[2];
    if (!src.Read(l, 2)) return name + ": truncated header";
    header_len = l[0] | (uint64_t{l[1]} << 8);
    prefix = 10;
  } else if (major == 2 || major == 3) {
    unsigned char l[4];
    if (!src.Read(l, 4)) return name + ": truncated header";
    header_len = l[0] | (uint64_t{l[1]} << 8) | (uint64_t{l[2]} << 16) | (uint64_t{l[3]} << 24);
    prefix = 12;
  } else {
    return name + ": unsupported .npy version " + std::to_string(major);
  }
  // Checked against the real size before the header is allocated.
  if (header_len > file_size - prefix) {
    return name + ": header length " + std::to_string(header_len) + " exceeds the file (" +
           std::to_string(file_size) + " bytes)";
  }
  if (header_len > kMaxHeaderBytes) {
    return name + ": header length " + std::to_string(header_len) + " exceeds " +
           std::to_string(kMaxHeaderBytes) + " bytes";
  }
  std::string header(static_cast<size_t>(header_len), '\0');
  if (!src.Read(&header[0], header.size())) return name + ": truncated header";

  Array a;
  bool fortran = false;
  const std::string err = HeaderParser(header).Parse(&a.descr, &fortran, &a.shape);
  if (!err.empty()) return name + ": " + err;
  const size_t item = ItemSize(a.descr);
  if (item == 0) {
    return name + ": dtype '" + a.descr + "' not supported (use <f4, <f8, <i4, <i8, <f2, <u2)";
  }
  if (fortran) return name + ": Fortran-order arrays are not supported";
  int64_t count = 1;
  for (int64_t d : a.shape) {
    if (__builtin_mul_overflow(count, d, &count)) {
      return name + ": shape " + Describe(a.shape) + " has more than 2^63 elements";
    }
  }
  uint64_t bytes;
  if (__builtin_mul_overflow(static_cast<uint64_t>(count), uint64_t{item}, &bytes)) {
    return name + ": shape " + Describe(a.shape) + " of '" + a.descr + "' exceeds 2^64 bytes";
  }
  const uint64_t data_bytes = file_size - prefix - header_len;
  if (bytes != data_bytes) {
    return name + ": shape " + Describe(a.shape) + " of '" + a.descr + "' needs " +
           std::to_string(bytes) + " data bytes, the file holds " + std::to_string(data_bytes);
  }
  a.bytes.resize(static_cast<size_t>(bytes));
  if (!src.Read(a.bytes.data(), a.bytes.size())) {
    return name + ": read failed after " + std::to_string(prefix + header_len) + " bytes";
  }
  *out = std::move(a);
  return "";
}

}  // namespace

int64_t Array::size() const {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return -1;
  }
  return n;
}

size_t Array::item_size() const { return ItemSize(descr); }

std::string Load(const std::string& path, Array* out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return path + ": cannot open (" + std::strerror(errno) + ")";
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return path + ": not a regular file";
  }
  FileSource src(fd, static_cast<uint64_t>(st.st_size));
  return Read(path, src, out);
}

std::string Parse(const std::string& name, const void* data, size_t size, Array* out) {
  MemorySource src(data, size);
  return Read(name, src, out);
}

std::string Serialize(const Array& a, std::string* image) {
  const size_t item = ItemSize(a.descr);
  const int64_t n = a.size();
  if (item == 0) return "dtype '" + a.descr + "' not supported";
  if (n < 0 || static_cast<uint64_t>(n) * item != a.bytes.size()) {
    return "shape " + Describe(a.shape) + " does not match " + std::to_string(a.bytes.size()) +
           " bytes of '" + a.descr + "'";
  }
  std::ostringstream dict;
  dict << "{'descr': '" << a.descr << "', 'fortran_order': False, 'shape': " << Describe(a.shape)
       << ", }";
  // Padded so that the data start at a multiple of 64 bytes, ending in '\n' (as numpy does).
  auto padded = [&dict](size_t prefix) {
    std::string h = dict.str();
    h.append((64 - (prefix + h.size() + 1) % 64) % 64, ' ');
    h.push_back('\n');
    return h;
  };
  std::string header = padded(10);
  const bool v1 = header.size() <= 65535;
  if (!v1) header = padded(12);
  std::string out = std::string("\x93NUMPY", 6);
  out.push_back(static_cast<char>(v1 ? 1 : 2));
  out.push_back('\0');
  const size_t len = header.size();
  out.push_back(static_cast<char>(len & 0xff));
  out.push_back(static_cast<char>((len >> 8) & 0xff));
  if (!v1) {
    out.push_back(static_cast<char>((len >> 16) & 0xff));
    out.push_back(static_cast<char>((len >> 24) & 0xff));
  }
  out += header;
  out.append(reinterpret_cast<const char*>(a.bytes.data()), a.bytes.size());
  *image = std::move(out);
  return "";
}

std::string Save(const std::string& path, const Array& a) {
  std::string image;
  const std::string err = Serialize(a, &image);
  if (!err.empty()) return path + ": " + err;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return path + ": cannot open for writing";
  f.write(image.data(), static_cast<std::streamsize>(image.size()));
  f.close();
  if (!f) {
    std::remove(path.c_str());  // no partial output file
    return path + ": write failed";
  }
  return "";
}

std::vector<double> ToDoubles(const Array& a) {
  const size_t item = a.item_size();
  std::vector<double> v(item == 0 ? 0 : a.bytes.size() / item);
  for (size_t i = 0; i < v.size(); ++i) {
    if (a.descr == "<f4") v[i] = a.as<float>()[i];
    else if (a.descr == "<f8") v[i] = a.as<double>()[i];
    else if (a.descr == "<i4") v[i] = a.as<int32_t>()[i];
    else if (a.descr == "<i8") v[i] = static_cast<double>(a.as<int64_t>()[i]);
  }
  return v;
}

std::vector<int64_t> ToInt64(const Array& a) {
  const size_t item = a.item_size();
  std::vector<int64_t> v(item == 0 ? 0 : a.bytes.size() / item);
  for (size_t i = 0; i < v.size(); ++i) {
    if (a.descr == "<i4") v[i] = a.as<int32_t>()[i];
    else if (a.descr == "<i8") v[i] = a.as<int64_t>()[i];
  }
  return v;
}

}  // namespace npy
}  // namespace posenc
