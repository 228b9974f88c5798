#include "library/src/config_choice.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "library/src/fallback_order.hpp"
#include "library/src/library_spaces.hpp"
#include "library/src/tuned_tables.hpp"
#include "tuner/core/errors.hpp"
#include "tuner/core/space_context.hpp"

namespace ktune::library {
namespace {

struct Candidate {
  Config config;
  std::string source;  // tuned, default or fallback
  // A run-time-dims binary's config: its constraints held at the bounds it was compiled for,
  // which is what its binary needs; the call's own dims may break ones about speed.
  bool checked_at_compile = false;
  // Compiled now when the library carries no binary of it (Executor::prepare_or_compile).
  bool compile = false;
};

// How many configs of the space's enumeration a call tries after its tuned, default and
// starting configs all failed to prepare (they passed the constraints but the backend refused).
constexpr std::size_t kEnumeratedTries = 64;
// How many of the tuned, default and starting configs a call whose shape nothing carried covers
// tries to compile at run time, before the space's first valid config.
constexpr std::size_t kCompileTries = 3;

// The candidate as a prepared launch, or nothing when its constraints fail for this problem or
// the backend refuses it; `refusal` then says why (kept only when it is still empty).
std::optional<ChosenConfig> try_candidate(Executor& executor, const KernelFamily& family, const Problem& problem,
                                          const SearchSpace& space, const SpaceContext& context,
                                          const Candidate& candidate, const std::optional<TunedAnswer>& tuned,
                                          std::string& refusal) {
  try {
    const auto violated =
        candidate.checked_at_compile ? std::vector<std::string>{} : space.violated(candidate.config, context);
    if (!violated.empty()) {
      if (refusal.empty()) refusal = candidate.source + " config violates " + violated.front();
      return std::nullopt;
    }
    PreparedLaunch launch;
    if (candidate.checked_at_compile)
      launch = executor.prepare_run_time_dims(family, problem, candidate.config, space);
    else if (candidate.compile)
      launch = executor.prepare_or_compile(family, problem, candidate.config, space);
    else
      launch = executor.prepare(family, problem, candidate.config, space);
    kernels::ConfigChoice choice;
    choice.source = candidate.source;
    choice.config = candidate.config.describe();
    choice.config_json = candidate.config.key();
    if (candidate.source == "tuned") {
      choice.level = tuned->level;
      choice.measurement_id = tuned->measurement_id;
      choice.tuned_shape = tuned->tuned_shape;
    } else {
      choice.level = candidate.source == "given" ? "given" : "default_config";
      choice.measurement_id = 0;
    }
    return ChosenConfig{std::move(choice), std::move(launch)};
  } catch (const ConfigCannotRun& e) {
    if (refusal.empty()) refusal = candidate.source + " config: " + e.what();
  } catch (const kernels::Error&) {
    throw;
  } catch (const std::exception& e) {
    // A config the space cannot read (a table exported from another version of the space).
    if (refusal.empty()) refusal = candidate.source + " config: " + e.what();
  }
  return std::nullopt;
}

// A caller's config in the space's order, every parameter given once with one of its values.
Config config_in_space(const SearchSpace& space, const std::string& family, std::string_view text) {
  using kernels::Error;
  using kernels::ErrorCode;
  const std::string where = family + " config";
  nlohmann::json given;
  try {
    given = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorCode::bad_argument, where + ": not JSON (" + e.what() + "): " + std::string(text));
  }
  if (!given.is_object())
    throw Error(ErrorCode::bad_argument, where + ": must be a JSON object of parameter values, got " + given.dump());
  Config config;
  std::vector<std::string> names;
  for (const Parameter& parameter : space.parameters()) {
    names.push_back(parameter.name);
    const auto found = given.find(parameter.name);
    if (found == given.end())
      throw Error(ErrorCode::bad_argument, where + ": parameter '" + parameter.name + "' is missing");
    const Value value = value_from_json(*found, where + "." + parameter.name);
    bool listed = false;
    std::string values;
    for (const Value& allowed : parameter.values) {
      listed = listed || to_json(allowed) == to_json(value);
      values += (values.empty() ? "" : ", ") + to_string(allowed);
    }
    if (!listed)
      throw Error(ErrorCode::bad_argument, where + ": " + parameter.name + "=" + to_string(value) +
                                               " is not one of its values (" + values + ")");
    config.values.emplace_back(parameter.name, value);
  }
  for (const auto& [name, value] : given.items())
    if (std::find(names.begin(), names.end(), name) == names.end())
      throw Error(ErrorCode::bad_argument, where + ": '" + name + "' is not a parameter of its " +
                                               space.backend() + " space; its parameters are: " +
                                               join_names(names));
  return config;
}

}  // namespace

ChosenConfig choose_config(Executor& executor, const KernelFamily& family, const Problem& problem) {
  const std::string backend = executor.backend();
  const SearchSpace& space = library_space(family.name(), backend);
  const SpaceContext context = make_context(problem, executor.device());
  const std::optional<TunedAnswer> tuned = tuned_lookup(backend, executor.device(), problem);

  std::vector<Candidate> candidates;
  const bool tuned_entry = tuned && tuned->level != "default_config";
  if (tuned_entry) candidates.push_back({tuned->config, "tuned"});
  // After a tuned entry every untuned config is a fallback; without one, the first untuned config
  // that runs here (a starting point valid on this device, else the space's default) is the
  // default.
  for (const Config& config : untuned_configs(space, family))
    candidates.push_back({config, tuned_entry ? "fallback" : "default"});

  std::string first_refusal;
  auto attempt = [&](const Candidate& candidate) {
    return try_candidate(executor, family, problem, space, context, candidate, tuned, first_refusal);
  };
  for (const Candidate& candidate : candidates)
    if (auto chosen = attempt(candidate)) return std::move(*chosen);
  const ValidConfigs valid = space.enumerate(context);
  for (std::size_t i = 0; i < valid.size() && i < kEnumeratedTries; ++i)
    if (auto chosen = attempt({valid.config(i), "fallback"})) return std::move(*chosen);
  // No binary was compiled for this shape: one that takes its dims at run time.
  for (const Config& config : executor.run_time_dims_configs(family, problem))
    if (auto chosen = attempt({config, "fallback", true})) return std::move(*chosen);
  // Nothing carried runs this shape: the first of the configs above that compiles for it now
  // (GPU backends with their run-time compiler; a few tries, as each failed one costs a compile).
  const auto valid_here = [&](const Config& config) {
    try {
      return space.violated(config, context).empty();
    } catch (const std::exception&) {
      return false;  // a config the space cannot read
    }
  };
  std::string compile_refusal;  // why the last compile failed (no compiler, compiles off, ...)
  const auto compile = [&](Candidate candidate) {
    candidate.compile = true;
    compile_refusal.clear();
    return try_candidate(executor, family, problem, space, context, candidate, tuned, compile_refusal);
  };
  std::size_t compiles = 0;
  for (const Candidate& candidate : candidates) {
    if (compiles == kCompileTries) break;
    if (!valid_here(candidate.config)) continue;
    ++compiles;
    if (auto chosen = compile(candidate)) return std::move(*chosen);
  }
  if (valid.size() > 0)
    if (auto chosen = compile({valid.config(0), "fallback"})) return std::move(*chosen);
  throw kernels::Error(kernels::ErrorCode::unsupported,
                       family.name() + " cannot run " + problem.describe() + " on " + executor.device().name + ": " +
                           (valid.size() == 0 ? "no config of its " + backend + " space is valid for this shape" +
                                                    (first_refusal.empty() ? "" : " (" + first_refusal + ")")
                                              : "the backend refused every valid config (" + first_refusal + ")" +
                                                    (compile_refusal.empty() ? "" : "; compiling one now: " + compile_refusal)));
}

ChosenConfig given_config(Executor& executor, const KernelFamily& family, const Problem& problem,
                          std::string_view config_json) {
  const SearchSpace& space = library_space(family.name(), executor.backend());
  // The caller asked for this config: compiled now when the library does not carry it.
  const Candidate candidate{config_in_space(space, family.name(), config_json), "given", false, true};
  std::string refusal;
  if (auto chosen = try_candidate(executor, family, problem, space, make_context(problem, executor.device()),
                                  candidate, std::nullopt, refusal))
    return std::move(*chosen);
  throw kernels::Error(kernels::ErrorCode::unsupported, family.name() + " cannot run " + problem.describe() + " on " +
                                                            executor.device().name + " with " +
                                                            candidate.config.describe() + ": " + refusal);
}

}  // namespace ktune::library
