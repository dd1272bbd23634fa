// posenc::Status (posenc/status.h): a success is a code and a null message pointer; a failure
// owns its message. Copies, moves, assignments (self included) and the out-of-memory path keep
// the code and the message a caller reads, and a moved-from Status is a success.
#include "posenc/status.h"

#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <utility>

#include "posenc/rope.h"

namespace posenc {
namespace {

static_assert(std::is_nothrow_move_constructible_v<Status>);
static_assert(std::is_nothrow_move_assignable_v<Status>);
static_assert(std::is_nothrow_constructible_v<Status, StatusCode, std::string>);

const char kLong[] = "rotary_dim = 7: must be even, > 0 (or 0 for head_dim) and <= head_dim = 128";

TEST(Status, DefaultAndOkAreSuccessesWithAnEmptyMessage) {
  for (const Status& st : {Status(), Status::Ok(), Status(StatusCode::kOk, "")}) {
    EXPECT_TRUE(st.ok());
    EXPECT_EQ(st.code(), StatusCode::kOk);
    EXPECT_EQ(st.message(), "");
  }
}

TEST(Status, FailureKeepsCodeAndMessage) {
  const Status st(StatusCode::kOutOfRange, kLong);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(st.message(), kLong);
  // A failure without a message is still a failure.
  const Status bare(StatusCode::kInternal, "");
  EXPECT_FALSE(bare.ok());
  EXPECT_EQ(bare.code(), StatusCode::kInternal);
  EXPECT_EQ(bare.message(), "");
  // A success that carries a note stays a success (the code decides).
  const Status note(StatusCode::kOk, "note");
  EXPECT_TRUE(note.ok());
  EXPECT_EQ(note.message(), "note");
}

TEST(Status, CopiesAreIndependent) {
  Status a(StatusCode::kInvalidArgument, kLong);
  Status b(a);
  EXPECT_EQ(b.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(b.message(), kLong);
  EXPECT_NE(&a.message(), &b.message());  // its own message, not a shared one
  a = Status::Ok();
  EXPECT_TRUE(a.ok());
  EXPECT_EQ(b.message(), kLong);

  Status c(StatusCode::kUnsupported, "short");
  c = b;  // failure over failure
  EXPECT_EQ(c.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.message(), kLong);
  const Status& same = c;
  c = same;  // self-assignment
  EXPECT_EQ(c.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.message(), kLong);
  c = Status();  // success over failure
  EXPECT_TRUE(c.ok());
  EXPECT_EQ(c.message(), "");
}

TEST(Status, MovesLeaveASuccessBehind) {
  Status a(StatusCode::kOutOfRange, kLong);
  Status b(std::move(a));
  EXPECT_EQ(b.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(b.message(), kLong);
  EXPECT_TRUE(a.ok());  // NOLINT(bugprone-use-after-move): the documented moved-from state
  EXPECT_EQ(a.message(), "");

  Status c(StatusCode::kInternal, "other");
  c = std::move(b);
  EXPECT_EQ(c.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(c.message(), kLong);
  EXPECT_TRUE(b.ok());  // NOLINT(bugprone-use-after-move)
  Status& self = c;
  c = std::move(self);  // self-move keeps the value
  EXPECT_EQ(c.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(c.message(), kLong);
}

TEST(Status, ApiErrorsStillCarryTheirMessage) {
  // A library failure crosses the API boundary (and, in a shared build, the library's heap).
  RopeTensors t;
  const Status st = ApplyRope(t, RopeParams{});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "q.data and k.data are both null: nothing to rotate");
  Status copy = st;
  EXPECT_EQ(copy.message(), st.message());
}

}  // namespace
}  // namespace posenc
