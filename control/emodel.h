// An estimated MOS for one direction of a call's media: the ITU-T G.107 E-model, simplified as
// rtpengine and Homer report it, from what the relay measured (RTP payload type, loss, RFC 3550
// jitter). Pure functions; any thread (the control core's CDR writer calls them).
//
//   R       = 93.2 - Id - Ie_eff                     (G.107 with every other default)
//   Ie_eff  = Ie + (95 - Ie) * Ppl / (Ppl + Bpl)     (G.107 eq. 7-29, random loss: BurstR = 1)
//   Id      = 0.024 d + 0.11 (d - 177.3) H(d - 177.3)  (the usual fit of G.107's Id for an echo-
//             free connection, Cole and Rosenbluth 2001); d: one-way delay in ms
//   MOS     = 1 + 0.035 R + 7e-6 R (R - 60) (100 - R), clamped to 1..4.5 (G.107 Annex B)
//
// Codec Ie and Bpl from ITU-T G.113 Appendix I by payload type: PCMU (0) and PCMA (8): Ie 0,
// Bpl 25.1, G.711 with its Appendix I packet loss concealment (every current endpoint has it;
// without PLC G.113 gives Bpl 4.3); G.729 (18): Ie 11, Bpl 19; G.722 (9): taken as G.711 (the
// narrowband R scale; its wideband gain is not modelled); any other: as G.711.
//
// The SBC sees no end-to-end delay, only jitter. d is estimated as the delay a jitter buffer
// sized for it adds (2 x jitter) plus one codec frame (20 ms packets), plus G.729's 5 ms
// look-ahead: an estimate of the delay the listener gets from what this hop can see, not a
// measurement of the path (a path over 150 ms lowers the real score further).
#pragma once

#include <cstdint>
#include <string>

namespace sbc::control::emodel {

/// A codec's impairment as G.113 Appendix I gives it.
struct codec_impairment {
    double ie = 0;          ///< equipment impairment factor
    double bpl = 25.1;      ///< packet-loss robustness factor
    double frame_ms = 20;   ///< packetisation assumed (one frame of delay)
    double lookahead_ms = 0;
};

/// The impairment of RTP payload type `pt` (0..127; 255: none seen, G.711's).
[[nodiscard]] codec_impairment codec_of(uint8_t pt) noexcept;

/// The codec's name for payload type `pt`: "PCMU", "PCMA", "G722", "G729", "GSM", "G723",
/// "pt N" for others (dynamic ones are named only by the SDP), "" for 255 (none seen).
[[nodiscard]] std::string codec_name(uint8_t pt);

/// Id for a one-way delay of `d_ms`.
[[nodiscard]] double delay_impairment(double d_ms) noexcept;

/// Ie_eff for `loss_pct` (0..100) random loss with codec `c`.
[[nodiscard]] double effective_equipment_impairment(const codec_impairment& c, double loss_pct) noexcept;

/// R = 93.2 - Id(d_ms) - Ie_eff(c, loss_pct), not clamped.
[[nodiscard]] double r_factor(const codec_impairment& c, double loss_pct, double d_ms) noexcept;

/// G.107's MOS from R: 1 below R = 0, 4.5 above R = 100, the cubic between (never above 4.5).
[[nodiscard]] double mos_from_r(double r) noexcept;

/// The one-way delay this estimate assumes for `jitter_ms` with codec `c` (see the file comment).
[[nodiscard]] double estimated_delay_ms(const codec_impairment& c, double jitter_ms) noexcept;

/// The MOS of one direction: payload type, loss in percent (0..100), RFC 3550 jitter in ms.
[[nodiscard]] double estimate_mos(uint8_t pt, double loss_pct, double jitter_ms) noexcept;

}  // namespace sbc::control::emodel
