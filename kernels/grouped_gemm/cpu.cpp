// Grouped GEMM on the CPU: gemm's BLIS-style blocked loop (kernels/gemm/cpu_gemm.hpp) over each
// group in turn, on its rows of A and D and its own weight; the pool's threads share each group's
// row blocks. The group sizes are read at every run (a library call may bring new ones); the
// groups' loops are prepared again only when they changed.
//
// Tunables (search_spaces/grouped_gemm.cpu.json): gemm's threads, block_m, block_n, block_k,
// micro_m, micro_n.
#include <algorithm>
#include <memory>
#include <vector>

#include "kernels/common/cpu_shared_run.hpp"
#include "kernels/gemm/cpu_gemm.hpp"
#include "kernels/grouped_gemm/grouped_gemm.hpp"
#include "ktune/source_hash/grouped_gemm_cpu.hpp"

namespace ktune {
namespace {

using namespace cpu_gemm;

// The groups' prepared loops (their packing buffers), kept while the group sizes stay as they
// were: a timed run allocates nothing, a call with new sizes prepares its groups again.
template <typename T>
class GroupedGemmRun {
 public:
  GroupedGemmRun(Blocking blocking, MicroKernel micro, const CpuLaunchContext& context)
      : blocking_(blocking), micro_(micro), pool_(context.pool),
        experts_(context.problem.dim("experts")), n_(context.problem.dim("n")), k_(context.problem.dim("k")),
        a_(static_cast<const T*>(context.tensor("a").data)), b_(static_cast<const T*>(context.tensor("b").data)),
        sizes_(static_cast<const std::int32_t*>(context.tensor("group_sizes").data)),
        d_(static_cast<T*>(context.tensor("d").data)) {}

  void operator()() {
    if (!std::equal(prepared_sizes_.begin(), prepared_sizes_.end(), sizes_, sizes_ + experts_)) prepare_groups();
    for (auto& group : groups_) (*group)();
  }

 private:
  void prepare_groups() {
    prepared_sizes_.assign(sizes_, sizes_ + experts_);
    groups_.clear();
    std::int64_t row = 0;
    for (std::int64_t g = 0; g < experts_; ++g) {
      const std::int64_t rows = sizes_[g];
      if (rows > 0)  // no C, bias or scalars: epilogue 0 with alpha = 1
        groups_.push_back(std::make_unique<GemmRun<T>>(
            Shape{rows, n_, k_, true, 0}, blocking_, micro_, pool_,
            Operands<T>{a_ + row * k_, b_ + g * n_ * k_, nullptr, nullptr, nullptr, d_ + row * n_}));
      row += rows;
    }
  }

  Blocking blocking_;
  MicroKernel micro_;
  ThreadPool& pool_;
  std::int64_t experts_, n_, k_;
  const T* a_;
  const T* b_;
  const std::int32_t* sizes_;
  T* d_;
  std::vector<std::int32_t> prepared_sizes_;
  std::vector<std::unique_ptr<GemmRun<T>>> groups_;
};

class GroupedGemmCpu final : public CpuKernel {
 public:
  std::string source_hash() const override { return source_hash::grouped_gemm_cpu; }

  std::function<void()> prepare(const CpuLaunchContext& context) const override {
    MicroKernel micro = nullptr;
    const Blocking blocking = blocking_of(context.config, micro);
    return cpu::shared_run<GroupedGemmRun>(context.problem.precision, "the CPU grouped GEMM", blocking, micro, context);
  }
};

}  // namespace

const CpuKernel& grouped_gemm_cpu_kernel() {
  static const GroupedGemmCpu kernel;
  return kernel;
}

}  // namespace ktune
