// Small builders shared by the loop tests.
#pragma once
#include <string>

#include "kopt/loop.hpp"

namespace kopt::looptest {

inline Seq seq(double v) {
  Seq s;
  s.raw = v;
  s.num = v;
  return s;
}

// A run with n completed evaluations at seqs 10, 20, … (latency falling, so the last is best).
inline Series run(int n) {
  Series s;
  for (int i = 0; i < n; ++i) {
    Iteration it;
    it.seq = seq(10.0 * (i + 1));
    it.tool = "bash";
    it.channel = "shell";
    it.correct = true;
    it.latencyMs = 10.0 - i * 0.1;
    it.artifactPath = "k.cu";
    s.iterations.push_back(it);
  }
  if (n > 0) s.bestIndex = static_cast<std::size_t>(n - 1);
  return s;
}

// The run, and a finalize call after it naming point `index` (spec H-8: the call decides, at its own seq).
inline Series finalized(int n, int index) {
  Series s = run(n);
  s.iterations[static_cast<std::size_t>(index)].finalized = true;
  FinalizeCall f;
  f.seq = seq(10.0 * n + 5);
  f.named = static_cast<std::size_t>(index);
  s.finalize = f;
  return s;
}

inline HostFacts idle() { return HostFacts{}; }
inline HostFacts busy() {
  HostFacts f;
  f.agentIdle = false;
  return f;
}

inline Route route(const std::string& p = "deepseek-official", const std::string& m = "deepseek-v4-pro") {
  return Route{p, m, std::nullopt};
}

inline int count(const Actions& a, Action::Type t) {
  int n = 0;
  for (const auto& x : a) n += x.type == t;
  return n;
}

inline const Action* find(const Actions& a, Action::Type t) {
  for (const auto& x : a)
    if (x.type == t) return &x;
  return nullptr;
}

inline SupervisorAnswer answer(const std::string& text, const std::string& finish = "stop") {
  return SupervisorAnswer{text, finish};
}

}  // namespace kopt::looptest
