#pragma once

#include "core/routing/route_context.hpp"

namespace gtmesh {

/// Writes the answers of one answer group (the answers of one DC) chosen by
/// a balance algorithm to rc.out, and returns how many it wrote:
///   all                  every answer, in config order
///   top1/top2/top3       the first N answers in config order
///   round_robin          one answer, the next in turn for this record
///   weighted_round_robin one answer, in turn, as often as its weight (smooth WRR)
///   random               one answer, uniformly at random
///   weighted_random      one answer, at random in proportion to its weight
///   closest              one answer, the nearest to the client's geolocation
///                        (answer location, else its DC's); first if unknown
/// Round-robin positions are per responder thread and per record.
int balance_answers(const answer_group& group, balance_kind balance, route_context& rc,
                    std::vector<std::string>* picked = nullptr);

/// Builds a group's smooth weighted round-robin schedule into
/// plan.wrr_schedule (weights divided by their gcd; nginx's algorithm).
void build_wrr_schedule(routing_plan& plan, answer_group& group);

} // namespace gtmesh
