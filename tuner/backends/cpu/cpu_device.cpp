#include "tuner/backends/cpu/cpu_device.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

namespace ktune {
namespace {

std::string trim(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t");
  const auto end = text.find_last_not_of(" \t\n");
  return begin == std::string::npos ? "" : text.substr(begin, end - begin + 1);
}

// First value of each key in /proc/cpuinfo (all processors report the same model).
std::map<std::string, std::string> read_cpuinfo() {
  std::map<std::string, std::string> fields;
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    fields.emplace(trim(line.substr(0, colon)), trim(line.substr(colon + 1)));
  }
  return fields;
}

// Cache size in bytes of `level` (1, 2, 3) for cpu0 from sysfs, 0 when unknown.
std::int64_t cache_bytes(int level) {
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream level_file(dir + "level"), type_file(dir + "type"), size_file(dir + "size");
    int found_level = 0;
    std::string type, size;
    if (!(level_file >> found_level) || !(type_file >> type) || !(size_file >> size)) continue;
    if (found_level != level || type == "Instruction") continue;
    std::int64_t value = std::stoll(size);
    if (size.back() == 'K') value *= 1024;
    if (size.back() == 'M') value *= 1024 * 1024;
    return value;
  }
  return 0;
}

int usable_threads() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::string instruction_set(const std::string& flags) {
  std::set<std::string> have;
  std::istringstream words(flags);
  for (std::string word; words >> word;) have.insert(word);
#if defined(__x86_64__)
  if (have.count("avx512f")) return "x86_64-avx512";
  if (have.count("avx2")) return "x86_64-avx2";
  return "x86_64";
#elif defined(__aarch64__)
  return have.count("sve") ? "aarch64-sve" : "aarch64";
#else
  return "unknown";
#endif
}

std::string normalise_vendor(const std::string& vendor_id) {
  if (vendor_id == "GenuineIntel") return "intel";
  if (vendor_id == "AuthenticAMD") return "amd";
  std::string lower = vendor_id.empty() ? "unknown" : vendor_id;
  for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return lower;
}

}  // namespace

DeviceInfo describe_host_cpu() {
  const auto cpuinfo = read_cpuinfo();
  auto field = [&](const std::string& key) {
    const auto it = cpuinfo.find(key);
    return it == cpuinfo.end() ? std::string() : it->second;
  };
  DeviceInfo info;
  info.backend = "cpu";
  info.name = field("model name").empty() ? "unknown CPU" : field("model name");
  info.vendor = normalise_vendor(field("vendor_id"));
  info.architecture = instruction_set(field("flags"));
  const int threads = usable_threads();
  const std::int64_t l1 = cache_bytes(1), l2 = cache_bytes(2), l3 = cache_bytes(3);
  const std::int64_t memory = static_cast<std::int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  info.limits = {{"hardware_threads", threads}, {"l1_bytes", l1},         {"l2_bytes", l2},
                 {"l3_bytes", l3},              {"memory_bytes", memory}};
  info.properties = {{"cpu_family", field("cpu family")}, {"model", field("model")},
                     {"microcode", field("microcode")}, {"threads", threads},
                     {"l1_bytes", l1}, {"l2_bytes", l2}, {"l3_bytes", l3}};
  // Same model, instruction set, thread count and caches: results carry over.
  info.fingerprint = "cpu|" + info.name + "|" + info.architecture + "|threads=" + std::to_string(threads) +
                     "|l2=" + std::to_string(l2) + "|l3=" + std::to_string(l3);
  return info;
}

}  // namespace ktune
