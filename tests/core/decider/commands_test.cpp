// core/decider/actor/commands: the one command table the mesh, the console
// and the HTTP API go through. Who may run what; the same checks and the
// same errors from every front door; a change is answered once it is
// applied on the decider that took it, whichever door it came through.
//
// The actor tests run a real decider actor on a real CAF system, with a
// fake consensus actor that commits whatever is proposed at the next index
// and tells the test when it answered; an in-process link (as the demo's
// agents use) stands for gtmeshctl's mesh link.

#include "core/consensus/consensus_types.hpp"
#include "core/decider/actor/commands.hpp"
#include "core/decider/decider_actor.hpp"
#include "core/decider/decider_types.hpp"
#include "core/mesh/mesh_types.hpp"
#include "core/mesh/node_runtime.hpp"

#include <caf/all.hpp>
#include <gtest/gtest.h>

#include <filesystem>

namespace gtmesh::decider {
namespace {

using actor::access_needed;
using actor::command_table;
using actor::find_command;

command_caller over_mesh(mesh::node_role role, std::string name = "alice") {
  command_caller c;
  c.door = front_door::mesh;
  c.peer.identity = mesh::node_identity{std::move(name), role, role == mesh::node_role::agent ? "fra" : ""};
  return c;
}

command_caller at(front_door door, mesh::node_role role) {
  command_caller c;
  c.door = door;
  c.peer.identity = mesh::node_identity{"someone", role, ""};
  return c;
}

bool may(std::string_view command, const command_caller& caller, std::vector<std::string> args = {}) {
  const auto* c = find_command(command);
  EXPECT_NE(c, nullptr) << command;
  return c && access_needed(*c, caller, args).empty();
}

TEST(command_table, every_command_has_one_row_a_handler_and_a_summary) {
  std::set<std::string_view> names;
  for (const auto& c : command_table()) {
    EXPECT_TRUE(names.insert(c.name).second) << "twice: " << c.name;
    EXPECT_NE(c.run, nullptr) << c.name;
    EXPECT_FALSE(c.summary.empty()) << c.name;
  }
  // What gtmeshctl, the agents, the console and the API send.
  for (const char* n : {"status", "configs", "explain", "history", "metric-history", "dry-run", "config-api", "drain",
                        "undrain", "revoke", "member", "backup", "fault", "node-report", "config"})
    EXPECT_TRUE(names.count(n)) << n;
  EXPECT_EQ(find_command("nope"), nullptr);
}

TEST(command_table, changes_need_an_operator_whichever_door_they_come_through) {
  for (const char* change : {"drain", "undrain", "revoke", "member", "backup", "fault"}) {
    EXPECT_TRUE(may(change, over_mesh(mesh::node_role::operator_))) << change;
    // A decider certificate cannot originate an operator's action.
    EXPECT_FALSE(may(change, over_mesh(mesh::node_role::decider))) << change;
    EXPECT_FALSE(may(change, over_mesh(mesh::node_role::agent))) << change;
    EXPECT_FALSE(may(change, over_mesh(mesh::node_role::none))) << change;
    EXPECT_FALSE(may(change, at(front_door::console, mesh::node_role::none))) << change << ": a console visitor";
    EXPECT_TRUE(may(change, at(front_door::console, mesh::node_role::operator_))) << change;
  }
  EXPECT_EQ(access_needed(*find_command("drain"), over_mesh(mesh::node_role::decider), {}), "an operator certificate");
}

TEST(command_table, views_are_open_to_operators_deciders_and_the_consoles_visitors_but_not_to_agents) {
  for (const char* view : {"status", "configs", "explain", "history", "metric-history", "dry-run"}) {
    EXPECT_TRUE(may(view, over_mesh(mesh::node_role::operator_))) << view;
    EXPECT_TRUE(may(view, over_mesh(mesh::node_role::decider))) << view;
    EXPECT_FALSE(may(view, over_mesh(mesh::node_role::agent))) << view;
    EXPECT_TRUE(may(view, at(front_door::console, mesh::node_role::none))) << view;
    EXPECT_FALSE(may(view, at(front_door::http_api, mesh::node_role::none))) << view;
  }
}

TEST(command_table, the_config_is_read_by_operators_and_deciders_and_changed_by_operators_only) {
  for (const char* read : {"GET", "EXPORT", "WEBHOOK-FILTER", "WEBHOOK-RECORDS"}) {
    EXPECT_TRUE(may("config-api", over_mesh(mesh::node_role::decider), {read})) << read;
    EXPECT_TRUE(may("config-api", at(front_door::http_api, mesh::node_role::operator_), {read})) << read;
    // It names every backend and may hold probe headers: not the console's visitors.
    EXPECT_FALSE(may("config-api", at(front_door::console, mesh::node_role::none), {read})) << read;
    EXPECT_FALSE(may("config-api", over_mesh(mesh::node_role::agent), {read})) << read;
  }
  for (const char* change : {"PUT", "DELETE", "APPLY", "WEBHOOK-APPLY", "SOMETHING-ELSE", ""}) {
    EXPECT_TRUE(may("config-api", over_mesh(mesh::node_role::operator_), {change})) << change;
    EXPECT_FALSE(may("config-api", over_mesh(mesh::node_role::decider), {change})) << change;
  }
  EXPECT_FALSE(may("config-api", over_mesh(mesh::node_role::decider), {})) << "no method: a change";
}

TEST(command_table, agent_commands_come_from_agents_over_their_own_link_only) {
  for (const char* c : {"node-report", "config"}) {
    EXPECT_TRUE(may(c, over_mesh(mesh::node_role::agent))) << c;
    EXPECT_FALSE(may(c, over_mesh(mesh::node_role::operator_))) << c;
    EXPECT_FALSE(may(c, at(front_door::console, mesh::node_role::agent))) << c;
  }
}

TEST(command_table, history_takes_a_limit_of_1_to_100000_with_one_error) {
  int64_t since = -1;
  uint64_t limit = 0;
  EXPECT_EQ(actor::parse_history_args("", "", since, limit), "");
  EXPECT_EQ(since, 0);
  EXPECT_EQ(limit, 100u);
  EXPECT_EQ(actor::parse_history_args("1700000000000", "100000", since, limit), "");
  EXPECT_EQ(since, 1700000000000);
  EXPECT_EQ(limit, 100000u);
  const std::string error = "history: --since takes Unix milliseconds, --limit 1..100000";
  for (auto [s, l] : std::vector<std::pair<std::string, std::string>>{
         {"", "0"}, {"", "100001"}, {"", "-1"}, {"x", ""}, {"", "1e3"}, {"12a", "5"}, {"", "99999999999999999999999"}})
    EXPECT_EQ(actor::parse_history_args(s, l, since, limit), error) << s << " " << l;
}

// ---- the actor ------------------------------------------------------------

const std::string config_text = R"(
datacenters: [{name: fra}, {name: iad}]
zones:
  - name: example.com
    soa: {primary: ns1, admin: hostmaster}
    ns: [ns1]
    records:
      - {name: www, type: A, answers: [192.0.2.1]}
)";

/// Commits every proposal at the next log index and tells `observer` it
/// answered (after the answer is in the decider's mailbox).
struct fake_consensus_state {
  fake_consensus_state() = default;
  caf::actor observer;
  uint64_t next_index = 10;
  std::vector<consensus::log_entry> proposed;
};

caf::behavior fake_consensus(caf::stateful_actor<fake_consensus_state>* self, caf::actor observer) {
  self->state.observer = observer;
  return {
    [=](consensus::propose_atom, const std::vector<char>& bytes) -> mesh::proposal_reply_body {
      consensus::log_entry e;
      EXPECT_TRUE(consensus::decode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), e));
      self->state.proposed.push_back(e);
      mesh::proposal_reply_body r;
      r.ok = true;
      r.index = self->state.next_index++;
      // Sent after the reply: the decider gets the reply first.
      self->send(self->state.observer, mesh::deliver_atom_v, r.index, std::vector<char>());
      return r;
    },
    [=](consensus::status_atom) -> std::string { return "consensus: fake\n"; },
    // The authors of what was proposed, one a line.
    [=](consensus::history_atom) -> std::string {
      std::string out;
      for (const auto& e : self->state.proposed)
        out += e.by + "\n";
      return out;
    },
  };
}

class decider_commands_test : public ::testing::Test {
public:
  std::string dir;
  std::unique_ptr<mesh::node_config> cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::unique_ptr<caf::scoped_actor> me;
  caf::actor consensus, decider;
  mesh::link_id operator_link = 0, decider_link = 0;

  void SetUp() override {
    dir = ::testing::TempDir() + "commands_" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir);
    cfg = std::make_unique<mesh::node_config>(mesh::node_settings{});
    sys = std::make_unique<caf::actor_system>(*cfg);
    me = std::make_unique<caf::scoped_actor>(*sys);
    std::string err;
    auto store = state::store::open(dir, err);
    ASSERT_TRUE(store) << err;
    auto core = std::make_shared<decider_core>(decider_options{"d1"}, std::move(store));
    ASSERT_TRUE(core->apply_view(*view(1, {}), wall_clock_ms()).config);
    consensus = sys->spawn(fake_consensus, caf::actor{*me});
    decider_actor_options o;
    o.consensus = consensus;
    o.gossip_interval = std::chrono::hours(1);
    decider = sys->spawn(decider_actor, core, o);
    operator_link = link_as(mesh::node_identity{"alice", mesh::node_role::operator_, ""});
    decider_link = link_as(mesh::node_identity{"decider2", mesh::node_role::decider, ""});
  }
  void TearDown() override {
    caf::anon_send_exit(decider, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(consensus, caf::exit_reason::user_shutdown);
    me.reset();
    sys.reset();
    std::filesystem::remove_all(dir);
  }

  /// The committed view at `index`, with `drains`.
  consensus::replicated_view_ptr view(uint64_t index, std::vector<consensus::drain_record> drains) {
    auto v = std::make_shared<consensus::replicated_view>();
    v->applied_index = index;
    v->config_version = 1;
    v->yaml = std::make_shared<const std::string>(config_text);
    v->file = "c.yaml";
    v->drains = std::move(drains);
    return v;
  }

  /// An in-process link whose peer is `who`; its frames come to `me`.
  mesh::link_id link_as(mesh::node_identity who) {
    mesh::link_peer p;
    p.identity = std::move(who);
    (*me)->send(decider, mesh::local_link_atom_v, caf::actor{*me}, p);
    mesh::link_id id = 0;
    (*me)->receive([&](mesh::link_up_atom, const mesh::link_peer& up) { id = up.link; },
                   caf::after(std::chrono::seconds(5)) >> [] { FAIL() << "no link"; });
    return id;
  }

  /// A request frame on `link`, as gtmeshctl sends it.
  void request(mesh::link_id link, const std::string& command, std::vector<std::string> args) {
    auto bytes = mesh::frame(mesh::message_kind::request, "gtmeshctl", mesh::request_body{command, std::move(args), {}});
    (*me)->send(decider, mesh::frame_atom_v, link, std::vector<char>(bytes.begin(), bytes.end()));
  }

  /// The next message for the test: a reply frame (ok, text), or the fake
  /// consensus saying it answered a proposal with `index`.
  struct event {
    enum { reply, proposed, none } what = none;
    bool ok = false;
    std::string text;
    uint64_t index = 0;
  };
  event next() {
    event e;
    (*me)->receive(
      [&](mesh::frame_atom, mesh::link_id, const std::vector<char>& bytes) {
        mesh::decode_error err;
        auto env = mesh::decode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), err);
        mesh::reply_body r;
        EXPECT_TRUE(env && mesh::decode_body(env->body, r));
        e = event{event::reply, r.ok, r.text, 0};
      },
      [&](mesh::deliver_atom, uint64_t index, const std::vector<char>&) { e = event{event::proposed, true, "", index}; },
      caf::after(std::chrono::seconds(10)) >> [&] { e.what = event::none; });
    return e;
  }

  std::pair<bool, std::string> console(const std::string& command, std::vector<std::string> args,
                                       const command_caller& caller) {
    std::pair<bool, std::string> out{false, "no answer"};
    (*me)->request(decider, std::chrono::seconds(10), command_atom_v, command, std::move(args), caller)
      .receive([&](bool ok, std::string& text) { out = {ok, std::move(text)}; }, [&](caf::error&) {});
    return out;
  }
};

TEST_F(decider_commands_test, history_refuses_a_bad_limit_with_the_same_error_over_the_mesh_and_the_console) {
  request(operator_link, "history", {"0", "0"});
  auto mesh_answer = next();
  ASSERT_EQ(mesh_answer.what, event::reply);
  EXPECT_FALSE(mesh_answer.ok);
  auto console_answer = console("history", {"0", "0"}, at(front_door::console, mesh::node_role::none));
  EXPECT_FALSE(console_answer.first);
  EXPECT_EQ(console_answer.second, mesh_answer.text);
  EXPECT_EQ(console_answer.second, "history: --since takes Unix milliseconds, --limit 1..100000");
  // 100,000 is allowed at both.
  request(operator_link, "history", {"0", "100000"});
  EXPECT_TRUE(next().ok);
  EXPECT_TRUE(console("history", {"0", "100000"}, at(front_door::console, mesh::node_role::none)).first);
}

TEST_F(decider_commands_test, a_decider_link_cannot_drain_and_its_refusal_is_counted) {
  request(decider_link, "drain", {"iad", "by alice", "7"});
  auto e = next();
  ASSERT_EQ(e.what, event::reply) << "nothing may be proposed";
  EXPECT_FALSE(e.ok);
  EXPECT_NE(e.text.find("'drain' needs an operator certificate"), std::string::npos) << e.text;
  request(operator_link, "status", {});
  e = next();
  ASSERT_EQ(e.what, event::reply);
  EXPECT_NE(e.text.find("dropped (refused: role)"), std::string::npos) << e.text;
}

TEST_F(decider_commands_test, a_drain_over_the_mesh_is_answered_once_applied_here_not_when_committed) {
  request(operator_link, "drain", {"iad", "gtmeshctl:root", "41"});
  auto proposed = next();
  ASSERT_EQ(proposed.what, event::proposed);
  // Committed (the fake answered) but not applied: a later request is
  // answered, the drain not yet.
  request(operator_link, "explain", {"www.example.com", "A"});
  auto e = next();
  ASSERT_EQ(e.what, event::reply);
  EXPECT_NE(e.text.find("www.example.com"), std::string::npos) << "the explain answer came first: " << e.text;
  (*me)->send(decider, consensus::committed_atom_v,
              view(proposed.index, {consensus::drain_record{"iad", true, "alice", proposed.index, 0}}));
  e = next();
  ASSERT_EQ(e.what, event::reply);
  EXPECT_TRUE(e.ok) << e.text;
  EXPECT_EQ(e.text, "iad drained (log index " + std::to_string(proposed.index) + ")");
}

TEST_F(decider_commands_test, a_drain_from_the_console_is_answered_once_applied_here_too) {
  auto caller = at(front_door::console, mesh::node_role::operator_);
  caller.peer.identity.name = "unauthenticated loopback client 127.0.0.1";
  std::pair<bool, std::string> answer{false, "none"};
  bool answered = false;
  // Sent, not requested: the answer comes back as a message of its own.
  (*me)->send(decider, command_atom_v, std::string("drain"), std::vector<std::string>{"fra", "", "42"}, caller);
  auto proposed = next();
  ASSERT_EQ(proposed.what, event::proposed);
  request(operator_link, "explain", {"www.example.com", "A"});
  auto e = next();
  ASSERT_EQ(e.what, event::reply) << "answered when committed, before it was applied";
  (*me)->send(decider, consensus::committed_atom_v,
              view(proposed.index, {consensus::drain_record{"fra", true, "x", proposed.index, 0}}));
  (*me)->receive([&](bool ok, std::string& text) { answer = {ok, text}; answered = true; },
                 caf::after(std::chrono::seconds(10)) >> [] {});
  EXPECT_TRUE(answered);
  EXPECT_TRUE(answer.first) << answer.second;
  EXPECT_EQ(answer.second, "{\"ok\":true,\"index\":" + std::to_string(proposed.index) + "}");
}

TEST_F(decider_commands_test, the_log_records_an_author_the_front_door_proved_never_one_from_the_arguments) {
  // Over the mesh: the certificate's name, with what gtmeshctl says of the user.
  request(operator_link, "drain", {"iad", "gtmeshctl:root", "51"});
  ASSERT_EQ(next().what, event::proposed);
  // The console: the client its listener admitted, and which listener.
  auto caller = at(front_door::console, mesh::node_role::operator_);
  caller.peer.identity.name = "unauthenticated loopback client 127.0.0.1";
  (*me)->send(decider, command_atom_v, std::string("drain"), std::vector<std::string>{"fra", "mallory", "52"}, caller);
  ASSERT_EQ(next().what, event::proposed);
  std::string authors;
  (*me)->request(consensus, std::chrono::seconds(5), consensus::history_atom_v)
    .receive([&](std::string& text) { authors = text; }, [](caf::error&) {});
  EXPECT_EQ(authors, "alice (gtmeshctl:root)\n"
                     "unauthenticated loopback client 127.0.0.1, admitted by d1's plain HTTP listener (console)\n");
}

} // namespace
} // namespace gtmesh::decider
