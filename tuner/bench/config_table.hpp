// A generated config table (<dir>/<backend>/<family>.json, which `ktune export` writes beside each
// header, entry for entry) read back and looked up by the header's own rule, choose_entry() of
// db/export/lookup_rule.hpp: for a device and problem, `ktune bench --tuned DIR` runs the config
// that the header's lookup_entry() gives, nearest tuned shape and fallback chain included.
//
//   const ConfigTable table(json, "tuned/cpu/rmsnorm.json", family);
//   if (const auto answer = table.lookup(device, problem)) run(answer->entry->config, answer->tuned_at);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/export/lookup_rule.hpp"
#include "kernels/family.hpp"
#include "tuner/core/config.hpp"
#include "tuner/core/device.hpp"
#include "tuner/core/problem.hpp"

namespace ktune {

// One entry, with the members the rule reads as a generated header's TunedEntry has them.
struct ConfigTableEntry {
  std::string backend;
  std::string device;
  std::string architecture;
  std::string vendor;
  std::string precision;
  std::vector<std::int64_t> shape;  // the family's dims, in its order
  Config config;
  std::int64_t measurement_id = 0;
  Problem tuned_at;  // the problem this entry was tuned at: its shape and precision
};

struct ConfigTableAnswer {
  const ConfigTableEntry* entry;  // never null
  tuned::MatchLevel level;        // device, architecture or vendor
};

class ConfigTable {
 public:
  // InputError naming `where` and the entry when `table` is not a generated table of `family`.
  ConfigTable(const nlohmann::json& table, const std::string& where, const KernelFamily& family);

  // The entry the header answers with; nullopt where the header gives its default.
  std::optional<ConfigTableAnswer> lookup(const DeviceInfo& device, const Problem& problem) const;

 private:
  std::vector<std::string> dims_;
  std::vector<bool> option_dim_;  // per dim: must match exactly (option_dim_names)
  std::vector<ConfigTableEntry> entries_;
};

}  // namespace ktune
