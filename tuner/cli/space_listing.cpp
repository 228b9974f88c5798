#include "tuner/cli/space_listing.hpp"

#include <algorithm>
#include <iostream>

#include <nlohmann/json.hpp>

#include "tuner/core/errors.hpp"
#include "tuner/core/expression.hpp"

namespace ktune::cli {
namespace {

constexpr std::size_t kPageRows = 1000;

const Value& cell(const ValidConfigs& valid, std::size_t i, std::size_t p) {
  return valid.parameters()[p].values[valid.value_index(i, p)];
}

// The --where expression, parsed and bound to the slots Selection fills: the config's parameters
// first, then the context's names, as the space's own constraints see them.
Expression bind_filter(const std::string& where, const std::vector<Parameter>& parameters,
                       const SpaceContext& context) {
  Expression filter = Expression::parse(where, "--where");
  std::vector<std::string> names;
  for (const auto& parameter : parameters) names.push_back(parameter.name);
  for (const auto& [name, value] : context) names.push_back(name);
  filter.bind(names);
  return filter;
}

// The configs the --where expression keeps, one bit each. It is computed before anything is
// printed, so the JSON document can give its count first and an expression that fails on some
// config leaves no partial listing behind.
class Selection {
 public:
  Selection(const ValidConfigs& valid, const SpaceContext& context, const std::string& where) {
    if (where.empty()) {
      count_ = valid.size();
      return;
    }
    const Expression filter = bind_filter(where, valid.parameters(), context);
    const std::size_t width = valid.parameters().size();
    std::vector<Value> slots(width, Value{std::int64_t{0}});
    for (const auto& [name, value] : context) slots.push_back(value);
    kept_.assign(valid.size(), false);
    for (std::size_t i = 0; i < valid.size(); ++i) {
      for (std::size_t p = 0; p < width; ++p) slots[p] = cell(valid, i, p);
      try {
        kept_[i] = filter.evaluate_bool(slots);
      } catch (const InputError& e) {
        throw InputError(std::string(e.what()) + ", for the config " + valid.config(i).describe());
      }
      count_ += kept_[i] ? 1 : 0;
    }
  }
  std::size_t count() const { return count_; }
  bool keeps(std::size_t i) const { return kept_.empty() || kept_[i]; }

 private:
  std::vector<bool> kept_;  // empty when there is no filter: every config is kept
  std::size_t count_ = 0;
};

// Calls `row(i)` for each kept config, in enumeration order, stopping after `listed` of them.
template <typename Row>
void for_each_listed(const ValidConfigs& valid, const Selection& selection, std::size_t listed, Row row) {
  std::size_t done = 0;
  for (std::size_t i = 0; i < valid.size() && done < listed; ++i)
    if (selection.keeps(i)) {
      row(i);
      ++done;
    }
}

// "96 of 384 valid configs listed (3072 in the Cartesian product)"; with a filter it says which.
std::string summary_line(const ValidConfigs& valid, const Selection& selection, std::size_t listed,
                         const std::string& where) {
  std::string line = std::to_string(listed) + " of " + std::to_string(selection.count());
  if (where.empty())
    line += " valid configs listed (" + std::to_string(valid.total()) + " in the Cartesian product)";
  else
    line += " configs matching --where \"" + where + "\" listed (" + std::to_string(valid.size()) + " valid, " +
            std::to_string(valid.total()) + " in the Cartesian product)";
  if (listed < selection.count()) line += "; --limit 0 lists every one";
  return line;
}

// A column holding only numbers is right-aligned, as numbers are read by their last digits.
bool numeric(const Parameter& parameter) {
  return std::all_of(parameter.values.begin(), parameter.values.end(), is_number);
}

// How a table column is laid out. Widths come from each parameter's values, not from the rows,
// so the table streams.
struct Column {
  std::size_t width = 0;
  bool right_aligned = false;
};

std::vector<Column> table_columns(const std::vector<Parameter>& parameters) {
  std::vector<Column> columns;
  for (const auto& parameter : parameters) {
    Column column{parameter.name.size(), numeric(parameter)};
    for (const auto& value : parameter.values) column.width = std::max(column.width, to_string(value).size());
    columns.push_back(column);
  }
  return columns;
}

void write_table_line(std::ostream& out, const std::vector<std::string>& cells, const std::vector<Column>& columns) {
  std::string line;
  for (std::size_t p = 0; p < cells.size(); ++p) {
    if (p > 0) line += "  ";
    const std::string padding(columns[p].width - std::min(columns[p].width, cells[p].size()), ' ');
    line += columns[p].right_aligned ? padding + cells[p] : cells[p] + padding;
  }
  line.erase(line.find_last_not_of(' ') + 1);
  out << line << '\n';
}

std::vector<std::string> row_texts(const ValidConfigs& valid, std::size_t i) {
  std::vector<std::string> texts;
  for (std::size_t p = 0; p < valid.parameters().size(); ++p) texts.push_back(to_string(cell(valid, i, p)));
  return texts;
}

std::vector<std::string> parameter_names(const ValidConfigs& valid) {
  std::vector<std::string> names;
  for (const auto& parameter : valid.parameters()) names.push_back(parameter.name);
  return names;
}

void write_table(std::ostream& out, const ValidConfigs& valid, const Selection& selection, std::size_t listed,
                 const std::string& where) {
  const auto columns = table_columns(valid.parameters());
  write_table_line(out, parameter_names(valid), columns);
  for_each_listed(valid, selection, listed, [&](std::size_t i) { write_table_line(out, row_texts(valid, i), columns); });
  out << summary_line(valid, selection, listed, where) << '\n';
}

// A cell of a GitHub table: a '|' would end the cell, a line break the row.
std::string markdown_cell(const std::string& text) {
  std::string escaped;
  for (const char c : text) {
    if (c == '|') escaped += "\\|";
    else if (c == '\n' || c == '\r') escaped += ' ';
    else escaped += c;
  }
  return escaped;
}

void write_markdown_line(std::ostream& out, const std::vector<std::string>& cells) {
  out << '|';
  for (const auto& text : cells) out << ' ' << markdown_cell(text) << " |";
  out << '\n';
}

void write_markdown(std::ostream& out, const ValidConfigs& valid, const Selection& selection, std::size_t listed,
                    const std::string& where) {
  write_markdown_line(out, parameter_names(valid));
  out << '|';
  for (const auto& parameter : valid.parameters()) out << (numeric(parameter) ? " ---: |" : " :--- |");
  out << '\n';
  for_each_listed(valid, selection, listed, [&](std::size_t i) { write_markdown_line(out, row_texts(valid, i)); });
  // A table cut short says so below it, where a reader of the pasted table sees it.
  if (listed < selection.count()) out << '\n' << summary_line(valid, selection, listed, where) << '\n';
}

// RFC 4180: a field holding a comma, a quote or a line break is quoted, its quotes doubled.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

void write_csv_line(std::ostream& out, const std::vector<std::string>& fields) {
  for (std::size_t f = 0; f < fields.size(); ++f) out << (f > 0 ? "," : "") << csv_field(fields[f]);
  out << "\r\n";
}

void write_csv(std::ostream& out, const ValidConfigs& valid, const Selection& selection, std::size_t listed,
               const std::string& where) {
  write_csv_line(out, parameter_names(valid));
  for_each_listed(valid, selection, listed, [&](std::size_t i) { write_csv_line(out, row_texts(valid, i)); });
  // The data stays pure CSV; a listing cut short by --limit says so on stderr.
  if (listed < selection.count()) std::cerr << "ktune: " << summary_line(valid, selection, listed, where) << '\n';
}

nlohmann::ordered_json value_json(const Value& value) {
  return std::visit([](const auto& v) { return nlohmann::ordered_json(v); }, value);
}

std::string dump(const nlohmann::ordered_json& json, int indent) {
  // A --where typed in another encoding must not turn the listing into an internal error.
  return json.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

// One JSON document, written a config at a time: the head (counts first), then "configs".
void write_json(std::ostream& out, const ListedSpace& space, const ValidConfigs& valid, const Selection& selection,
                std::size_t listed, const std::string& where) {
  const auto optional_text = [](const std::optional<std::string>& text) {
    return text ? nlohmann::ordered_json(*text) : nlohmann::ordered_json(nullptr);
  };
  nlohmann::ordered_json head;
  head["kernel"] = space.kernel;
  head["backend"] = space.backend;
  head["shape"] = optional_text(space.shape);
  head["precision"] = optional_text(space.precision);
  if (space.t1) head["t1"] = *space.t1;
  head["parameters"] = parameter_names(valid);
  head["where"] = where.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(where);
  head["total"] = valid.total();
  head["valid"] = valid.size();
  head["count"] = selection.count();
  head["listed"] = listed;
  std::string text = dump(head, 2);
  text.erase(text.rfind('\n'));  // the closing brace: "configs" follows
  out << text << ",\n  \"configs\": [";
  const auto& parameters = valid.parameters();
  bool first = true;
  for_each_listed(valid, selection, listed, [&](std::size_t i) {
    nlohmann::ordered_json config = nlohmann::ordered_json::object();
    for (std::size_t p = 0; p < parameters.size(); ++p) config[parameters[p].name] = value_json(cell(valid, i, p));
    out << (first ? "\n    " : ",\n    ") << dump(config, -1);
    first = false;
  });
  out << (first ? "]\n}\n" : "\n  ]\n}\n");
}

}  // namespace

const std::vector<std::string>& list_format_names() {
  static const std::vector<std::string> names = {"table", "md", "csv", "json"};
  return names;
}

std::optional<ListFormat> parse_list_format(std::string_view name) {
  if (name == "table") return ListFormat::table;
  if (name == "md") return ListFormat::md;
  if (name == "csv") return ListFormat::csv;
  if (name == "json") return ListFormat::json;
  return std::nullopt;
}

std::size_t default_list_limit(ListFormat format) {
  return format == ListFormat::table || format == ListFormat::md ? kPageRows : 0;
}

void print_listing(std::ostream& out, const ListedSpace& space, const ValidConfigs& valid,
                   const SpaceContext& context, const ListRequest& request) {
  const Selection selection(valid, context, request.where);
  const std::size_t listed = request.limit == 0 ? selection.count() : std::min(request.limit, selection.count());
  switch (request.format) {
    case ListFormat::table: return write_table(out, valid, selection, listed, request.where);
    case ListFormat::md: return write_markdown(out, valid, selection, listed, request.where);
    case ListFormat::csv: return write_csv(out, valid, selection, listed, request.where);
    case ListFormat::json: return write_json(out, space, valid, selection, listed, request.where);
  }
}

}  // namespace ktune::cli
