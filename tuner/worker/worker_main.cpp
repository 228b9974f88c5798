#include "tuner/worker/worker_main.hpp"

#include <unistd.h>

#include <cstdio>
#include <memory>

#include "tuner/backends/registry.hpp"
#include "tuner/backends/variant_builder.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/formats/t1/t1_kernel.hpp"
#include "tuner/worker/line_channel.hpp"
#include "tuner/worker/protocol.hpp"

namespace ktune {
namespace {

nlohmann::json error_reply(const std::string& message, ExitCode code) {
  return {{"ok", false}, {"error", message}, {"exit_code", static_cast<int>(code)}};
}

}  // namespace

int run_worker(const std::string& backend_name, int device_index) {
  LineReader requests(kWorkerRequestFd);
  auto reply = [](const nlohmann::json& message) { write_line(kWorkerResponseFd, message.dump()); };
  std::unique_ptr<Backend> backend;
  std::unique_ptr<VariantBuilder> builder;  // in a compile process: the last problem's
  std::string builder_key;
  std::size_t next_build = 0;
  std::string line;
  while (requests.read_line(line, -1) == LineReader::Status::line) {
    nlohmann::json request;
    try {
      request = nlohmann::json::parse(line);
      const std::string op = request.at("op").get<std::string>();
      if (op == "quit") return 0;
      if (op == "compile") {
        // A compile process: builds variants and never opens the device.
        register_t1_kernel_from_environment();
        const Problem problem = protocol::problem_from_json(request.at("problem"));
        const Config config = protocol::config_from_json(request.at("config"));
        const BuildEffort effort = request.value("fast", false) ? BuildEffort::fast_check : BuildEffort::full;
        const std::string key = problem.family + ":" + problem.key() + "|" + request.at("arch").get<std::string>() +
                                (effort == BuildEffort::fast_check ? "|fast" : "");
        if (!builder || builder_key != key) {
          builder = make_variant_builder(backend_name, find_family(problem.family), problem, request.at("arch"),
                                         /*threads=*/1, effort, request.value("launch_only", std::vector<std::string>{}));
          builder_key = key;
        }
        if (!builder) throw InputError("the " + backend_name + " backend has no compile step");
        const BuiltVariant built = builder->get(next_build++, config);
        reply({{"ok", true},
               {"variant", {{"ok", built.ok}, {"log", built.log}, {"build", built.build.to_json()}}}});
        continue;
      }
      if (!backend) {
        // The kernel of a T1 spec, when the tuner that started this worker tunes one.
        register_t1_kernel_from_environment();
        backend = open_backend(backend_name, device_index);
      }
      if (op == "hello") {
        reply({{"ok", true}, {"device", backend->device().to_json()}});
      } else if (op == "prepare") {
        const Problem problem = protocol::problem_from_json(request.at("problem"));
        backend->prepare(find_family(problem.family), problem, request.at("seed").get<std::uint64_t>());
        reply({{"ok", true}, {"reference_ready", backend->reference_ready()}});
      } else if (op == "evaluate") {
        const Problem problem = protocol::problem_from_json(request.at("problem"));
        const Config config = protocol::config_from_json(request.at("config"));
        const MeasureSettings settings = MeasureSettings::from_json(request.at("settings"));
        const VariantBuild build = VariantBuild::from_json(request.value("build", nlohmann::json::object()));
        const EvaluationResult result =
            backend->evaluate(find_family(problem.family), problem, config, build, settings);
        // After a sticky device error this worker is done: it says so, so the tuner starts a
        // fresh one for the next config instead of finding a closed pipe.
        reply({{"ok", true},
               {"result", result.to_json()},
               {"restart", !backend->healthy()},
               {"reference_ready", backend->reference_ready()}});
        if (!backend->healthy()) return 0;
      } else {
        reply(error_reply("unknown worker request '" + op + "'", ExitCode::bad_input));
      }
    } catch (const KtuneError& e) {
      reply(error_reply(e.what(), e.code()));
    } catch (const std::exception& e) {
      reply(error_reply(e.what(), ExitCode::check_failed));
    }
  }
  return 0;
}

}  // namespace ktune
