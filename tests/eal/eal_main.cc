// Entry point of the eal tier: starts EAL without hugepages or PCI (three lcores on CPU 0: the
// test thread, one worker, one spare), then runs every GoogleTest case. Needs root.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <rte_eal.h>
#include <rte_errno.h>

int main(int argc, char** argv)
{
    ::testing::InitGoogleTest(&argc, argv);
    std::vector<std::string> args{argv[0], "--no-huge", "-m", "512", "--no-pci", "--lcores=0@0,1@0,2@0",
                                  "--file-prefix=sbc-eal-" + std::to_string(getpid()),
                                  "--log-level=lib.eal:error"};
    std::vector<char*> eal_argv;
    for (auto& a : args) eal_argv.push_back(a.data());
    eal_argv.push_back(nullptr);
    if (rte_eal_init(static_cast<int>(args.size()), eal_argv.data()) < 0) {
        std::fprintf(stderr, "eal_test: EAL init failed: %s%s\n", rte_strerror(rte_errno),
                     geteuid() != 0 ? " (the eal tier needs root)" : "");
        return 1;
    }
    const int rc = RUN_ALL_TESTS();
    rte_eal_cleanup();
    return rc;
}
