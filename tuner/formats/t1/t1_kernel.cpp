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
#include "tuner/backends/gpu_source.hpp"
#include "tuner/core/space_context.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/core/input_file.hpp"
#include "tuner/core/expression.hpp"
#include "tuner/formats/t1/t1_space.hpp"

namespace ktune {
namespace {

constexpr const char* kSpecVariable = "KTUNE_T1_SPEC";
// How the workers a tune starts verify: its --no-verify, --atol and --rtol.
constexpr const char* kVerifyVariable = "KTUNE_T1_VERIFY";
constexpr const char* kAtolVariable = "KTUNE_T1_ATOL";
constexpr const char* kRtolVariable = "KTUNE_T1_RTOL";

enum class FillType { constant, random, binary_raw };

struct VectorArgument {
  std::string name;
  std::string size;  // expression text, as written
  Precision type = Precision::fp32;
  FillType fill = FillType::constant;
  double fill_value = 0;
  std::optional<std::uint64_t> seed;
  std::filesystem::path data;  // BinaryRaw
  bool output = false;
  bool read_write = false;          // AccessType ReadWrite: an input the kernel updates in place
  std::string constant_symbol;      // MemType Constant: also copied to this __constant__ symbol
};

struct Reference {
  FillType fill = FillType::constant;
  double fill_value = 0;
  std::filesystem::path data;
};

// The argument types of the T1 schema ktune reads, with how a vector of each is stored.
struct TypeInfo {
  const char* name;
  Precision storage;
  bool integral;
};
constexpr TypeInfo kTypes[] = {
    {"int8", Precision::int8, true},    {"uint8", Precision::uint8, true},   {"int16", Precision::int16, true},
    {"uint16", Precision::uint16, true}, {"int32", Precision::int32, true},   {"uint32", Precision::uint32, true},
    {"int64", Precision::int64, true},  {"uint64", Precision::uint64, true}, {"bool", Precision::uint8, true},
    {"half", Precision::fp16, false},   {"float", Precision::fp32, false},   {"double", Precision::fp64, false}};

const TypeInfo& type_info(const std::string& type, const std::string& where) {
  for (const TypeInfo& info : kTypes)
    if (type == info.name) return info;
  throw InputError(where + ".Type: '" + type + "' is not supported; use int8..uint64, bool, half, float or double "
                   "(vector types such as float4 and custom types are not read)");
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
  if (type == "half") return bytes_of(static_cast<_Float16>(value));
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

// The first `max_bytes` of the file (a data file may hold more than the argument takes): read
// only that far, never without bound.
std::string read_prefix(const std::filesystem::path& file, const std::string& what, std::size_t max_bytes) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string() + ": cannot read the " + what + " (" + std::strerror(errno) + ")");
  std::string text(max_bytes, '\0');
  in.read(text.data(), static_cast<std::streamsize>(max_bytes));
  if (in.bad()) throw InputError(file.string() + ": cannot read the " + what + " (" + std::strerror(errno) + ")");
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

// A kernel source larger than this is not a kernel source.
constexpr std::size_t kMaxKernelFileBytes = std::size_t{64} << 20;

// Raw little-endian elements of `type` as float64, converted as the backends convert a tensor.
std::vector<double> read_raw(const std::filesystem::path& file, std::size_t elements, Precision type,
                             const std::string& where) {
  const std::size_t element = static_cast<std::size_t>(element_bytes(type));
  const std::string bytes = read_prefix(file, "data of " + where, elements * element);
  if (bytes.size() < elements * element)
    throw InputError(file.string() + ": holds " + std::to_string(bytes.size()) + " bytes, but " + where + " needs " +
                     std::to_string(elements) + " elements of " + std::to_string(element) + " bytes");
  std::vector<double> values(elements);
  cpu::load_values(type, bytes.data(), values);
  return values;
}

std::optional<double> number_from_environment(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  return std::strtod(text, nullptr);
}

T1Options options_from_environment() {
  T1Options options;
  if (const char* verify = std::getenv(kVerifyVariable)) options.verify = std::string(verify) != "0";
  options.atol = number_from_environment(kAtolVariable).value_or(options.atol);
  options.rtol = number_from_environment(kRtolVariable).value_or(options.rtol);
  return options;
}

class T1Kernel final : public KernelFamily {
 public:
  T1Kernel(const nlohmann::json& spec, const std::filesystem::path& file, const T1Options& options)
      : spec_file_(file), options_(options) {
    const std::string where = file.string();
    if (!spec.is_object() || !spec.contains("KernelSpecification") || !spec["KernelSpecification"].is_object())
      throw InputError(where + ": a T1 spec to tune needs a KernelSpecification object");
    const nlohmann::json& kernel = spec["KernelSpecification"];
    const std::string at = where + ": KernelSpecification";
    name_ = t1_benchmark_name(spec);
    space_ = t1_space_from_json(spec, where);
    geometry_ = t1_geometry(spec, where);
    if (geometry_.rule == T1GeometryRule::none)
      throw InputError(at + ": no launch geometry; give GridDivX (and GridDivY, GridDivZ) as Kernel Tuner does, or "
                       "LocalSize and GlobalSize");
    language_ = kernel.value("Language", std::string("CUDA"));
    if (language_ != "CUDA" && language_ != "HIP")
      throw InputError(at + ".Language: '" + language_ + "': ktune tunes CUDA and HIP kernels from T1 specs");
    entry_ = string_member(kernel, "KernelName", at);
    const std::filesystem::path kernel_file = file.parent_path() / string_member(kernel, "KernelFile", at);
    source_file_ = kernel_file.string();
    try {
      source_text_ = read_file_bytes(kernel_file, kMaxKernelFileBytes);
    } catch (const InputError& e) {
      throw InputError(at + ".KernelFile: " + e.what());
    }
    if (kernel.contains("CompilerOptions")) {
      if (!kernel["CompilerOptions"].is_array()) throw InputError(at + ".CompilerOptions: expected an array of strings");
      for (const auto& option : kernel["CompilerOptions"]) {
        if (!option.is_string()) throw InputError(at + ".CompilerOptions: expected an array of strings");
        compiler_options_.push_back(option.get<std::string>());
      }
    }
    compiler_options_.push_back("-I" + kernel_file.parent_path().string());  // its own headers
    // Portable: a T1 kernel goes to the compiler its Language or --backend names, and hiprtc
    // itself says whether a CUDA-style source builds for an AMD target. The entry is a name
    // expression: a plain __global__ function, an extern "C" one or a template instance.
    source_ = GpuSource{source_file_, entry_, source_text_, /*raw_defines=*/true, /*portable=*/true};

    const auto sizes = t1_problem_size(spec, where);
    for (std::size_t d = 0; d < sizes.size(); ++d)
      dims_.push_back({"problem_size_" + std::to_string(d), sizes[d], "KernelSpecification.ProblemSize[" + std::to_string(d) + "]"});
    if (dims_.empty()) dims_.push_back({"problem_size_0", 1, "the spec gives no ProblemSize"});

    read_arguments(kernel, at);
    read_references(kernel, at);
    identity_ = spec.dump() + "\n" + source_text_;
    for (const auto& option : compiler_options_) identity_ += "\n" + option;
  }

  std::string name() const override { return name_; }
  std::string summary() const override { return "T1 kernel " + entry_ + " from " + spec_file_.string(); }
  std::vector<DimSpec> dims() const override { return dims_; }
  std::vector<Precision> precisions() const override { return {precision_}; }
  double flop_count(const Problem&) const override { return 0; }
  const GpuSource* cuda_source() const override { return &source_; }
  std::vector<std::string> cuda_compiler_options() const override { return compiler_options_; }
  std::vector<std::string> hip_compiler_options() const override { return compiler_options_; }
  const std::string& language() const { return language_; }
  const T1Geometry& geometry() const { return geometry_; }
  std::string launch_rule() const override { return std::string(to_string(geometry_.rule)) + ": " + geometry_.description; }

  // Kernel Tuner's defines ahead of the parameters: the launch it derives (grid_size_x/y/z,
  // block_size_x/y/z) and kernel_tuner=1.
  std::vector<std::pair<std::string, std::string>> source_defines(const Problem& problem,
                                                                  const Config& config) const override {
    std::vector<std::pair<std::string, std::string>> defines;
    // An empty config (a compiler checking its options up front) has no launch yet.
    if (config.values.empty()) return {{"kernel_tuner", "1"}};
    const auto launch = launch_geometry(space_, config, make_context(problem, DeviceInfo{}));
    for (const char* axis : {"x", "y", "z"}) {
      const auto grid = launch.find(std::string("grid_") + axis);
      defines.emplace_back(std::string("grid_size_") + axis, std::to_string(grid == launch.end() ? 1 : grid->second));
    }
    for (const char* axis : {"x", "y", "z"}) {
      const auto block = launch.find(std::string("block_") + axis);
      defines.emplace_back(std::string("block_size_") + axis, std::to_string(block == launch.end() ? 1 : block->second));
    }
    for (const auto& [name, value] : config.values) {
      const auto same = std::find_if(defines.begin(), defines.end(), [&](const auto& d) { return d.first == name; });
      if (same != defines.end()) same->second = to_string(value);
      else defines.emplace_back(name, to_string(value));
    }
    defines.emplace_back("kernel_tuner", "1");
    return defines;
  }

  std::vector<TensorSpec> tensors(const Problem& problem) const override {
    std::vector<TensorSpec> specs;
    for (const VectorArgument& vector : vectors_) {
      TensorSpec spec{vector.name, elements(vector, problem), vector.output};
      spec.storage = vector.type;
      spec.read_write = vector.read_write;
      spec.constant_symbol = vector.constant_symbol;
      specs.push_back(spec);
    }
    return specs;
  }

  HostTensors make_inputs(const Problem& problem, std::uint64_t) const override {
    // Drawn from the spec alone (RandomSeed, else the argument's position), never from the
    // tune's seed: the reference a tune keeps from its default config belongs to these inputs.
    HostTensors host;
    for (std::size_t v = 0; v < vectors_.size(); ++v) {
      const VectorArgument& vector = vectors_[v];
      const auto count = static_cast<std::size_t>(elements(vector, problem));
      std::vector<double> values(count, 0.0);
      if (!vector.output || vector.read_write) {
        if (vector.fill == FillType::constant) std::fill(values.begin(), values.end(), vector.fill_value);
        if (vector.fill == FillType::random) {
          std::mt19937_64 rng(vector.seed.value_or(0x7431u + v));
          if (is_integral(vector.type)) {
            std::uniform_int_distribution<std::int64_t> uniform(0, static_cast<std::int64_t>(vector.fill_value));
            for (double& value : values) value = static_cast<double>(uniform(rng));
          } else {
            std::uniform_real_distribution<double> uniform(0.0, vector.fill_value);
            for (double& value : values) value = uniform(rng);
          }
        }
        if (vector.fill == FillType::binary_raw) values = read_raw(vector.data, count, vector.type, vector.name);
      }
      host.push_back(std::move(values));
    }
    return host;
  }

  bool verifies(const Problem& problem) const override {
    if (!options_.verify) return false;
    if (!references_.empty()) return true;
    std::error_code error;
    return std::filesystem::exists(reference_file(problem), error);
  }

  std::string verification(const Problem& problem) const override {
    if (!options_.verify) return "off (--no-verify)";
    if (!references_.empty()) return "the spec's ReferenceArguments";
    return verifies(problem) ? "the output of the reference config (" + reference_file(problem).string() + ")"
                             : "the output of the first config that runs, the spec's default first";
  }

  std::optional<Closeness> closeness() const override { return Closeness{options_.atol, options_.rtol}; }

  void reference(const Problem& problem, HostTensors& tensors) const override {
    if (!options_.verify) return;
    if (references_.empty()) {
      const auto file = reference_file(problem);
      std::error_code error;
      if (!std::filesystem::exists(file, error)) return;  // not captured yet: verifies() is false
      std::size_t expected_bytes = 0;
      for (const auto& vector : vectors_)
        if (vector.output)
          expected_bytes += static_cast<std::size_t>(elements(vector, problem)) * static_cast<std::size_t>(element_bytes(vector.type));
      const std::string bytes = read_prefix(file, "reference outputs", expected_bytes);
      std::size_t offset = 0;
      for (std::size_t index = 0; index < vectors_.size(); ++index) {
        if (!vectors_[index].output) continue;
        const auto count = static_cast<std::size_t>(elements(vectors_[index], problem));
        const std::size_t size = count * static_cast<std::size_t>(element_bytes(vectors_[index].type));
        if (offset + size > bytes.size())
          throw std::runtime_error(file.string() + ": the kept reference is shorter than the outputs; delete it");
        tensors[index].resize(count);
        cpu::load_values(vectors_[index].type, bytes.data() + offset, tensors[index]);
        offset += size;
      }
      return;
    }
    for (const auto& [index, reference] : references_) {
      const auto count = static_cast<std::size_t>(elements(vectors_[index], problem));
      if (reference.fill == FillType::binary_raw)
        tensors[index] = read_raw(reference.data, count, vectors_[index].type, "the reference of " + vectors_[index].name);
      else
        tensors[index].assign(count, reference.fill_value);
    }
  }

  bool reference_from_config(const Problem& problem) const override {
    return options_.verify && references_.empty() && !verifies(problem);
  }

  void keep_reference(const Problem& problem, const std::vector<std::string_view>& outputs) const override {
    if (!reference_from_config(problem)) return;
    std::string bytes;
    for (const auto& output : outputs) bytes += output;
    const auto file = reference_file(problem);
    std::filesystem::create_directories(file.parent_path());
    write_file_atomically(file, bytes);
  }

  void drop_reference(const Problem& problem) const override {
    std::error_code error;
    if (references_.empty()) std::filesystem::remove(reference_file(problem), error);
  }

  std::string reference_revision(const Problem& problem) const override {
    return verifies(problem) ? "verified" : "unverified";
  }

  std::vector<KernelArgument> kernel_arguments(const Problem&) const override { return arguments_; }

 private:
  static bool is_integral(Precision type) {
    return std::any_of(std::begin(kTypes), std::end(kTypes), [&](const TypeInfo& t) { return t.storage == type && t.integral; });
  }

  // Where the output of the config a tune trusts is kept: one file per spec, kernel source,
  // compiler options and problem, so an edited kernel or spec never meets an old reference.
  std::filesystem::path reference_file(const Problem& problem) const {
    const char* dir = std::getenv("KTUNE_T1_REFERENCE_DIR");
    const std::filesystem::path base = dir && *dir ? std::filesystem::path(dir) : default_binary_cache_dir() / "t1-references";
    return base / (name_ + "-" + hex16(fnv1a(identity_ + "\n" + problem.key())) + ".out");
  }

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
    std::optional<Precision> first_floating;
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
        throw InputError(where + ".MemoryType: '" + memory + "' is not supported; use Vector or Scalar (a __constant__ "
                         "array is a Vector with \"MemType\": \"Constant\")");
      if (!info.integral && !first_floating) first_floating = info.storage;
      VectorArgument vector;
      vector.type = info.storage;
      vector.name = argument.value("Name", "argument " + std::to_string(i));
      if (!argument.contains("Size")) throw InputError(where + ": missing Size (a number or an expression over ProblemSize[i])");
      vector.size = argument["Size"].is_number_integer() ? std::to_string(argument["Size"].get<std::int64_t>())
                    : argument["Size"].is_string()       ? argument["Size"].get<std::string>()
                    : throw InputError(where + ".Size: expected a number or an expression string");
      vector.fill = fill_type(argument, where);
      vector.fill_value = number_member(argument, "FillValue", 1.0, where);
      if (argument.contains("RandomSeed")) vector.seed = static_cast<std::uint64_t>(number_member(argument, "RandomSeed", 0, where));
      if (vector.fill == FillType::binary_raw)
        vector.data = existing_file(spec_file_.parent_path() / string_member(argument, "DataSource", where), where);
      const std::string access = argument.value("AccessType", std::string("ReadOnly"));
      if (access != "ReadOnly" && access != "WriteOnly" && access != "ReadWrite")
        throw InputError(where + ".AccessType: '" + access + "' is not one of ReadOnly, WriteOnly, ReadWrite");
      if (argument.contains("Output") && !argument["Output"].is_number_integer() && !argument["Output"].is_boolean())
        throw InputError(where + ".Output: expected 0 or 1, got " + argument["Output"].dump());
      const bool output_flag = argument.contains("Output") &&
                               (argument["Output"].is_boolean() ? argument["Output"].get<bool>() : argument["Output"].get<int>() != 0);
      // ReadWrite: filled as an input, checked as an output, restored before every launch.
      vector.read_write = access == "ReadWrite";
      vector.output = access == "WriteOnly" || vector.read_write || output_flag;
      if (output_flag && access == "ReadOnly") vector.read_write = true;  // read and checked: keep its data
      if (argument.contains("MemType")) {
        const std::string mem_type = argument["MemType"].is_string() ? argument["MemType"].get<std::string>() : "";
        if (mem_type == "Constant") {
          if (!argument.contains("Name") || !argument["Name"].is_string())
            throw InputError(where + ".Name: a MemType Constant vector needs the name of the __constant__ symbol it fills");
          if (vector.output)
            throw InputError(where + ".MemType: a Constant vector is read-only (the kernel cannot write __constant__ memory); "
                             "make it ReadOnly");
          vector.constant_symbol = vector.name;
        } else if (mem_type != "Global" && mem_type != "") {
          throw InputError(where + ".MemType: '" + argument["MemType"].dump() + "' is not supported; use \"Constant\" "
                           "(copied to the __constant__ symbol of the argument's Name) or leave it out");
        }
      }
      arguments_.push_back({static_cast<int>(vectors_.size()), {}});
      vectors_.push_back(std::move(vector));
    }
    if (vectors_.empty()) throw InputError(at + ".Arguments: the kernel has no Vector argument to check or time");
    // The problem's precision names the kernel's main element type: that of its first floating-
    // point vector (each vector keeps its own type).
    precision_ = first_floating.value_or(Precision::fp32);
    if (precision_ == Precision::fp64) precision_ = Precision::fp32;  // fp64 is not a tuning precision
    if (std::none_of(vectors_.begin(), vectors_.end(), [](const VectorArgument& v) { return v.output; }))
      throw InputError(at + ".Arguments: no output vector (AccessType WriteOnly or ReadWrite, or \"Output\": 1)");
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
      throw InputError(at + ".ReferenceArguments: give a reference for every output vector or for none (then the "
                       "output of the spec's default config is the reference)");
  }

  std::filesystem::path spec_file_;
  T1Options options_;
  std::string name_, entry_, source_file_, source_text_;
  std::vector<std::string> compiler_options_;
  std::string language_;  // the spec's Language: CUDA or HIP
  std::string identity_;  // what the kept reference depends on
  GpuSource source_;
  SearchSpace space_;
  T1Geometry geometry_;
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

std::unique_ptr<KernelFamily> load_t1_kernel(const std::filesystem::path& spec, const T1Options& options) {
  return std::make_unique<T1Kernel>(read_t1_json(spec), spec, options);
}

const KernelFamily& register_t1_kernel(const std::filesystem::path& spec, const T1Options& options) {
  if (!(options.atol >= 0) || !(options.rtol >= 0))
    throw InputError("--atol/--rtol: tolerances must be zero or positive");
  const std::filesystem::path absolute = std::filesystem::absolute(spec);
  auto family = load_t1_kernel(absolute, options);
  std::lock_guard lock(g_registered_mutex);
  install_registered(std::move(family));
  // The workers this process starts load the same spec with the same options.
  ::setenv(kSpecVariable, absolute.c_str(), 1);
  ::setenv(kVerifyVariable, options.verify ? "1" : "0", 1);
  char number[64];
  std::snprintf(number, sizeof number, "%.17g", options.atol);
  ::setenv(kAtolVariable, number, 1);
  std::snprintf(number, sizeof number, "%.17g", options.rtol);
  ::setenv(kRtolVariable, number, 1);
  return *g_registered;
}

const T1Geometry* t1_geometry_of(const KernelFamily& family) {
  const auto* t1 = dynamic_cast<const T1Kernel*>(&family);
  return t1 ? &t1->geometry() : nullptr;
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
    try {
      install_registered(load_t1_kernel(spec, options_from_environment()));
    } catch (const InputError& e) {
      // Here the spec came from the environment, not from a --t1 the user typed.
      std::string why = e.what();
      const std::string typed = "check the path given to --t1";
      if (const auto at = why.find(typed); at != std::string::npos)
        why.replace(at, typed.size(), std::string("check ") + kSpecVariable + ", set by the tune that started this process");
      throw InputError(std::string(kSpecVariable) + "=" + spec + ": " + why);
    }
  }
  return g_registered.get();
}

}  // namespace ktune
