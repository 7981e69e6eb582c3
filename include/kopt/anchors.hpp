// Protocol strings the projection parses back out of the log. They must match byte for byte and
// are never translated (spec M-4; vectors unit.expected.json constants.anchors).
#pragma once
#include <string_view>

// Four of them are also written by the JS half; their one home is lib/anchors.json, which CMake
// hands in as these macros (CMakeLists.txt) and lib/config.mjs reads.
#if !defined(KOPT_ANCHOR_PLUGIN_ID) || !defined(KOPT_ANCHOR_REPLAY_TOOL) || !defined(KOPT_ANCHOR_REPLAY_LINE_PREFIX) || \
    !defined(KOPT_ANCHOR_EVALUATE_TOOL)
#error "build with CMake: the KOPT_ANCHOR_* strings come from lib/anchors.json"
#endif

namespace kopt::anchors {

inline constexpr std::string_view kEvalTrailerPrefix = "KERNEL_EVAL=";
inline constexpr std::string_view kReplayLinePrefix = KOPT_ANCHOR_REPLAY_LINE_PREFIX;
inline constexpr std::string_view kReplayTool = KOPT_ANCHOR_REPLAY_TOOL;
inline constexpr std::string_view kLoopPluginId = KOPT_ANCHOR_PLUGIN_ID;
// Ours (DV-13): the plugin's own evaluator tool; its results carry `"measured_by": <kLoopPluginId>`.
inline constexpr std::string_view kEvaluateTool = KOPT_ANCHOR_EVALUATE_TOOL;
inline constexpr std::string_view kMeasuredByKey = "measured_by";
inline constexpr std::string_view kLoopLinePrefix = "[kernel-loop round ";
inline constexpr std::string_view kWrapupLinePrefix = "[kernel-loop wrap-up]";
inline constexpr std::string_view kAuditLinePrefix = "[kernel-loop final review]";
inline constexpr std::string_view kWrapupCloseLine = "The kernel loop is ending";
inline constexpr std::string_view kAuditCloseLine = "Address the findings";
inline constexpr std::string_view kChallengeLine = "the run is NOT over";
inline constexpr std::string_view kReviewHeader = "Supervisor review (advisory, from the second model):";
inline constexpr std::string_view kReviewOkLine = "Supervisor review: OK.";
// Ours (not in the shared vectors): a review was asked for and gave no usable answer.
inline constexpr std::string_view kReviewFailedLine = "Supervisor review: failed.";
inline constexpr std::string_view kContinueTrailer = "Continue the kernel-optimization run";
// Regular expressions, as text: "started background job (\S+)" and "(\d+)/(\d+) evaluations used".
inline constexpr std::string_view kBackgroundJobAnnounce = "started background job ";
inline constexpr std::string_view kCountersSuffix = " evaluations used";
// Ours (not read by the projection): the run language line of a loop message, read back by
// language_of_message.
inline constexpr std::string_view kLanguageLine = "Run language: ";

}  // namespace kopt::anchors
