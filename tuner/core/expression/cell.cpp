#include "tuner/core/expression/cell.hpp"

namespace ktune::expression_detail {

const char* type_name(const Cell& c) {
  switch (c.kind) {
    case kIntKind: return "int";
    case kDblKind: return "float";
    default: return "str";
  }
}

std::string describe(const Cell& c) {
  switch (c.kind) {
    case kIntKind: return std::to_string(c.i);
    case kDblKind: return to_string(Value{c.d});
    default: return "'" + *c.s + "'";
  }
}

Value to_value(const Cell& c) {
  switch (c.kind) {
    case kIntKind: return c.i;
    case kDblKind: return c.d;
    default: return *c.s;
  }
}

}  // namespace ktune::expression_detail
