// Pieces shared by the ktune subcommands: common options, argument parsing and formatting.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace ktune::cli {

// Options every subcommand takes.
struct CommonOptions {
  bool json = false;
  std::string db = "ktune.db";
  std::vector<std::string> argv;  // the whole command line, recorded with each run
};

// What a subcommand does once its options are parsed; returns the process exit code.
using Action = std::function<int()>;

void add_common_options(CLI::App& command, CommonOptions& common);

// "rows=256,cols=1024" -> {rows: 256, cols: 1024}; InputError names the bad part.
std::map<std::string, std::int64_t> parse_shape(const std::string& text);

// 1234567 ns -> "1.235 ms"; 3.2e10 B/s -> "32.0 GB/s".
std::string format_duration_ns(double ns);
std::string format_rate(double per_second, const std::string& unit);

void print_json(const nlohmann::json& value);

// Registration of each subcommand; each sets `action` when it is the one chosen.
void register_devices(CLI::App& app, CommonOptions& common, Action& action);
void register_list(CLI::App& app, CommonOptions& common, Action& action);
void register_space(CLI::App& app, CommonOptions& common, Action& action);
void register_tune(CLI::App& app, CommonOptions& common, Action& action);
void register_export(CLI::App& app, CommonOptions& common, Action& action);
void register_compare(CLI::App& app, CommonOptions& common, Action& action);
void register_worker(CLI::App& app, Action& action);

}  // namespace ktune::cli
