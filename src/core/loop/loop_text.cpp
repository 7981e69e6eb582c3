// The loop's messages in 中文 and English. The wording is ours; the anchors (loop.hpp) are written
// verbatim in both languages because the projection reads them back (spec M-1..M-4).
#include <string>

#include "kopt/loop.hpp"

namespace kopt {

namespace {

std::string num(long long v) { return std::to_string(v); }

// The review block. Advice sits between the header and a closing anchor, so the caller must put
// one after it; an approval is one line.
void review_block(std::string& out, const ReviewOutcome& r, Lang lang) {
  if (!r.reviewed) {
    if (!r.failure) return;
    out += "\n\n";
    out += anchors::kReviewFailedLine;
    const std::string& why = *r.failure;
    if (lang == Lang::zh) {
      out += why == "timeout" ? " 第二模型在时限内没有回答" : why == "empty" ? " 第二模型的回答是空的" : " 第二模型的调用失败了";
      out += "（" + why + "）；本轮没有审查，照常继续。";
    } else {
      out += why == "timeout" ? " The second model did not answer in time" : why == "empty" ? " The second model's answer was empty" : " The call to the second model failed";
      out += " (" + why + "); no review this round, carry on as usual.";
    }
    return;
  }
  out += "\n\n";
  if (r.advice) {
    out += anchors::kReviewHeader;
    out += '\n';
    out += *r.advice;
  } else {
    out += anchors::kReviewOkLine;
    if (r.note && !r.note->empty()) {
      out += ' ';
      out += *r.note;
    }
  }
}

void language_line(std::string& out, Lang lang) {
  out += "\n\n";
  out += anchors::kLanguageLine;
  if (lang == Lang::zh) {
    out += "zh — 回复、总结以及 kernel_plan / kernel_env 的文字字段都用中文；代码、命令、标识符和以上的英文协议行保持原样。";
  } else {
    out += "en — write replies, summaries and the kernel_plan / kernel_env text fields in English; "
           "code, commands and identifiers stay as they are.";
  }
}

}  // namespace

ReviewOutcome ReviewOutcome::from(const Verdict& v) {
  ReviewOutcome r;
  r.reviewed = v.answered();
  if (v.advice) r.advice = v.advice;
  else if (v.approved) r.note = v.note;
  return r;
}

std::string continuation_text(const ContinuationText& in) {
  const bool zh = in.lang == Lang::zh;
  std::string out;
  out += anchors::kLoopLinePrefix;
  out += num(in.round) + "] " + num(in.evalsDone) + "/" + num(in.budget);
  out += anchors::kCountersSuffix;
  out += zh ? "（本次运行的优化评测计数）。" : " so far in this run.";
  if (in.paceEvals > 0) {
    out += '\n';
    if (zh) {
      out += "节奏：本轮最多再跑 " + num(in.paceEvals) +
             " 次评测（失败或中断的也算），到数就结束本轮并汇报，哪怕想法还没做完。"
             "循环会马上让你接着做，所以结束本轮不是提前收尾的理由；汇报只是检查点，没做完的想法不等于被否定。";
    } else {
      out += "Pace: run at most " + num(in.paceEvals) +
             " more evaluations in this turn (failed or aborted runs count), then end the turn and report, "
             "even in the middle of an idea. The loop picks you up again right away, so ending the turn is no "
             "reason to finalize early; the report is a checkpoint, and an idea cut short is unfinished, not refuted.";
    }
  }
  if (in.stagnant >= 3) {
    out += '\n';
    out += zh ? "提示：距上次提速已有 " + num(in.stagnant) +
                    " 次评测没有进步——先用 profiler 找瓶颈，或换一类思路，再继续花预算。"
              : "Note: " + num(in.stagnant) +
                    " evaluations since the last improvement — profile to find the bottleneck, or switch to another "
                    "family of ideas, before spending more budget on this line.";
  }
  review_block(out, in.review, in.lang);
  out += "\n\n";
  out += anchors::kContinueTrailer;
  if (in.challenge) {
    // The challenge sentence is an anchor: keep it verbatim in both languages.
    if (zh) {
      out += "：the run is NOT over。你宣布了结束，但预算还有剩余，而监督模型在上面指出了还有提升空间——"
             "把这次 finalize 当作暂定结果，现在就去试这些方向。\n"
             "不要用同一个产物再 finalize 一次来结束：要么拿出比当前最好成绩更快的测量，要么拿出证据"
             "（试了什么、测得多少、为什么赢不了）说明某个方向确实没有希望。\n"
             "等剩余预算确实追不上当前最好成绩时，再 finalize 你认可的结果（" + in.finalizeHint +
             "），用 kernel_plan 报告最终交付的方案，然后总结。";
    } else {
      out += ": ";
      out += anchors::kChallengeLine;
      out += ". You declared it finished, but budget is left and the supervisor sees headroom (above) — treat "
             "your finalize as provisional and try those directions now.\n"
             "Do not finalize the same artifact again to end the run: either measure something faster than the "
             "current best, or bring evidence (what you tried, what it measured, why it cannot win) that a "
             "direction is a dead end.\n"
             "Once the remaining budget really cannot beat the current best, finalize the result you stand behind (" +
             in.finalizeHint + "), report the delivered approach with kernel_plan, then summarize.";
    }
  } else if (!in.taskKnown) {
    if (zh) {
      out += "：对话里还没有任务。先盘点工作目录，找用户准备好的任务（任务说明、内核、基准脚本），从找到的内容开始，"
             "第一次评测前用 kernel_plan 报告你的计划。工作目录里也没有任务时，问用户要优化什么，然后停下——"
             "绝不要拿工作目录以外的东西当任务。";
    } else {
      out += ": there is no task in the conversation yet. Look through the WORKING DIRECTORY for the task the user "
             "prepared (task notes, kernels, benchmark scripts), start from what you find, and report your plan "
             "with kernel_plan before the first evaluation. If the directory holds no task either, ask the user what "
             "to optimize and stop — never take anything from outside the working directory as the task.";
    }
  } else {
    out += zh ? "：分析最新结果，方案变了就用 kernel_plan 更新，改进内核，再评测。"
              : ": read the latest result, update the plan with kernel_plan if it changed, improve the kernel, and "
                "evaluate again.";
    if (!in.planKnown) {
      out += '\n';
      out += zh ? "还没有任何 kernel_plan 记录——继续评测之前，先用它报告你的方案（phase、approach、hypothesis）。"
                : "No kernel_plan is on record — report your plan with it (phase, approach, hypothesis) before the "
                  "next evaluation.";
    } else if (in.planStale) {
      out += '\n';
      out += zh ? "最近几次评测都晚于你最后一次 kernel_plan——用它重新报告你现在真正在做的方案；"
                  "面板上的计划只来自 kernel_plan，回复里的文字到不了那里。"
                : "Your last kernel_plan is older than the recent evaluations — call it again with what you are "
                  "really pursuing now; the plan panel only shows kernel_plan, never the reply text.";
    }
    if (!in.envKnown) {
      out += '\n';
      out += zh ? "还没有 kernel_env 记录——报告这些评测实际在哪里运行（主机、设备、用户对设备的限制、主要工具链版本，"
                  "以及你读取这些信息的命令）。没有机器信息，延迟数字没法解读。"
                : "No kernel_env is on record — report where these evaluations really run (host, device, any user "
                  "constraint on the device, key toolchain versions, and the commands you read them from). Latency "
                  "figures mean little without the machine behind them.";
    }
    out += '\n';
    out += zh ? "如果已经做完，或剩余预算追不上当前最好成绩，就 finalize 你认可的结果（" + in.finalizeHint + "），然后总结。"
              : "If you are done, or the remaining budget cannot beat the current best, finalize the result you stand "
                "behind (" + in.finalizeHint + "), then summarize.";
  }
  language_line(out, in.lang);
  return out;
}

std::string wrapup_text(Lang lang, long long evals_done, long long budget, std::string_view reason,
                        std::string_view finalize_hint, const ReviewOutcome& review) {
  const bool zh = lang == Lang::zh;
  const std::string hint(finalize_hint);
  std::string out;
  out += anchors::kWrapupLinePrefix;
  out += ' ' + num(evals_done) + "/" + num(budget);
  out += anchors::kCountersSuffix;
  out += "; stopping (" + std::string(reason) + ").";
  if (reason == "at-limit") out += zh ? " 最好的内核已接近这台机器的上限（达到配置的占比）。"
                                      : " The best kernel runs within the configured fraction of the machine's limit.";
  else if (zh) out += reason == "budget" ? " 评测预算已用完。" : " 连续几轮没有新的评测。";
  review_block(out, review, lang);
  out += "\n\n";
  out += anchors::kWrapupCloseLine;
  if (zh) {
    out += "——循环即将结束，不要再开始新的优化。\n"
           "1. 如果后来的改动让内核变慢了，先把最好的产物原样恢复。\n"
           "2. 有诚实的最好结果就现在 finalize 它（" + hint +
           "；用评测器给的 evaluation_id，或给 kernel_finalize 传产物路径）。\n"
           "3. 用 kernel_plan 报告最终交付的方案，让计划面板显示的是交付的东西，而不是中途放弃的尝试。\n"
           "4. 总结这次运行：最好结果、有效的做法、无效的做法，以及下次最该先试什么。";
  } else {
    out += " — start no new optimization work.\n"
           "1. If a later edit made the kernel slower, restore the best artifact exactly as it was measured.\n"
           "2. If an honest best result exists, finalize it now (" + hint +
           "; the evaluation_id from your evaluator, or the artifact path for kernel_finalize).\n"
           "3. Report the approach you are delivering with kernel_plan, so the plan panel shows what you deliver "
           "rather than an abandoned experiment.\n"
           "4. Summarize the run: the best result, what worked, what did not, and what to try first next time.";
  }
  language_line(out, lang);
  return out;
}

std::string audit_text(Lang lang, const ReviewOutcome& review) {
  const bool zh = lang == Lang::zh;
  std::string out;
  out += anchors::kAuditLinePrefix;
  out += zh ? " the run is finalized — 运行已 finalize，监督模型检查了最终结果。"
            : " the run is finalized; the supervisor checked the final results.";
  review_block(out, review, lang);
  out += "\n\n";
  if (review.advice) {
    out += anchors::kAuditCloseLine;
    out += zh ? "：核实或更正已 finalize 的结果（产物变了就重新 finalize），然后用一句话收尾。除了处理这些问题，不要再开始新的优化。"
              : ": check or correct the finalized result (finalize again if the artifact changes), then close with "
                "a short note. Start no optimization work beyond what the findings need.";
  } else {
    out += zh ? "无需再做什么——这条消息结束本次运行，简短确认即可。"
              : "Nothing more to do — this note closes the run; a one-line acknowledgement is enough.";
  }
  language_line(out, lang);
  return out;
}

std::optional<Lang> language_of_message(std::string_view text) {
  const auto at = text.rfind(anchors::kLanguageLine);
  if (at == std::string_view::npos) return std::nullopt;
  return parse_lang(text.substr(at + anchors::kLanguageLine.size(), 2));
}

}  // namespace kopt
