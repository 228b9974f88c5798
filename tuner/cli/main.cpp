// ktune: tune GPU (and CPU) kernels, store every result, export the winners as C++ headers.
// Exit codes: 0 ok, 1 a check failed, 2 bad input or usage, 3 backend or device absent.
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "db/store.hpp"
#include "ktune/build_info.hpp"
#include "tuner/cli/cli_common.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/tune/stop_request.hpp"
#include "tuner/worker/worker_client.hpp"

namespace {

void request_stop(int signal) {
  // First signal: a command that stops by itself (tune: finish the configs in flight, record the
  // run as interrupted, export) is told so; any other command ends here. Second: leave now
  // (results already measured are in the database).
  const bool second = ktune::g_stop_requested.exchange(true);
  if (!second) {
    ktune::g_stop_signal.store(signal);
    ktune::notify_stop_watchdog();  // the configs in flight get a grace period, then are dropped
  }
  if (second || !ktune::g_stop_handled.load()) {
    ktune::kill_active_workers();
    std::_Exit(128 + signal);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);  // a dead worker must not kill the tuner through its pipe
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  std::signal(SIGHUP, request_stop);
  ktune::Store::set_stop_check([] { return ktune::g_stop_requested.load(); });

  CLI::App app{"ktune: autotuner and benchmark harness for GPU kernels (CUDA, HIP, Vulkan) and the CPU.\n"
               "Enumerates each kernel family's tunable configs, verifies every variant against a float64\n"
               "reference, times it, stores all results in SQLite and exports the winners as C++ headers.\n"
               "Exit codes: 0 ok, 1 a check failed, 2 bad input, 3 backend or device absent.",
               "ktune"};
  app.set_version_flag("-V,--version", std::string("ktune ") + ktune::build_info::version + " (" +
                                        ktune::build_info::git_commit + ")");
  app.require_subcommand(1);
  app.fallthrough(false);

  ktune::cli::CommonOptions common;
  common.argv.assign(argv, argv + argc);
  ktune::cli::Action action;
  ktune::cli::register_devices(app, common, action);
  ktune::cli::register_list(app, common, action);
  ktune::cli::register_space(app, common, action);
  ktune::cli::register_tune(app, common, action);
  ktune::cli::register_export(app, common, action);
  ktune::cli::register_bench(app, common, action);
  ktune::cli::register_compare(app, common, action);
  ktune::cli::register_report(app, common, action);
  ktune::cli::register_replay(app, common, action);
  ktune::cli::register_db(app, common, action);
  ktune::cli::register_worker(app, action);

  // `ktune help [command]` is `ktune [command] --help`.
  std::vector<std::string> given = common.argv;
  if (given.size() >= 2 && given[1] == "help") {
    const std::vector<std::string> names = ktune::cli::command_names(app);
    if (given.size() >= 3 && std::find(names.begin(), names.end(), given[2]) == names.end()) {
      std::cerr << "ktune: error: help: " << ktune::cli::unknown_command(app, given[2]) << "\n";
      return static_cast<int>(ktune::ExitCode::bad_input);
    }
    given.erase(given.begin() + 1);
    given.push_back("--help");
  }
  // --json and --db are the command's options, but may come before it (`ktune --json list`).
  std::vector<std::string> arguments = ktune::cli::options_after_command(given);
  bool json_requested = std::find(arguments.begin(), arguments.end(), "--json") != arguments.end();
  try {
    std::vector<std::string> reversed(arguments.rbegin(), arguments.rend() - 1);
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::string message = ktune::cli::describe_usage_error(app, e, arguments);
    std::cerr << "ktune: error: " << message << "\n";
    // --json promises a JSON document on stdout, usage errors included.
    if (json_requested)
      ktune::cli::print_json({{"error", message}, {"exit_code", static_cast<int>(ktune::ExitCode::bad_input)}});
    return static_cast<int>(ktune::ExitCode::bad_input);
  }

  // `--kernel --json` takes "--json" as the kernel's name; the error still comes as JSON.
  json_requested = json_requested || common.json;
  // Output that could not be written (a full disk, a closed pipe) is a failure, not a success:
  // a script reading the output must not take an empty file for an answer.
  auto output_written = [](int code) {
    std::cout.flush();
    if (std::cout.good() && std::fflush(stdout) == 0 && !std::ferror(stdout)) return code;
    std::cerr << "ktune: error: the output could not be written to stdout (" << std::strerror(errno) << ")\n";
    return code == 0 ? 1 : code;
  };
  try {
    return output_written(action());
  } catch (const ktune::KtuneError& e) {
    std::string message = e.what();
    // No device: what to do instead depends on the command as it was given.
    const auto parsed = app.get_subcommands();
    if (dynamic_cast<const ktune::BackendUnavailable*>(&e) && message.rfind("no ", 0) == 0 && !parsed.empty())
      if (const std::string hint = ktune::cli::no_device_hint(parsed.front()->get_name(), arguments); !hint.empty())
        message += " " + hint;
    std::cerr << "ktune: error: " << message << "\n";
    if (json_requested) ktune::cli::print_json({{"error", message}, {"exit_code", static_cast<int>(e.code())}});
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::cerr << "ktune: internal error: " << e.what() << "\n";
    if (json_requested) ktune::cli::print_json({{"error", e.what()}, {"exit_code", 1}});
    return 1;
  }
}
