// posenc_last_error() is per thread: concurrent failing calls keep their own messages, and a
// table created once is used from several threads at the same time.
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "posenc/posenc.h"

namespace {

TEST(CApiThreadsTest, LastErrorIsPerThreadAndTablesAreShared) {
  posenc_rope_table* table = nullptr;
  ASSERT_EQ(posenc_rope_table_create(64, 10000.0, nullptr, 0, 1.0, 1024, &table), POSENC_OK);
  std::vector<std::string> messages(4);
  std::vector<int> ok(4, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([i, table, &messages, &ok] {
      std::vector<float> q(8 * 2 * 64, 0.5f);
      posenc_tensor t = posenc_tensor_bshd(q.data(), POSENC_F32, 1, 8, 2, 64);
      posenc_rope_params p;
      posenc_rope_params_init(&p);
      p.source = POSENC_SOURCE_TABLE;
      p.table = table;
      p.positions.offset = 100 * i;
      for (int r = 0; r < 200; ++r) ok[i] += posenc_rope_apply(&t, nullptr, nullptr, nullptr, &p) == POSENC_OK;
      p.rotary_dim = 1 + 2 * i;  // odd: a different error per thread
      posenc_rope_apply(&t, nullptr, nullptr, nullptr, &p);
      messages[i] = posenc_last_error();
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(ok[i], 200);
    EXPECT_EQ(messages[i].rfind("rotary_dim = " + std::to_string(1 + 2 * i) + ":", 0), 0u) << messages[i];
  }
  posenc_rope_table_destroy(table);
}

}  // namespace
