// The operator command table (control/commands.h) that sbcctl and the control socket share:
// what sbcd answers to a command it does not serve, and which commands reach sbcd at all.
#include <gtest/gtest.h>

#include <string>

#include "control/commands.h"

namespace sbc::control {
namespace {

TEST(commands, unknown_command_reply_lists_what_sbcd_serves)
{
    EXPECT_EQ(unknown_command_error("bogus"),
              "unknown command 'bogus' (known: status, stats, calls, peers, peer, drain, reload, conns, deny, capture, cdr)");
}

TEST(commands, top_and_help_are_sbcctl_only_and_are_not_served)
{
    ASSERT_NE(find_command("top"), nullptr);
    ASSERT_NE(find_command("help"), nullptr);
    EXPECT_EQ(find_served("top"), nullptr) << "sbcd answers top as an unknown command, as before";
    EXPECT_EQ(find_served("help"), nullptr);
    EXPECT_EQ(find_served(""), nullptr);
}

TEST(commands, every_row_is_found_by_its_name_and_id)
{
    for (const auto& c : commands()) {
        EXPECT_EQ(find_command(c.name), &c) << c.name;
        EXPECT_EQ(&command_of(c.id), &c) << c.name;
        EXPECT_FALSE(c.help.empty()) << c.name << " has no help line for sbcctl --help";
        EXPECT_EQ(c.args_kind == command_args::own, !c.args.empty())
            << c.name << ": a synopsis when, and only when, it parses arguments";
    }
}

}  // namespace
}  // namespace sbc::control
