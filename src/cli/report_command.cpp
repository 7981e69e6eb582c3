// `kopt report`: the offline report's command line (the formats are kopt_core's, include/kopt/report.hpp).
#include "report_command.hpp"

#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "kopt/compare.hpp"

#include "kopt/report.hpp"

namespace kopt {

namespace {

int report_usage() {
  std::fputs(
      "usage: kopt report LOG [-o OUT.html] [--csv OUT.csv] [--json OUT.json] [--md OUT.md] [--lang zh|en]\n"
      "                       [--budget N] [--config CONFIG.json]\n"
      "       kopt report LOG_A LOG_B [LOG …] [-o COMPARE.html] [--json COMPARE.json] [--lang zh|en] [--config CONFIG.json]\n"
      "  LOG: a JSON array of events, session.jsonl or session.jsonl.zstd. Without -o/--csv/--json/--md\n"
      "  the HTML goes to stdout. --md: the measured points as a markdown table (for a pull request).\n"
      "  --budget: the loop budget for the phase split (default: from the log).\n"
      "  Two to 8 logs: one page comparing the runs (their curves overlaid, one row each); --csv, --md and\n"
      "  --budget are for one log.\n",
      stderr);
  return 2;
}

bool write_out(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return std::fflush(stdout) == 0;
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return false;
  f.write(text.data(), static_cast<std::streamsize>(text.size()));
  return static_cast<bool>(f.flush());
}

double now_ms() {
  return static_cast<double>(std::time(nullptr)) * 1000;
}

}  // namespace

// `kopt report A B …`: the runs compared on one page (compare.hpp, compare_html). A log that cannot
// be read keeps its row with the reason; 1 when none can be read.
int compare_command(const std::vector<std::string>& logs, const ProjectionConfig& cfg, ReportLang lang, const std::string& html_out,
                    const std::string& json_out) {
  std::vector<RunSummary> runs;
  std::size_t readable = 0;
  for (const std::string& log : logs) {
    ReportInput in;
    std::string err;
    const std::string name = log.substr(log.find_last_of('/') + 1);
    if (!load_report_input(log, cfg, in, err)) {
      std::fprintf(stderr, "kopt: %s\n", err.c_str());
      RunSummary r;
      r.id = name;
      r.error = err;
      runs.push_back(std::move(r));
      continue;
    }
    if (!in.read.error.empty()) std::fprintf(stderr, "kopt: warning: %s: %s\n", log.c_str(), in.read.error.c_str());
    ++readable;
    runs.push_back(summarize_run(name, in.series, std::move(in.facts)));
  }
  if (readable == 0) {
    std::fprintf(stderr, "kopt: none of the logs can be read\n");
    return 1;
  }
  const json cmp = compare_json(runs);
  for (const bool html : {true, false}) {
    const std::string& path = html ? html_out : json_out;
    if (path.empty()) continue;
    const std::string out = html ? compare_html(cmp, lang, now_ms()) : js_stringify(cmp) + "\n";
    if (!write_out(path, out)) {
      std::fprintf(stderr, "kopt: cannot write %s\n", path.c_str());
      return 1;
    }
    if (path != "-") std::fprintf(stderr, "kopt: wrote %s\n", path.c_str());
  }
  return 0;
}

int report_command(const std::vector<std::string>& args) {
  std::vector<std::string> logs;
  std::string html_out, csv_out, json_out, md_out, config_path;
  ReportLang lang = ReportLang::Zh;
  long long budget = 0;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool has_value = i + 1 < args.size();
    if ((a == "-o" || a == "--output") && has_value)
      html_out = args[++i];
    else if (a == "--csv" && has_value)
      csv_out = args[++i];
    else if (a == "--json" && has_value)
      json_out = args[++i];
    else if (a == "--md" && has_value)
      md_out = args[++i];
    else if (a == "--config" && has_value)
      config_path = args[++i];
    else if (a == "--lang" && has_value) {
      const std::string& v = args[++i];
      if (v == "zh")
        lang = ReportLang::Zh;
      else if (v == "en")
        lang = ReportLang::En;
      else
        return report_usage();
    } else if (a == "--budget" && has_value) {
      try {
        budget = std::stoll(args[++i]);
      } catch (const std::exception&) {
        return report_usage();
      }
      if (budget < 1) return report_usage();
    } else if (a.rfind("-", 0) != 0) {
      logs.push_back(a);
    } else {
      return report_usage();
    }
  }
  if (logs.empty()) return report_usage();
  if (logs.size() > kCompareMax) {
    std::fprintf(stderr, "kopt: a comparison holds at most %zu logs, not %zu\n", kCompareMax, logs.size());
    return 2;
  }
  if (logs.size() > 1 && (!csv_out.empty() || !md_out.empty() || budget != 0)) {
    std::fprintf(stderr, "kopt: --csv, --md and --budget are for one log; a comparison writes -o (HTML) and --json\n");
    return 2;
  }
  const std::string& log = logs.front();
  if (html_out.empty() && csv_out.empty() && json_out.empty() && md_out.empty()) html_out.assign(1, '-');  // not `= "-"`: GCC 12 misreports that as an overlapping memcpy (-Wrestrict)

  ProjectionConfig cfg;
  std::string err;
  if (!config_path.empty()) {
    std::ifstream f(config_path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    auto c = f ? parse_json(text) : std::nullopt;
    if (!c) {
      std::fprintf(stderr, "kopt: %s: cannot read or not valid JSON\n", config_path.c_str());
      return 1;
    }
    if (std::string e = cfg.apply_json(*c); !e.empty()) {
      std::fprintf(stderr, "kopt: %s: %s\n", config_path.c_str(), e.c_str());
      return 1;
    }
  }
  if (logs.size() > 1) {
    return compare_command(logs, cfg, lang, html_out, json_out);
  }
  ReportInput in;
  if (!load_report_input(log, cfg, in, err)) {
    std::fprintf(stderr, "kopt: %s\n", err.c_str());
    return 1;
  }
  if (!in.read.error.empty()) std::fprintf(stderr, "kopt: warning: %s\n", in.read.error.c_str());
  in.budget = budget;
  in.generatedAtMs = now_ms();
  const Report r = build_report(std::move(in));
  struct Out {
    const std::string& path;
    std::string (*make)(const Report&, ReportLang);
  };
  const Out outs[] = {
      {html_out, [](const Report& x, ReportLang l) { return report_html(x, l); }},
      {csv_out, [](const Report& x, ReportLang) { return report_csv(x); }},
      {json_out, [](const Report& x, ReportLang) { return js_stringify(report_json(x)) + "\n"; }},
      {md_out, [](const Report& x, ReportLang l) { return report_markdown(x, l); }},
  };
  for (const auto& o : outs) {
    if (o.path.empty()) continue;
    if (!write_out(o.path, o.make(r, lang))) {
      std::fprintf(stderr, "kopt: cannot write %s\n", o.path.c_str());
      return 1;
    }
    if (o.path != "-") std::fprintf(stderr, "kopt: wrote %s\n", o.path.c_str());
  }
  return 0;
}

}  // namespace kopt
