// The second-model supervisor (spec N): the run digest it reads, the rubric it judges by, and the
// parser of its verdict. Pure text in, text out; the call itself is made by the host.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kopt/json.hpp"
#include "kopt/series.hpp"

namespace kopt {

// The run language: fixed when a run is armed, carried in every loop message.
enum class Lang { zh, en };
std::string_view lang_code(Lang lang);
std::optional<Lang> parse_lang(std::string_view code);  // "zh" | "en", else nullopt
// A guess from free text (a human prompt): Chinese when CJK ideographs make up a fair share.
Lang guess_lang(std::string_view text);

// N-1. advice XOR note; both null for an empty reply (= the review did not happen).
struct Verdict {
  std::optional<std::string> advice;
  std::optional<std::string> note;
  bool answered() const { return advice.has_value() || approved; }
  bool approved = false;  // OK / DONE, with or without a note
};
Verdict advice_from_reply(std::string_view reply);

// What a review is for: a checkpoint of a running loop, the challenge of an early finalize,
// or the closing audit of a finalized run.
enum class ReviewKind { progress, headroom, audit };
std::string_view review_kind_name(ReviewKind kind);

struct DigestInputs {
  long long budget = 20;
  long long round = 0;
  long long evalsPerTurn = 3;
  std::size_t tableRows = 15;        // last rows of the evaluation table shown
  std::size_t diffIterations = 3;    // latest iterations that changed code, shown as diffs
  std::size_t diffChars = 8000;      // cap on the whole diff section
  std::size_t commandChars = 2000;   // cap on one command (the full command, not the wire cut)
};
// Summary + evaluation table + the real diffs of the latest iterations that changed code.
std::string supervisor_digest(const Series& s, const DigestInputs& in);

// System prompt: our rubric for the kind, the language rule, then the project's own
// instructions appended (they add checks, never replace the rubric).
std::string supervisor_system(ReviewKind kind, Lang lang, std::string_view instructions);
// The user message of the review: a short task line plus the digest.
std::string supervisor_prompt(ReviewKind kind, std::string_view digest);

// The reasoning effort to send: the requested one when the model declares it, else the model's
// default when declared, else none. "off" is sent only when declared too.
std::optional<std::string> choose_effort(const std::optional<std::string>& requested,
                                         const std::vector<std::string>& declared,
                                         const std::optional<std::string>& model_default);

}  // namespace kopt
