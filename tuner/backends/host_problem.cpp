#include "tuner/backends/host_problem.hpp"

#include "kernels/common/cpu_numeric.hpp"

namespace ktune {

std::string host_problem_key(const KernelFamily& family, const Problem& problem, std::uint64_t seed) {
  // The family too: Problem::key() leaves it out, and one worker may serve several (ktune bench).
  // And the reference's revision: one captured meanwhile must be loaded.
  return problem.family + ":" + problem.key() + "#" + std::to_string(seed) + "|" + family.reference_revision(problem);
}

HostProblem make_host_problem(const KernelFamily& family, const Problem& problem, std::uint64_t seed,
                              bool with_reference) {
  HostProblem host;
  host.key = host_problem_key(family, problem, seed);
  host.specs = family.tensors(problem);
  HostTensors values = family.make_inputs(problem, seed);
  for (std::size_t t = 0; t < host.specs.size(); ++t) {
    const TensorSpec& spec = host.specs[t];
    host.bytes.push_back(static_cast<std::size_t>(spec.bytes(problem)));
    host.stored.emplace_back();
    if (spec.is_output && !spec.read_write) continue;
    // The reference sees the inputs as the kernel does: rounded to the precision.
    host.stored.back().resize(host.bytes.back());
    cpu::store_values(spec.precision(problem), values[t], host.stored.back().data());
    cpu::load_values(spec.precision(problem), host.stored.back().data(), values[t]);
  }
  if (with_reference) family.reference(problem, values);
  host.expected = std::move(values);
  return host;
}

}  // namespace ktune
