// `ktune worker`: internal; the process the tuner starts to run variants in isolation.
#include <memory>

#include "tuner/cli/cli_common.hpp"
#include "tuner/worker/worker_main.hpp"

namespace ktune::cli {
namespace {

struct WorkerOptions {
  std::string backend;
  int device = 0;
};

}  // namespace

void register_worker(CLI::App& app, Action& action) {
  auto options = std::make_shared<WorkerOptions>();
  auto* command = app.add_subcommand("worker", "Internal: evaluates variants for a tuner (started by ktune tune)");
  command->group("");  // hidden from --help
  command->add_option("--backend", options->backend)->required();
  command->add_option("--device", options->device);
  command->callback([options, &action] { action = [options] { return run_worker(options->backend, options->device); }; });
}

}  // namespace ktune::cli
