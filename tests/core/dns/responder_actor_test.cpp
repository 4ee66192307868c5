// core/dns/responder/responder_actor: the typed CAF interface around a
// running dns_responder.

#include "core/dns/responder/responder_actor.hpp"
#include "tests/core/dns/dns_test_client.hpp"
#include "tests/core/dns/test_zone.hpp"

#include <caf/all.hpp>
#include <gtest/gtest.h>

namespace gtmesh::dns {
namespace {

TEST(responder_actor, publishes_snapshots_reports_counters_and_unmeasured_clients_and_stops) {
  responder_options o;
  o.listen.push_back(*listen_address::parse("127.0.0.1:0"));
  o.udp_threads = 1;
  std::string error;
  auto responder = dns_responder::create(o, error);
  ASSERT_TRUE(responder) << error;
  responder->start(); // no snapshot yet: SERVFAIL
  listen_address at = responder->bound()[0];
  auto servfail = test::udp_exchange(at, test::make_query(test::spec("www.example.test")));
  ASSERT_TRUE(servfail);
  EXPECT_EQ(test::parse_message(*servfail)->rcode(), 2);

  caf::actor_system_config cfg;
  cfg.set("scheduler.policy", caf::atom("sharing"));
  cfg.set("scheduler.max-threads", 1);
  cfg.add_message_types<caf::id_block::gtmesh_dns>();
  caf::actor_system system{cfg};
  auto actor = system.spawn(responder_actor_impl, responder_handoff{std::move(responder)});
  caf::scoped_actor self{system};

  uint64_t generation = 0;
  self->request(actor, caf::infinite, publish_atom::value, test::make_test_snapshot(1), test::test_now_ms)
    .receive([&](uint64_t g) { generation = g; }, [&](caf::error& e) { FAIL() << system.render(e); });
  EXPECT_EQ(generation, 1u);
  auto answer = test::udp_exchange(at, test::make_query(test::spec("near.example.test")));
  ASSERT_TRUE(answer);
  EXPECT_EQ(test::parse_message(*answer)->answer_texts(), std::vector<std::string>{"192.0.2.49"})
    << "fail_safe: no measurement for 127.0.0.1";

  self->request(actor, caf::infinite, publish_atom::value, snapshot_ptr{test::make_test_snapshot(2)})
    .receive([&](uint64_t g) { generation = g; }, [&](caf::error& e) { FAIL() << system.render(e); });
  EXPECT_EQ(generation, 2u);

  dns_counters counters;
  self->request(actor, caf::infinite, counters_atom::value)
    .receive([&](const dns_counters& c) { counters = c; }, [&](caf::error& e) { FAIL() << system.render(e); });
  EXPECT_EQ(counters[dns_counter::udp_queries], 2u);
  EXPECT_EQ(counters[dns_counter::servfail], 1u);
  EXPECT_EQ(counters[dns_counter::unmeasured_queued], 1u);

  std::vector<std::string> prefixes;
  self->request(actor, caf::infinite, unmeasured_atom::value)
    .receive([&](const std::vector<std::string>& p) { prefixes = p; }, [&](caf::error& e) { FAIL() << system.render(e); });
  EXPECT_EQ(prefixes, std::vector<std::string>{"127.0.0.1/32"});

  self->send(actor, stop_atom::value);
  self->wait_for(actor);
  // The actor's state is gone, and with it the sockets: nothing answers.
  EXPECT_FALSE(test::udp_exchange(at, test::make_query(test::spec("www.example.test")), std::chrono::milliseconds(300)));
}

} // namespace
} // namespace gtmesh::dns
