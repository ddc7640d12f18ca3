// tlab/tool/base/json_input.h: reading user-supplied JSON files into checked documents.
//
// Every file tlab reads (scenarios, reports for replay) goes through here, so every
// complaint has one shape: `file: /json/pointer: message` (InputError::str()). The
// pointer is an RFC 6901 JSON pointer; the document root is written "/" so that the
// middle field is never empty.
//
// Tuned for hostile input, not speed: files are capped at kMaxFileBytes, nesting at
// kMaxDepth, duplicate keys are errors (nlohmann would silently keep the last one),
// and numbers beyond the 64-bit integer range are errors with a pointer instead of
// silently becoming doubles.
//
// Costs: parse_json_text is one SAX pass, O(bytes); SchemaValidator::validate is one
// valijson pass, O(document x schema).
//
// Departs from plain nlohmann::json::parse in that it tracks the JSON pointer of the
// value being parsed, so a syntax error or a number overflow ("1e400") carries the
// pointer and a line/column.
//
// Ground rules: all functions are pure except read_text_file (reads the file system).
// A SchemaValidator is immutable after construction and may be shared across threads.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tlab::tool {

using Json = nlohmann::json;

// Files larger than this are refused before parsing: a scenario is a page of JSON.
inline constexpr std::size_t kMaxFileBytes = 1 << 20;
// Deeper nesting than this is refused: the deepest legal scenario path is 5 levels.
inline constexpr std::size_t kMaxDepth = 32;

struct InputError {
  std::string file;
  std::string pointer;  // RFC 6901; "/" for the root
  std::string message;

  // InputError::str: "file: pointer: message".
  std::string str() const;
};

using InputErrors = std::vector<InputError>;

// escape_pointer_token: RFC 6901 escaping of one reference token ("~" -> "~0", "/" -> "~1").
std::string escape_pointer_token(std::string_view token);

// append_pointer: `base` + "/" + escaped token, treating "/" as the root.
std::string append_pointer(std::string_view base, std::string_view token);

// read_text_file: reads `path` into `out`.
// Ensures: on failure (missing, unreadable, a directory, larger than kMaxFileBytes)
// appends one error with pointer "/" and returns false.
bool read_text_file(const std::string& path, std::string& out, InputErrors& errors);

// parse_json_text: parses `text` (named `file` in errors).
// Ensures: returns the document, or nullopt with at least one error appended. Empty
// input, syntax errors (with line and column), duplicate keys, nesting deeper than
// kMaxDepth and numbers outside [INT64_MIN, INT64_MAX] are all errors.
std::optional<Json> parse_json_text(std::string_view text, const std::string& file,
                                    InputErrors& errors);

// SchemaValidator: a JSON Schema (draft 7) compiled once with valijson.
class SchemaValidator {
 public:
  // SchemaValidator::SchemaValidator: compiles `schema_text`.
  // Requires: `schema_text` is a valid draft-7 schema (it is embedded at build time);
  // throws std::runtime_error otherwise.
  explicit SchemaValidator(std::string_view schema_text);
  ~SchemaValidator();
  SchemaValidator(const SchemaValidator&) = delete;
  SchemaValidator& operator=(const SchemaValidator&) = delete;

  // SchemaValidator::validate: checks `doc`; appends one error per offending value
  // (wrapper errors such as "item #3 failed" are dropped in favour of the error
  // inside it). Returns true when `doc` conforms.
  bool validate(const Json& doc, const std::string& file, InputErrors& errors) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// type_name: "object", "array", "string", "integer", "number", "boolean" or "null".
std::string_view type_name(const Json& value);

}  // namespace tlab::tool
