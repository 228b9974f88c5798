// A call of a family composed of other families' kernels (KernelFamily::composition, e.g.
// attention_block): its stages, each run with the config the context chooses for its own problem
// (looked up at every launch, so a later use_config on a stage reaches it), and the intermediates
// they pass between them, allocated once per problem and stream and launched in order on that
// stream.
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

  // Allocates and fills the intermediates, then waits for the device, so that no launch on
  // another stream reads a constant before it has landed.
  void allocate(Executor& executor, const Allocate& allocate);
  // `tensors` in the composed family's tensors() order. One launch at a time: calls on a backend
  // without streams (the CPU) share the intermediates.
  void launch(std::span<void* const> tensors, void* stream, const Choose& choose) const;
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
  std::vector<void*> intermediates_;
  mutable std::mutex launching_;
};

}  // namespace ktune::library
