// A prepared call's workspace (launch.workspace_bytes: split-K partial sums, tickets, per-row
// counters), one per stream the call is launched on. A kernel leaves its workspace ready for its
// next launch (counters back at zero), which holds for launches that run in order; launches on
// two streams may run at once, and each needs a workspace of its own or their tickets and counters
// mix. Each stream's is allocated and zeroed on its first launch there; the executor that owns
// this frees them all.
//
// A launch being captured into a graph (CUDA graphs, torch.cuda.graph) cannot allocate: captured
// launches take the workspace made with the call, as every launch did before there was one per
// stream, so replays of graphs that hold one call share it.
//
// A stream's workspace lives as long as the executor: a program that makes a new stream for
// every call grows by one workspace per stream.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>

namespace ktune::library {

template <class Pointer>
class StreamWorkspaces {
 public:
  // `allocate` gives `bytes` of zeroed device memory; `release` frees what it gave.
  StreamWorkspaces(std::size_t bytes, std::function<Pointer(std::size_t)> allocate, std::function<void(Pointer)> release)
      : bytes_(bytes), allocate_(std::move(allocate)), release_(std::move(release)), captured_(allocate_(bytes_)) {}
  StreamWorkspaces(const StreamWorkspaces&) = delete;
  StreamWorkspaces& operator=(const StreamWorkspaces&) = delete;
  ~StreamWorkspaces() {
    for (const auto& [stream, workspace] : workspaces_) release_(workspace);
    release_(captured_);
  }

  // The workspace of launches on `stream` (null: the default stream), or of captured launches.
  Pointer of(void* stream, bool capturing) {
    if (capturing) return captured_;
    std::lock_guard lock(mutex_);
    auto found = workspaces_.find(stream);
    if (found == workspaces_.end()) found = workspaces_.emplace(stream, allocate_(bytes_)).first;
    return found->second;
  }

  std::size_t streams() const {
    std::lock_guard lock(mutex_);
    return workspaces_.size();
  }

 private:
  std::size_t bytes_;
  std::function<Pointer(std::size_t)> allocate_;
  std::function<void(Pointer)> release_;
  Pointer captured_;
  mutable std::mutex mutex_;
  std::map<void*, Pointer> workspaces_;
};

}  // namespace ktune::library
