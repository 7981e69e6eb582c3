// Small builders of host session events for the core's tests (a tool call and its text result).
#pragma once
#include <string>

#include "kopt/json.hpp"

namespace kopt::test {

inline json call(int seq, const std::string& id, const std::string& name, const json& args) {
  return json{{"type", "tool/call"}, {"seq", seq}, {"data", {{"callId", id}, {"name", name}, {"arguments", args.dump()}}}};
}

inline json result(int seq, const std::string& id, const std::string& text) {
  return json{{"type", "tool/result"},
              {"seq", seq},
              {"data",
               {{"message",
                 {{"content", json::array({{{"type", "tool-result"}, {"toolCallId", id}, {"content", json::array({{{"type", "text"}, {"text", text}}})}}})},
                  {"source", {{"kind", "tool"}, {"callId", id}}}}}}}};
}

}  // namespace kopt::test
