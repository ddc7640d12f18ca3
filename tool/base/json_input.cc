// tlab/tool/base/json_input.cc: see json_input.h.
#include "base/json_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "base/suggest.h"

namespace tlab::tool {

std::string InputError::str() const {
  if (pointer.empty()) return fmt::format("{}: {}", file, message);
  return fmt::format("{}: {}: {}", file, pointer, message);
}

InputErrors cap_errors_per_file(const InputErrors& errors) {
  std::vector<std::string> order;  // files, by first error
  std::map<std::string, std::vector<const InputError*>> by_file;
  for (const InputError& e : errors) {
    auto [it, fresh] = by_file.try_emplace(e.file);
    if (fresh) order.push_back(e.file);
    it->second.push_back(&e);
  }
  InputErrors out;
  for (const std::string& file : order) {
    const std::vector<const InputError*>& mine = by_file[file];
    for (std::size_t i = 0; i < mine.size() && i < kMaxErrorsPerFile; ++i) out.push_back(*mine[i]);
    if (mine.size() > kMaxErrorsPerFile) {
      const std::size_t more = mine.size() - kMaxErrorsPerFile;
      out.push_back({file, "",
                     fmt::format("... and {} more error{} (the first {} are shown)", more,
                                 more == 1 ? "" : "s", kMaxErrorsPerFile)});
    }
  }
  return out;
}

std::string escape_pointer_token(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string append_pointer(std::string_view base, std::string_view token) {
  std::string out(base == "/" ? std::string_view{} : base);
  out += '/';
  out += escape_pointer_token(token);
  return out;
}

bool read_text_file(const std::string& path, std::string& out, InputErrors& errors) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the checks below are on
  // the open descriptor, so what is read is what was checked.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    struct stat link {};
    std::string why = std::strerror(e);
    if (e == ENOENT) {
      why = ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)
                ? "a symbolic link whose target does not exist"
                : "no such file";
    }
    errors.push_back({path, "/", fmt::format("cannot read file: {}", why)});
    return false;
  }
  struct stat st {};
  const auto fail = [&](const std::string& why) {
    ::close(fd);
    errors.push_back({path, "/", why});
    return false;
  };
  if (::fstat(fd, &st) != 0) return fail(fmt::format("cannot read file: {}", std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) return fail("cannot read file: is a directory");
  if (!S_ISREG(st.st_mode)) {
    return fail(
        "cannot read file: not a regular file (a device, FIFO or socket); tlab reads scenario "
        "and report files only");
  }
  if (static_cast<std::uint64_t>(st.st_size) > kMaxFileBytes) {
    return fail(fmt::format("file is {} bytes; the limit is {} bytes", st.st_size, kMaxFileBytes));
  }
  out.clear();
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(fmt::format("cannot read file: {}", std::strerror(errno)));
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > kMaxFileBytes) {  // the file grew while being read
      return fail(fmt::format("file is larger than {} bytes", kMaxFileBytes));
    }
  }
  ::close(fd);
  return true;
}

std::string_view type_name(const Json& value) {
  switch (value.type()) {
    case Json::value_t::object:
      return "object";
    case Json::value_t::array:
      return "array";
    case Json::value_t::string:
      return "string";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "integer";
    case Json::value_t::number_float:
      return "number";
    case Json::value_t::null:
      return "null";
    default:
      return "binary";
  }
}

namespace {

// TrackingSax: nlohmann's DOM builder plus a stack of frames that knows the JSON
// pointer of the value being parsed at every moment. Single-use, one thread.
class TrackingSax {
 public:
  using Dom = nlohmann::detail::json_sax_dom_parser<Json>;

  TrackingSax(Json& root, std::string_view text, const std::string& file, InputErrors& errors)
      : dom_(root, /*allow_exceptions=*/false), text_(text), file_(file), errors_(errors) {}

  bool null() { return scalar(dom_.null()); }
  bool boolean(bool v) { return scalar(dom_.boolean(v)); }
  bool number_integer(Json::number_integer_t v) { return scalar(dom_.number_integer(v)); }
  bool number_unsigned(Json::number_unsigned_t v) {
    if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return fail(pointer(), fmt::format("number {} is out of range (limit {})", v,
                                         std::numeric_limits<std::int64_t>::max()));
    }
    return scalar(dom_.number_unsigned(v));
  }
  bool number_float(Json::number_float_t v, const std::string& s) {
    // 2^63: the first double beyond int64. Every numeric field has a far lower cap,
    // so anything this large is a typo or an attack, never a value to round.
    if (std::fabs(v) >= 9223372036854775808.0) {
      return fail(pointer(), fmt::format("number {} is out of range (limit {})", s,
                                         std::numeric_limits<std::int64_t>::max()));
    }
    return scalar(dom_.number_float(v, s));
  }
  bool string(std::string& v) { return scalar(dom_.string(v)); }
  bool binary(Json::binary_t& v) { return scalar(dom_.binary(v)); }

  bool start_object(std::size_t n) {
    if (frames_.size() >= kMaxDepth) return fail(pointer(), too_deep());
    frames_.push_back(Frame{false, 0, {}, {}});
    return dom_.start_object(n);
  }
  bool key(std::string& k) {
    Frame& f = frames_.back();
    f.key = k;
    if (!f.seen.insert(k).second) return fail(pointer(), "duplicate key");
    return dom_.key(k);
  }
  bool end_object() {
    frames_.pop_back();
    return scalar(dom_.end_object());
  }
  bool start_array(std::size_t n) {
    if (frames_.size() >= kMaxDepth) return fail(pointer(), too_deep());
    frames_.push_back(Frame{true, 0, {}, {}});
    return dom_.start_array(n);
  }
  bool end_array() {
    frames_.pop_back();
    return scalar(dom_.end_array());
  }

  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& ex) {
    if (failed_) return false;
    std::string what = ex.what();
    // Drop nlohmann's "[json.exception.parse_error.101] " tag; keep its own text.
    if (auto close = what.find("] "); what.rfind("[json.exception", 0) == 0 && close != what.npos) {
      what.erase(0, close + 2);
    }
    // And its "parse error at line 3, column 29: " lead: we print our own position.
    if (what.rfind("parse error at line", 0) == 0) {
      if (auto colon = what.find(": "); colon != what.npos) what.erase(0, colon + 2);
    }
    auto [line, column] = line_column(position);
    const bool overflow = ex.id == 406;
    std::string message =
        overflow ? fmt::format("number out of range ({}; line {}, column {})", what, line, column)
                 : fmt::format("not JSON (line {}, column {}): {}", line, column, what);
    return fail(pointer(), std::move(message));
  }

  bool failed() const { return failed_; }

 private:
  struct Frame {
    bool is_array;
    std::size_t index;  // arrays: index of the element being parsed
    std::string key;    // objects: the key whose value is being parsed
    std::set<std::string> seen;
  };

  bool scalar(bool ok) {
    if (!frames_.empty() && frames_.back().is_array) ++frames_.back().index;
    return ok;
  }

  std::string pointer() const {
    std::string out;
    for (const Frame& f : frames_) {
      if (f.is_array) {
        out += '/';
        out += std::to_string(f.index);
      } else if (!f.seen.empty()) {
        out += '/';
        out += escape_pointer_token(f.key);
      }
    }
    return out.empty() ? "/" : out;
  }

  std::pair<std::size_t, std::size_t> line_column(std::size_t position) const {
    position = std::min(position, text_.size());
    std::size_t line = 1;
    std::size_t column = 1;
    for (std::size_t i = 0; i < position; ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return {line, column > 1 ? column - 1 : 1};
  }

  static std::string too_deep() { return fmt::format("nested deeper than {} levels", kMaxDepth); }

  bool fail(std::string ptr, std::string message) {
    if (!failed_) errors_.push_back({file_, std::move(ptr), std::move(message)});
    failed_ = true;
    return false;
  }

  Dom dom_;
  std::string_view text_;
  const std::string& file_;
  InputErrors& errors_;
  std::vector<Frame> frames_;
  bool failed_ = false;
};

// context_to_pointer: valijson's context ["<root>", "[engine]", "[0]"] -> "/engine/0".
std::string context_to_pointer(const std::vector<std::string>& context) {
  std::string out;
  for (const std::string& part : context) {
    if (part == "<root>") continue;
    std::string_view token = part;
    if (token.size() >= 2 && token.front() == '[' && token.back() == ']') {
      token = token.substr(1, token.size() - 2);
    }
    out = append_pointer(out.empty() ? "/" : out, token);
  }
  return out.empty() ? "/" : out;
}

// quoted_name: the text between the last pair of single quotes in `s`, if any
// (valijson quotes the constraint names first and the property name last).
std::optional<std::string> quoted_name(const std::string& s) {
  auto close = s.rfind('\'');
  if (close == s.npos || close == 0) return std::nullopt;
  auto open = s.rfind('\'', close - 1);
  if (open == s.npos) return std::nullopt;
  return s.substr(open + 1, close - open - 1);
}

// bound_message: valijson's "Expected number less than or equal to 600.000000" as
// "must be <= 600"; nullopt for other messages.
std::optional<std::string> bound_message(const std::string& s) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kForms{{
      {"Expected number less than or equal to ", "<="},
      {"Expected number greater than or equal to ", ">="},
      {"Expected number less than ", "<"},
      {"Expected number greater than ", ">"},
  }};
  for (const auto& [prefix, op] : kForms) {
    if (s.rfind(prefix, 0) != 0) continue;
    std::string number = s.substr(prefix.size());
    if (number.find('.') != number.npos) {
      while (!number.empty() && number.back() == '0') number.pop_back();
      if (!number.empty() && number.back() == '.') number.pop_back();
    }
    return fmt::format("must be {} {}", op, number);
  }
  return std::nullopt;
}

const Json* resolve(const Json& doc, const std::string& pointer) {
  if (pointer == "/") return &doc;
  try {
    const Json& v = doc.at(Json::json_pointer(pointer));
    return &v;
  } catch (const Json::exception&) {
    return nullptr;
  }
}

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

std::optional<Json> parse_json_text(std::string_view text, const std::string& file,
                                    InputErrors& errors) {
  if (text.find_first_not_of(" \t\r\n") == text.npos) {
    errors.push_back({file, "/", "empty file: expected a JSON object"});
    return std::nullopt;
  }
  Json root;
  TrackingSax sax(root, text, file, errors);
  const bool ok = Json::sax_parse(text, &sax, nlohmann::detail::input_format_t::json,
                                  /*strict=*/true, /*ignore_comments=*/false);
  if (!ok || sax.failed()) {
    if (!sax.failed()) errors.push_back({file, "/", "not JSON"});
    return std::nullopt;
  }
  return root;
}

struct SchemaValidator::Impl {
  Json schema_doc;  // the schema as JSON, for check_arrays
  valijson::Schema schema;
  // Every string of every "enum" in the schema: the candidates for "did you mean".
  std::vector<std::string> enum_strings;
  // Property name -> its enum, for names whose enum is the same wherever they occur:
  // lets an enum error list the allowed values.
  std::map<std::string, Json> enum_by_property;
};

SchemaValidator::SchemaValidator(std::string_view schema_text) : impl_(std::make_unique<Impl>()) {
  impl_->schema_doc = Json::parse(schema_text);
  const Json& schema_doc = impl_->schema_doc;
  valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
  valijson::adapters::NlohmannJsonAdapter adapter(schema_doc);
  parser.populateSchema(adapter, impl_->schema);
  // Collect enum strings iteratively (the schema is ours and shallow, but no
  // recursion in input-driven code).
  std::vector<const Json*> stack{&schema_doc};
  while (!stack.empty()) {
    const Json* j = stack.back();
    stack.pop_back();
    if (j->is_object()) {
      if (auto props = j->find("properties"); props != j->end() && props->is_object()) {
        for (auto p = props->begin(); p != props->end(); ++p) {
          auto e = p.value().find("enum");
          if (e == p.value().end()) continue;
          auto [at, fresh] = impl_->enum_by_property.emplace(p.key(), *e);
          if (!fresh && at->second != *e) at->second = Json();  // ambiguous: no listing
        }
      }
      for (auto it = j->begin(); it != j->end(); ++it) {
        if (it.key() == "enum" && it.value().is_array()) {
          for (const Json& e : it.value()) {
            if (e.is_string()) impl_->enum_strings.push_back(e.get<std::string>());
          }
        }
        stack.push_back(&it.value());
      }
    } else if (j->is_array()) {
      for (const Json& e : *j) stack.push_back(&e);
    }
  }
}

SchemaValidator::~SchemaValidator() = default;

namespace {

// follow_ref: `node`, or what its local "$ref" ("#/definitions/x") names, hop by
// hop; nullptr for a non-local or dangling $ref (valijson resolves those itself).
// Eight hops: our schemas use one; more is a cycle.
const Json* follow_ref(const Json& root, const Json* node) {
  for (int hop = 0; node != nullptr && hop < 8; ++hop) {
    if (!node->is_object()) return nullptr;
    auto ref = node->find("$ref");
    if (ref == node->end()) return node;
    if (!ref->is_string() || ref->get_ref<const std::string&>().rfind("#/", 0) != 0) return nullptr;
    try {
      node = &root.at(Json::json_pointer(ref->get<std::string>().substr(1)));
    } catch (const Json::exception&) {
      return nullptr;
    }
  }
  return nullptr;
}

// member_schema: the schema of member `key` of an object checked against `schema`.
const Json* member_schema(const Json& root, const Json& schema, const std::string& key) {
  if (auto props = schema.find("properties"); props != schema.end() && props->is_object()) {
    if (auto p = props->find(key); p != props->end()) return follow_ref(root, &*p);
  }
  if (auto extra = schema.find("additionalProperties");
      extra != schema.end() && extra->is_object()) {
    return follow_ref(root, &*extra);
  }
  return nullptr;
}

// item_schema: the schema of element `i` of an array checked against `schema`.
const Json* item_schema(const Json& root, const Json& schema, std::size_t i) {
  auto items = schema.find("items");
  if (items == schema.end()) return nullptr;
  if (items->is_object()) return follow_ref(root, &*items);
  if (items->is_array() && i < items->size()) return follow_ref(root, &(*items)[i]);
  return nullptr;
}

}  // namespace

bool SchemaValidator::check_arrays(const Json& doc, const std::string& file,
                                   InputErrors& errors) const {
  const Json& root = impl_->schema_doc;
  const std::size_t before = errors.size();
  struct Item {
    const Json* value;
    const Json* schema;  // nullptr: no schema applies (valijson says why, if anything)
    std::string pointer;
  };
  std::vector<Item> stack{{&doc, follow_ref(root, &root), "/"}};
  while (!stack.empty()) {
    Item at = std::move(stack.back());
    stack.pop_back();
    if (at.schema == nullptr) continue;
    const Json& schema = *at.schema;
    if (at.value->is_object()) {
      for (auto it = at.value->begin(); it != at.value->end(); ++it) {
        stack.push_back({&it.value(), member_schema(root, schema, it.key()),
                         append_pointer(at.pointer, it.key())});
      }
    } else if (at.value->is_array()) {
      const std::size_t n = at.value->size();
      if (auto max = schema.find("maxItems");
          max != schema.end() && max->is_number_unsigned() && n > max->get<std::uint64_t>()) {
        errors.push_back({file, at.pointer,
                          fmt::format("array of {} items; at most {} allowed here", n,
                                      max->get<std::uint64_t>())});
        continue;  // its elements are not looked at: one error, whatever the length
      }
      const bool unique = schema.value("uniqueItems", false);
      std::map<Json, std::size_t> first;  // element -> index of its first occurrence
      for (std::size_t i = 0; i < n; ++i) {
        const Json& element = (*at.value)[i];
        const std::string ptr = append_pointer(at.pointer, std::to_string(i));
        if (unique) {
          if (auto [seen, fresh] = first.emplace(element, i); !fresh) {
            errors.push_back(
                {file, ptr,
                 fmt::format("duplicate of {}",
                             append_pointer(at.pointer, std::to_string(seen->second)))});
            continue;
          }
        }
        stack.push_back({&element, item_schema(root, schema, i), ptr});
      }
    }
  }
  return errors.size() == before;
}

bool SchemaValidator::validate(const Json& doc, const std::string& file,
                               InputErrors& errors) const {
  if (!check_arrays(doc, file, errors)) return false;
  valijson::Validator validator(valijson::Validator::kStrongTypes);
  valijson::adapters::NlohmannJsonAdapter target(doc);
  valijson::ValidationResults results;
  if (validator.validate(impl_->schema, target, &results)) return true;

  std::vector<InputError> found;
  for (const auto& e : results) {
    std::string ptr = context_to_pointer(e.context);
    std::string message = e.description;
    if (starts_with(message, "Failed to validate against schema associated with property") ||
        starts_with(message, "Failed to validate item #") ||
        starts_with(message, "Failed to validate against additional properties")) {
      continue;  // a wrapper: the error inside it is reported at its own pointer
    }
    if (starts_with(message, "Object contains a property that could not be validated")) {
      if (auto name = quoted_name(message)) {
        ptr = append_pointer(ptr, *name);
        message = "unknown key (not allowed here; see the schema for the valid keys)";
      }
    } else if (starts_with(message, "Missing required property")) {
      if (auto name = quoted_name(message)) {
        ptr = append_pointer(ptr, *name);
        message = "required property is missing";
      }
    } else if (starts_with(message, "Value type not permitted")) {
      if (const Json* v = resolve(doc, ptr)) {
        message = fmt::format("wrong type: {} is not allowed here", type_name(*v));
      }
    } else if (starts_with(message, "Failed to match against any enum values")) {
      if (const Json* v = resolve(doc, ptr)) {
        message = fmt::format("value {} is not one of the allowed values", v->dump());
        if (v->is_string()) message += did_you_mean(v->get<std::string>(), impl_->enum_strings);
        const std::string key = ptr.substr(ptr.rfind('/') + 1);
        if (auto it = impl_->enum_by_property.find(key); it != impl_->enum_by_property.end() &&
                                                         it->second.is_array() &&
                                                         it->second.size() <= 16) {
          std::string allowed;
          for (const Json& a : it->second) allowed += (allowed.empty() ? "" : ", ") + a.dump();
          message += " (allowed: " + allowed + ")";
        }
      }
    } else if (starts_with(message, "Expected number") ||
               starts_with(message, "Failed to match regex")) {
      if (auto bound = bound_message(message)) message = *bound;
      if (const Json* v = resolve(doc, ptr)) {
        message = fmt::format("{} ({} given)", message, v->dump());
      }
    }
    found.push_back({file, std::move(ptr), std::move(message)});
  }
  // Keep only the innermost errors: a pointer that prefixes another error's pointer
  // belongs to a wrapper (for example "Object should have no fewer than..." is kept,
  // since nothing deeper explains it). Every proper prefix of every error's pointer
  // goes into one set, so this is O(e log e), not O(e^2): a file with 100,000
  // unknown keys has 100,000 errors.
  std::set<std::string> wrappers;
  for (const InputError& e : found) {
    if (e.pointer == "/") continue;
    wrappers.insert("/");
    for (std::size_t slash = e.pointer.find('/', 1); slash != std::string::npos;
         slash = e.pointer.find('/', slash + 1)) {
      wrappers.insert(e.pointer.substr(0, slash));
    }
  }
  std::set<std::pair<std::string, std::string>> kept;  // valijson repeats some errors
  for (InputError& e : found) {
    if (wrappers.count(e.pointer) != 0) continue;
    if (kept.emplace(e.pointer, e.message).second) errors.push_back(std::move(e));
  }
  if (found.empty()) errors.push_back({file, "/", "does not match the schema"});
  return false;
}

}  // namespace tlab::tool
