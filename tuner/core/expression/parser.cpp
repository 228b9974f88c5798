#include "tuner/core/expression/parser.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tuner/core/errors.hpp"
#include "tuner/core/expression/constant_folding.hpp"
#include "tuner/core/expression/functions.hpp"
#include "tuner/core/expression/lexer.hpp"
#include "tuner/core/expression/messages.hpp"

namespace ktune::expression_detail {

namespace {

class Parser {
 public:
  explicit Parser(Program& program) : text_(program.text), where_(program.where), program_(program) {}

  NodePtr parse() {
    tokens_ = tokenize(text_, where_);
    NodePtr root = parse_test();
    if (peek().type != Token::kEnd) error(peek(), "an operator or end of expression");
    return root;
  }

 private:
  [[noreturn]] void error_at(std::size_t pos, const std::string& expected) const {
    throw_expected(where_, text_, pos, expected);
  }
  [[noreturn]] void error(const Token& t, const std::string& expected) const { error_at(t.pos, expected); }

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
    const std::size_t saved_vars = program_.variables.size();
    const std::size_t saved_consts = program_.constants.size();
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
      program_.variables.resize(saved_vars);
      program_.constants.resize(saved_consts);
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
      return fold(std::move(n), program_);
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
    return fold(std::move(n), program_);
  }

  NodePtr constant(Value v, int column) { return make_constant(std::move(v), column, program_.constants); }

  int variable(const std::string& name) {
    for (std::size_t i = 0; i < program_.variables.size(); ++i)
      if (program_.variables[i] == name) return static_cast<int>(i);
    program_.variables.push_back(name);
    return static_cast<int>(program_.variables.size() - 1);
  }

  std::string_view text_;
  const std::string& where_;
  Program& program_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  int nesting_ = 0;
};

}  // namespace

NodePtr parse_ast(Program& program) { return Parser(program).parse(); }

}  // namespace ktune::expression_detail
