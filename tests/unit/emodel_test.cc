// The simplified G.107 E-model behind the MOS of a call detail record (control/emodel.h):
// against values worked by hand from the published formulas, and monotone in loss and jitter.
// Unit tier.
#include <gtest/gtest.h>

#include "control/emodel.h"

namespace sbc::control::emodel {
namespace {

// ITU-T G.107 (06/2015) §7: with every parameter at its default R = 93.2, which its Annex B
// maps to MOS 4.41 (1 + 0.035*93.2 + 7e-6*93.2*33.2*6.8 = 4.4093).
TEST(emodel, g107_default_r_gives_mos_4_41)
{
    EXPECT_NEAR(mos_from_r(93.2), 4.41, 0.005);
}

// G.107 Annex B's end points and a few points of its curve, worked by hand:
// R 50: 1 + 1.75 + 7e-6*50*(-10)*50 = 2.575; R 70: 1 + 2.45 + 7e-6*70*10*30 = 3.597;
// R 80: 1 + 2.8 + 7e-6*80*20*20 = 4.024.
TEST(emodel, mos_follows_the_g107_curve_and_is_clamped)
{
    EXPECT_DOUBLE_EQ(mos_from_r(-5), 1.0);
    EXPECT_DOUBLE_EQ(mos_from_r(0), 1.0);
    EXPECT_NEAR(mos_from_r(50), 2.575, 1e-9);
    EXPECT_NEAR(mos_from_r(70), 3.597, 1e-9);
    EXPECT_NEAR(mos_from_r(80), 4.024, 1e-9);
    EXPECT_DOUBLE_EQ(mos_from_r(100), 4.5);
    EXPECT_DOUBLE_EQ(mos_from_r(120), 4.5);
}

// Ie_eff = Ie + (95 - Ie) * Ppl / (Ppl + Bpl) (G.107 eq. 7-29, BurstR 1) with G.113 Appendix I's
// Ie and Bpl: G.711 with PLC (Ie 0, Bpl 25.1) and G.729A (Ie 11, Bpl 19). Worked by hand:
//   G.711  1 %: 95*1/26.1 = 3.640  -> R = 93.2 - 3.640 = 89.56
//   G.711  2 %: 95*2/27.1 = 7.011  -> R = 86.19
//   G.711  5 %: 95*5/30.1 = 15.78  -> R = 77.42
//   G.729  0 %: 11                 -> R = 82.2
//   G.729  1 %: 11 + 84*1/20 = 15.2 -> R = 78.0
//   G.729  2 %: 11 + 84*2/21 = 19.0 -> R = 74.2
TEST(emodel, r_factor_matches_worked_g107_g113_values_without_delay)
{
    const codec_impairment g711 = codec_of(0);
    const codec_impairment g729 = codec_of(18);
    EXPECT_NEAR(r_factor(g711, 0, 0), 93.2, 1e-9);
    EXPECT_NEAR(r_factor(g711, 1, 0), 89.56, 0.01);
    EXPECT_NEAR(r_factor(g711, 2, 0), 86.19, 0.01);
    EXPECT_NEAR(r_factor(g711, 5, 0), 77.42, 0.01);
    EXPECT_NEAR(r_factor(g729, 0, 0), 82.2, 1e-9);
    EXPECT_NEAR(r_factor(g729, 1, 0), 78.0, 1e-9);
    EXPECT_NEAR(r_factor(g729, 2, 0), 74.2, 1e-9);
    // PCMA is G.711 too; G.722 is scored as G.711 on the narrowband scale.
    EXPECT_DOUBLE_EQ(r_factor(codec_of(8), 2, 0), r_factor(g711, 2, 0));
    EXPECT_DOUBLE_EQ(r_factor(codec_of(9), 2, 0), r_factor(g711, 2, 0));
}

// Id = 0.024 d + 0.11 (d - 177.3) for d > 177.3: 100 ms -> 2.4; 200 ms -> 4.8 + 2.497 = 7.297.
TEST(emodel, delay_impairment_bends_at_177_ms)
{
    EXPECT_NEAR(delay_impairment(100), 2.4, 1e-9);
    EXPECT_NEAR(delay_impairment(200), 7.297, 1e-9);
    EXPECT_DOUBLE_EQ(delay_impairment(-3), 0.0);
}

// The estimate from what the relay measured: a clean G.711 call with no jitter is d = 20 ms
// (one frame), Id 0.48, R 92.72 -> MOS 4.40; G.729 adds its look-ahead and Ie 11:
// d = 25 ms, Id 0.6, R 81.6 -> 1 + 2.856 + 7e-6*81.6*21.6*18.4 = 4.083.
TEST(emodel, estimate_of_clean_calls)
{
    EXPECT_NEAR(estimate_mos(0, 0, 0), 4.40, 0.005);
    EXPECT_NEAR(estimate_mos(18, 0, 0), 4.083, 0.005);
    // 255: no payload type seen, scored as G.711.
    EXPECT_DOUBLE_EQ(estimate_mos(255, 1, 5), estimate_mos(0, 1, 5));
}

TEST(emodel, mos_falls_as_loss_grows)
{
    for (uint8_t pt : {uint8_t{0}, uint8_t{8}, uint8_t{18}}) {
        double prev = 5;
        for (double loss = 0; loss <= 40; loss += 0.5) {
            const double m = estimate_mos(pt, loss, 10);
            EXPECT_LE(m, prev) << "pt " << int(pt) << " loss " << loss;
            EXPECT_GE(m, 1.0);
            prev = m;
        }
        EXPECT_LT(estimate_mos(pt, 20, 10), estimate_mos(pt, 0, 10) - 1.0) << "20 % loss is heard";
    }
}

TEST(emodel, mos_falls_as_jitter_grows)
{
    double prev = 5;
    for (double jitter = 0; jitter <= 400; jitter += 5) {
        const double m = estimate_mos(0, 1, jitter);
        EXPECT_LE(m, prev) << "jitter " << jitter;
        prev = m;
    }
    EXPECT_LT(estimate_mos(0, 1, 150), estimate_mos(0, 1, 0) - 0.3) << "150 ms of jitter (over 300 ms buffered) is heard";
}

TEST(emodel, codec_names_by_payload_type)
{
    EXPECT_EQ(codec_name(0), "PCMU");
    EXPECT_EQ(codec_name(8), "PCMA");
    EXPECT_EQ(codec_name(9), "G722");
    EXPECT_EQ(codec_name(18), "G729");
    EXPECT_EQ(codec_name(101), "pt 101");
    EXPECT_EQ(codec_name(255), "");
}

}  // namespace
}  // namespace sbc::control::emodel
