// The rule by which a table of tuned configs answers a lookup: the fallback chain device ->
// architecture -> vendor -> default, names compared normalised, and within the first level that
// has entries the requested precision first, then the exact shape, else the nearest shape.
//
// One rule, used twice. Every generated tuned/<backend>/<family>.hpp carries it: the exporter
// (db/export/header_exporter.cpp) copies the sections below, byte for byte, into each header,
// whose lookup_entry() calls choose_entry() on its constexpr entries (db/export/tuned_lookup.hpp).
// And ktune itself compiles this file: `ktune bench --tuned DIR` calls the same choose_entry() on
// the JSON table written beside each header (tuner/bench/tuned_table.cpp), so that it runs the
// config the header would give.
//
//   const DeviceQuery query{.backend = "cuda", .device = "NVIDIA H200", .architecture = "sm_90", .vendor = "nvidia"};
//   const auto chosen = choose_entry(table, query, shape, "bf16", same_options, same_shape, shape_distance);
//   if (chosen.entry != nullptr) use(chosen.entry->config, chosen.level);
//
// An entry is anything with backend, device, architecture, vendor and precision names (readable
// as std::string_view) and a shape; the three shape functions say what the family's dims mean.
// A section is the lines between "// BEGIN SECTION <name>" and "// END SECTION <name>"; the code
// in them may use only the standard headers included here, as a generated header does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ktune::tuned {

// BEGIN SECTION match_level
// Which level of the fallback chain answered a lookup.
enum class MatchLevel { device, architecture, vendor, default_config };

constexpr std::string_view to_string(MatchLevel level) {
  switch (level) {
    case MatchLevel::device: return "device";
    case MatchLevel::architecture: return "architecture";
    case MatchLevel::vendor: return "vendor";
    case MatchLevel::default_config: return "default_config";
  }
  return "default_config";
}

// END SECTION match_level

// BEGIN SECTION rule
// What the caller knows about its device (as its backend reports it). An empty field matches
// nothing.
struct DeviceQuery {
  std::string_view backend;       // "cuda", "hip", "vulkan", "cpu"
  std::string_view device;        // "NVIDIA H200"
  std::string_view architecture;  // "sm_90"
  std::string_view vendor;        // "nvidia"
};

namespace detail {

constexpr bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Reads a name in its normalised form: ASCII letters folded to lower case, runs of whitespace
// read as one space, leading and trailing whitespace skipped. next() returns -1 at the end.
class NormalisedName {
 public:
  constexpr explicit NormalisedName(std::string_view text) : text_(text) {
    while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
  }
  constexpr int next() {
    if (pos_ == text_.size()) return -1;
    if (is_space(text_[pos_])) {
      while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
      return pos_ == text_.size() ? -1 : ' ';
    }
    const char c = text_[pos_++];
    return static_cast<unsigned char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

// The one name comparison of the rule: equal after normalisation, and not empty.
constexpr bool same_name(std::string_view a, std::string_view b) {
  NormalisedName left(a), right(b);
  int l = left.next(), r = right.next();
  if (l == -1) return false;
  while (l == r && l != -1) {
    l = left.next();
    r = right.next();
  }
  return l == r;
}

template <class Entry>
constexpr bool matches(MatchLevel level, const Entry& entry, const DeviceQuery& query) {
  if (!same_name(entry.backend, query.backend)) return false;
  switch (level) {
    case MatchLevel::device: return same_name(entry.device, query.device);
    case MatchLevel::architecture: return same_name(entry.architecture, query.architecture);
    case MatchLevel::vendor: return same_name(entry.vendor, query.vendor);
    case MatchLevel::default_config: return false;
  }
  return false;
}

// max/min of two extents (each at least 1): 2^|log2(query / tuned)|. A family's shape distance
// is the product of this over its size dims.
constexpr double extent_ratio(std::int64_t query, std::int64_t tuned) {
  const double q = query < 1 ? 1.0 : static_cast<double>(query);
  const double t = tuned < 1 ? 1.0 : static_cast<double>(tuned);
  return q > t ? q / t : t / q;
}

}  // namespace detail

// The entry that answers a lookup, and the level of the fallback chain it answered at; a null
// entry (level default_config) when none matches, and the caller's default applies.
template <class Entry>
struct EntryChoice {
  const Entry* entry;
  MatchLevel level;
};

// The rule, over the entries of `table` in order. `options_match(tuned, query)`: the shapes agree on the family's option dims (layouts,
// epilogues), without which an entry never answers; `exact_match(tuned, query)`: the same shape;
// `distance(query, tuned)`: how far apart two shapes are (ties go to the entry listed first).
template <class Entries, class QueryShape, class OptionsMatch, class ExactMatch, class Distance>
constexpr EntryChoice<typename Entries::value_type> choose_entry(const Entries& table, const DeviceQuery& query,
                                                                 const QueryShape& shape, std::string_view precision,
                                                                 OptionsMatch options_match, ExactMatch exact_match,
                                                                 Distance distance) {
  using Entry = typename Entries::value_type;
  const MatchLevel levels[] = {MatchLevel::device, MatchLevel::architecture, MatchLevel::vendor};
  for (const MatchLevel level : levels) {
    const Entry* best = nullptr;
    bool best_precision = false, best_exact = false;
    double best_distance = 0;
    for (const Entry& entry : table) {
      if (!detail::matches(level, entry, query) || !options_match(entry.shape, shape)) continue;
      const bool same_precision = detail::same_name(entry.precision, precision);
      const bool exact = exact_match(entry.shape, shape);
      const double apart = distance(shape, entry.shape);
      const bool better = best == nullptr || (same_precision != best_precision ? same_precision
                                              : exact != best_exact           ? exact
                                                                              : apart < best_distance);
      if (better) {
        best = &entry;
        best_precision = same_precision;
        best_exact = exact;
        best_distance = apart;
      }
    }
    if (best != nullptr) return {best, level};
  }
  return {nullptr, MatchLevel::default_config};
}

// END SECTION rule

}  // namespace ktune::tuned
