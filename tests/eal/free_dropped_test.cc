// free_dropped (dataplane/worker.h): what the worker drops goes back to its pool, straight for
// plain received mbufs, through rte_pktmbuf_free for chains, clones and shared references.
// Runs on the test's main lcore as if it were the worker.
#include <gtest/gtest.h>

#include <array>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "dataplane/worker.h"

namespace {

struct pools {
    rte_mempool* a = nullptr;
    rte_mempool* b = nullptr;
    pools()
    {
        // No per-lcore cache: the free counts below are exact.
        a = rte_pktmbuf_pool_create("sbc_test_fd_a", 63, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
        b = rte_pktmbuf_pool_create("sbc_test_fd_b", 63, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
    }
    ~pools()
    {
        rte_mempool_free(a);
        rte_mempool_free(b);
    }
};

TEST(free_dropped, plain_mbufs_of_two_pools_all_go_back_to_their_own)
{
    pools p;
    ASSERT_NE(p.a, nullptr);
    ASSERT_NE(p.b, nullptr);
    const unsigned a0 = rte_mempool_avail_count(p.a), b0 = rte_mempool_avail_count(p.b);
    std::array<rte_mbuf*, 32> burst{};
    for (unsigned i = 0; i < burst.size(); ++i) {
        burst[i] = rte_pktmbuf_alloc(i % 3 == 0 ? p.b : p.a);  // interleaved: runs of each pool
        ASSERT_NE(burst[i], nullptr);
        ASSERT_NE(rte_pktmbuf_append(burst[i], 60), nullptr);
    }
    EXPECT_LT(rte_mempool_avail_count(p.a), a0);
    sbc::dataplane::free_dropped(burst.data(), burst.size());
    EXPECT_EQ(rte_mempool_avail_count(p.a), a0);
    EXPECT_EQ(rte_mempool_avail_count(p.b), b0);
    // Back in a state the next allocation can use as is.
    rte_mbuf* again = rte_pktmbuf_alloc(p.a);
    ASSERT_NE(again, nullptr);
    EXPECT_EQ(again->nb_segs, 1);
    EXPECT_EQ(again->next, nullptr);
    EXPECT_EQ(rte_mbuf_refcnt_read(again), 1);
    rte_pktmbuf_free(again);
}

TEST(free_dropped, a_chain_a_shared_reference_and_a_clone_are_freed_whole_and_only_once)
{
    pools p;
    ASSERT_NE(p.a, nullptr);
    const unsigned a0 = rte_mempool_avail_count(p.a), b0 = rte_mempool_avail_count(p.b);
    // A reassembled datagram: two segments.
    rte_mbuf* head = rte_pktmbuf_alloc(p.a);
    rte_mbuf* tail = rte_pktmbuf_alloc(p.a);
    ASSERT_TRUE(head != nullptr && tail != nullptr);
    ASSERT_EQ(rte_pktmbuf_chain(head, tail), 0);
    // A frame someone else still holds (a capture's reference).
    rte_mbuf* shared = rte_pktmbuf_alloc(p.a);
    ASSERT_NE(shared, nullptr);
    rte_mbuf_refcnt_update(shared, 1);
    // An indirect mbuf from pool b over a frame of pool a.
    rte_mbuf* original = rte_pktmbuf_alloc(p.a);
    ASSERT_NE(original, nullptr);
    rte_mbuf* clone = rte_pktmbuf_clone(original, p.b);
    ASSERT_NE(clone, nullptr);
    std::array<rte_mbuf*, 3> dropped{head, shared, clone};
    sbc::dataplane::free_dropped(dropped.data(), dropped.size());
    // The chain went back whole, the clone too; the shared frame and the clone's original stay
    // with their other holders.
    EXPECT_EQ(rte_mempool_avail_count(p.a), a0 - 2);
    EXPECT_EQ(rte_mempool_avail_count(p.b), b0);
    EXPECT_EQ(rte_mbuf_refcnt_read(shared), 1);
    EXPECT_EQ(rte_mbuf_refcnt_read(original), 1);
    rte_pktmbuf_free(shared);
    rte_pktmbuf_free(original);
    EXPECT_EQ(rte_mempool_avail_count(p.a), a0);
}

}  // namespace
