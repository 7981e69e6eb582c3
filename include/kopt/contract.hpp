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
// The artifact string of a valid payload.
std::string payload_artifact(const json& payload);

// Fills the measurement fields shared by both channels (B-5, B-6, C-4, C-5, J-1) into `it`.
void apply_payload_fields(Iteration& it, const json& payload);
// Contract-line-only fields: artifactPath and workloadSubset.
void apply_contract_only_fields(Iteration& it, const json& payload);

// A workload_indices value when it is a non-empty all-number array.
std::optional<json> workload_subset(const json& v);

// JavaScript's String#trim / trimStart whitespace set (ASCII and Unicode spaces, BOM, line terminators).
std::string_view js_trim(std::string_view s);
std::string_view js_trim_start(std::string_view s);

}  // namespace kopt
