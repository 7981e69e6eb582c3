// `kopt report`: the offline report's command line (the formats are kopt_core's, include/kopt/report.hpp).
#include "report_command.hpp"

#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "kopt/report.hpp"

namespace kopt {

namespace {

int report_usage() {
  std::fputs(
      "usage: kopt report LOG [-o OUT.html] [--csv OUT.csv] [--json OUT.json] [--lang zh|en] [--budget N]\n"
      "                       [--config CONFIG.json]\n"
      "  LOG: a JSON array of events, session.jsonl or session.jsonl.zstd. Without -o/--csv/--json the\n"
      "  HTML goes to stdout. --budget: the loop budget for the phase split (default: from the log).\n",
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

int report_command(const std::vector<std::string>& args) {
  std::string log, html_out, csv_out, json_out, config_path;
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
    } else if (log.empty() && a.rfind("-", 0) != 0) {
      log = a;
    } else {
      return report_usage();
    }
  }
  if (log.empty()) return report_usage();
  if (html_out.empty() && csv_out.empty() && json_out.empty()) html_out.assign(1, '-');  // not `= "-"`: GCC 12 misreports that as an overlapping memcpy (-Wrestrict)

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
