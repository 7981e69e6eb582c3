#include "slurm_client.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "proc.hpp"
#include "report.hpp"

namespace kopt::bench {
using nlohmann::json;

bool split_shell_words(const std::string& text, std::vector<std::string>* words, std::string* error) {
  words->clear();
  std::string cur;
  bool in_word = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words->push_back(cur), cur.clear(), in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\'') {
      size_t end = text.find('\'', i + 1);
      if (end == std::string::npos) return *error = "unterminated ' in --slurm options", false;
      cur += text.substr(i + 1, end - i - 1);
      i = end;
    } else if (c == '"') {
      size_t j = i + 1;
      for (; j < text.size() && text[j] != '"'; ++j) {
        // Inside double quotes a backslash escapes only these, as in a POSIX shell.
        if (text[j] == '\\' && j + 1 < text.size() && std::strchr("\"\\$`", text[j + 1])) ++j;
        cur += text[j];
      }
      if (j >= text.size()) return *error = "unterminated \" in --slurm options", false;
      i = j;
    } else if (c == '\\') {
      if (i + 1 < text.size()) cur += text[++i];
    } else {
      cur += c;
    }
  }
  if (in_word) words->push_back(cur);
  return true;
}

std::string refuse_reserved_sbatch_options(const std::vector<std::string>& words) {
  // Set by this client: the array, the wait, the per-element output files, the parsable id.
  static const char* const kLong[] = {"--array", "--wait", "--output", "--error", "--parsable", "--wrap"};
  static const char* const kShort[] = {"-a", "-W", "-o", "-e"};
  for (const auto& w : words) {
    for (const char* r : kLong) {
      size_t n = std::strlen(r);
      if (w.compare(0, n, r) == 0 && (w.size() == n || w[n] == '='))
        return std::string("--slurm: ") + r + " is set by kopt-bench itself (one array element per --solution)";
    }
    for (const char* r : kShort)
      if (w.compare(0, 2, r) == 0)
        return std::string("--slurm: ") + r + " is set by kopt-bench itself (one array element per --solution)";
  }
  return "";
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

namespace {

volatile sig_atomic_t g_stop_signal = 0;
void on_stop_signal(int sig) { g_stop_signal = sig; }

bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

std::string cwd() {
  char buf[4096];
  return getcwd(buf, sizeof buf) ? std::string(buf) : std::string(".");
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) out.push_back(line);
  return out;
}

// The job script: every element records where it runs, then runs this kopt-bench on its candidate
// and marks itself done with the exit status (the .done file appears atomically, after the output).
std::string job_script(const std::string& dir, const std::string& exe, const Options& opt) {
  std::ostringstream s;
  s << "#!/bin/sh\n# written by kopt-bench --slurm: one array element per candidate\n"
    << "d=" << shell_quote(dir) << "\n"
    << "i=${SLURM_ARRAY_TASK_ID:?not an array element}\n"
    << "gpu=\n"
    << "if command -v nvidia-smi >/dev/null 2>&1; then\n"
    << "  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader ${CUDA_VISIBLE_DEVICES:+-i \"${CUDA_VISIBLE_DEVICES%%,*}\"}"
       " 2>/dev/null | head -n 1)\n"
    << "fi\n"
    << "printf '%s\\n' \"${SLURM_ARRAY_JOB_ID:-}\" \"$i\" \"${SLURMD_NODENAME:-}\" \"${SLURM_JOB_PARTITION:-}\" \"$gpu\""
       " > \"$d/$i.where.tmp\" && mv \"$d/$i.where.tmp\" \"$d/$i.where\"\n"
    << "case $i in\n";
  for (size_t k = 0; k < opt.candidates.size(); ++k)
    s << "  " << k << ") solution=" << shell_quote(opt.candidates[k]) << " ;;\n";
  s << "  *) echo \"kopt-bench --slurm: no candidate $i\" >&2; exit 2 ;;\nesac\n" << shell_quote(exe);
  for (const auto& a : opt.passthrough) s << ' ' << shell_quote(a);
  s << " --solution \"$solution\"\n"
    << "rc=$?\n"
    << "echo \"$rc\" > \"$d/$i.done.tmp\" && mv \"$d/$i.done.tmp\" \"$d/$i.done\"\n"
    << "exit $rc\n";
  return s.str();
}

struct Where {
  std::string array_job, task, node, partition, gpu;
  json to_json() const {
    json j = json::object();
    if (!array_job.empty()) j["job_id"] = array_job + "_" + task;
    if (!node.empty()) j["node"] = node;
    if (!partition.empty()) j["partition"] = partition;
    if (!gpu.empty()) j["gpu"] = gpu;
    return j;
  }
};

Where read_where(const std::string& path, const std::string& job_id, size_t index) {
  Where w{job_id, std::to_string(index), "", "", ""};
  auto l = lines_of(read_file(path));
  if (l.size() >= 5) {
    if (!l[0].empty()) w.array_job = l[0];
    w.node = l[2];
    w.partition = l[3];
    w.gpu = l[4];
  }
  return w;
}

class ArrayRun {
 public:
  ArrayRun(const Options& opt, std::string dir, std::string job_id)
      : opt_(opt), dir_(std::move(dir)), job_id_(std::move(job_id)), printed_(opt.candidates.size(), false) {}

  size_t remaining() const {
    size_t n = 0;
    for (bool p : printed_) n += !p;
    return n;
  }

  // Prints every element that has finished since the last call.
  void print_finished() {
    for (size_t i = 0; i < printed_.size(); ++i)
      if (!printed_[i] && exists(file(i, "done"))) print_result(i);
  }

  // Elements that never finished: a line with the reason each, never a gap.
  void print_missing(const std::string& why) {
    for (size_t i = 0; i < printed_.size(); ++i) {
      if (printed_[i]) continue;
      Result r;
      r.artifact = opt_.candidates[i];
      r.evaluator_failed = true;
      std::string err = tail_of(read_file(file(i, "err")), 300);
      r.error = "Slurm array element " + job_id_ + "_" + std::to_string(i) + " ended without a result: " + why +
                (exists(file(i, "where")) ? "" : " (it never started)") + (err.empty() ? "" : "; stderr: " + err);
      r.extra_metrics["slurm"] = read_where(file(i, "where"), job_id_, i).to_json();
      header(i, r.extra_metrics["slurm"]);
      std::string out = format_output(r);
      std::fwrite(out.data(), 1, out.size(), stdout);
      std::fflush(stdout);
      printed_[i] = true;
      failed_ = true;
    }
  }

  bool any_failed() const { return failed_; }

 private:
  std::string file(size_t i, const char* ext) const { return dir_ + "/" + std::to_string(i) + "." + ext; }

  void header(size_t i, const json& where) const {
    std::printf("[slurm] candidate %zu/%zu %s: job %s on %s\n", i + 1, printed_.size(), opt_.candidates[i].c_str(),
                where.value("job_id", job_id_ + "_" + std::to_string(i)).c_str(), where.value("node", "?").c_str());
  }

  void print_result(size_t i) {
    json where = read_where(file(i, "where"), job_id_, i).to_json();
    std::string rc = read_file(file(i, "done"));
    std::optional<json> eval;
    std::vector<std::string> other;
    for (const auto& line : lines_of(read_file(file(i, "out")))) {
      if (line.rfind("KERNEL_EVAL=", 0) == 0) {
        json j = json::parse(line.substr(12), nullptr, false);
        eval = j.is_object() ? std::optional<json>(j) : std::nullopt;
      } else {
        other.push_back(line);
      }
    }
    if (!eval) {
      // The element ran but printed no readable result: the error says what there is.
      Result r;
      r.artifact = opt_.candidates[i];
      r.evaluator_failed = true;
      r.error = "Slurm array element " + job_id_ + "_" + std::to_string(i) + " exited " +
                (rc.empty() ? std::string("?") : lines_of(rc).front()) + " without a KERNEL_EVAL line; stderr: " +
                tail_of(read_file(file(i, "err")), 300);
      r.extra_metrics["slurm"] = where;
      header(i, where);
      std::string out = format_output(r);
      std::fwrite(out.data(), 1, out.size(), stdout);
      failed_ = true;
    } else {
      if (!(*eval)["native_metrics"].is_object()) (*eval)["native_metrics"] = json::object();
      (*eval)["native_metrics"]["slurm"] = where;
      if (!eval->value("correct", false)) failed_ = true;
      header(i, where);
      for (const auto& l : other) std::printf("%s\n", l.c_str());
      std::printf("KERNEL_EVAL=%s\n", eval->dump(-1, ' ', false, json::error_handler_t::replace).c_str());
    }
    std::fflush(stdout);
    printed_[i] = true;
  }

  const Options& opt_;
  std::string dir_, job_id_;
  std::vector<bool> printed_;
  bool failed_ = false;
};

void remove_dir(const std::string& dir, size_t n) {
  for (size_t i = 0; i < n; ++i)
    for (const char* ext : {"out", "err", "where", "done", "where.tmp", "done.tmp"})
      ::unlink((dir + "/" + std::to_string(i) + "." + ext).c_str());
  for (const char* f : {"/job.sh", "/sbatch.err"}) ::unlink((dir + f).c_str());
  ::rmdir(dir.c_str());
}

// Like every usage or input error of kopt-bench: said on stderr, and a KERNEL_EVAL line with
// evaluator_failed on stdout (exit status 2).
int fail_usage(const Options& opt, const std::string& msg) {
  std::fprintf(stderr, "kopt-bench: %s\n", msg.c_str());
  const std::string out = input_error_output(opt.artifact, "--slurm: " + msg);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  return 2;
}

}  // namespace

int run_slurm(const Options& opt) {
  std::vector<std::string> user_opts;
  std::string err;
  if (!split_shell_words(opt.slurm_opts, &user_opts, &err)) return fail_usage(opt, err);
  if (std::string m = refuse_reserved_sbatch_options(user_opts); !m.empty()) return fail_usage(opt, m);

  // The scratch dir lives under the working directory: the nodes must see it (a shared file system),
  // as they see the sources, the spec and the baseline.
  std::string base = cwd() + "/.kopt-slurm";
  ::mkdir(base.c_str(), 0700);
  std::string tmpl = base + "/run-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) return fail_usage(opt, "cannot create " + tmpl + ": " + std::strerror(errno));
  const std::string dir = buf.data();
  const size_t n = opt.candidates.size();
  {
    std::ofstream js(dir + "/job.sh");
    js << job_script(dir, self_exe(), opt);
    if (!js) return fail_usage(opt, "cannot write " + dir + "/job.sh");
  }
  ::chmod((dir + "/job.sh").c_str(), 0700);

  std::vector<std::string> argv = {"sbatch", "--parsable", "--wait", "--array=0-" + std::to_string(n - 1),
                                   "--job-name=kopt-bench", "--output=" + dir + "/%a.out", "--error=" + dir + "/%a.err"};
  argv.insert(argv.end(), user_opts.begin(), user_opts.end());
  argv.push_back(dir + "/job.sh");

  struct sigaction sa{};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaction(s, &sa, nullptr);

  UniqueFd out_r, out_w;
  if (!open_pipe(&out_r, &out_w)) return fail_usage(opt, "pipe failed");
  // sbatch in its own process group: a terminal's Ctrl-C reaches us, and we cancel the array.
  SpawnOptions so;
  so.argv = argv;
  so.search_path = true;
  so.in = kKeep;
  so.out = out_w.get();
  UniqueFd err_fd(open_log(dir + "/sbatch.err", 0600));
  so.err = err_fd ? err_fd.get() : kKeep;
  so.group = SpawnOptions::Group::kOwn;
  const pid_t pid = spawn(so);
  err_fd.reset();
  out_w.reset();  // sbatch's end: EOF once it is gone
  if (pid < 0) return fail_usage(opt, "fork failed");

  // Past this the array is cancelled: every element's own limit, one after another, plus queueing room.
  const auto start = std::chrono::steady_clock::now();
  const double deadline_s = opt.timeout_s * double(n) + 120;
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };

  std::string job_id, sbatch_out;
  bool sbatch_done = false;
  int sbatch_status = 0;
  std::optional<ArrayRun> array;
  auto take_job_id = [&] {
    // --parsable: "<job id>[;<cluster>]", printed at submission, before the wait.
    if (job_id.empty() && sbatch_out.find('\n') != std::string::npos) {
      job_id = sbatch_out.substr(0, sbatch_out.find_first_of(";\n"));
      array.emplace(opt, dir, job_id);
      std::printf("[slurm] submitted job array %s: %zu candidate(s)\n", job_id.c_str(), n);
      std::fflush(stdout);
    }
  };
  int stop_signal = 0;
  bool timed_out = false;
  while (true) {
    if (g_stop_signal) {
      stop_signal = g_stop_signal;
      break;
    }
    if (elapsed() > deadline_s) {
      timed_out = true;
      break;
    }
    pollfd p{out_r.get(), POLLIN, 0};
    if (!sbatch_out.empty() && sbatch_out.find('\n') != std::string::npos) p.fd = -1;
    if (::poll(&p, 1, 250) > 0 && (p.revents & (POLLIN | POLLHUP))) {
      char b[256];
      ssize_t k = ::read(out_r.get(), b, sizeof b);
      if (k > 0) sbatch_out.append(b, size_t(k));
    }
    take_job_id();
    if (array) array->print_finished();
    if (!sbatch_done && waitpid(pid, &sbatch_status, WNOHANG) == pid) sbatch_done = true;
    if (sbatch_done) break;
  }

  std::string why;
  if (stop_signal || timed_out) {
    why = stop_signal ? std::string("cancelled (") + strsignal(stop_signal) + ")"
                      : "cancelled at the deadline (" + std::to_string(int(deadline_s)) + " s)";
    if (!job_id.empty()) run_process({"scancel", job_id}, "", 30);
    // sbatch --wait returns once the cancelled jobs are gone; it is not left behind either way.
    for (int t = 0; t < 200 && !sbatch_done; ++t) {
      if (waitpid(pid, &sbatch_status, WNOHANG) == pid) sbatch_done = true;
      else std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!sbatch_done) sbatch_status = kill_and_reap(pid, true, -1);
  } else {
    // The last elements' files may trail sbatch's exit on a shared file system.
    for (int t = 0; t < 20 && array && array->remaining() > 0; ++t) {
      array->print_finished();
      if (array->remaining() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    why = "sbatch " + (WIFEXITED(sbatch_status) ? "exited " + std::to_string(WEXITSTATUS(sbatch_status))
                                                 : std::string("was killed"));
  }
  if (sbatch_done) {
    // Whatever sbatch wrote before it exited (its write end is closed now: read to EOF).
    char b[256];
    ssize_t k;
    while ((k = ::read(out_r.get(), b, sizeof b)) > 0) sbatch_out.append(b, size_t(k));
  }
  out_r.reset();
  take_job_id();

  if (job_id.empty()) {
    // Nothing was submitted: one line per candidate with sbatch's own words.
    std::string e = tail_of(read_file(dir + "/sbatch.err"), 400);
    ArrayRun none(opt, dir, "?");
    none.print_missing("sbatch did not submit the array" + (e.empty() ? std::string() : ": " + e));
    remove_dir(dir, n);
    ::rmdir(base.c_str());
    return stop_signal ? 128 + stop_signal : timed_out ? 124 : 1;
  }
  array->print_finished();
  array->print_missing(why);
  remove_dir(dir, n);
  ::rmdir(base.c_str());  // only when no other run is using it
  if (stop_signal) return 128 + stop_signal;
  if (timed_out) return 124;
  return array->any_failed() ? 1 : 0;
}

}  // namespace kopt::bench
