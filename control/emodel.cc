// The simplified G.107 E-model (see emodel.h). Pure functions; any thread.
#include "control/emodel.h"

#include <algorithm>

namespace sbc::control::emodel {

namespace {

constexpr double r0_minus_is = 93.2;   // G.107's Ro - Is with every other parameter at its default
constexpr double bpl_g711_plc = 25.1;  // G.113 Appendix I, G.711 with G.711 Appendix I PLC

}  // namespace

codec_impairment codec_of(uint8_t pt) noexcept
{
    switch (pt) {
    case 18: return {11, 19, 20, 5};               // G.729(A): Ie 11, Bpl 19, 5 ms look-ahead
    default: return {0, bpl_g711_plc, 20, 0};      // PCMU, PCMA, G.722 and the rest: G.711's
    }
}

std::string codec_name(uint8_t pt)
{
    switch (pt) {
    case 0: return "PCMU";
    case 3: return "GSM";
    case 4: return "G723";
    case 8: return "PCMA";
    case 9: return "G722";
    case 18: return "G729";
    case 255: return "";
    default: return "pt " + std::to_string(pt);
    }
}

double delay_impairment(double d_ms) noexcept
{
    const double d = std::max(0.0, d_ms);
    return 0.024 * d + (d > 177.3 ? 0.11 * (d - 177.3) : 0.0);
}

double effective_equipment_impairment(const codec_impairment& c, double loss_pct) noexcept
{
    const double ppl = std::clamp(loss_pct, 0.0, 100.0);
    return c.ie + (95.0 - c.ie) * ppl / (ppl + c.bpl);
}

double r_factor(const codec_impairment& c, double loss_pct, double d_ms) noexcept
{
    return r0_minus_is - delay_impairment(d_ms) - effective_equipment_impairment(c, loss_pct);
}

double mos_from_r(double r) noexcept
{
    if (r <= 0) return 1.0;
    if (r >= 100) return 4.5;
    const double mos = 1.0 + 0.035 * r + 7e-6 * r * (r - 60.0) * (100.0 - r);
    return std::clamp(mos, 1.0, 4.5);
}

double estimated_delay_ms(const codec_impairment& c, double jitter_ms) noexcept
{
    return 2.0 * std::max(0.0, jitter_ms) + c.frame_ms + c.lookahead_ms;
}

double estimate_mos(uint8_t pt, double loss_pct, double jitter_ms) noexcept
{
    const codec_impairment c = codec_of(pt);
    return mos_from_r(r_factor(c, loss_pct, estimated_delay_ms(c, jitter_ms)));
}

}  // namespace sbc::control::emodel
