// The .npy reader against well-formed and hostile images (in memory: npy::Parse), and the writer
// (npy::Serialize) round trip. The CLI-level reproducers are in cli_hostile_test.cc.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tools/posenc/npy.h"

namespace posenc {
namespace {

std::string Image(const std::string& header, size_t data_bytes, int major = 1) {
  std::string image("\x93NUMPY", 6);
  image.push_back(static_cast<char>(major));
  image.push_back('\0');
  const size_t len = header.size();
  image.push_back(static_cast<char>(len & 0xff));
  image.push_back(static_cast<char>((len >> 8) & 0xff));
  if (major != 1) {
    image.push_back(static_cast<char>((len >> 16) & 0xff));
    image.push_back(static_cast<char>((len >> 24) & 0xff));
  }
  return image + header + std::string(data_bytes, '\x01');
}

std::string ParseError(const std::string& image) {
  npy::Array a;
  a.descr = "untouched";
  const std::string err = npy::Parse("x.npy", image.data(), image.size(), &a);
  if (!err.empty()) {
    EXPECT_EQ(a.descr, "untouched") << "a failed parse wrote its output";
  }
  return err;
}

TEST(NpyTest, RoundTripsEveryDtypeAndRank) {
  for (const char* descr : {"<f4", "<f8", "<i4", "<i8", "<f2", "<u2"}) {
    for (const std::vector<int64_t>& shape :
         {std::vector<int64_t>{}, {5}, {2, 3}, {1, 2, 3, 4}, {0, 7}}) {
      npy::Array a;
      a.descr = descr;
      a.shape = shape;
      a.bytes.resize(static_cast<size_t>(a.size()) * a.item_size());
      for (size_t i = 0; i < a.bytes.size(); ++i) a.bytes[i] = static_cast<unsigned char>(i * 37);
      std::string image;
      ASSERT_EQ(npy::Serialize(a, &image), "");
      EXPECT_EQ(image.size() % 64, a.bytes.size() % 64) << "data start at a multiple of 64";
      npy::Array b;
      ASSERT_EQ(npy::Parse("x", image.data(), image.size(), &b), "") << descr;
      EXPECT_EQ(b.descr, a.descr);
      EXPECT_EQ(b.shape, a.shape);
      EXPECT_EQ(b.bytes, a.bytes);
    }
  }
}

TEST(NpyTest, AcceptsWhatNumpyWrites) {
  // Keys in any order, double quotes, no trailing comma, format 2.0 and 3.0 lengths.
  const std::vector<std::string> headers = {
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }          \n",
      "{\"shape\": (2, 3), \"fortran_order\": False, \"descr\": \"<f4\"}\n",
      "{'descr':'<f4','fortran_order':False,'shape':(2,3,)}",
  };
  for (const std::string& h : headers) {
    for (int major : {1, 2, 3}) {
      npy::Array a;
      EXPECT_EQ(npy::Parse("x", Image(h, 24, major).data(), Image(h, 24, major).size(), &a), "") << h;
      EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
    }
  }
}

TEST(NpyTest, RejectsHostileImages) {
  const std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n";
  struct Case {
    std::string image, needle;
  };
  const std::vector<Case> cases = {
      {"\x93NUMPX", "bad magic"},
      {Image(ok, 8).substr(0, 9), "truncated header"},
      {Image(ok, 7), "needs 8 data bytes, the file holds 7"},
      {Image(ok, 9), "needs 8 data bytes, the file holds 9"},
      {Image("{'descr': '<f4', 'fortran_order': False, 'shape': (2), }", 8), "trailing comma"},
      {Image("{'descr': '<f4', 'fortran_order': False, 'shape': (2x,), }", 8), "expected ',' or ')'"},
      {Image("{'descr': '<f4', 'fortran_order': False, 'shape': (+2,), }", 8), "non-integer"},
      {Image("{'descr': '<f4', 'fortran_order': False, 'shape': (9223372036854775808,), }", 8),
       "non-integer or too large"},
      {Image("{'descr': '<f4', 'fortran_order': False, 'shape': (3037000500, 3037000500), }", 8),
       "more than 2^63 elements"},
      {Image("{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,), }", 8),
       "exceeds 2^64 bytes"},
      {Image("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", 8), "Fortran"},
      {Image("{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }", 2), "not supported"},
      {Image("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", 8), "unexpected key 'x'"},
      {Image("{'descr': '<f4', 'fortran_order': Falsey, 'shape': (2,), }", 8), "True or False"},
      {Image("{'descr': '<f\\4', 'fortran_order': False, 'shape': (2,), }", 8), "quoted string"},
      {Image("{'descr': '<f4' 'fortran_order': False, 'shape': (2,), }", 8), "expected ',' or '}'"},
      {Image("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } }", 8), "after '}'"},
      {Image("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), ", 8), "quoted key"},
      {Image("'descr': '<f4'", 8), "does not start with '{'"},
  };
  for (const Case& c : cases) {
    const std::string err = ParseError(c.image);
    EXPECT_NE(err.find(c.needle), std::string::npos) << "\"" << err << "\" lacks \"" << c.needle << "\"";
    EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  }
  // More than 32 dimensions.
  std::string shape = "(";
  for (int i = 0; i < 33; ++i) shape += "1, ";
  shape += ")";
  EXPECT_NE(ParseError(Image("{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }", 4))
                .find("more than 32 dimensions"),
            std::string::npos);
  // A 4 GB header length in a 30-byte image: rejected before anything is allocated.
  std::string lying = Image(ok, 8, 2);
  lying[8] = lying[9] = lying[10] = lying[11] = '\xff';
  EXPECT_NE(ParseError(lying).find("header length 4294967295 exceeds the file"), std::string::npos);
}

}  // namespace
}  // namespace posenc
