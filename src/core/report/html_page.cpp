// The HTML report's page: its style sheet and the order of its cards (report_html).
#include <string>

#include "report_parts.hpp"

namespace kopt {
namespace {

const char* kCss = R"CSS(
:root{--text:#1f2329;--dim:#4e5969;--faint:#7b8391;--border:rgba(120,128,140,.24);--card:#fff;--bg:#f6f7f9;
--accent:#4d6bfe;--ok:#1f8f5f;--bad:#d64545;--warn:#b87200;--final:#8a5cf6;--prof:#c27c0e;--band:rgba(194,124,14,.07);--band2:rgba(138,92,246,.07);
--mono:ui-monospace,SFMono-Regular,Menlo,Consolas,"Noto Sans Mono CJK SC","DejaVu Sans Mono",monospace}
@media (prefers-color-scheme:dark){:root{--text:#e6e8eb;--dim:#b4bac4;--faint:#8a919c;--border:rgba(160,168,180,.22);--card:#1c1e22;--bg:#141518;
--accent:#7c93ff;--ok:#3fbf86;--bad:#f06a6a;--warn:#e0a03a;--final:#a989ff;--prof:#e0a03a}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--text);font:14px/1.6 system-ui,-apple-system,"Segoe UI","PingFang SC","Hiragino Sans GB","Noto Sans CJK SC","Source Han Sans SC","Microsoft YaHei","WenQuanYi Micro Hei",sans-serif}
main{max-width:1240px;margin:0 auto;padding:28px 24px 48px;display:flex;flex-direction:column;gap:16px}
header h1{margin:0;font-size:22px;font-weight:600;letter-spacing:.2px}
header h1 .en{color:var(--faint);font-weight:400;font-size:17px;margin-left:4px}
.meta{display:flex;flex-wrap:wrap;gap:4px 18px;margin-top:6px;color:var(--dim);font-size:13px}
.meta b{font-weight:500;color:var(--faint);margin-right:6px}
.card{background:var(--card);border:1px solid var(--border);border-radius:12px;padding:16px 20px}
.card h2{margin:0 0 10px;font-size:15px;font-weight:600;display:flex;align-items:baseline;gap:10px;flex-wrap:wrap}
.card h2 small{font-weight:400;color:var(--faint);font-size:12.5px}
.chips{display:flex;flex-wrap:wrap;gap:8px}
.chip{display:inline-flex;align-items:baseline;gap:6px;padding:5px 12px;border-radius:999px;border:1px solid var(--border);background:var(--card);font-size:13px;color:var(--dim)}
.chip b{font-size:15px;color:var(--text);font-weight:600;font-variant-numeric:tabular-nums}
.chip.ok{border-color:rgba(31,143,95,.4)}.chip.ok b{color:var(--ok)}
.chip.warn{border-color:rgba(184,114,0,.45)}.chip.warn b{color:var(--warn)}
.chip.final{border-color:rgba(138,92,246,.45)}.chip.final b{color:var(--final)}
.chip .re{color:var(--ok)}.chip .nre{color:var(--warn)}
.task{white-space:pre-wrap;word-break:break-word;color:var(--dim);max-height:9.6em;overflow:auto;margin:0;font-size:13.5px}
svg.curve{display:block;width:100%;height:auto;font:11.5px system-ui,-apple-system,"Segoe UI","PingFang SC","Noto Sans CJK SC",sans-serif}
svg.curve .grid{stroke:var(--border);stroke-width:1}
svg.curve .axis{fill:var(--faint)}
svg.curve .frame{stroke:var(--border);fill:none}
svg.curve .band-over{fill:var(--band)}svg.curve .band-wrap{fill:var(--band2)}
svg.curve .band-label{fill:var(--faint);font-size:11px}
svg.curve .line{fill:none;stroke:var(--accent);stroke-width:1.8;stroke-linejoin:round;opacity:.9}
svg.curve .whisker{fill:none;stroke:var(--accent);stroke-width:1.2;opacity:.45}
svg.curve .bestline{stroke:var(--ok);stroke-width:1.2;stroke-dasharray:6 5;opacity:.8}
svg.curve .bestlabel{fill:var(--ok);font-size:12px}
svg.curve .baseline{stroke:var(--border);stroke-dasharray:2 4}
svg.curve .pt.ok{fill:var(--accent);stroke:var(--card);stroke-width:1}
svg.curve .pt.failed{fill:var(--card);stroke:var(--bad);stroke-width:1.8}
svg.curve .pt.unmeasured{fill:none;stroke:var(--faint);stroke-width:1.5}
svg.curve .pt.bad{fill:none;stroke:var(--bad);stroke-width:1.5}
svg.curve .pt.pending{fill:none;stroke:var(--faint);stroke-width:1.5;stroke-dasharray:2 2}
svg.curve .pt{pointer-events:all}
svg.curve a:hover .pt{stroke:var(--text);stroke-width:2}
svg.curve .beststar{fill:var(--ok);font-size:15px;pointer-events:none}
svg.curve .flag{fill:var(--final);font-size:13px}
svg.curve .prof{fill:var(--prof);font-size:11px}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:12.5px;color:var(--dim);margin-top:6px}
.legend i{font-style:normal;margin-right:4px}
.note{font-size:12.5px;color:var(--faint);margin-top:6px}
.warnbox{margin-top:8px;padding:8px 12px;border-radius:8px;border:1px solid rgba(184,114,0,.4);background:rgba(194,124,14,.07);color:var(--text);font-size:13px}
.grid2{display:grid;grid-template-columns:repeat(auto-fit,minmax(340px,1fr));gap:16px}
.grid2>*{min-width:0}
dl.kv{display:grid;grid-template-columns:auto 1fr;gap:4px 14px;margin:0;font-size:13px}
dl.kv dt{color:var(--faint)}dl.kv dd{margin:0;word-break:break-word}
.tag{display:inline-block;padding:0 7px;border-radius:6px;font-size:12px;line-height:20px;border:1px solid var(--border);color:var(--dim);white-space:nowrap}
.tag.ok{color:var(--ok);border-color:rgba(31,143,95,.4)}.tag.bad{color:var(--bad);border-color:rgba(214,69,69,.4)}
.tag.warn{color:var(--warn);border-color:rgba(184,114,0,.45)}.tag.dim{color:var(--faint)}
.tag.tool{color:var(--accent);border-color:rgba(77,107,254,.4)}.tag.replay{color:var(--final);border-color:rgba(138,92,246,.45)}
.tablewrap{overflow-x:auto;border:1px solid var(--border);border-radius:8px}
table.rec{width:100%;border-collapse:collapse;font-size:13px}
table.rec th{text-align:left;font-weight:500;color:var(--faint);font-size:12px;padding:7px 8px;border-bottom:1px solid var(--border);background:var(--bg);white-space:nowrap}
table.rec td{padding:7px 8px;border-bottom:1px solid var(--border);vertical-align:top;font-variant-numeric:tabular-nums}
table.rec tr:last-child td{border-bottom:0}
table.rec tr.best td{background:rgba(31,143,95,.05)}
table.rec tr:target td{background:rgba(77,107,254,.10)}
table.rec td.n{white-space:nowrap;color:var(--dim)}
table.rec td.num{white-space:nowrap}
table.rec td.num .sub{white-space:normal;min-width:12em;max-width:22em}
.star{color:var(--ok);margin-left:3px}.flagc{color:var(--final);margin-left:3px}
.sub{display:block;font-size:12px;color:var(--faint);margin-top:2px;word-break:break-word}
.err{display:block;font-size:12px;color:var(--bad);margin-top:3px;word-break:break-word;white-space:pre-wrap}
.cmd{display:block;font:12px/1.45 var(--mono);color:var(--dim);word-break:break-all;white-space:pre-wrap;margin-top:3px;max-height:7.5em;overflow:auto;unicode-bidi:isolate}
pre{font:12px/1.45 var(--mono);margin:4px 0;padding:6px 8px;white-space:pre-wrap;word-break:break-word;background:rgba(127,127,127,.08);border-radius:6px;max-height:240px;overflow:auto}
pre.old{border-left:3px solid rgba(214,69,69,.6)}pre.new{border-left:3px solid rgba(31,143,95,.6)}
details summary{cursor:pointer;color:var(--accent);font-size:12.5px;white-space:nowrap}
details[open] summary{margin-bottom:4px}
.chg{margin-top:6px}.chg .path{font:12px var(--mono);color:var(--text);word-break:break-all}
td.trust{max-width:300px}td.appr{min-width:120px;max-width:220px}td.rev{min-width:110px;max-width:220px}td.chgs{min-width:80px;max-width:360px}
td.rev summary,td.chgs summary{white-space:normal}
.revtext{white-space:pre-wrap;word-break:break-word}
.okc{color:var(--ok)}
ol.plans,ol.revs{margin:0;padding-left:0;list-style:none;display:flex;flex-direction:column;gap:8px;font-size:13px}
ol.plans li,ol.revs li{display:flex;gap:10px}
ol.plans li>span:first-child,ol.revs li>span:first-child{flex:none;min-width:86px;color:var(--faint)}
ol.plans li>:last-child,ol.revs li>:last-child{min-width:0;overflow-wrap:anywhere}
ol.plans .tag,td.appr .tag,td.trust .tag{white-space:normal;overflow-wrap:anywhere}
td.appr,td.rev{overflow-wrap:anywhere}
footer{color:var(--faint);font-size:12px;text-align:center;margin-top:4px}
.sw{display:inline-block;width:11px;height:11px;border-radius:50%;vertical-align:-1px;margin-right:6px}
.cmpkey{display:inline-block;min-width:1.6em;font-weight:600}
svg.curve .cline{fill:none;stroke-width:1.8;stroke-linejoin:round;opacity:.9}
svg.curve .cpt{stroke-width:1.6}
table.rec.cmp td.who{min-width:160px;max-width:280px;overflow-wrap:anywhere}table.rec.cmp td .sub{max-width:26em}
.okbox{margin-top:8px;padding:8px 12px;border-radius:8px;border:1px solid rgba(31,143,95,.4);background:rgba(31,143,95,.06);font-size:13px}
code{font-family:var(--mono);font-size:.95em}
@media print{body{background:#fff}.card{break-inside:avoid-page}main{max-width:none}}
)CSS";

}  // namespace

using namespace report_parts;

namespace report_parts {

void page_open(std::string& o, ReportLang lang, const std::string& title) {
  o += "<!doctype html>\n<html lang=\"";
  o += lang == ReportLang::Zh ? "zh-CN" : "en";
  o += "\">\n<head>\n<meta charset=\"utf-8\">\n"
       // No script, no fetch: the page is inert even if a string slipped through.
       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src "
       "data:\">\n"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
       "<meta name=\"generator\" content=\"kopt report\">\n<title>";
  o += html_escape(title);
  o += "</title>\n<style>";
  o += kCss;
  o += "</style>\n</head>\n<body>\n<main>\n";
}

void page_close(std::string& o, ReportLang lang) {
  o += "<footer>" + std::string(T(lang, "footer")) + "</footer>\n</main>\n</body>\n</html>\n";
}

}  // namespace report_parts

std::string report_html(const Report& r, ReportLang lang) {
  std::string o;
  o.reserve(64 * 1024 + r.in.series.iterations.size() * 2048);
  page_open(o, lang, std::string(T(lang, "doc.title")) + " · " + r.in.source);
  o += "<header data-kopt=\"header\"><h1>";
  o += T(lang, "title");
  o += "</h1>\n<div class=\"meta\"><span><b>" + std::string(T(lang, "log")) + "</b>" + html_escape(r.in.source) +
       "</span>";
  if (r.in.firstTimeMs && r.in.lastTimeMs)
    o += "<span><b>" + std::string(T(lang, "span")) + "</b>" + utc_time(*r.in.firstTimeMs) + " · " +
         duration_label(*r.in.lastTimeMs - *r.in.firstTimeMs) + "</span>";
  o +=
      "<span><b>" + std::string(T(lang, "events")) + "</b>" + std::to_string(r.in.series.iterations.size()) + "</span>";
  if (r.in.generatedAtMs > 0)
    o += "<span><b>" + std::string(T(lang, "generated")) + "</b>" + utc_time(r.in.generatedAtMs) + "</span>";
  o += "</div></header>\n";
  if (r.in.task)
    o += "<section class=\"card\" data-kopt=\"task\"><h2>" + std::string(T(lang, "task")) +
         "</h2><pre class=\"task\">" + html_escape(*r.in.task) + "</pre></section>\n";
  chips(o, r, lang);
  curve_card(o, r, lang);
  o += "<div class=\"grid2\">\n";
  env_card(o, r, lang);
  plans_card(o, r, lang);
  o += "</div>\n";
  record_table(o, r, lang);
  reviews_card(o, r, lang);
  notes_card(o, r, lang);
  page_close(o, lang);
  return o;
}

}  // namespace kopt
