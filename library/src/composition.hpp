// A call of a family composed of other families' kernels (KernelFamily::composition, e.g.
// attention_block): its stages, each run with the config the context chooses for its own problem
// (looked up at every launch, so a later use_config on a stage reaches it), launched in order on
// the call's stream, and the intermediates they pass between them: the few bytes of fixed
// contents per problem, the rest in the stream's scratch (ComposedScratch).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "kernels/family.hpp"
#include "ktune/kernels.hpp"
#include "library/src/config_choice.hpp"
#include "library/src/executor.hpp"

namespace ktune::library {

// The memory a composed family's calls on one stream pass between their stages: one buffer per
// intermediate with no fixed contents, as large as the largest call so far needed (grown, never
// one set per problem: calls at many sequence lengths keep one set), used by one call at a time.
struct ComposedScratch {
  std::vector<void*> buffers;
  std::vector<std::size_t> bytes;
  std::mutex in_use;  // held from before a growth to the end of the launch that needed it
};

class ComposedCall {
 public:
  // How a stage's config is chosen (the context's cache of choices).
  using Choose = std::function<std::shared_ptr<ChosenConfig>(const KernelFamily&, const Problem&)>;
  // How an intermediate's memory is allocated (freed with the context).
  using Allocate = std::function<void*(std::size_t bytes)>;

  // The stages of `family`'s call at `problem`; Error(unsupported) naming the stage when one has
  // no implementation on `executor`'s backend.
  ComposedCall(const Executor& executor, const KernelFamily& family, const Problem& problem,
               kernels::Precision precision);

  // Allocates and fills this problem's intermediates of fixed contents (a GEMM's alpha and beta,
  // attention's scale: a few bytes), then waits for the device, so that no launch on another
  // stream reads one before it has landed.
  void allocate_constants(Executor& executor, const Allocate& allocate);
  // The bytes of each of the other intermediates at this problem, in the scratch's order.
  const std::vector<std::size_t>& scratch_bytes() const { return scratch_bytes_; }
  // `tensors` in the composed family's tensors() order; `scratch` at least scratch_bytes() each,
  // held by the caller (ComposedScratch::in_use) for the launch.
  void launch(std::span<void* const> tensors, void* stream, const Choose& choose,
              const std::vector<void*>& scratch) const;
  // "gemm (tuned): <config>; split_heads (default): <config>; ..."
  kernels::ConfigChoice choice(const Choose& choose) const;

 private:
  struct Stage {
    const KernelFamily* family;
    Problem problem;
    // Per tensor of the stage's family, in its order: the composed family's tensor index, or
    // -1 - i for intermediate i.
    std::vector<int> sources;
  };
  Composition composition_;
  Problem problem_;
  std::vector<Stage> stages_;
  std::vector<std::size_t> bytes_;         // per intermediate
  std::vector<void*> constants_;           // per intermediate: its buffer when it has fixed contents
  std::vector<int> scratch_slot_;          // per intermediate: its scratch buffer, else -1
  std::vector<std::size_t> scratch_bytes_;
};

}  // namespace ktune::library
