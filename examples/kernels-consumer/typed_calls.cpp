// The typed functions of ktune/families.hpp, as a project writes them: rmsnorm and softmax on the
// default backend, each checked against the float64 reference. Prints one line per call and
// exits 1 when one is off.
#include <cstdio>
#include <string>
#include <vector>

#include <ktune/families.hpp>
#include <ktune/kernels_reference.hpp>

namespace kk = ktune::kernels;

namespace {

// Device copies of the reference's tensors, in its order.
struct Tensors {
  kk::Context& context;
  const kk::ReferenceProblem& reference;
  std::vector<std::string> names = reference.tensor_names();
  std::vector<void*> memory;
  explicit Tensors(kk::Context& c, const kk::ReferenceProblem& r) : context(c), reference(r) {
    for (const std::string& name : names) {
      memory.push_back(context.allocate(reference.bytes(name)));
      context.copy_to_device(memory.back(), reference.data(name), reference.bytes(name));
    }
  }
  void* operator[](const std::string& name) const {
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return memory[i];
    return nullptr;
  }
  bool check(const char* label, const std::string& output) const {
    std::vector<unsigned char> bytes(reference.bytes(output));
    context.copy_to_host(bytes.data(), (*this)[output], bytes.size());
    const double error = reference.error(output, bytes.data());
    const bool ok = error <= reference.tolerance();
    std::printf("%s error=%.3g tolerance=%.3g %s\n", label, error, reference.tolerance(), ok ? "ok" : "FAILED");
    return ok;
  }
};

}  // namespace

int main() {
  kk::Context context;
  const kk::Precision precision = kk::Precision::fp32;
  bool ok = true;

  const kk::ReferenceProblem norm("rmsnorm", {{"rows", 7}, {"cols", 333}}, precision, 3);
  const Tensors n(context, norm);
  kk::rmsnorm(context, {.x = n["x"], .weight = n["weight"], .out = n["out"]}, {.rows = 7, .cols = 333}, precision);
  context.synchronize();
  ok = n.check("rmsnorm rows=7,cols=333", "out") && ok;

  const kk::ReferenceProblem probabilities("softmax", {{"rows", 5}, {"cols", 1001}}, precision, 4);
  const Tensors p(context, probabilities);
  kk::softmax(context, {.x = p["x"], .out = p["out"]}, {.rows = 5, .cols = 1001}, precision);
  context.synchronize();
  ok = p.check("softmax rows=5,cols=1001", "out") && ok;
  return ok ? 0 : 1;
}
