// The JSON test data files (tests/data, ../shared): one reader for every test that loads one.
#ifndef POSENC_TESTS_JSON_UTIL_H_
#define POSENC_TESTS_JSON_UTIL_H_

#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace posenc {
namespace test {

// The document at `path`; an unreadable file fails the test (and parses as an error).
inline nlohmann::json ReadJsonFile(const std::string& path) {
  std::ifstream f(path);
  EXPECT_TRUE(f.good()) << "cannot open " << path;
  return nlohmann::json::parse(f);
}

}  // namespace test
}  // namespace posenc

#endif  // POSENC_TESTS_JSON_UTIL_H_
