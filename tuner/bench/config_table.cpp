#include "tuner/bench/config_table.hpp"

#include <algorithm>

#include "tuner/core/errors.hpp"
#include "tuner/tune/export_tuned.hpp"

namespace ktune {
namespace {

std::string text_member(const nlohmann::json& object, const char* name, const std::string& where) {
  if (!object.is_object() || !object.contains(name) || !object.at(name).is_string())
    throw InputError(where + ": \"" + name + "\" is missing or not a string");
  return object.at(name).get<std::string>();
}

ConfigTableEntry read_entry(const nlohmann::json& json, const std::string& where, const KernelFamily& family,
                            const std::vector<std::string>& dims) {
  ConfigTableEntry entry;
  entry.backend = text_member(json, "backend", where);
  const nlohmann::json device = json.is_object() ? json.value("device", nlohmann::json()) : nlohmann::json();
  entry.device = text_member(device, "name", where + ".device");
  entry.architecture = text_member(device, "architecture", where + ".device");
  entry.vendor = text_member(device, "vendor", where + ".device");
  entry.precision = text_member(json, "precision", where);
  const auto precision = parse_precision(entry.precision);
  if (!precision) throw InputError(where + ": unknown precision '" + entry.precision + "'");
  const nlohmann::json shape = json.value("shape", nlohmann::json());
  entry.tuned_at.family = family.name();
  entry.tuned_at.precision = *precision;
  for (const std::string& dim : dims) {
    if (!shape.is_object() || !shape.contains(dim) || !shape.at(dim).is_number_integer())
      throw InputError(where + ".shape: no whole number for dim '" + dim + "' of " + family.name());
    entry.shape.push_back(shape.at(dim).get<std::int64_t>());
    entry.tuned_at.dims.emplace_back(dim, entry.shape.back());
  }
  if (!json.contains("config")) throw InputError(where + ": \"config\" is missing");
  entry.config = Config::from_json(json.at("config"), where + ".config");
  entry.measurement_id = json.value("measurement_id", std::int64_t{0});
  return entry;
}

}  // namespace

ConfigTable::ConfigTable(const nlohmann::json& table, const std::string& where, const KernelFamily& family) {
  if (!table.is_object() || !table.contains("entries") || !table.at("entries").is_array())
    throw InputError(where + ": not a generated config table (no \"entries\" array)");
  const std::vector<std::string> options = option_dim_names(family);
  for (const auto& dim : family.dims()) {
    dims_.push_back(dim.name);
    option_dim_.push_back(std::find(options.begin(), options.end(), dim.name) != options.end());
  }
  const nlohmann::json& entries = table.at("entries");
  for (std::size_t i = 0; i < entries.size(); ++i)
    entries_.push_back(read_entry(entries[i], where + " entries[" + std::to_string(i) + "]", family, dims_));
}

std::optional<ConfigTableAnswer> ConfigTable::lookup(const DeviceInfo& device, const Problem& problem) const {
  using Extents = std::vector<std::int64_t>;
  Extents asked;
  for (const std::string& dim : dims_) asked.push_back(problem.dim(dim));
  // The family's shape helpers as the exporter renders them (render_shape_helpers): option dims
  // equal, and the distance the product of extent ratios over the other dims, in dim order.
  const auto options_match = [this](const Extents& tuned, const Extents& query) {
    for (std::size_t d = 0; d < dims_.size(); ++d)
      if (option_dim_[d] && tuned[d] != query[d]) return false;
    return true;
  };
  const auto exact_match = [](const Extents& tuned, const Extents& query) { return tuned == query; };
  const auto distance = [this](const Extents& query, const Extents& tuned) {
    double product = 1.0;
    for (std::size_t d = 0; d < dims_.size(); ++d)
      if (!option_dim_[d]) product *= tuned::detail::extent_ratio(query[d], tuned[d]);
    return product;
  };
  const tuned::DeviceQuery query{
      .backend = device.backend, .device = device.name, .architecture = device.architecture, .vendor = device.vendor};
  const auto chosen = tuned::choose_entry(entries_, query, asked, to_string(problem.precision), options_match,
                                          exact_match, distance);
  if (chosen.entry == nullptr) return std::nullopt;
  return ConfigTableAnswer{chosen.entry, chosen.level};
}

}  // namespace ktune
