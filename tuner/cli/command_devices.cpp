// `ktune devices`: which backends this build has and the devices each one finds.
#include <iomanip>
#include <iostream>
#include <memory>

#include "tuner/backends/registry.hpp"
#include "tuner/cli/cli_common.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/worker/worker_client.hpp"

namespace ktune::cli {

void register_devices(CLI::App& app, CommonOptions& common, Action& action) {
  auto* command = app.add_subcommand("devices", "List the backends of this build and the devices they find");
  add_json_option(*command, common);
  command->callback([&common, &action] {
    action = [&common] {
      nlohmann::json backends = nlohmann::json::array();
      for (const auto& name : known_backend_names()) {
        nlohmann::json entry = {{"backend", name}, {"built", backend_built(name)}, {"devices", nlohmann::json::array()}};
        if (!backend_built(name)) {
          entry["status"] = "not built";
          entry["message"] = "this build of ktune has no " + name + " backend";
        } else {
          if (nlohmann::json compiler = backend_compiler(name); !compiler.is_null()) entry["compiler"] = compiler;
          try {
            WorkerClient worker(name, 0);  // device discovery runs in a worker, like tuning does
            entry["devices"].push_back(worker.hello(60.0).to_json());
            entry["status"] = "available";
          } catch (const KtuneError& e) {
            entry["status"] = "no device";
            entry["message"] = e.what();
          }
        }
        backends.push_back(entry);
      }
#ifdef KTUNE_WITH_MPI
      const nlohmann::json mpi = {{"built", true}};
#else
      const nlohmann::json mpi = {{"built", false}};
#endif
      if (common.json) {
        print_json({{"backends", backends}, {"mpi", mpi}});
        return 0;
      }
      for (const auto& entry : backends) {
        std::cout << std::left << std::setw(8) << entry["backend"].get<std::string>() << std::setw(11)
                  << entry["status"].get<std::string>();
        if (entry["devices"].empty()) {
          std::cout << entry.value("message", "") << "\n";
        } else {
          for (const auto& device : entry["devices"]) {
            std::cout << device["name"].get<std::string>() << " (" << device["architecture"].get<std::string>();
            for (const auto& [limit, value] : device["limits"].items()) std::cout << ", " << limit << "=" << value;
            std::cout << ")\n";
          }
        }
        // What compiles its variants: without it a device can run nothing, and --compile-only fails.
        if (const auto compiler = entry.find("compiler"); compiler != entry.end()) {
          std::cout << std::setw(19) << "" << "compiler: " << (*compiler)["name"].get<std::string>() << " ";
          if (compiler->contains("missing"))
            std::cout << "missing: " << (*compiler)["missing"].get<std::string>() << "\n";
          else
            std::cout << (*compiler)["version"].get<std::string>()
                      << (compiler->contains("library") ? " (" + (*compiler)["library"].get<std::string>() + ")" : "")
                      << "\n";
        }
      }
      return 0;
    };
  });
}

}  // namespace ktune::cli
