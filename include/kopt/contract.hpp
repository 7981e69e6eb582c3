// The KERNEL_EVAL contract (spec B) and evaluator tool results (spec C): finding payloads in
// text and turning a payload into point fields.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kopt/json.hpp"
#include "kopt/series.hpp"

namespace kopt {

inline constexpr std::string_view kEvalPrefix = "KERNEL_EVAL=";
inline constexpr std::size_t kContractScanUnits = 20000;

// One contract line's parsed payload (a record); validity (B-4) is not applied.
struct ContractPayload {
  std::size_t line = 0;  // 0-based line index in the text
  json payload;
  std::string text;      // the line's text after KERNEL_EVAL=, trimmed (D-8 compares it with the command)
};

// The payload of one line when it is a contract line whose object parses to a record (B-1..B-3).
std::optional<json> contract_line_payload(std::string_view line);

// Every contract line's payload, in line order (B-1..B-3).
std::vector<ContractPayload> contract_payloads(std::string_view text);

// Tolerant JSON: the whole trimmed text, else first '{' .. last '}'; a record or nothing.
std::optional<json> parse_result_json(std::string_view text);

// A tool result (C-3) whose JSON holds numbers a double cannot carry (NaN, ±Infinity, 1e400): those
// values are read as null so the rest of the record still counts, and `rejected` names each one
// (docs/limits.md §5), for the point's error. A strictly valid record leaves `rejected` empty.
struct ToolResult {
  std::optional<json> payload;
  std::string rejected;  // "NaN, 1e400" — empty when nothing was rejected
};
ToolResult parse_tool_result(std::string_view text);

// B-4: artifact (or artifact_path when artifact is absent/null) non-empty string and boolean correct.
bool payload_is_point(const json& payload);
// Why a payload is not a point under B-4 (empty when it is one).
std::vector<std::string> payload_point_problems(const json& payload);

// A field of a point that was dropped or changed while its fields were read (apply_payload_fields,
// apply_contract_only_fields), and why.
struct FieldNote {
  std::string field;
  std::string reason;
};

// One line that starts with KERNEL_EVAL= (after JavaScript whitespace), as `kopt parse` reports it.
struct ContractLineReport {
  enum class Kind { Point, Degraded, Rejected };
  std::size_t line = 0;  // 0-based line index in the text
  Kind kind = Kind::Rejected;
  std::optional<json> payload;  // when the object parsed
  std::string reason;           // Rejected: why it is no point
  std::vector<FieldNote> notes; // Degraded: the fields that were dropped or changed
};
// Every line that starts with the prefix, in line order, with the same rules the projection applies.
std::vector<ContractLineReport> contract_line_reports(std::string_view text);
// The artifact string of a valid payload.
std::string payload_artifact(const json& payload);

// Fills the measurement fields shared by both channels (B-5, B-6, C-4, C-5, J-1) into `it`.
// `notes`, when given, receives each field that was dropped or changed and why.
void apply_payload_fields(Iteration& it, const json& payload, std::vector<FieldNote>* notes = nullptr);
// Contract-line-only fields: artifactPath and workloadSubset.
void apply_contract_only_fields(Iteration& it, const json& payload, std::vector<FieldNote>* notes = nullptr);

// DV-13: a kernel_evaluate result that the plugin's evaluator wrote carries `"measured_by": "<plugin id>"`.
// Only the projector decides what that is worth (the exact tool name, a result that is no error).
bool is_plugin_measurement(const json& payload);
// Its `sources` {solution: [{path, sha256}], reference?, inputs?}: each path a non-empty string of at most
// 4096 bytes, each sha256 64 lowercase hex digits, 1..64 solution files; nothing when any solution entry
// is malformed (a partial list would bind the point to fewer bytes than it measured).
std::optional<MeasuredSources> measured_sources(const json& payload);

// A workload_indices value when it is a non-empty all-number array.
std::optional<json> workload_subset(const json& v);

// JavaScript's String#trim / trimStart whitespace set (ASCII and Unicode spaces, BOM, line terminators).
std::string_view js_trim(std::string_view s);
std::string_view js_trim_start(std::string_view s);

// End (exclusive) of the JSON-balanced object starting at text[0] == '{', looking at most `cap`
// bytes, or npos. Strings and their escapes are skipped; the object itself is not parsed.
std::size_t balanced_object_end(std::string_view text, std::size_t cap = std::string_view::npos);

}  // namespace kopt
