// The expression language: a recursive-descent parser builds a small AST (folding numeric
// constants), which is compiled once into flat stack bytecode: 12-byte instructions, jumps for
// short-circuit logic, binary ops that read variables and small int constants directly (so
// `x * y <= 1024` is two instructions), and slot indices patched in by bind(). evaluate() runs the
// bytecode over a fixed stack of 16-byte cells on the C++ stack: no name lookups, no allocation
// unless a string is concatenated (or the expression needs more than 64 stack cells). Strings are
// never copied: a cell points at the slot's or the constant's std::string. evaluate() is const
// and keeps no state, so one bound expression may be evaluated from several threads.
//
// Semantics follow Python 3 (T1 `Conditions` are Python expressions): int/float arithmetic with
// Python floor division and modulo, `**` right-associative and tighter than unary minus, chained
// comparisons, short-circuit `and`/`or` that yield an operand, `x if c else y`, `in` on list or
// tuple literals and substrings. Booleans are int64 0/1. Integer overflow, which Python avoids with
// big integers, is reported as an error instead of wrapping.
//
// C-style spellings: `&&` = and, `||` = or, `!` = not. `!` binds like unary minus (as in C), so
// `!a < b` is `(!a) < b`, while `not a < b` is Python's `not (a < b)`.
#include "tuner/core/expression.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <forward_list>
#include <limits>
#include <string>
#include <utility>

#include "tuner/core/errors.hpp"

namespace ktune {

namespace {

// ---------------------------------------------------------------------------------------------
// Bytecode

enum class Op : std::uint8_t {
  kHalt,
  kSmallInt,  // push arg (an int that fits int32)
  kConst,     // push constants[arg]
  kLoad,      // push slots[arg] (arg is the slot once bound)
  kNeg,
  kPos,
  kNot,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kFloorDiv,
  kMod,
  kPow,
  // Comparisons (keep together, kEq first, kNotIn last).
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kIn,     // substring test: a in b with b a string
  kNotIn,
  kChain,             // aux = comparison op; [a b] -> [b] if a op b holds, else [False] and jump
  kInList,            // aux = 1 for `not in`; [x e1..en] -> [x in (e1..en)], arg = n
  kJumpIfFalseOrPop,  // and
  kJumpIfTrueOrPop,   // or
  kPopJumpIfFalse,    // ternary condition
  kJump,
  kCall,  // aux = function, arg = argument count
};

// Binary arithmetic and the last comparison of a chain take their operands from the stack, an
// immediate int32 or a slot, so that `x * y`, `x - 1` or `x == 0` is one instruction:
//   kSS: [a b] -> [a op b]        kSI: [a] -> [a op arg]          kSV: [a] -> [a op slots[arg]]
//   kVI: [] -> [slots[arg] op arg2]                              kVV: [] -> [slots[arg] op slots[arg2]]
enum Mode : std::uint8_t { kSS, kSI, kSV, kVI, kVV };

// Dispatch key of an instruction: the op and its operand mode.
constexpr std::uint8_t dispatch(Op op, std::uint8_t mode) {
  return static_cast<std::uint8_t>(static_cast<unsigned>(op) * 8 + mode);
}
static_assert(static_cast<unsigned>(Op::kCall) * 8 + kVV < 256);

struct Instr {
  std::uint8_t code;     // dispatch(op, mode)
  std::uint8_t aux;      // comparison op of kChain, negation of kInList, function of kCall
  std::uint16_t column;  // 1-based column of the operator, for runtime errors
  std::int32_t arg;      // immediate, slot, jump target, count
  std::int32_t arg2;     // immediate or slot of kVI / kVV

  Op op() const { return static_cast<Op>(code >> 3); }
};
static_assert(sizeof(Instr) == 12);

Instr make_instr(Op op, std::uint8_t mode, std::uint8_t aux, int column, std::int32_t arg, std::int32_t arg2) {
  return Instr{dispatch(op, mode), aux, static_cast<std::uint16_t>(std::clamp(column, 0, 65535)), arg, arg2};
}

enum Func : std::uint8_t {
  kMin,
  kMax,
  kAbs,
  kIntFn,
  kFloatFn,
  kCeil,
  kFloor,
  kCeilDiv,
  kRoundUp,
  kLog2,
  kIsPow2,
};

struct FuncInfo {
  const char* name;
  Func id;
  int min_args;
  int max_args;  // -1: unbounded
};

constexpr FuncInfo kFunctions[] = {
    {"abs", kAbs, 1, 1},           {"ceil", kCeil, 1, 1},         {"ceil_div", kCeilDiv, 2, 2},
    {"float", kFloatFn, 1, 1},     {"floor", kFloor, 1, 1},       {"int", kIntFn, 1, 1},
    {"is_pow2", kIsPow2, 1, 1},    {"log2", kLog2, 1, 1},         {"max", kMax, 2, -1},
    {"min", kMin, 2, -1},          {"round_up", kRoundUp, 2, 2},
};

const FuncInfo* find_function(const std::string& name) {
  for (const auto& f : kFunctions)
    if (name == f.name) return &f;
  return nullptr;
}

const char* function_name(std::uint8_t id) {
  for (const auto& f : kFunctions)
    if (f.id == id) return f.name;
  return "?";
}

const char* op_symbol(Op op) {
  switch (op) {
    case Op::kNeg: return "unary -";
    case Op::kPos: return "unary +";
    case Op::kAdd: return "+";
    case Op::kSub: return "-";
    case Op::kMul: return "*";
    case Op::kDiv: return "/";
    case Op::kFloorDiv: return "//";
    case Op::kMod: return "%";
    case Op::kPow: return "**";
    case Op::kEq: return "==";
    case Op::kNe: return "!=";
    case Op::kLt: return "<";
    case Op::kLe: return "<=";
    case Op::kGt: return ">";
    case Op::kGe: return ">=";
    case Op::kIn: return "in";
    case Op::kNotIn: return "not in";
    default: return "?";
  }
}

std::string quote_text(std::string_view text) {
  std::string out = "\"";
  out += text;
  out += '"';
  return out;
}

// ---------------------------------------------------------------------------------------------
// Evaluation cells

enum Kind : std::uint8_t { kIntKind, kDblKind, kStrKind };

struct Cell {
  Kind kind;
  union {
    std::int64_t i;
    double d;
    const std::string* s;
  };
};

inline double num(const Cell& c) { return c.kind == kIntKind ? static_cast<double>(c.i) : c.d; }

inline bool truthy(const Cell& c) {
  switch (c.kind) {
    case kIntKind: return c.i != 0;
    case kDblKind: return c.d != 0.0;
    default: return !c.s->empty();
  }
}

inline void set_int(Cell& c, std::int64_t v) {
  c.kind = kIntKind;
  c.i = v;
}
inline void set_dbl(Cell& c, double v) {
  c.kind = kDblKind;
  c.d = v;
}

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

template <typename T>
inline bool compare_with(Op op, const T& a, const T& b) {
  switch (op) {
    case Op::kEq: return a == b;
    case Op::kNe: return a != b;
    case Op::kLt: return a < b;
    case Op::kLe: return a <= b;
    case Op::kGt: return a > b;
    default: return a >= b;
  }
}

// Python's ==: numbers compare by value across int/float, strings by content, mixed are unequal.
inline bool equal(const Cell& a, const Cell& b) {
  if (a.kind == kIntKind && b.kind == kIntKind) return a.i == b.i;
  if (a.kind != kStrKind && b.kind != kStrKind) return num(a) == num(b);
  if (a.kind == kStrKind && b.kind == kStrKind) return *a.s == *b.s;
  return false;
}

constexpr double kTwo63 = 9223372036854775808.0;

inline bool fits_int64(double d) { return d >= -kTwo63 && d < kTwo63; }

// CPython's float floor division and modulo.
double py_float_mod(double a, double b) {
  double mod = std::fmod(a, b);
  if (mod != 0.0) {
    if ((b < 0) != (mod < 0)) mod += b;
  } else {
    mod = std::copysign(0.0, b);
  }
  return mod;
}

double py_float_floordiv(double a, double b) {
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0.0 && ((b < 0) != (mod < 0))) div -= 1.0;
  if (div != 0.0) {
    double floordiv = std::floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
    return floordiv;
  }
  return std::copysign(0.0, a / b);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// ---------------------------------------------------------------------------------------------
// AST (parse-time only)

struct Node {
  enum Type { kConstant, kVariable, kUnary, kBinary, kNotNode, kAnd, kOr, kTernary, kCompare, kCall, kList };
  Type type;
  int column = 0;
  Op op = Op::kHalt;       // unary/binary operator
  int index = 0;           // constant index / variable index / function id
  std::vector<Op> ops;     // comparison chain operators
  std::vector<int> op_columns;
  std::vector<std::unique_ptr<Node>> kids;
};
using NodePtr = std::unique_ptr<Node>;

NodePtr make_node(Node::Type type, int column) {
  auto n = std::make_unique<Node>();
  n->type = type;
  n->column = column;
  return n;
}

// ---------------------------------------------------------------------------------------------
// Lexer

struct Token {
  enum Type { kEnd, kInt, kFloat, kString, kName, kOp };
  Type type = kEnd;
  std::size_t pos = 0;  // 0-based offset in the text
  std::int64_t i = 0;
  double d = 0.0;
  std::string s;  // operator, name or string literal contents
};

}  // namespace

// ---------------------------------------------------------------------------------------------

struct Expression::Impl {
  std::string text;
  std::string where;
  std::vector<std::string> variables;
  std::vector<Value> constants;
  std::vector<Instr> code;
  struct SlotRef {
    std::uint32_t pc;
    bool second;  // arg2 rather than arg
    std::uint32_t variable;
  };
  std::vector<SlotRef> loads;  // instruction operands that bind() sets to slot indices
  int max_depth = 0;
  bool bound = false;
  std::size_t min_slots = 0;  // 1 + highest slot index used

  // Error paths are out of line so that the interpreter loop stays small.
  [[noreturn, gnu::cold, gnu::noinline]] void fail(const Instr& in, const std::string& what) const {
    throw InputError(where + ": " + what + " at column " + std::to_string(in.column) + " in " +
                     quote_text(text));
  }
  [[noreturn, gnu::cold, gnu::noinline]] void fail_types(const Instr& in, const Cell& a, const Cell& b) const {
    fail(in, std::string("unsupported operand types for ") + op_symbol(in.op()) + ": '" +
                 type_name(a) + "' and '" + type_name(b) + "'");
  }
  [[noreturn, gnu::cold, gnu::noinline]] void fail_overflow(const Instr& in) const {
    fail(in, std::string("integer overflow in ") + op_symbol(in.op()));
  }
  [[noreturn, gnu::cold, gnu::noinline]] void fail_unary(const Instr& in) const {
    fail(in, std::string("bad operand type for ") + op_symbol(in.op()) + ": 'str'");
  }
  [[noreturn, gnu::cold, gnu::noinline]] void fail_empty_slot(const Instr& in) const {
    fail(in, "slot " + std::to_string(in.arg) + " holds no value");
  }

  using Temps = std::forward_list<std::string>;

  // Slow paths (anything but int-int fast cases).
  [[gnu::noinline]] bool compare(const Instr& in, Op op, const Cell& a, const Cell& b) const;
  [[gnu::noinline]] void arith(const Instr& in, Cell& a, const Cell& b, Temps& temps) const;
  [[gnu::noinline]] void call(const Instr& in, Cell* args, int argc) const;
  [[gnu::always_inline]] void load(const Instr& in, Cell& c, const Value& v) const {
    switch (v.index()) {
      case 0: set_int(c, *std::get_if<0>(&v)); return;
      case 1: set_dbl(c, *std::get_if<1>(&v)); return;
      case 2:
        c.kind = kStrKind;
        c.s = std::get_if<2>(&v);
        return;
      default: fail_empty_slot(in);
    }
  }
  std::int64_t to_int_checked(const Instr& in, double d, const char* fn) const;
  Cell run(std::span<const Value> slots, Temps& temps) const;
};

namespace {

// ---------------------------------------------------------------------------------------------
// Parser + compiler

// A template only so that it may name Expression::Impl (private) through its argument.
template <typename Impl>
class Parser {
 public:
  Parser(std::string_view text, const std::string& where, Impl& impl)
      : text_(text), where_(where), impl_(impl) {}

  void parse_and_compile() {
    tokenize();
    NodePtr root = parse_test();
    if (peek().type != Token::kEnd) error(peek(), "an operator or end of expression");
    compile(*root);
    emit(Op::kHalt, 0, 0, 0, 0, 0);
    impl_.max_depth = max_depth_;
  }

 private:
  [[noreturn]] void error_at(std::size_t pos, const std::string& expected) const {
    throw InputError(where_ + ": expected " + expected + " at column " + std::to_string(pos + 1) +
                     " in " + quote_text(text_));
  }
  [[noreturn]] void error(const Token& t, const std::string& expected) const { error_at(t.pos, expected); }

  // --- lexer ---

  void tokenize() {
    std::size_t p = 0;
    const std::size_t n = text_.size();
    while (true) {
      while (p < n && std::isspace(static_cast<unsigned char>(text_[p]))) ++p;
      Token t;
      t.pos = p;
      if (p >= n) {
        tokens_.push_back(std::move(t));
        return;
      }
      const char c = text_[p];
      if (std::isdigit(static_cast<unsigned char>(c)) ||
          (c == '.' && p + 1 < n && std::isdigit(static_cast<unsigned char>(text_[p + 1])))) {
        p = lex_number(p, t);
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        std::size_t q = p;
        while (q < n && (std::isalnum(static_cast<unsigned char>(text_[q])) || text_[q] == '_')) ++q;
        t.type = Token::kName;
        t.s = std::string(text_.substr(p, q - p));
        p = q;
      } else if (c == '\'' || c == '"') {
        p = lex_string(p, t);
      } else {
        static constexpr const char* kTwoChar[] = {"**", "//", "==", "!=", "<=", ">=", "&&", "||"};
        t.type = Token::kOp;
        for (const char* op : kTwoChar) {
          if (text_.substr(p, 2) == op) {
            t.s = op;
            break;
          }
        }
        if (t.s.empty()) {
          if (std::strchr("+-*/%<>()[],!", c) != nullptr) {
            t.s = std::string(1, c);
          } else if (c == '&') {
            error_at(p, "'&&'");
          } else if (c == '|') {
            error_at(p, "'||'");
          } else if (c == '=') {
            error_at(p, "'=='");
          } else {
            error_at(p, std::string("an expression or operator, found '") + c + "'");
          }
        }
        p += t.s.size();
      }
      tokens_.push_back(std::move(t));
    }
  }

  std::size_t lex_number(std::size_t p, Token& t) {
    const std::size_t n = text_.size();
    const std::size_t start = p;
    auto is_ident = [&](std::size_t q) {
      return q < n && (std::isalnum(static_cast<unsigned char>(text_[q])) || text_[q] == '_');
    };
    if (text_[p] == '0' && p + 1 < n && std::strchr("xXoObB", text_[p + 1]) != nullptr) {
      const char kind = static_cast<char>(std::tolower(static_cast<unsigned char>(text_[p + 1])));
      const int base = kind == 'x' ? 16 : kind == 'o' ? 8 : 2;
      std::size_t q = p + 2;
      while (is_ident(q)) ++q;
      std::uint64_t value = 0;
      const char* first = text_.data() + p + 2;
      const char* last = text_.data() + q;
      auto [ptr, ec] = std::from_chars(first, last, value, base);
      if (first == last || ptr != last) error_at(start, std::string("base-") + std::to_string(base) + " digits");
      if (ec == std::errc::result_out_of_range || value > static_cast<std::uint64_t>(INT64_MAX))
        error_at(start, "an integer literal that fits in 64 bits");
      t.type = Token::kInt;
      t.i = static_cast<std::int64_t>(value);
      return q;
    }
    std::size_t q = p;
    bool is_float = false;
    while (q < n && std::isdigit(static_cast<unsigned char>(text_[q]))) ++q;
    if (q < n && text_[q] == '.') {
      is_float = true;
      ++q;
      while (q < n && std::isdigit(static_cast<unsigned char>(text_[q]))) ++q;
    }
    if (q < n && (text_[q] == 'e' || text_[q] == 'E')) {
      std::size_t r = q + 1;
      if (r < n && (text_[r] == '+' || text_[r] == '-')) ++r;
      if (r < n && std::isdigit(static_cast<unsigned char>(text_[r]))) {
        is_float = true;
        q = r;
        while (q < n && std::isdigit(static_cast<unsigned char>(text_[q]))) ++q;
      } else {
        error_at(r, "exponent digits");
      }
    }
    if (is_ident(q)) error_at(q, "an operator after the number");
    const std::string_view digits = text_.substr(p, q - p);
    if (is_float) {
      double value = 0.0;
      auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      if (ptr != digits.data() + digits.size() || (ec != std::errc() && ec != std::errc::result_out_of_range))
        error_at(start, "a number");
      if (ec == std::errc::result_out_of_range) {
        // from_chars leaves value untouched on range errors; Python gives inf or 0.0.
        value = std::strtod(std::string(digits).c_str(), nullptr);
      }
      t.type = Token::kFloat;
      t.d = value;
    } else {
      if (digits.size() > 1 && digits[0] == '0' && digits.find_first_not_of('0') != std::string_view::npos)
        error_at(start, "a decimal integer without leading zeros (use 0o for octal)");
      std::int64_t value = 0;
      auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      if (ec == std::errc::result_out_of_range) error_at(start, "an integer literal that fits in 64 bits");
      if (ptr != digits.data() + digits.size()) error_at(start, "a number");
      t.type = Token::kInt;
      t.i = value;
    }
    return q;
  }

  std::size_t lex_string(std::size_t p, Token& t) {
    const char quote = text_[p];
    std::size_t q = p + 1;
    std::string out;
    while (true) {
      if (q >= text_.size()) error_at(q, std::string("closing ") + quote + " of the string starting at column " +
                                             std::to_string(p + 1));
      const char c = text_[q];
      if (c == quote) break;
      if (c == '\\' && q + 1 < text_.size()) {
        const char e = text_[q + 1];
        switch (e) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          case '0': out += '\0'; break;
          case '\\':
          case '\'':
          case '"': out += e; break;
          default:  // Python keeps unknown escapes verbatim
            out += '\\';
            out += e;
        }
        q += 2;
        continue;
      }
      out += c;
      ++q;
    }
    t.type = Token::kString;
    t.s = std::move(out);
    return q + 1;
  }

  // --- token helpers ---

  const Token& peek(std::size_t ahead = 0) const {
    const std::size_t i = std::min(pos_ + ahead, tokens_.size() - 1);
    return tokens_[i];
  }
  const Token& next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool is_op(const char* op, std::size_t ahead = 0) const {
    const Token& t = peek(ahead);
    return t.type == Token::kOp && t.s == op;
  }
  bool is_keyword(const char* kw, std::size_t ahead = 0) const {
    const Token& t = peek(ahead);
    return t.type == Token::kName && t.s == kw;
  }
  static bool is_reserved(const std::string& name) {
    return name == "and" || name == "or" || name == "not" || name == "if" || name == "else" ||
           name == "in" || name == "True" || name == "False";
  }
  void expect_op(const char* op) {
    if (!is_op(op)) error(peek(), std::string("'") + op + "'");
    next();
  }

  struct DepthGuard {
    explicit DepthGuard(Parser& p) : parser(p) {
      if (++parser.nesting_ > kMaxNesting) parser.error(parser.peek(), "a less deeply nested expression");
    }
    ~DepthGuard() { --parser.nesting_; }
    Parser& parser;
  };
  static constexpr int kMaxNesting = 200;

  // --- grammar (Python precedence, lowest first) ---

  // test: or_test ['if' or_test 'else' test]
  NodePtr parse_test() {
    DepthGuard guard(*this);
    NodePtr value = parse_or();
    if (is_keyword("if")) {
      const int column = static_cast<int>(next().pos) + 1;
      NodePtr cond = parse_or();
      if (!is_keyword("else")) error(peek(), "'else'");
      next();
      NodePtr other = parse_test();
      auto n = make_node(Node::kTernary, column);
      n->kids.push_back(std::move(cond));
      n->kids.push_back(std::move(value));
      n->kids.push_back(std::move(other));
      return n;
    }
    return value;
  }

  NodePtr parse_or() {
    NodePtr first = parse_and();
    if (!(is_keyword("or") || is_op("||"))) return first;
    auto n = make_node(Node::kOr, static_cast<int>(peek().pos) + 1);
    n->kids.push_back(std::move(first));
    while (is_keyword("or") || is_op("||")) {
      next();
      n->kids.push_back(parse_and());
    }
    return n;
  }

  NodePtr parse_and() {
    NodePtr first = parse_not();
    if (!(is_keyword("and") || is_op("&&"))) return first;
    auto n = make_node(Node::kAnd, static_cast<int>(peek().pos) + 1);
    n->kids.push_back(std::move(first));
    while (is_keyword("and") || is_op("&&")) {
      next();
      n->kids.push_back(parse_not());
    }
    return n;
  }

  NodePtr parse_not() {
    if (is_keyword("not")) {
      DepthGuard guard(*this);
      auto n = make_node(Node::kNotNode, static_cast<int>(next().pos) + 1);
      n->kids.push_back(parse_not());
      return n;
    }
    return parse_comparison();
  }

  // Returns the comparison operator at the cursor (and its token count), or kHalt.
  Op peek_comparison(int& tokens) const {
    tokens = 1;
    const Token& t = peek();
    if (t.type == Token::kOp) {
      if (t.s == "==") return Op::kEq;
      if (t.s == "!=") return Op::kNe;
      if (t.s == "<") return Op::kLt;
      if (t.s == "<=") return Op::kLe;
      if (t.s == ">") return Op::kGt;
      if (t.s == ">=") return Op::kGe;
    } else if (t.type == Token::kName) {
      if (t.s == "in") return Op::kIn;
      if (t.s == "not" && is_keyword("in", 1)) {
        tokens = 2;
        return Op::kNotIn;
      }
    }
    return Op::kHalt;
  }

  NodePtr parse_comparison() {
    NodePtr first = parse_arith();
    int tokens = 0;
    Op op = peek_comparison(tokens);
    if (op == Op::kHalt) return first;
    auto n = make_node(Node::kCompare, first->column);
    n->kids.push_back(std::move(first));
    while (op != Op::kHalt) {
      n->ops.push_back(op);
      n->op_columns.push_back(static_cast<int>(peek().pos) + 1);
      for (int k = 0; k < tokens; ++k) next();
      if (op == Op::kIn || op == Op::kNotIn) {
        NodePtr list = try_parse_sequence();
        if (list) {
          n->kids.push_back(std::move(list));
          if (peek_comparison(tokens) != Op::kHalt)
            error(peek(), "no further comparison after a list (a list must end a comparison chain)");
          return n;
        }
      }
      n->kids.push_back(parse_arith());
      op = peek_comparison(tokens);
    }
    return n;
  }

  // After `in`: a list `[...]` or a tuple `(...)` with a comma (or empty), else nullptr with the
  // cursor unchanged (a parenthesized expression, e.g. a string, follows).
  NodePtr try_parse_sequence() {
    const bool bracket = is_op("[");
    if (!bracket && !is_op("(")) return nullptr;
    const std::size_t saved_pos = pos_;
    const std::size_t saved_vars = impl_.variables.size();
    const std::size_t saved_consts = impl_.constants.size();
    const char* close = bracket ? "]" : ")";
    auto n = make_node(Node::kList, static_cast<int>(next().pos) + 1);
    bool saw_comma = false;
    while (!is_op(close)) {
      n->kids.push_back(parse_test());
      if (is_op(",")) {
        next();
        saw_comma = true;
      } else if (!is_op(close)) {
        if (!bracket && !saw_comma) break;  // maybe a parenthesized expression
        error(peek(), std::string("',' or '") + close + "'");
      }
    }
    if (!bracket && !saw_comma && n->kids.size() == 1) {
      // `(expr)`: not a tuple; re-parse as an ordinary operand.
      pos_ = saved_pos;
      impl_.variables.resize(saved_vars);
      impl_.constants.resize(saved_consts);
      return nullptr;
    }
    next();  // close
    return n;
  }

  NodePtr parse_arith() {
    NodePtr left = parse_term();
    while (is_op("+") || is_op("-")) {
      const Token& t = next();
      left = binary(t.s == "+" ? Op::kAdd : Op::kSub, t, std::move(left), parse_term());
    }
    return left;
  }

  NodePtr parse_term() {
    NodePtr left = parse_factor();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const Token& t = next();
      const Op op = t.s == "*" ? Op::kMul : t.s == "/" ? Op::kDiv : t.s == "//" ? Op::kFloorDiv : Op::kMod;
      left = binary(op, t, std::move(left), parse_factor());
    }
    return left;
  }

  NodePtr parse_factor() {
    if (is_op("-") || is_op("+") || is_op("!")) {
      DepthGuard guard(*this);
      const Token& t = next();
      const int column = static_cast<int>(t.pos) + 1;
      if (t.s == "!") {
        auto n = make_node(Node::kNotNode, column);
        n->kids.push_back(parse_factor());
        return n;
      }
      auto n = make_node(Node::kUnary, column);
      n->op = t.s == "-" ? Op::kNeg : Op::kPos;
      n->kids.push_back(parse_factor());
      return fold(std::move(n));
    }
    return parse_power();
  }

  // power: atom ['**' factor]  (right-associative, binds tighter than unary minus on its left)
  NodePtr parse_power() {
    NodePtr base = parse_atom();
    if (is_op("**")) {
      DepthGuard guard(*this);
      const Token& t = next();
      return binary(Op::kPow, t, std::move(base), parse_factor());
    }
    return base;
  }

  NodePtr parse_atom() {
    const Token& t = peek();
    const int column = static_cast<int>(t.pos) + 1;
    switch (t.type) {
      case Token::kInt:
        next();
        return constant(Value{t.i}, column);
      case Token::kFloat:
        next();
        return constant(Value{t.d}, column);
      case Token::kString:
        next();
        return constant(Value{t.s}, column);
      case Token::kName: {
        if (t.s == "True" || t.s == "False") {
          next();
          return constant(Value{std::int64_t{t.s == "True" ? 1 : 0}}, column);
        }
        if (is_reserved(t.s)) error(t, "an expression, found '" + t.s + "'");
        if (is_op("(", 1)) return parse_call();
        next();
        auto n = make_node(Node::kVariable, column);
        n->index = variable(t.s);
        return n;
      }
      case Token::kOp:
        if (t.s == "(") {
          next();
          NodePtr inner = parse_test();
          expect_op(")");
          return inner;
        }
        if (t.s == "[") error(t, "an expression (a list is only allowed after 'in')");
        break;
      case Token::kEnd:
        break;
    }
    error(t, "an expression");
  }

  NodePtr parse_call() {
    const Token& name = next();
    const int column = static_cast<int>(name.pos) + 1;
    const FuncInfo* f = find_function(name.s);
    if (f == nullptr) {
      std::vector<std::string> names;
      for (const auto& fn : kFunctions) names.push_back(fn.name);
      error(name, "a known function (" + join_names(names) + "), found '" + name.s + "'");
    }
    next();  // (
    auto n = make_node(Node::kCall, column);
    n->index = f->id;
    if (!is_op(")")) {
      while (true) {
        n->kids.push_back(parse_test());
        if (is_op(",")) {
          next();
          if (is_op(")")) break;  // trailing comma
          continue;
        }
        if (!is_op(")")) error(peek(), "',' or ')'");
        break;
      }
    }
    next();  // )
    const int argc = static_cast<int>(n->kids.size());
    if (argc < f->min_args || (f->max_args >= 0 && argc > f->max_args)) {
      std::string expected;
      if (f->max_args < 0) {
        expected = "at least " + std::to_string(f->min_args) + " arguments";
      } else {
        expected = std::to_string(f->min_args) + (f->min_args == 1 ? " argument" : " arguments");
      }
      error_at(name.pos, expected + " to " + f->name + "(), got " + std::to_string(argc));
    }
    return n;
  }

  NodePtr binary(Op op, const Token& t, NodePtr left, NodePtr right) {
    auto n = make_node(Node::kBinary, static_cast<int>(t.pos) + 1);
    n->op = op;
    n->kids.push_back(std::move(left));
    n->kids.push_back(std::move(right));
    return fold(std::move(n));
  }

  // A numeric constant's cell, or false.
  bool numeric_constant(const Node& n, Cell& c) const {
    if (n.type != Node::kConstant) return false;
    const Value& v = impl_.constants[static_cast<std::size_t>(n.index)];
    if (const auto* i = std::get_if<std::int64_t>(&v)) {
      set_int(c, *i);
      return true;
    }
    if (const auto* d = std::get_if<double>(&v)) {
      set_dbl(c, *d);
      return true;
    }
    return false;
  }

  // Constant folding of numeric unary and binary operations (12*1024, -1). An operation that
  // would fail (1/0) is left for run time, where it may be short-circuited away as in Python.
  NodePtr fold(NodePtr n) {
    Cell a;
    Cell b;
    if (n->type == Node::kUnary && numeric_constant(*n->kids[0], a)) {
      if (n->op == Op::kNeg) {
        if (a.kind == kIntKind) {
          if (a.i == INT64_MIN) return n;
          a.i = -a.i;
        } else {
          a.d = -a.d;
        }
      }
      return constant(a.kind == kIntKind ? Value{a.i} : Value{a.d}, n->column);
    }
    if (n->type == Node::kBinary && numeric_constant(*n->kids[0], a) && numeric_constant(*n->kids[1], b)) {
      const Instr in = make_instr(n->op, kSS, 0, 0, 0, 0);
      try {
        typename Impl::Temps temps;
        impl_.arith(in, a, b, temps);
      } catch (const InputError&) {
        return n;
      }
      return constant(a.kind == kIntKind ? Value{a.i} : Value{a.d}, n->column);
    }
    return n;
  }

  NodePtr constant(Value v, int column) {
    auto n = make_node(Node::kConstant, column);
    n->index = static_cast<int>(impl_.constants.size());
    impl_.constants.push_back(std::move(v));
    return n;
  }

  int variable(const std::string& name) {
    for (std::size_t i = 0; i < impl_.variables.size(); ++i)
      if (impl_.variables[i] == name) return static_cast<int>(i);
    impl_.variables.push_back(name);
    return static_cast<int>(impl_.variables.size() - 1);
  }

  // --- compiler ---

  std::size_t emit(Op op, std::uint8_t aux, int column, std::int32_t arg, int stack_delta,
                   std::uint8_t mode = kSS, std::int32_t arg2 = 0) {
    impl_.code.push_back(make_instr(op, mode, aux, column, arg, arg2));
    depth_ += stack_delta;
    max_depth_ = std::max(max_depth_, depth_);
    return impl_.code.size() - 1;
  }
  static bool small_int(const Node& n, const std::vector<Value>& constants, std::int32_t& out) {
    if (n.type != Node::kConstant) return false;
    const auto* i = std::get_if<std::int64_t>(&constants[static_cast<std::size_t>(n.index)]);
    if (i == nullptr || *i < INT32_MIN || *i > INT32_MAX) return false;
    out = static_cast<std::int32_t>(*i);
    return true;
  }

  void slot_ref(std::size_t pc, bool second, int variable) {
    impl_.loads.push_back({static_cast<std::uint32_t>(pc), second, static_cast<std::uint32_t>(variable)});
  }

  // Emits `lhs op rhs`, folding variables and small int constants into the instruction.
  void emit_binary(Op op, int column, const Node& lhs, const Node& rhs) {
    std::int32_t imm = 0;
    const bool rhs_imm = small_int(rhs, impl_.constants, imm);
    const bool rhs_var = rhs.type == Node::kVariable;
    if (lhs.type == Node::kVariable && (rhs_imm || rhs_var)) {
      const std::size_t pc = emit(op, 0, column, lhs.index, 1, rhs_imm ? kVI : kVV, rhs_imm ? imm : rhs.index);
      slot_ref(pc, false, lhs.index);
      if (rhs_var) slot_ref(pc, true, rhs.index);
      return;
    }
    compile(lhs);
    emit_with_rhs(op, column, rhs);
  }

  // Emits `op` applied to the value on the stack and `rhs`.
  void emit_with_rhs(Op op, int column, const Node& rhs) {
    std::int32_t imm = 0;
    if (small_int(rhs, impl_.constants, imm)) {
      emit(op, 0, column, imm, 0, kSI);
    } else if (rhs.type == Node::kVariable) {
      slot_ref(emit(op, 0, column, rhs.index, 0, kSV), false, rhs.index);
    } else {
      compile(rhs);
      emit(op, 0, column, 0, -1, kSS);
    }
  }

  void patch_to_here(std::size_t pc) { impl_.code[pc].arg = static_cast<std::int32_t>(impl_.code.size()); }

  void compile(const Node& n) {
    switch (n.type) {
      case Node::kConstant: {
        const Value& v = impl_.constants[n.index];
        const auto* i = std::get_if<std::int64_t>(&v);
        if (i != nullptr && *i >= INT32_MIN && *i <= INT32_MAX) {
          emit(Op::kSmallInt, 0, n.column, static_cast<std::int32_t>(*i), 1);
        } else {
          emit(Op::kConst, 0, n.column, n.index, 1);
        }
        return;
      }
      case Node::kVariable: {
        slot_ref(emit(Op::kLoad, 0, n.column, n.index, 1), false, n.index);
        return;
      }
      case Node::kUnary:
        compile(*n.kids[0]);
        emit(n.op, 0, n.column, 0, 0);
        return;
      case Node::kNotNode:
        compile(*n.kids[0]);
        emit(Op::kNot, 0, n.column, 0, 0);
        return;
      case Node::kBinary:
        emit_binary(n.op, n.column, *n.kids[0], *n.kids[1]);
        return;
      case Node::kAnd:
      case Node::kOr: {
        const Op jump = n.type == Node::kAnd ? Op::kJumpIfFalseOrPop : Op::kJumpIfTrueOrPop;
        std::vector<std::size_t> exits;
        for (std::size_t k = 0; k < n.kids.size(); ++k) {
          compile(*n.kids[k]);
          if (k + 1 < n.kids.size()) exits.push_back(emit(jump, 0, n.column, 0, -1));
        }
        for (std::size_t pc : exits) patch_to_here(pc);
        return;
      }
      case Node::kTernary: {
        compile(*n.kids[0]);
        const std::size_t to_else = emit(Op::kPopJumpIfFalse, 0, n.column, 0, -1);
        compile(*n.kids[1]);
        const std::size_t to_end = emit(Op::kJump, 0, n.column, 0, -1);
        patch_to_here(to_else);
        compile(*n.kids[2]);
        patch_to_here(to_end);
        return;
      }
      case Node::kCompare: {
        const std::size_t last = n.ops.size() - 1;
        if (last == 0 && n.kids[1]->type != Node::kList) {
          emit_binary(n.ops[0], n.op_columns[0], *n.kids[0], *n.kids[1]);
          return;
        }
        compile(*n.kids[0]);
        std::vector<std::size_t> exits;
        for (std::size_t k = 0; k < last; ++k) {
          compile(*n.kids[k + 1]);
          exits.push_back(
              emit(Op::kChain, static_cast<std::uint8_t>(n.ops[k]), n.op_columns[k], 0, -1));
        }
        const Node& rhs = *n.kids[last + 1];
        if (rhs.type == Node::kList) {
          for (const auto& item : rhs.kids) compile(*item);
          const int count = static_cast<int>(rhs.kids.size());
          emit(Op::kInList, n.ops[last] == Op::kNotIn ? 1 : 0, n.op_columns[last], count, -count);
        } else {
          emit_with_rhs(n.ops[last], n.op_columns[last], rhs);
        }
        for (std::size_t pc : exits) patch_to_here(pc);
        return;
      }
      case Node::kCall: {
        for (const auto& arg : n.kids) compile(*arg);
        const int argc = static_cast<int>(n.kids.size());
        emit(Op::kCall, static_cast<std::uint8_t>(n.index), n.column, argc, 1 - argc);
        return;
      }
      case Node::kList:
        break;  // only reachable through kCompare
    }
  }

  std::string_view text_;
  const std::string& where_;
  Impl& impl_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  int nesting_ = 0;
  int depth_ = 0;
  int max_depth_ = 0;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Interpreter

bool Expression::Impl::compare(const Instr& in, Op op, const Cell& a, const Cell& b) const {
  if (op <= Op::kGe) {
    if (a.kind == kIntKind && b.kind == kIntKind) return compare_with(op, a.i, b.i);
    if (a.kind != kStrKind && b.kind != kStrKind) return compare_with(op, num(a), num(b));
    if (a.kind == kStrKind && b.kind == kStrKind) return compare_with(op, a.s->compare(*b.s), 0);
    if (op == Op::kEq) return false;
    if (op == Op::kNe) return true;
    fail(in, std::string("'") + op_symbol(op) + "' not supported between '" + type_name(a) + "' and '" +
                 type_name(b) + "'");
  }
  // in / not in with an expression on the right: substring test.
  if (b.kind != kStrKind) fail(in, std::string("argument of type '") + type_name(b) + "' is not iterable");
  if (a.kind != kStrKind)
    fail(in, std::string("'in <string>' requires a string as left operand, not '") + type_name(a) + "'");
  const bool found = b.s->find(*a.s) != std::string::npos;
  return op == Op::kIn ? found : !found;
}

void Expression::Impl::arith(const Instr& in, Cell& a, const Cell& b, Temps& temps) const {
  const Op op = in.op();
  if (a.kind == kIntKind && b.kind == kIntKind) {
    const std::int64_t x = a.i;
    const std::int64_t y = b.i;
    std::int64_t r = 0;
    switch (op) {
      case Op::kAdd:
        if (__builtin_add_overflow(x, y, &r)) fail_overflow(in);
        a.i = r;
        return;
      case Op::kSub:
        if (__builtin_sub_overflow(x, y, &r)) fail_overflow(in);
        a.i = r;
        return;
      case Op::kMul:
        if (__builtin_mul_overflow(x, y, &r)) fail_overflow(in);
        a.i = r;
        return;
      case Op::kDiv:
        if (y == 0) fail(in, "division by zero");
        set_dbl(a, static_cast<double>(x) / static_cast<double>(y));
        return;
      case Op::kFloorDiv: {
        if (y == 0) fail(in, "integer division by zero");
        if (x == INT64_MIN && y == -1) fail_overflow(in);
        std::int64_t q = x / y;
        if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
        a.i = q;
        return;
      }
      case Op::kMod: {
        if (y == 0) fail(in, "integer modulo by zero");
        if (y == -1) {
          a.i = 0;
          return;
        }
        std::int64_t m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) m += y;
        a.i = m;
        return;
      }
      case Op::kPow: {
        if (y < 0) {
          if (x == 0) fail(in, "zero to a negative power");
          set_dbl(a, std::pow(static_cast<double>(x), static_cast<double>(y)));
          return;
        }
        std::int64_t result = 1;
        std::int64_t base = x;
        std::int64_t e = y;
        while (e > 0) {
          if (e & 1) {
            if (__builtin_mul_overflow(result, base, &result)) fail_overflow(in);
          }
          e >>= 1;
          if (e > 0 && __builtin_mul_overflow(base, base, &base)) {
            // Remaining factors include base^2 with |base| >= 2: the result overflows too.
            fail_overflow(in);
          }
        }
        a.i = result;
        return;
      }
      default:
        break;
    }
  } else if (a.kind != kStrKind && b.kind != kStrKind) {
    const double x = num(a);
    const double y = num(b);
    switch (op) {
      case Op::kAdd: set_dbl(a, x + y); return;
      case Op::kSub: set_dbl(a, x - y); return;
      case Op::kMul: set_dbl(a, x * y); return;
      case Op::kDiv:
        if (y == 0.0) fail(in, "float division by zero");
        set_dbl(a, x / y);
        return;
      case Op::kFloorDiv:
        if (y == 0.0) fail(in, "float floor division by zero");
        set_dbl(a, py_float_floordiv(x, y));
        return;
      case Op::kMod:
        if (y == 0.0) fail(in, "float modulo by zero");
        set_dbl(a, py_float_mod(x, y));
        return;
      case Op::kPow: {
        if (x == 0.0 && y < 0.0) fail(in, "zero to a negative power");
        if (x < 0.0 && std::isfinite(y) && std::floor(y) != y)
          fail(in, "negative number " + describe(a) + " to a fractional power");
        const double r = std::pow(x, y);
        if (std::isinf(r) && std::isfinite(x) && std::isfinite(y)) fail(in, "float overflow in **");
        set_dbl(a, r);
        return;
      }
      default:
        break;
    }
  } else if (op == Op::kAdd && a.kind == kStrKind && b.kind == kStrKind) {
    temps.push_front(*a.s + *b.s);
    a.s = &temps.front();
    return;
  }
  fail_types(in, a, b);
}

std::int64_t Expression::Impl::to_int_checked(const Instr& in, double d, const char* fn) const {
  if (std::isnan(d)) fail(in, std::string("cannot convert NaN to an integer in ") + fn + "()");
  if (!fits_int64(d)) fail(in, std::string("value out of integer range in ") + fn + "(): " + to_string(Value{d}));
  return static_cast<std::int64_t>(d);
}

void Expression::Impl::call(const Instr& in, Cell* args, int argc) const {
  Cell& r = args[0];
  const char* fn = function_name(in.aux);
  auto need_number = [&](const Cell& c) {
    if (c.kind == kStrKind) fail(in, std::string(fn) + "() expects a number, got the string " + describe(c));
  };
  switch (static_cast<Func>(in.aux)) {
    case kMin:
    case kMax: {
      // Python keeps the first of equal items and the original type.
      std::size_t best = 0;
      for (int k = 1; k < argc; ++k) {
        const bool better = in.aux == kMin ? compare(in, Op::kLt, args[k], args[best])
                                           : compare(in, Op::kGt, args[k], args[best]);
        if (better) best = static_cast<std::size_t>(k);
      }
      r = args[best];
      return;
    }
    case kAbs:
      need_number(r);
      if (r.kind == kIntKind) {
        if (r.i == INT64_MIN) fail(in, "integer overflow in abs()");
        r.i = r.i < 0 ? -r.i : r.i;
      } else {
        r.d = std::fabs(r.d);
      }
      return;
    case kIntFn:
      if (r.kind == kDblKind) {
        set_int(r, to_int_checked(in, std::trunc(r.d), fn));
      } else if (r.kind == kStrKind) {
        std::string_view s = trim(*r.s);
        if (!s.empty() && s.front() == '+') s.remove_prefix(1);
        std::int64_t v = 0;
        auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || ec != std::errc() || ptr != s.data() + s.size())
          fail(in, "invalid literal for int(): " + describe(r));
        set_int(r, v);
      }
      return;
    case kFloatFn:
      if (r.kind == kIntKind) {
        set_dbl(r, static_cast<double>(r.i));
      } else if (r.kind == kStrKind) {
        std::string_view s = trim(*r.s);
        if (!s.empty() && s.front() == '+') s.remove_prefix(1);
        double v = 0.0;
        auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || ptr != s.data() + s.size() ||
            (ec != std::errc() && ec != std::errc::result_out_of_range))
          fail(in, "could not convert string to float: " + describe(r));
        if (ec == std::errc::result_out_of_range) v = std::strtod(std::string(s).c_str(), nullptr);
        set_dbl(r, v);
      }
      return;
    case kCeil:
    case kFloor:
      need_number(r);
      if (r.kind == kDblKind) {
        const double v = in.aux == kCeil ? std::ceil(r.d) : std::floor(r.d);
        if (std::isinf(v)) fail(in, std::string("cannot convert infinity to an integer in ") + fn + "()");
        set_int(r, to_int_checked(in, v, fn));
      }
      return;
    case kCeilDiv:
    case kRoundUp: {
      Cell& b = args[1];
      need_number(r);
      need_number(b);
      if (r.kind == kIntKind && b.kind == kIntKind) {
        std::int64_t x = r.i;
        std::int64_t y = b.i;
        if (y == 0) fail(in, std::string(fn) + "() by zero");
        if (in.aux == kRoundUp) {
          if (y == INT64_MIN) fail(in, "integer overflow in round_up()");
          y = y < 0 ? -y : y;
        }
        if (x == INT64_MIN && y == -1) fail(in, std::string("integer overflow in ") + fn + "()");
        std::int64_t q = x / y;
        if ((x % y != 0) && ((x < 0) == (y < 0))) ++q;
        if (in.aux == kRoundUp) {
          if (__builtin_mul_overflow(q, y, &q)) fail(in, "integer overflow in round_up()");
        }
        r.i = q;
        return;
      }
      double x = num(r);
      double y = num(b);
      if (y == 0.0) fail(in, std::string(fn) + "() by zero");
      if (in.aux == kCeilDiv) {
        const double v = std::ceil(x / y);
        if (std::isinf(v)) fail(in, "cannot convert infinity to an integer in ceil_div()");
        set_int(r, to_int_checked(in, v, fn));
      } else {
        y = std::fabs(y);
        set_dbl(r, std::ceil(x / y) * y);
      }
      return;
    }
    case kLog2: {
      need_number(r);
      const double x = num(r);
      if (!(x > 0.0)) fail(in, "math domain error: log2(" + describe(r) + ")");
      set_dbl(r, std::log2(x));
      return;
    }
    case kIsPow2: {
      need_number(r);
      bool pow2 = false;
      if (r.kind == kIntKind) {
        pow2 = r.i > 0 && (r.i & (r.i - 1)) == 0;
      } else if (std::isfinite(r.d) && r.d >= 1.0) {
        int exponent = 0;
        pow2 = std::frexp(r.d, &exponent) == 0.5;
      }
      set_int(r, pow2 ? 1 : 0);
      return;
    }
  }
}

Cell Expression::Impl::run(std::span<const Value> slots, Temps& temps) const {
  if (!bound && !variables.empty())
    throw InputError(where + ": expression " + quote_text(text) + " evaluated before bind()");
  if (slots.size() < min_slots)
    throw InputError(where + ": expression " + quote_text(text) + " needs " + std::to_string(min_slots) +
                     " slot values, got " + std::to_string(slots.size()));

  constexpr int kInlineStack = 64;
  Cell inline_stack[kInlineStack];
  std::vector<Cell> heap_stack;
  Cell* const base = max_depth <= kInlineStack ? inline_stack : (heap_stack.resize(max_depth), heap_stack.data());
  Cell* sp = base;  // next free cell

  const Instr* const code_start = code.data();
  const Instr* pc = code_start;

// One case per operand mode of a binary op; BODY sees `Cell& a` (the result goes there) and
// `const Cell& b`.
#define KTUNE_BINARY_CASES(OP, BODY)                                \
  case dispatch(OP, kSS): {                                         \
    Cell& a = sp[-2];                                               \
    const Cell& b = sp[-1];                                         \
    --sp;                                                           \
    BODY;                                                           \
    break;                                                          \
  }                                                                 \
  case dispatch(OP, kSI): {                                         \
    Cell& a = sp[-1];                                               \
    Cell b;                                                         \
    set_int(b, in.arg);                                             \
    BODY;                                                           \
    break;                                                          \
  }                                                                 \
  case dispatch(OP, kSV): {                                         \
    Cell& a = sp[-1];                                               \
    Cell b;                                                         \
    load(in, b, slots[static_cast<std::size_t>(in.arg)]);           \
    BODY;                                                           \
    break;                                                          \
  }                                                                 \
  case dispatch(OP, kVI): {                                         \
    Cell& a = *sp++;                                                \
    load(in, a, slots[static_cast<std::size_t>(in.arg)]);           \
    Cell b;                                                         \
    set_int(b, in.arg2);                                            \
    BODY;                                                           \
    break;                                                          \
  }                                                                 \
  case dispatch(OP, kVV): {                                         \
    Cell& a = *sp++;                                                \
    load(in, a, slots[static_cast<std::size_t>(in.arg)]);           \
    Cell b;                                                         \
    load(in, b, slots[static_cast<std::size_t>(in.arg2)]);          \
    BODY;                                                           \
    break;                                                          \
  }

#define KTUNE_INT_ARITH(OP, BUILTIN)                                 \
  KTUNE_BINARY_CASES(OP, {                                           \
    if (a.kind == kIntKind && b.kind == kIntKind) {                  \
      if (BUILTIN(a.i, b.i, &a.i)) fail_overflow(in);                \
    } else {                                                         \
      arith(in, a, b, temps);                                        \
    }                                                                \
  })

// Python floor division / modulo, inline for the common positive divisor.
#define KTUNE_FLOOR_DIV_MOD(OP, RESULT)                              \
  KTUNE_BINARY_CASES(OP, {                                           \
    if (a.kind == kIntKind && b.kind == kIntKind && b.i > 0) {       \
      std::int64_t q = a.i / b.i;                                    \
      std::int64_t m = a.i % b.i;                                    \
      if (m < 0) {                                                   \
        --q;                                                         \
        m += b.i;                                                    \
      }                                                              \
      a.i = RESULT;                                                  \
    } else {                                                         \
      arith(in, a, b, temps);                                        \
    }                                                                \
  })

#define KTUNE_COMPARE(OP, CMP)                                                               \
  KTUNE_BINARY_CASES(OP, {                                                                   \
    const bool r = a.kind == kIntKind && b.kind == kIntKind ? (a.i CMP b.i) : compare(in, OP, a, b); \
    set_int(a, r ? 1 : 0);                                                                   \
  })

  while (true) {
    const Instr& in = *pc++;
    switch (in.code) {
      case dispatch(Op::kHalt, 0):
        return sp[-1];
      case dispatch(Op::kSmallInt, 0):
        set_int(*sp++, in.arg);
        break;
      case dispatch(Op::kConst, 0):
        load(in, *sp++, constants[static_cast<std::size_t>(in.arg)]);
        break;
      case dispatch(Op::kLoad, 0):
        load(in, *sp++, slots[static_cast<std::size_t>(in.arg)]);
        break;
      case dispatch(Op::kNeg, 0): {
        Cell& a = sp[-1];
        if (a.kind == kIntKind) {
          if (a.i == INT64_MIN) fail_overflow(in);
          a.i = -a.i;
        } else if (a.kind == kDblKind) {
          a.d = -a.d;
        } else {
          fail_unary(in);
        }
        break;
      }
      case dispatch(Op::kPos, 0):
        if (sp[-1].kind == kStrKind) fail_unary(in);
        break;
      case dispatch(Op::kNot, 0):
        set_int(sp[-1], truthy(sp[-1]) ? 0 : 1);
        break;
      KTUNE_INT_ARITH(Op::kAdd, __builtin_add_overflow)
      KTUNE_INT_ARITH(Op::kSub, __builtin_sub_overflow)
      KTUNE_INT_ARITH(Op::kMul, __builtin_mul_overflow)
      KTUNE_FLOOR_DIV_MOD(Op::kFloorDiv, q)
      KTUNE_FLOOR_DIV_MOD(Op::kMod, m)
      KTUNE_BINARY_CASES(Op::kDiv, arith(in, a, b, temps))
      KTUNE_BINARY_CASES(Op::kPow, arith(in, a, b, temps))
      KTUNE_COMPARE(Op::kEq, ==)
      KTUNE_COMPARE(Op::kNe, !=)
      KTUNE_COMPARE(Op::kLt, <)
      KTUNE_COMPARE(Op::kLe, <=)
      KTUNE_COMPARE(Op::kGt, >)
      KTUNE_COMPARE(Op::kGe, >=)
      KTUNE_BINARY_CASES(Op::kIn, set_int(a, compare(in, Op::kIn, a, b) ? 1 : 0))
      KTUNE_BINARY_CASES(Op::kNotIn, set_int(a, compare(in, Op::kNotIn, a, b) ? 1 : 0))
#undef KTUNE_COMPARE
#undef KTUNE_FLOOR_DIV_MOD
#undef KTUNE_INT_ARITH
#undef KTUNE_BINARY_CASES
      case dispatch(Op::kChain, 0): {
        const Op op = static_cast<Op>(in.aux);
        const Cell& a = sp[-2];
        const Cell& b = sp[-1];
        const bool r = (a.kind == kIntKind && b.kind == kIntKind) && op <= Op::kGe ? compare_with(op, a.i, b.i)
                                                                                   : compare(in, op, a, b);
        --sp;
        if (r) {
          sp[-1] = sp[0];
        } else {
          set_int(sp[-1], 0);
          pc = code_start + in.arg;
        }
        break;
      }
      case dispatch(Op::kInList, 0): {
        const int n = in.arg;
        Cell* items = sp - n;
        const Cell& x = items[-1];
        bool found = false;
        for (int k = 0; k < n && !found; ++k) found = equal(x, items[k]);
        sp = items;
        set_int(sp[-1], (found != (in.aux != 0)) ? 1 : 0);
        break;
      }
      case dispatch(Op::kJumpIfFalseOrPop, 0):
        if (!truthy(sp[-1])) {
          pc = code_start + in.arg;
        } else {
          --sp;
        }
        break;
      case dispatch(Op::kJumpIfTrueOrPop, 0):
        if (truthy(sp[-1])) {
          pc = code_start + in.arg;
        } else {
          --sp;
        }
        break;
      case dispatch(Op::kPopJumpIfFalse, 0):
        --sp;
        if (!truthy(*sp)) pc = code_start + in.arg;
        break;
      case dispatch(Op::kJump, 0):
        pc = code_start + in.arg;
        break;
      case dispatch(Op::kCall, 0):
        sp -= in.arg;
        call(in, sp, in.arg);
        ++sp;
        break;
      default:
        __builtin_unreachable();  // the compiler emits only the codes above
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Public interface

Expression::Expression(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Expression::Expression(Expression&&) noexcept = default;
Expression& Expression::operator=(Expression&&) noexcept = default;
Expression::Expression(const Expression& other)
    : impl_(other.impl_ ? std::make_unique<Impl>(*other.impl_) : nullptr) {}
Expression& Expression::operator=(const Expression& other) {
  if (this != &other) impl_ = other.impl_ ? std::make_unique<Impl>(*other.impl_) : nullptr;
  return *this;
}
Expression::~Expression() = default;

Expression Expression::parse(std::string_view text, const std::string& where) {
  auto impl = std::make_unique<Impl>();
  impl->text = std::string(text);
  impl->where = where;
  Parser<Impl> parser(impl->text, impl->where, *impl);
  parser.parse_and_compile();
  impl->bound = impl->variables.empty();
  return Expression(std::move(impl));
}

const std::string& Expression::text() const {
  static const std::string empty;
  return impl_ ? impl_->text : empty;
}

const std::vector<std::string>& Expression::variables() const {
  static const std::vector<std::string> empty;
  return impl_ ? impl_->variables : empty;
}

void Expression::bind(const std::vector<std::string>& slot_names) {
  if (!impl_) throw InputError("expression: bind() on a moved-from expression");
  Impl& impl = *impl_;
  std::vector<std::uint32_t> slot_of(impl.variables.size());
  std::vector<std::string> unknown;
  for (std::size_t v = 0; v < impl.variables.size(); ++v) {
    std::size_t k = 0;
    while (k < slot_names.size() && slot_names[k] != impl.variables[v]) ++k;
    if (k == slot_names.size()) {
      unknown.push_back("'" + impl.variables[v] + "'");
    } else {
      slot_of[v] = static_cast<std::uint32_t>(k);
    }
  }
  if (!unknown.empty()) {
    throw InputError(impl.where + ": unknown variable" + (unknown.size() > 1 ? "s " : " ") +
                     join_names(unknown) + " in " + quote_text(impl.text) + "; known names: " +
                     (slot_names.empty() ? std::string("(none)") : join_names(slot_names)));
  }
  std::size_t min_slots = 0;
  for (const auto& ref : impl.loads) {
    const std::uint32_t slot = slot_of[ref.variable];
    (ref.second ? impl.code[ref.pc].arg2 : impl.code[ref.pc].arg) = static_cast<std::int32_t>(slot);
    min_slots = std::max<std::size_t>(min_slots, slot + 1);
  }
  impl.min_slots = min_slots;
  impl.bound = true;
}

Value Expression::evaluate(std::span<const Value> slots) const {
  if (!impl_) throw InputError("expression: evaluate() on a moved-from expression");
  Impl::Temps temps;
  return to_value(impl_->run(slots, temps));
}

bool Expression::evaluate_bool(std::span<const Value> slots) const {
  if (!impl_) throw InputError("expression: evaluate() on a moved-from expression");
  Impl::Temps temps;
  return truthy(impl_->run(slots, temps));
}

}  // namespace ktune
