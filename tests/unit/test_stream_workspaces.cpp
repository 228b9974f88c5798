// The library's per-stream workspaces (library/src/stream_workspaces.hpp): launches of one
// prepared call on two streams get workspaces of their own (tickets and counters of kernels such
// as moe_routing and split-K GEMMs would mix otherwise), launches on one stream share theirs, each
// is made on its stream's first launch only, captured launches allocate nothing, and all are
// freed with the owner, also when several threads launch at once.
#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

#include "library/src/stream_workspaces.hpp"

namespace ktune::library {
namespace {

struct FakeMemory {
  std::vector<std::size_t> allocated;  // sizes, in order
  std::multiset<int> live;
  int next = 1;
};

TEST(StreamWorkspaces, OnePerStreamMadeOnceAndFreedWithTheOwner) {
  FakeMemory memory;
  int stream_a = 0, stream_b = 0;
  {
    StreamWorkspaces<int> workspaces(
        4096,
        [&](std::size_t bytes) {
          memory.allocated.push_back(bytes);
          memory.live.insert(memory.next);
          return memory.next++;
        },
        [&](int workspace) { memory.live.erase(memory.live.find(workspace)); });
    EXPECT_EQ(workspaces.streams(), 0u);  // only the captured launches' one before a launch
    EXPECT_EQ(memory.allocated, (std::vector<std::size_t>{4096}));
    const int on_a = workspaces.of(&stream_a, false);
    const int on_b = workspaces.of(&stream_b, false);
    const int on_default = workspaces.of(nullptr, false);
    EXPECT_NE(on_a, on_b);
    EXPECT_NE(on_a, on_default);
    EXPECT_EQ(workspaces.of(&stream_a, false), on_a);  // the same stream: the same workspace
    EXPECT_EQ(workspaces.of(nullptr, false), on_default);
    // Captured launches allocate nothing: they share the one made with the call.
    const int captured = workspaces.of(&stream_a, true);
    EXPECT_EQ(workspaces.of(&stream_b, true), captured);
    EXPECT_NE(captured, on_a);
    EXPECT_EQ(memory.allocated, (std::vector<std::size_t>{4096, 4096, 4096, 4096}));
    EXPECT_EQ(memory.live.size(), 4u);
  }
  EXPECT_TRUE(memory.live.empty());
}

TEST(StreamWorkspaces, ThreadsLaunchingAtOnceGetOneWorkspaceEachStream) {
  std::mutex guard;
  std::vector<int> made;
  StreamWorkspaces<int> workspaces(
      64,
      [&](std::size_t) {
        std::lock_guard lock(guard);
        made.push_back(static_cast<int>(made.size()) + 1);
        return made.back();
      },
      [](int) {});
  std::vector<int> streams(4);
  std::vector<std::vector<int>> seen(8);
  std::vector<std::jthread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) seen[t].push_back(workspaces.of(&streams[(t + i) % 4], false));
    });
  threads.clear();
  EXPECT_EQ(made.size(), 5u);  // the captured launches' and one per stream
  for (int t = 0; t < 8; ++t)
    for (int i = 0; i < 200; ++i) EXPECT_EQ(seen[t][i], workspaces.of(&streams[(t + i) % 4], false));
}

}  // namespace
}  // namespace ktune::library
