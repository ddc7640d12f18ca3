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
// Costs (n = bytes of input): parse_json_text is one SAX pass, O(n) (plus O(log k)
// per key for the duplicate check). SchemaValidator::validate is a bounds pass, O(n
// log n) (arrays longer than the schema's maxItems refused, uniqueItems checked with
// one ordered set), and only if that passes a valijson pass, which then sees no
// array longer than its maxItems, so its O(k^2) uniqueItems never runs on a large k.
// Errors are O(n) in number at worst (one per unknown key) and post-processed in
// O(e log e); cap_errors_per_file keeps what is printed to kMaxErrorsPerFile a file.
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
// Errors printed per file (cap_errors_per_file): a screenful. The first few errors
// of a file say what is wrong with it; the 44,851st does not.
inline constexpr std::size_t kMaxErrorsPerFile = 20;

struct InputError {
  std::string file;
  std::string pointer;  // RFC 6901; "/" for the root
  std::string message;

  // InputError::str: "file: pointer: message"; "file: message" when `pointer` is
  // empty (only the "... and K more errors" line of cap_errors_per_file).
  std::string str() const;
};

using InputErrors = std::vector<InputError>;

// cap_errors_per_file: `errors` with at most kMaxErrorsPerFile entries per file (the
// first ones, in order), each capped file followed by one entry "... and K more
// errors" with an empty pointer. Files appear in order of their first error.
InputErrors cap_errors_per_file(const InputErrors& errors);

// escape_pointer_token: RFC 6901 escaping of one reference token ("~" -> "~0", "/" -> "~1").
std::string escape_pointer_token(std::string_view token);

// append_pointer: `base` + "/" + escaped token, treating "/" as the root.
std::string append_pointer(std::string_view base, std::string_view token);

// read_text_file: reads `path` into `out`.
// Ensures: on failure (missing, unreadable, a directory, not a regular file, larger
// than kMaxFileBytes) appends one error with pointer "/" and returns false. The
// error names the cause (errno's text: "Permission denied", "Too many levels of
// symbolic links"); "no such file" only when the path does not exist at all (a
// dangling symbolic link says so).
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
  // First, in one iterative walk of `doc` beside the schema (following properties,
  // additionalProperties, items and local $refs): an array longer than its schema's
  // maxItems is one error at the array, and is not looked into; a uniqueItems array
  // gets one error per repeated element, "duplicate of <pointer of the first>". If
  // that walk found anything, valijson does not run.
  bool validate(const Json& doc, const std::string& file, InputErrors& errors) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;

  bool check_arrays(const Json& doc, const std::string& file, InputErrors& errors) const;
};

// type_name: "object", "array", "string", "integer", "number", "boolean" or "null".
std::string_view type_name(const Json& value);

}  // namespace tlab::tool
