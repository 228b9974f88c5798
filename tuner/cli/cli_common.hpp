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
// --json alone, for commands that read no database (list, devices): they refuse --db.
void add_json_option(CLI::App& command, CommonOptions& common);

// The name of `names` closest to `word` by edit distance ("tnue" -> "tune"), or "" when none is
// close enough to be what was meant.
std::string closest_name(const std::string& word, const std::vector<std::string>& names);

// "rows=256,cols=1024" -> {rows: 256, cols: 1024}; InputError names the bad part.
std::map<std::string, std::int64_t> parse_shape(const std::string& text);

// Option checks whose messages name the value given and say what is expected, e.g.
// "--budget: 'many' is not a whole number of at least 1 (e.g. 50)". `expected` completes
// "is not ...".
CLI::Validator whole_number(std::uint64_t min, std::uint64_t max, const std::string& expected,
                            const std::string& description = "");
CLI::Validator real_number(double min, double max, bool min_exclusive, const std::string& expected,
                           const std::string& description = "");
// Refuses an empty value (e.g. --shape "" from an unset shell variable); `hint` says what to give.
CLI::Validator non_empty(const std::string& hint);

// A directory ktune will write into (created if missing): InputError unless it is one or can be
// made one. Nothing is created here.
void check_output_dir(const std::string& dir, const std::string& option, const std::string& alternative);

// --arch for a nominal GPU device: InputError for a backend without one or a malformed name.
void check_arch(const std::string& backend, const std::string& arch);

// argv with --json, --db PATH and --db=PATH that come before the command moved after it, where
// the command's own options are parsed (`ktune --json list` is `ktune list --json`).
std::vector<std::string> options_after_command(const std::vector<std::string>& argv);

// The names of ktune's commands (those --help lists), in order.
std::vector<std::string> command_names(const CLI::App& app);
// "unknown command 'tnue' (did you mean 'tune'?); valid commands: ...": for `ktune WORD` and
// `ktune help WORD` alike.
std::string unknown_command(const CLI::App& app, const std::string& word);

// The usage error CLI11 reported, in ktune's words: the unknown command or the bad option, and
// which --help to read.
std::string describe_usage_error(const CLI::App& app, const CLI::ParseError& error,
                                 const std::vector<std::string>& argv);

// What to do instead when a command found no GPU, for that command as it was given (a T1 spec
// has no CPU kernel; `space` sizes a nominal device with --arch): "" when there is nothing to add.
std::string no_device_hint(const std::string& command, const std::vector<std::string>& argv);

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
void register_bench(CLI::App& app, CommonOptions& common, Action& action);
void register_compare(CLI::App& app, CommonOptions& common, Action& action);
void register_report(CLI::App& app, CommonOptions& common, Action& action);
void register_replay(CLI::App& app, CommonOptions& common, Action& action);
void register_db(CLI::App& app, CommonOptions& common, Action& action);
void register_worker(CLI::App& app, Action& action);

}  // namespace ktune::cli
