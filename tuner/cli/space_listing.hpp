// `ktune space --list`: the valid configs of a constrained space, one a row, optionally filtered
// by a --where expression, printed as an aligned table, a Markdown table, CSV or one JSON
// document. Rows are written as they are read from the enumerated space, so a listing holds no
// more than the enumeration already does (plus one bit a config when --where is given).
//
//   ListRequest request;
//   request.format = ListFormat::csv;
//   request.where = "threads >= 4 and exp == 'poly'";
//   print_listing(std::cout, listed_space, space.enumerate(context), context, request);
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "tuner/core/search_space.hpp"

namespace ktune::cli {

enum class ListFormat { table, md, csv, json };

// "table", "md", "csv", "json" in that order.
const std::vector<std::string>& list_format_names();
// The format of a name; nullopt for one not in list_format_names().
std::optional<ListFormat> parse_list_format(std::string_view name);

// Rows a format prints when --limit is not given: a page of rows for the formats people read in a
// terminal or paste into an issue, every row for those programs read.
std::size_t default_list_limit(ListFormat format);

// Where the listed space came from, as the JSON document reports it.
struct ListedSpace {
  std::string kernel;
  std::string backend;
  std::optional<std::string> shape;      // dims in --shape syntax; absent for a T1 spec
  std::optional<std::string> precision;  // absent for a T1 spec
  std::optional<std::string> t1;         // the T1 spec's path, for a space read from one
};

struct ListRequest {
  ListFormat format = ListFormat::table;
  std::string where;  // an expression over parameters, problem dims and device limits; empty: all
  std::size_t limit = 0;  // rows printed at most; 0: every row
};

// Prints the configs of `valid` that `request.where` keeps, in the space's parameter order.
// The filter is parsed and bound before anything is printed: a malformed expression or an
// unknown name is an InputError naming --where and the expression; an expression that fails
// on some config (a division by zero, a string in arithmetic) names that config too.
void print_listing(std::ostream& out, const ListedSpace& space, const ValidConfigs& valid,
                   const SpaceContext& context, const ListRequest& request);

}  // namespace ktune::cli
