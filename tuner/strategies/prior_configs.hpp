// Transfer from earlier tunes: configs that were fast on other spaces of the same kernel (other
// devices, shapes or precisions) or, after those, of other kernels with the same parameters,
// ranked best-first, which a model-based strategy (tpe, forest)
// evaluates first, before the spread-out configs of its start-up (which keeps all of them).
//
// A prior config is matched to this space by parameter names and values: every parameter of
// this space must be in it with a value of this space's list (parameters this space lacks are
// ignored), and the config must be valid here; any other prior config is skipped.
//
//   const std::vector<Config> prior = interleave_priors({ranked_configs(a, 16), ranked_configs(b, 16)});
//   PriorQueue queue(space_index, valid, prior);
//   if (auto index = queue.take(unvisited)) ...   // the best prior config not yet visited
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "tuner/core/config.hpp"
#include "tuner/core/search_space.hpp"
#include "tuner/strategies/space_index.hpp"

namespace ktune {

// Round robin over several best-first lists (one per earlier space), so each contributes its best
// config before any contributes its second; a config already taken is not repeated.
std::vector<Config> interleave_priors(const std::vector<std::vector<Config>>& ranked_lists);

// The prior of a replay or a tune: the configs of earlier spaces of the same kernel first
// (interleaved), then those of other kernels (interleaved), no config twice. Other kernels come
// in only where their configs are valid here (same parameter names and values, PriorQueue), as
// among ktune's row kernels (rmsnorm, layernorm, residual_layernorm, softmax share every
// parameter), and only after the kernel's own: a kernel's own history is the closer guess.
std::vector<Config> same_kernel_first(const std::vector<std::vector<Config>>& same_kernel,
                                      const std::vector<std::vector<Config>>& other_kernels);

// How far apart two problems of a kernel are, from their sizes in the same order (a recorded
// space's problem_size, a Problem's dims): the sum over the dimensions of |log2((a + 1) / (b + 1))|,
// so that doubling a dimension costs 1 wherever it is and 0 against 1 (a layout or epilogue
// switch) costs 1 too. Infinite when the two do not have the same number of sizes. The prior's
// sources are ordered closest first: a skinny GEMM's fast tiles are a skinny GEMM's, not a square
// one's (reports/search.md, 2026-11-26).
double problem_distance(const std::vector<double>& a, const std::vector<double>& b);

// Appends the configs of `more`, in order, that `prior` does not hold yet: how a later, less
// close source of prior configs joins an earlier one. Returns how many it appended.
std::size_t append_unseen(std::vector<Config>& prior, std::vector<Config> more);

// How many prior configs a strategy with `startup` spread-out start-up configs evaluates first,
// when `available` prior configs are valid here: half of the start-up, rounded up, at most all
// but one; they are added to the start-up, not taken from it (reports/search.md, 2026-11-25
// transfer). 0 without a prior, so strategies behave exactly as before.
std::size_t prior_start_up_count(std::size_t startup, std::size_t available);

// The prior configs that are valid configs of this space, as indices, in the prior's order.
class PriorQueue {
 public:
  PriorQueue(const SpaceIndex& space, const ValidConfigs& valid, const std::vector<Config>& prior);
  std::size_t size() const { return indices_.size(); }
  const std::vector<std::size_t>& indices() const { return indices_; }  // in the prior's order
  // The first prior config still in `unvisited`, taken out of it; nullopt when none is left.
  std::optional<std::size_t> take(UnvisitedSet& unvisited);

 private:
  std::vector<std::size_t> indices_;
  std::size_t cursor_ = 0;
};

}  // namespace ktune
