// A call of a family composed of other families' kernels (KernelFamily::composition, e.g.
// attention_block): its stages, each with the config chosen for its own problem, and the
// intermediates they pass between them, made once per problem and stream and then launched in
// order on that stream.
#pragma once

#include <functional>
#include <map>
#include <memory>
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

  ComposedCall(Executor& executor, const KernelFamily& family, const Problem& problem, kernels::Precision precision,
               const Choose& choose, const Allocate& allocate);

  // `tensors` in the composed family's tensors() order.
  void launch(std::span<void* const> tensors, void* stream) const;
  // "gemm: <config>; split_heads: <config>; ..." and where each came from.
  kernels::ConfigChoice choice() const;

 private:
  struct Stage {
    const KernelFamily* family;
    Problem problem;
    std::shared_ptr<ChosenConfig> chosen;
    // Per tensor of the stage's family, in its order: the composed family's tensor index, or
    // -1 - i for intermediate i.
    std::vector<int> sources;
  };
  std::vector<void*> intermediates_;
  std::vector<Stage> stages_;
};

}  // namespace ktune::library
