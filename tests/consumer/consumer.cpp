// A downstream program that uses a generated tuned/cpu/rmsnorm.hpp the way a kernel library would:
// it includes the header (nothing else from ktune), asks it for the config of one device and
// shape, and prints the answer on one line. Tests build it against a freshly exported header:
//
//   c++ -std=c++20 -Wall -Wextra -Werror -I<export dir> tests/consumer/consumer.cpp -o consumer
//   (the export dir holds cpu/rmsnorm.hpp)
//   ./consumer --backend cpu --device "AMD EPYC 7B13" --architecture x86_64-avx2 --vendor amd
//              --rows 256 --cols 1024 [--precision fp32]      (all on one command line)
//
// prints space-separated key=value pairs:
//
//   level=device threads=2 rows_per_task=4 vector_width=8 unroll=2 measurement_id=17 tuned_rows=256 tuned_cols=1024 tuned_precision=fp32
//
// `level` is device, architecture, vendor or default_config; the tuned_* keys and measurement_id
// describe the entry that answered and are absent when the default answered. Omitted device
// flags are empty (an empty field matches nothing). Exit status 2 on bad usage.
//
// Written for the rmsnorm family: integer parameters threads, rows_per_task, vector_width,
// unroll and dimensions rows, cols.
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <string_view>

#include "cpu/rmsnorm.hpp"

namespace tuned = ktune::tuned::cpu::rmsnorm;

// The lookup is usable at compile time; a query that names no device always gets the default.
static_assert(tuned::lookup(tuned::DeviceQuery{}, tuned::Shape{.rows = 1, .cols = 1}).threads ==
              tuned::default_config.threads);
static_assert(tuned::lookup_entry(tuned::DeviceQuery{}, tuned::Shape{.rows = 1, .cols = 1}).level ==
              tuned::MatchLevel::default_config);

namespace {

constexpr const char* kUsage =
    "usage: consumer [--backend B] [--device NAME] [--architecture ARCH] [--vendor V]\n"
    "                --rows N --cols N [--precision P]\n";

bool parse_int(std::string_view text, std::int64_t& value) {
  const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  return result.ec == std::errc() && result.ptr == text.data() + text.size();
}

}  // namespace

int main(int argc, char** argv) {
  std::string backend, device, architecture, vendor, precision = "fp32";
  std::int64_t rows = -1, cols = -1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) {
      std::cerr << "consumer: " << flag << " needs a value\n" << kUsage;
      return 2;
    }
    const std::string_view value = argv[++i];
    if (flag == "--backend") backend = value;
    else if (flag == "--device") device = value;
    else if (flag == "--architecture") architecture = value;
    else if (flag == "--vendor") vendor = value;
    else if (flag == "--precision") precision = value;
    else if (flag == "--rows" && parse_int(value, rows)) continue;
    else if (flag == "--cols" && parse_int(value, cols)) continue;
    else {
      std::cerr << "consumer: bad argument " << flag << " " << value << "\n" << kUsage;
      return 2;
    }
  }
  if (rows < 0 || cols < 0) {
    std::cerr << "consumer: --rows and --cols are required\n" << kUsage;
    return 2;
  }

  const tuned::DeviceQuery query{
      .backend = backend, .device = device, .architecture = architecture, .vendor = vendor};
  const tuned::LookupResult found = tuned::lookup_entry(query, tuned::Shape{.rows = rows, .cols = cols}, precision);
  const tuned::Config& config = found.config;
  std::cout << "level=" << tuned::to_string(found.level) << " threads=" << config.threads
            << " rows_per_task=" << config.rows_per_task << " vector_width=" << config.vector_width
            << " unroll=" << config.unroll;
  if (found.entry != nullptr)
    std::cout << " measurement_id=" << found.entry->measurement_id << " tuned_rows=" << found.entry->shape.rows
              << " tuned_cols=" << found.entry->shape.cols << " tuned_precision=" << found.entry->precision;
  std::cout << "\n";
  return 0;
}
