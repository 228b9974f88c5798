#include "tuner/formats/t1/t1_kernel.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <regex>
#include <sstream>

#include "kernels/common/cpu_numeric.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/core/expression.hpp"
#include "tuner/formats/t1/t1_space.hpp"

namespace ktune {
namespace {

constexpr const char* kSpecVariable = "KTUNE_T1_SPEC";

enum class FillType { constant, random, binary_raw };

struct VectorArgument {
  std::string name;
  std::string size;  // expression text, as written
  FillType fill = FillType::constant;
  double fill_value = 0;
  std::optional<std::uint64_t> seed;
  std::filesystem::path data;  // BinaryRaw
  bool output = false;
};

struct Reference {
  FillType fill = FillType::constant;
  double fill_value = 0;
  std::filesystem::path data;
};

// The argument types read, and whether a vector of this type is floating point.
struct TypeInfo {
  const char* name;
  bool floating;
};
constexpr TypeInfo kTypes[] = {{"int8", false},  {"uint8", false}, {"int16", false}, {"uint16", false},
                               {"int32", false}, {"uint32", false}, {"int64", false}, {"uint64", false},
                               {"bool", false},  {"half", true},   {"float", true},  {"double", true}};

const TypeInfo& type_info(const std::string& type, const std::string& where) {
  for (const TypeInfo& info : kTypes)
    if (type == info.name) return info;
  throw InputError(where + ".Type: '" + type + "' is not supported; use int8..uint64, bool, half, float or double");
}

template <typename T>
std::vector<unsigned char> bytes_of(T value) {
  std::vector<unsigned char> bytes(sizeof(T));
  std::memcpy(bytes.data(), &value, sizeof(T));
  return bytes;
}

std::vector<unsigned char> scalar_bytes(const std::string& type, double value, const std::string& where) {
  if (type == "float") return bytes_of(static_cast<float>(value));
  if (type == "double") return bytes_of(value);
  if (value != static_cast<double>(static_cast<std::int64_t>(value)))
    throw InputError(where + ".FillValue: " + std::to_string(value) + " is not a whole number for a " + type);
  const auto whole = static_cast<std::int64_t>(value);
  if (type == "int8") return bytes_of(static_cast<std::int8_t>(whole));
  if (type == "uint8" || type == "bool") return bytes_of(static_cast<std::uint8_t>(whole));
  if (type == "int16") return bytes_of(static_cast<std::int16_t>(whole));
  if (type == "uint16") return bytes_of(static_cast<std::uint16_t>(whole));
  if (type == "int32") return bytes_of(static_cast<std::int32_t>(whole));
  if (type == "uint32") return bytes_of(static_cast<std::uint32_t>(whole));
  if (type == "int64") return bytes_of(whole);
  if (type == "uint64") return bytes_of(static_cast<std::uint64_t>(whole));
  throw InputError(where + ".Type: '" + type + "' cannot be a scalar");
}

FillType fill_type(const nlohmann::json& argument, const std::string& where) {
  const std::string fill = argument.value("FillType", std::string("Constant"));
  if (fill == "Constant") return FillType::constant;
  if (fill == "Random") return FillType::random;
  if (fill == "BinaryRaw") return FillType::binary_raw;
  throw InputError(where + ".FillType: '" + fill + "' is not supported; use Constant, Random or BinaryRaw");
}

double number_member(const nlohmann::json& object, const char* key, double fallback, const std::string& where) {
  if (!object.contains(key)) return fallback;
  if (!object[key].is_number()) throw InputError(where + "." + key + ": expected a number, got " + object[key].dump());
  return object[key].get<double>();
}

std::filesystem::path existing_file(const std::filesystem::path& file, const std::string& where) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error))
    throw InputError(where + ".DataSource: " + file.string() + " is not a readable file");
  return file;
}

std::string string_member(const nlohmann::json& object, const char* key, const std::string& where) {
  if (!object.contains(key) || !object[key].is_string() || object[key].get<std::string>().empty())
    throw InputError(where + ": missing " + key + " (a string)");
  return object[key].get<std::string>();
}

std::string read_text(const std::filesystem::path& file, const std::string& what) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string() + ": cannot read the " + what + " (" + std::strerror(errno) + ")");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Raw elements of a float or half file as float64, converted as the backends convert a tensor.
std::vector<double> read_raw(const std::filesystem::path& file, std::size_t elements, Precision precision,
                             const std::string& where) {
  const std::string bytes = read_text(file, "data of " + where);
  const std::size_t element = static_cast<std::size_t>(element_bytes(precision));
  if (bytes.size() < elements * element)
    throw InputError(file.string() + ": holds " + std::to_string(bytes.size()) + " bytes, but " + where + " needs " +
                     std::to_string(elements) + " elements of " + std::to_string(element) + " bytes");
  std::vector<double> values(elements);
  cpu::load_values(precision, bytes.data(), values);
  return values;
}

class T1Kernel final : public KernelFamily {
 public:
  T1Kernel(const nlohmann::json& spec, const std::filesystem::path& file) : spec_file_(file) {
    const std::string where = file.string();
    if (!spec.is_object() || !spec.contains("KernelSpecification") || !spec["KernelSpecification"].is_object())
      throw InputError(where + ": a T1 spec to tune needs a KernelSpecification object");
    const nlohmann::json& kernel = spec["KernelSpecification"];
    const std::string at = where + ": KernelSpecification";
    name_ = t1_benchmark_name(spec);
    space_ = t1_space_from_json(spec, where);
    language_ = kernel.value("Language", std::string("CUDA"));
    if (language_ != "CUDA" && language_ != "HIP")
      throw InputError(at + ".Language: '" + language_ + "': ktune tunes CUDA and HIP kernels from T1 specs");
    entry_ = string_member(kernel, "KernelName", at);
    const std::filesystem::path kernel_file = file.parent_path() / string_member(kernel, "KernelFile", at);
    source_file_ = kernel_file.string();
    source_text_ = read_text(kernel_file, "KernelFile of " + where);
    if (kernel.contains("CompilerOptions")) {
      if (!kernel["CompilerOptions"].is_array()) throw InputError(at + ".CompilerOptions: expected an array of strings");
      for (const auto& option : kernel["CompilerOptions"]) {
        if (!option.is_string()) throw InputError(at + ".CompilerOptions: expected an array of strings");
        compiler_options_.push_back(option.get<std::string>());
      }
    }
    compiler_options_.push_back("-I" + kernel_file.parent_path().string());  // its own headers
    // Portable: a T1 kernel goes to the compiler its Language or --backend names, and hiprtc
    // itself says whether a CUDA-style source builds for an AMD target.
    source_ = GpuSource{source_file_, entry_, source_text_, /*raw_defines=*/true, /*portable=*/true};

    const auto sizes = t1_problem_size(spec, where);
    for (std::size_t d = 0; d < sizes.size(); ++d)
      dims_.push_back({"problem_size_" + std::to_string(d), sizes[d], "KernelSpecification.ProblemSize[" + std::to_string(d) + "]"});
    if (dims_.empty()) dims_.push_back({"problem_size_0", 1, "the spec gives no ProblemSize"});

    read_arguments(kernel, at);
    read_references(kernel, at);
  }

  std::string name() const override { return name_; }
  std::string summary() const override { return "T1 kernel " + entry_ + " from " + spec_file_.string(); }
  std::vector<DimSpec> dims() const override { return dims_; }
  std::vector<Precision> precisions() const override { return {precision_}; }
  double flop_count(const Problem&) const override { return 0; }
  bool verifies() const override { return !references_.empty(); }
  const GpuSource* cuda_source() const override { return &source_; }
  std::vector<std::string> cuda_compiler_options() const override { return compiler_options_; }
  std::vector<std::string> hip_compiler_options() const override { return compiler_options_; }
  const std::string& language() const { return language_; }

  std::vector<TensorSpec> tensors(const Problem& problem) const override {
    std::vector<TensorSpec> specs;
    for (const VectorArgument& vector : vectors_) {
      TensorSpec spec{vector.name, elements(vector, problem), vector.output};
      specs.push_back(spec);
    }
    return specs;
  }

  HostTensors make_inputs(const Problem& problem, std::uint64_t seed) const override {
    HostTensors host;
    for (std::size_t v = 0; v < vectors_.size(); ++v) {
      const VectorArgument& vector = vectors_[v];
      const auto count = static_cast<std::size_t>(elements(vector, problem));
      std::vector<double> values(count, 0.0);
      if (!vector.output) {
        if (vector.fill == FillType::constant) std::fill(values.begin(), values.end(), vector.fill_value);
        if (vector.fill == FillType::random) {
          std::mt19937_64 rng(vector.seed.value_or(seed + v));
          std::uniform_real_distribution<double> uniform(0.0, vector.fill_value);
          for (double& value : values) value = uniform(rng);
        }
        if (vector.fill == FillType::binary_raw) values = read_raw(vector.data, count, precision_, vector.name);
      }
      host.push_back(std::move(values));
    }
    return host;
  }

  void reference(const Problem& problem, HostTensors& tensors) const override {
    for (const auto& [index, reference] : references_) {
      const auto count = static_cast<std::size_t>(elements(vectors_[index], problem));
      if (reference.fill == FillType::binary_raw)
        tensors[index] = read_raw(reference.data, count, precision_, "the reference of " + vectors_[index].name);
      else
        tensors[index].assign(count, reference.fill_value);
    }
  }

  std::vector<KernelArgument> kernel_arguments(const Problem&) const override { return arguments_; }

 private:
  std::int64_t elements(const VectorArgument& vector, const Problem& problem) const {
    std::vector<std::int64_t> sizes;
    for (const auto& [name, value] : problem.dims) sizes.push_back(value);
    const std::string where = spec_file_.string() + ": argument " + vector.name + " Size";
    std::string text = substitute_problem_size(vector.size, sizes, where);
    // max(p) and min(p) of a parameter read its largest and smallest value; a bare parameter
    // its largest (buffers are allocated once, for every config).
    for (const Parameter& parameter : space_.parameters()) {
      const auto [low, high] = std::minmax_element(parameter.values.begin(), parameter.values.end());
      text = std::regex_replace(text, std::regex("\\bmax\\s*\\(\\s*" + parameter.name + "\\s*\\)"), to_string(*high));
      text = std::regex_replace(text, std::regex("\\bmin\\s*\\(\\s*" + parameter.name + "\\s*\\)"), to_string(*low));
    }
    Expression expression = Expression::parse(text, where);
    std::vector<std::string> names;
    std::vector<Value> values;
    for (const Parameter& parameter : space_.parameters()) {
      names.push_back(parameter.name);
      values.push_back(*std::max_element(parameter.values.begin(), parameter.values.end()));
    }
    expression.bind(names);
    const Value value = expression.evaluate(values);
    const auto* whole = std::get_if<std::int64_t>(&value);
    if (whole == nullptr || *whole < 1)
      throw InputError(where + ": \"" + vector.size + "\" gives " + to_string(value) + ", not a positive whole number");
    return *whole;
  }

  void read_arguments(const nlohmann::json& kernel, const std::string& at) {
    if (!kernel.contains("Arguments") || !kernel["Arguments"].is_array())
      throw InputError(at + ".Arguments: expected an array of the kernel's arguments");
    std::optional<std::string> vector_type;
    for (std::size_t i = 0; i < kernel["Arguments"].size(); ++i) {
      const nlohmann::json& argument = kernel["Arguments"][i];
      const std::string where = at + ".Arguments[" + std::to_string(i) + "]";
      if (!argument.is_object()) throw InputError(where + ": expected an object");
      const std::string type = string_member(argument, "Type", where);
      const TypeInfo& info = type_info(type, where);
      const std::string memory = argument.value("MemoryType", std::string("Vector"));
      if (memory == "Scalar") {
        if (!argument.contains("FillValue")) throw InputError(where + ": a Scalar needs its value in FillValue");
        arguments_.push_back({-1, scalar_bytes(type, number_member(argument, "FillValue", 0, where), where)});
        continue;
      }
      if (memory != "Vector")
        throw InputError(where + ".MemoryType: '" + memory + "' is not supported; use Vector or Scalar");
      if (!info.floating || type == "double")
        throw InputError(where + ".Type: vectors of " + type + " are not supported; ktune's CUDA buffers are float or half");
      if (vector_type && *vector_type != type)
        throw InputError(where + ".Type: every vector must have one type; this is " + type + ", an earlier one " +
                         *vector_type);
      vector_type = type;
      VectorArgument vector;
      vector.name = argument.value("Name", "argument " + std::to_string(i));
      if (!argument.contains("Size")) throw InputError(where + ": missing Size");
      vector.size = argument["Size"].is_number_integer() ? std::to_string(argument["Size"].get<std::int64_t>())
                    : argument["Size"].is_string()       ? argument["Size"].get<std::string>()
                    : throw InputError(where + ".Size: expected a number or an expression string");
      vector.fill = fill_type(argument, where);
      vector.fill_value = number_member(argument, "FillValue", 1.0, where);
      if (argument.contains("RandomSeed")) vector.seed = static_cast<std::uint64_t>(number_member(argument, "RandomSeed", 0, where));
      if (vector.fill == FillType::binary_raw)
        vector.data = existing_file(spec_file_.parent_path() / string_member(argument, "DataSource", where), where);
      const std::string access = argument.value("AccessType", std::string("ReadOnly"));
      if (access == "ReadWrite")
        throw InputError(where + ".AccessType: ReadWrite vectors are not supported (outputs are poisoned before "
                         "each verification run); split it into an input and an output");
      vector.output = access == "WriteOnly" || argument.value("Output", 0) == 1;
      arguments_.push_back({static_cast<int>(vectors_.size()), {}});
      vectors_.push_back(std::move(vector));
    }
    if (!vector_type) throw InputError(at + ".Arguments: the kernel has no Vector argument to check or time");
    precision_ = *vector_type == "float" ? Precision::fp32 : Precision::fp16;
    if (std::none_of(vectors_.begin(), vectors_.end(), [](const VectorArgument& v) { return v.output; }))
      throw InputError(at + ".Arguments: no output vector (AccessType WriteOnly or \"Output\": 1)");
    for (const VectorArgument& vector : vectors_) tensor_size_check(vector);
  }

  void tensor_size_check(const VectorArgument& vector) const {
    Problem problem;
    problem.family = name_;
    for (const DimSpec& dim : dims_) problem.dims.emplace_back(dim.name, dim.default_value);
    elements(vector, problem);  // an InputError now rather than in the worker
  }

  void read_references(const nlohmann::json& kernel, const std::string& at) {
    if (!kernel.contains("ReferenceArguments")) return;
    const auto& references = kernel["ReferenceArguments"];
    if (!references.is_array()) throw InputError(at + ".ReferenceArguments: expected an array");
    for (std::size_t i = 0; i < references.size(); ++i) {
      const std::string where = at + ".ReferenceArguments[" + std::to_string(i) + "]";
      const std::string target = string_member(references[i], "TargetName", where);
      const auto found = std::find_if(vectors_.begin(), vectors_.end(),
                                      [&](const VectorArgument& v) { return v.name == target && v.output; });
      if (found == vectors_.end()) throw InputError(where + ".TargetName: '" + target + "' is not an output vector");
      Reference reference;
      reference.fill = fill_type(references[i], where);
      if (reference.fill == FillType::random) throw InputError(where + ".FillType: a reference cannot be Random");
      reference.fill_value = number_member(references[i], "FillValue", 0.0, where);
      if (reference.fill == FillType::binary_raw)
        reference.data =
            existing_file(spec_file_.parent_path() / string_member(references[i], "DataSource", where), where);
      references_[static_cast<std::size_t>(found - vectors_.begin())] = reference;
    }
    const auto outputs = std::count_if(vectors_.begin(), vectors_.end(), [](const VectorArgument& v) { return v.output; });
    if (static_cast<std::size_t>(outputs) != references_.size())
      throw InputError(at + ".ReferenceArguments: give a reference for every output vector or for none");
  }

  std::filesystem::path spec_file_;
  std::string name_, entry_, source_file_, source_text_;
  std::vector<std::string> compiler_options_;
  std::string language_;  // the spec's Language: CUDA or HIP
  GpuSource source_;
  SearchSpace space_;
  std::vector<DimSpec> dims_;
  std::vector<VectorArgument> vectors_;
  std::vector<KernelArgument> arguments_;
  std::map<std::size_t, Reference> references_;
  Precision precision_ = Precision::fp32;
};

std::mutex g_registered_mutex;
std::unique_ptr<KernelFamily> g_registered;

// Replaces the registered T1 family by `family`, in the registry too. Called with
// g_registered_mutex held.
void install_registered(std::unique_ptr<KernelFamily> family) {
  if (g_registered) unregister_runtime_family(g_registered.get());
  g_registered = std::move(family);
  register_runtime_family(g_registered.get());
}

}  // namespace

std::unique_ptr<KernelFamily> load_t1_kernel(const std::filesystem::path& spec) {
  return std::make_unique<T1Kernel>(read_t1_json(spec), spec);
}

const KernelFamily& register_t1_kernel(const std::filesystem::path& spec) {
  const std::filesystem::path absolute = std::filesystem::absolute(spec);
  auto family = load_t1_kernel(absolute);
  std::lock_guard lock(g_registered_mutex);
  install_registered(std::move(family));
  ::setenv(kSpecVariable, absolute.c_str(), 1);  // the workers this process starts load it too
  return *g_registered;
}

std::string t1_default_backend(const KernelFamily& family) {
  const auto* t1 = dynamic_cast<const T1Kernel*>(&family);
  return t1 && t1->language() == "HIP" ? "hip" : "cuda";
}

const KernelFamily* register_t1_kernel_from_environment() {
  std::lock_guard lock(g_registered_mutex);
  if (!g_registered) {
    const char* spec = std::getenv(kSpecVariable);
    if (spec == nullptr || *spec == '\0') return nullptr;
    install_registered(load_t1_kernel(spec));
  }
  return g_registered.get();
}

}  // namespace ktune
