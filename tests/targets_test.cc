// Target reporting and capping through the public API.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "posenc/targets.h"
#include "posenc/version.h"

namespace posenc {
namespace {

TEST(TargetsTest, ReportsCompiledSupportedAndChosen) {
  const std::vector<std::string> compiled = CompiledTargets();
  const std::vector<std::string> supported = SupportedTargets();
  ASSERT_FALSE(compiled.empty());
  ASSERT_FALSE(supported.empty());
  EXPECT_EQ(ChosenTarget(), supported.front());
}

// The library's version string is the one posenc/version.h states, and that is MAJOR.MINOR.PATCH
// of its own macros (all generated from project(VERSION)).
TEST(TargetsTest, VersionMatchesTheHeaderMacros) {
  const std::string from_macros = std::to_string(POSENC_VERSION_MAJOR) + "." +
                                  std::to_string(POSENC_VERSION_MINOR) + "." +
                                  std::to_string(POSENC_VERSION_PATCH);
  EXPECT_EQ(from_macros, POSENC_VERSION_STRING);
  EXPECT_STREQ(Version(), POSENC_VERSION_STRING);
}

TEST(TargetsTest, CapSelectsEachSupportedTargetAndResets) {
  const std::vector<std::string> supported = SupportedTargets();
  for (const std::string& name : supported) {
    ASSERT_TRUE(SetMaxTarget(name).ok()) << name;
    EXPECT_EQ(ChosenTarget(), name);
    // Querying targets must not undo the cap (Highway 1.0.3 re-chooses inside SupportedTargets).
    EXPECT_EQ(SupportedTargets().front(), name);
    EXPECT_EQ(ChosenTarget(), name);
  }
  ASSERT_TRUE(SetMaxTarget("").ok());
  EXPECT_EQ(ChosenTarget(), supported.front());
  ASSERT_TRUE(SetMaxTarget("scalar").ok());  // case-insensitive
  EXPECT_EQ(ChosenTarget(), supported.back());
  ASSERT_TRUE(SetMaxTarget("").ok());
}

TEST(TargetsTest, UnknownNameIsAnErrorAndChangesNothing) {
  const std::string before = ChosenTarget();
  const Status st = SetMaxTarget("NEON9");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("\"NEON9\": unknown target"), std::string::npos) << st.message();
  EXPECT_EQ(ChosenTarget(), before);
}

}  // namespace
}  // namespace posenc
