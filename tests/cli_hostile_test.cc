// The posenc CLI fed hostile files and arguments (issue 13): crafted .npy headers that lie about
// their size, malformed headers, absurd counts. Every failure must be one line on stderr and
// exit code 2, with no output file written; nothing may read past a buffer or try to allocate
// what a header claims.
#include <sys/wait.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/cli_test_util.h"

namespace {

using Result = posenc::test::CliResult;
using posenc::test::RunCli;

std::string TempPath(const std::string& name) {
  return posenc::test::CliTempPath("posenc_cli_hostile", name);
}

// A .npy file with exactly this header text (format 1.0) and `data` bytes after it; or, for
// format 2.0, a 4-byte header length that may lie (`claimed_len`).
std::string WriteNpy(const std::string& name, const std::string& header, size_t data_bytes,
                     int major = 1, uint32_t claimed_len = 0) {
  const std::string path = TempPath(name);
  std::string image("\x93NUMPY", 6);
  image.push_back(static_cast<char>(major));
  image.push_back('\0');
  const uint32_t len = claimed_len != 0 ? claimed_len : static_cast<uint32_t>(header.size());
  image.push_back(static_cast<char>(len & 0xff));
  image.push_back(static_cast<char>((len >> 8) & 0xff));
  if (major != 1) {
    image.push_back(static_cast<char>((len >> 16) & 0xff));
    image.push_back(static_cast<char>((len >> 24) & 0xff));
  }
  image += header;
  image.append(data_bytes, '\0');
  FILE* f = std::fopen(path.c_str(), "wb");
  EXPECT_NE(f, nullptr);
  if (f != nullptr) {
    std::fwrite(image.data(), 1, image.size(), f);
    std::fclose(f);
  }
  return path;
}

std::string Header(const std::string& descr, const std::string& shape) {
  return "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }\n";
}

// Fails with exit 2, one line, naming `needle`, and writes no `out` file.
void ExpectCleanFailure(const std::string& args, const std::string& needle, const std::string& out) {
  std::remove(out.c_str());
  const Result r = RunCli(args);
  EXPECT_EQ(r.code, 2) << args << "\n" << r.output;
  EXPECT_EQ(posenc::test::CountLines(r.output), 1) << args << "\n" << r.output;
  EXPECT_EQ(r.output.rfind("posenc: error: ", 0), 0u) << r.output;
  EXPECT_NE(r.output.find(needle), std::string::npos) << "lacks \"" << needle << "\": " << r.output;
  EXPECT_FALSE(posenc::test::FileExists(out)) << args;
}

class CliHostileTest : public ::testing::Test {
 protected:
  void SetUp() override { q_ = WriteNpy("q4.npy", Header("<f4", "(1, 2, 1, 4)"), 1 * 2 * 1 * 4 * 4); }
  void TearDown() override {
    for (const std::string& p : files_) std::remove(p.c_str());
    std::remove(q_.c_str());
    std::remove(out_.c_str());
  }
  std::string Keep(const std::string& p) {
    files_.push_back(p);
    return p;
  }
  std::string q_, out_ = TempPath("out.npy");
  std::vector<std::string> files_;
};

TEST_F(CliHostileTest, CacheWhoseShapeProductWrapsIsRejected) {
  // Issue 13 item 1: shape (2^62 + 1, 2) of f32 wraps the element count; 16 data bytes loaded
  // "successfully" and the kernel read 2^62 rows far past them.
  const std::string cos = Keep(WriteNpy("cos_wrap.npy", Header("<f4", "(4611686018427387905, 2)"), 16));
  ExpectCleanFailure("rope --q " + q_ + " --cos " + cos + " --sin " + cos + " --out-q " + out_,
                     "has more than 2^63 elements", out_);
}

TEST_F(CliHostileTest, HeaderLengthBeyondTheFileIsRejectedWithoutAllocating) {
  // Item 4: a 40-byte file claiming a 4 GB header cost 4.7 GB of memory and 14 s.
  const std::string f = Keep(WriteNpy("bighdr.npy", "{'descr': '<f4'", 16, 2, 0xFFFFFFF0u));
  ExpectCleanFailure("rope --q " + f + " --out-q " + out_, "header length 4294967280 exceeds the file",
                     out_);
}

TEST_F(CliHostileTest, ShapesClaimingHugeDataAreRejected) {
  // Item 4: shape claims drove 31 GB and 160 GB allocations (std::bad_alloc, exit 1).
  const std::string q = Keep(WriteNpy("bigq.npy", Header("<f4", "(1, 100000, 40, 2048)"), 64));
  ExpectCleanFailure("rope --q " + q + " --out-q " + out_, "needs 32768000000 data bytes", out_);
  const std::string cos = Keep(WriteNpy("bigcos.npy", Header("<f4", "(20000000000, 2)"), 64));
  ExpectCleanFailure("rope --q " + q_ + " --cos " + cos + " --sin " + cos + " --out-q " + out_,
                     "needs 160000000000 data bytes", out_);
}

TEST_F(CliHostileTest, Huge1DInvFreqAndPositionsEndInExitTwo) {
  // Item 9: these ended in std::length_error, exit 1.
  const std::string inv = Keep(WriteNpy("biginv.npy", Header("<f8", "(2305843009213693952,)"), 16));
  ExpectCleanFailure("rope --q " + q_ + " --inv-freq " + inv + " --out-q " + out_, "--inv-freq", out_);
  const std::string ids = Keep(WriteNpy("bigids.npy", Header("<i8", "(2305843009213693952,)"), 16));
  ExpectCleanFailure("sinusoidal --dim 8 --positions " + ids + " --out " + out_, "--positions", out_);
}

TEST_F(CliHostileTest, MalformedHeadersAreRejected) {
  // Item 13: "(1, 2x, 1, 4)" was read as (1, 2, 1, 4); descr was found by substring anywhere.
  struct Case {
    std::string header;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {Header("<f4", "(1, 2x, 1, 4)"), "expected ',' or ')' in 'shape'"},
      {Header("<f4", "(1, -2, 1, 4)"), "non-integer"},
      {Header("<f4", "(1, 02, 1, 4)"), "non-integer"},
      {"{\"descr\": \"<f4\", 'fortran_order': False, 'shape': (1, 2, 1, 4), 'junk': \"'descr': '<f8'\", }\n",
       "unexpected key 'junk'"},
      {"{'fortran_order': False, 'shape': (1, 2, 1, 4), }\n", "no 'descr'"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 1, 4), }\n",
       "'descr' appears twice"},
      {Header("<f4", "(1, 2, 1, 4)") + "x", "unexpected text after '}'"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (1, 2, 1, 4), }\n", "True or False"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string q = Keep(WriteNpy("bad" + std::to_string(i) + ".npy", cases[i].header, 32));
    ExpectCleanFailure("rope --q " + q + " --out-q " + out_, cases[i].needle, out_);
  }
}

TEST_F(CliHostileTest, SinusoidalCountsBeyondTheLimitAreRejected) {
  // Item 8: --count 2^40 tried an 8 TB allocation; 2^62 overflowed a signed multiply.
  for (const char* count : {"1099511627776", "4611686018427387904"}) {
    ExpectCleanFailure(std::string("sinusoidal --dim 8 --count ") + count + " --out " + out_,
                       "at most 2^31 elements", out_);
  }
  ExpectCleanFailure("sinusoidal --dim 4294967296 --count 1 --out " + out_, "at most 2^31 elements",
                     out_);
}

TEST_F(CliHostileTest, MessagesStayOnOneLine) {
  // A file name with a newline (and a directory instead of a file) still gives one line.
  ExpectCleanFailure("rope --q '/nonexistent/a\nb.npy' --out-q " + out_, "cannot open", out_);
  ExpectCleanFailure("rope --q /tmp --out-q " + out_, "not a regular file", out_);
}

}  // namespace
