#pragma once

// Mean opinion score of a network path, from its latency, jitter and loss,
// by a simplification of the ITU-T G.107 E-model (docs/agents.md works one
// example through by hand):
//
//   d      = rtt/2 + 2 x jitter                    one-way mouth-to-ear delay, ms:
//                                                  half the round trip plus a
//                                                  jitter buffer of twice the jitter
//   Id     = 0.024 d + 0.11 (d - 177.3) H(d - 177.3)   delay impairment (Cole &
//                                                  Rosenbluth's fit of G.107's Idd),
//                                                  H(x) = 1 if x > 0 else 0
//   Ie_eff = Ie + (95 - Ie) Ppl / (Ppl + Bpl)      G.107 eq. 7-29, random loss,
//                                                  Ppl = loss in percent,
//                                                  codec G.711 with PLC: Ie = 0,
//                                                  Bpl = 25.1 (G.113 Appendix I)
//   R      = 93.2 - Id - Ie_eff                    93.2 = R of G.107's defaults
//                                                  (Ro - Is with every default)
//   MOS    = 1                                     if R <= 0
//          = 1 + 0.035 R + R (R - 60)(100 - R) 7e-6  if 0 < R < 100 (G.107 Annex B)
//          = 4.5                                   if R >= 100
//
// Advantage factor A = 0. A perfect path scores R = 93.2, MOS = 4.41.

namespace gtmesh::health {

struct path_quality {
  double rtt_ms = 0;
  double jitter_ms = 0;
  double loss_percent = 0; ///< 0..100
};

/// The E-model transmission rating R for the path (clamped to 0..100).
/// Negative inputs count as 0; loss above 100 counts as 100.
double e_model_r(const path_quality& q) noexcept;
/// G.107 Annex B: R -> MOS, 1.0 .. 4.5.
double mos_from_r(double r) noexcept;
/// mos_from_r(e_model_r(q)).
double mos(const path_quality& q) noexcept;

} // namespace gtmesh::health
