// Supervisor: verdict parsing (N-1), language helpers, the rubric and the effort choice.
// The digest lives in supervisor_digest.cpp.
#include "kopt/supervisor.hpp"

#include <algorithm>

#include "kopt/utf16.hpp"

namespace kopt {

namespace {

// Decodes one UTF-8 code point at i (advancing i); invalid bytes come back as themselves.
char32_t next_cp(std::string_view s, std::size_t& i) {
  const auto b = static_cast<unsigned char>(s[i]);
  int len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 1;
  if (i + len > s.size()) len = 1;
  char32_t cp = len == 1 ? b : len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
  for (int k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  i += len;
  return cp;
}

// JavaScript's \s and String#trim set.
bool js_space(char32_t c) {
  switch (c) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20: case 0xA0: case 0x1680:
    case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000: case 0xFEFF:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
  }
}

std::size_t skip_space(std::string_view s, std::size_t i) {
  while (i < s.size()) {
    std::size_t j = i;
    if (!js_space(next_cp(s, j))) break;
    i = j;
  }
  return i;
}

std::string_view js_trim(std::string_view s) {
  const std::size_t b = skip_space(s, 0);
  std::size_t e = b, i = b;
  while (i < s.size()) {
    const char32_t c = next_cp(s, i);
    if (!js_space(c)) e = i;
  }
  return s.substr(b, e - b);
}

bool ascii_word(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool iprefix(std::string_view s, std::string_view p) {
  if (s.size() < p.size()) return false;
  for (std::size_t i = 0; i < p.size(); ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != p[i]) return false;
  }
  return true;
}

}  // namespace

std::string_view lang_code(Lang lang) { return lang == Lang::zh ? "zh" : "en"; }

std::optional<Lang> parse_lang(std::string_view code) {
  if (code == "zh") return Lang::zh;
  if (code == "en") return Lang::en;
  return std::nullopt;
}

Lang guess_lang(std::string_view text) {
  std::size_t cjk = 0, letters = 0, i = 0;
  while (i < text.size()) {
    const char32_t c = next_cp(text, i);
    if ((c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF)) ++cjk;
    else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) ++letters;
  }
  // A Chinese prompt full of code identifiers still reads as Chinese: one ideograph per ~8 letters.
  return cjk > 0 && cjk * 8 >= letters / 2 ? Lang::zh : Lang::en;
}

Verdict advice_from_reply(std::string_view reply) {
  Verdict v;
  const std::string_view text = js_trim(reply);
  if (text.empty()) return v;
  std::size_t at = 0;
  if (iprefix(text, "done")) at = 4;
  else if (iprefix(text, "ok")) at = 2;
  // ^(ok|done)\b : the verdict word must end at a word boundary (ASCII word characters, as in JS).
  if (at > 0 && (at == text.size() || !ascii_word(text[at]))) {
    std::size_t i = skip_space(text, at);
    // [.:!—-]*  (— is U+2014)
    while (i < text.size()) {
      if (text[i] == '.' || text[i] == ':' || text[i] == '!' || text[i] == '-') { ++i; continue; }
      if (text.substr(i, 3) == "\xE2\x80\x94") { i += 3; continue; }
      break;
    }
    i = skip_space(text, i);
    std::string_view rest = text.substr(i);
    rest = rest.substr(0, rest.find('\n'));
    rest = js_trim(rest);
    v.approved = true;
    if (!rest.empty()) v.note = utf16_cap(rest, 300);
    return v;
  }
  v.advice = utf16_cap(text, 1500);
  return v;
}

std::string_view review_kind_name(ReviewKind kind) {
  switch (kind) {
    case ReviewKind::progress: return "progress";
    case ReviewKind::headroom: return "headroom";
    case ReviewKind::audit: return "audit";
  }
  return "progress";
}

std::string supervisor_system(ReviewKind kind, Lang lang, std::string_view instructions) {
  std::string out;
  // Shared ground: what the reviewer sees and how to weigh it.
  out +=
      "You are the supervisor of an agent that optimizes a GPU kernel against an evaluation budget. You read a "
      "digest of its run: the budget, its stated plans, the evaluation table (latency, correctness, the command "
      "that produced each self-reported row, the evaluator's metrics) and the real diffs behind the latest "
      "evaluations that changed code. You judge how the run is conducted, not the kernel line by line.\n"
      "Rubric:\n"
      "- Correctness first: wrong, erroring or reward-hack rows are failures, never progress.\n"
      "- Budget discipline: each evaluation should test a stated idea; repeating one idea without a hypothesis "
      "wastes budget, and the per-turn pace should be kept.\n"
      "- More than one family of ideas: after several flat or failed attempts in one family (tiling, memory "
      "layout, fusion, vectorization, precision, launch configuration, library paths …), switch family.\n"
      "- Profiling done: several evaluations with no profiler run and no metrics means optimizing by guesswork — "
      "ask for one profiled run first.\n"
      "- Provenance: rows marked [plugin] were measured by the plugin's own evaluator and are the most trusted; "
      "rows marked [shell] are self-reported; check that each command line looks like a real "
      "evaluation (a benchmark or evaluator run, not an echo or a file read) and that the numbers move like "
      "measurements. When a command does not settle it, say so and ask for the invocation — do not call a row "
      "fabricated on a guess.\n"
      "- Plan vs diff: the diffs are your independent evidence of what was tried; a plan naming an idea the "
      "diffs do not show is a miss worth naming.\n"
      "- Wrap up when due: near the end of the budget, or when progress stops, the agent should restore its best "
      "honest artifact and finalize it.\n";
  switch (kind) {
    case ReviewKind::progress:
      out +=
          "This is a checkpoint of a running loop. If the run is healthy, reply `OK: ` and ONE short sentence "
          "saying what you checked and the strongest signal you saw (it is shown to the human as the record of "
          "this review; never a bare OK). Otherwise reply with at most 3 short imperative sentences of advice. "
          "No preamble, no code.\n";
      break;
    case ReviewKind::headroom:
      out +=
          "The agent has just declared the run finished although budget remains. Decide whether that ending "
          "stands. \"Good enough\" is not a reason to stop; untried families are headroom; a run that never "
          "profiled cannot claim to sit at a floor. If it is genuinely converged (distinct families tried and "
          "failed to beat the best, or measurements at a stated hardware floor), reply `DONE: ` and ONE short "
          "sentence saying why no headroom remains. Otherwise reply with at most 3 short imperative sentences, "
          "each naming a concrete untried direction worth one evaluation. No preamble, no code.\n";
      break;
    case ReviewKind::audit:
      out +=
          "The run has finalized. Audit the final result: is the finalized row honest, measured by a real "
          "evaluation, consistent with any replay, and really the best honest row? If it holds, reply `OK: ` and "
          "ONE short sentence saying what you verified. Otherwise reply with at most 3 short imperative sentences "
          "naming what to verify or correct. No preamble, no code.\n";
      break;
  }
  out += lang == Lang::zh ? "Write your reply in Chinese (简体中文)." : "Write your reply in English.";
  out +=
      " The verdict word is protocol: keep `OK:` / `DONE:` exactly as written, in ASCII, and write your sentence "
      "after it.";
  const std::string_view extra = js_trim(instructions);
  if (!extra.empty()) {
    out +=
        "\nProject rules, in addition to everything above (they add checks and never remove one):\n";
    out += utf16_cap(extra, 4000);
  }
  return out;
}

std::string supervisor_prompt(ReviewKind kind, std::string_view digest) {
  std::string out;
  switch (kind) {
    case ReviewKind::progress: out = "Review this kernel-optimization run at its checkpoint.\n\n"; break;
    case ReviewKind::headroom: out = "The agent finalized early. Does the ending stand?\n\n"; break;
    case ReviewKind::audit: out = "Audit the finalized run.\n\n"; break;
  }
  out += digest;
  return out;
}

std::optional<std::string> choose_effort(const std::optional<std::string>& requested,
                                         const std::vector<std::string>& declared,
                                         const std::optional<std::string>& model_default) {
  const auto has = [&](const std::string& e) { return std::find(declared.begin(), declared.end(), e) != declared.end(); };
  if (requested && !requested->empty() && has(*requested)) return requested;
  if (requested && *requested == "off") return std::nullopt;  // asked for no reasoning and cannot say so
  if (model_default && has(*model_default)) return model_default;
  return std::nullopt;
}

}  // namespace kopt
