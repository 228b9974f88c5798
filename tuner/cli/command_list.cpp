// `ktune list`: the kernel families, their dims, precisions and backends.
#include <filesystem>
#include <iostream>

#include "kernels/family.hpp"
#include "tuner/backends/registry.hpp"
#include "tuner/cli/cli_common.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/tune/space_files.hpp"

namespace ktune::cli {

void register_list(CLI::App& app, CommonOptions& common, Action& action) {
  auto* command = app.add_subcommand("list", "List the kernel families, their dimensions, precisions and backends");
  add_json_option(*command, common);
  command->callback([&common, &action] {
    action = [&common] {
      nlohmann::json families = nlohmann::json::array();
      for (const KernelFamily* family : all_families()) {
        nlohmann::json dims = nlohmann::json::array();
        for (const auto& dim : family->dims())
          dims.push_back({{"name", dim.name}, {"default", dim.default_value}, {"help", dim.help}});
        nlohmann::json precisions = nlohmann::json::array();
        for (Precision p : family->precisions()) precisions.push_back(std::string(to_string(p)));
        nlohmann::json backends = nlohmann::json::array();
        for (const auto& backend : known_backend_names()) {
          const auto space = default_space_file(family->name(), backend);
          if (!has_implementation(*family, backend) || !std::filesystem::exists(space)) continue;
          // The family's precisions this backend's kernels store (Vulkan shaders: no tf32 or fp8).
          nlohmann::json taken = nlohmann::json::array();
          for (Precision p : family->precisions()) {
            try {
              require_backend_precision(backend, p);
              taken.push_back(std::string(to_string(p)));
            } catch (const InputError&) {
            }
          }
          backends.push_back({{"backend", backend}, {"space", space.string()}, {"precisions", taken}});
        }
        nlohmann::json entry{{"kernel", family->name()}, {"summary", family->summary()}, {"dims", dims},
                             {"precisions", precisions}, {"backends", backends},
                             {"memory_bound", family->memory_bound()}};
        // A composed family runs (and is tuned as) its stages' kernels.
        if (const auto stages = table_families(*family); stages != std::vector<std::string>{family->name()})
          entry["stage_families"] = stages;
        families.push_back(std::move(entry));
      }
      if (common.json) {
        print_json({{"kernels", families}});
        return 0;
      }
      for (const auto& family : families) {
        std::cout << family["kernel"].get<std::string>() << ": " << family["summary"].get<std::string>() << "\n";
        std::cout << "  dims:       ";
        for (const auto& dim : family["dims"])
          std::cout << dim["name"].get<std::string>() << " (default " << dim["default"] << ")  ";
        std::cout << "\n  precisions: ";
        for (const auto& p : family["precisions"]) std::cout << p.get<std::string>() << " ";
        std::cout << "\n  backends:   ";
        for (const auto& b : family["backends"]) std::cout << b["backend"].get<std::string>() << " ";
        if (family.contains("stage_families")) {
          std::cout << "those of its stages' families: ";
          for (const auto& stage : family["stage_families"])
            std::cout << (&stage == &family["stage_families"].front() ? "" : ", ") << stage.get<std::string>();
          std::cout << " (`tune` tunes each stage at its own problem)";
        }
        std::cout << "\n";
      }
      return 0;
    };
  });
}

}  // namespace ktune::cli
