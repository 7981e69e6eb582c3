// Who sent a user/message, decided once (message_from, kopt/events.hpp; issue 48).
#include <gtest/gtest.h>

#include "kopt/anchors.hpp"
#include "kopt/events.hpp"

using kopt::json;
using kopt::Sender;

TEST(MessageFrom, TheUserTheLoopAnotherOrNone) {
  const std::string loop_id(kopt::anchors::kLoopPluginId);
  EXPECT_EQ(kopt::message_from(json::parse(R"({"message":{"source":{"kind":"user"}}})")).sender, Sender::user);
  EXPECT_EQ(kopt::message_from(json::parse(R"({"source":{"kind":"user"}})")).sender, Sender::user) << "data is the message";
  EXPECT_EQ(kopt::message_from(json{{"message", {{"source", {{"kind", "plugin"}, {"plugin", loop_id}}}}}}).sender, Sender::loop);
  EXPECT_EQ(kopt::message_from(json::parse(R"({"message":{"source":{"kind":"plugin","plugin":"other"}}})")).sender, Sender::other);
  EXPECT_EQ(kopt::message_from(json::parse(R"({"message":{"source":{"kind":7}}})")).sender, Sender::other);
  EXPECT_EQ(kopt::message_from(json::parse(R"({"message":{"content":[]}})")).sender, Sender::none);
  EXPECT_EQ(kopt::message_from(json::parse(R"({"message":{"source":"user"}})")).sender, Sender::none);
  EXPECT_EQ(kopt::message_from(json::parse(R"("text")")).message, nullptr);
  const json d = json::parse(R"({"message":{"source":{"kind":"plugin","supervisor":{"model":"m"}}}})");
  ASSERT_NE(kopt::message_from(d).source, nullptr);
  EXPECT_EQ((*kopt::message_from(d).source)["supervisor"]["model"], "m");
}
